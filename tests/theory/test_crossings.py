"""Crossings, the bound, constructed instances, the Omni-MATH anchor, the order families."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core.compare import crossing_bound
from rlvr_boundary.theory import crossings as C
from rlvr_boundary.theory.suite import OMNI_MATH, claim_anchor

rates = st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0]),
                 min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda P: st.tuples(
    st.lists(st.floats(0, 1), min_size=P, max_size=P),
    st.lists(st.floats(0, 1), min_size=P, max_size=P))))
def test_observed_crossings_never_exceed_the_bound(pair):
    pb, pr = map(np.array, pair)
    cs = C.crossing_stats(pb, pr)
    assert cs["crossings"] <= cs["bound"] <= cs["V"]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda P: st.tuples(
    st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0]), min_size=P, max_size=P),
    st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0]), min_size=P, max_size=P))))
def test_observed_crossings_never_exceed_the_bound_with_ties(pair):
    pb, pr = map(np.array, pair)
    assert C.count_crossings(pb, pr) <= C.bound(pb, pr)


def test_plugin_diff_is_the_mean_pass_at_k_difference():
    rng = np.random.default_rng(0)
    pb, pr = rng.uniform(size=50), rng.uniform(size=50)
    ks = np.array([0.5, 1.0, 3.0, 40.0])
    direct = np.array([np.mean((1 - pb) ** k - (1 - pr) ** k) for k in ks])
    np.testing.assert_allclose(C.plugin_diff(pb, pr, ks), direct, atol=1e-15)


def test_two_prompt_hand_example():
    """Base (0.5, 0.5) vs RL (1.0, 0.1): D(k) = 0.5^k - 0.45 - ... one crossing; V = 1.

    D(k) = 0.5 * (2 * 0.5^k - 0.9^k); the root is where 2 * 0.5^k = 0.9^k, k = ln 2 / ln(1.8).
    """
    pb, pr = np.array([0.5, 0.5]), np.array([1.0, 0.1])
    cs = C.crossing_stats(pb, pr)
    assert cs["crossings"] == 1 and cs["V"] == 1 and cs["bound"] == 1
    k0 = np.log(2) / np.log(1.8)
    d = C.plugin_diff(pb, pr, [k0 * 0.99, k0, k0 * 1.01])
    assert d[0] > 0 > d[2] and abs(d[1]) < 1e-15


def test_crossing_beyond_the_grid_is_counted():
    """Prompt A gains (1e-6 -> 2e-6), the much harder prompt B loses (1e-8 -> 0.5e-8).

    D(1e6) = (e^-1 - e^-2 + e^-0.01 - e^-0.005) / 2 > 0, D(1e7) = (e^-10 - e^-20 + e^-0.1 - e^-0.05) / 2
    < 0: the only crossing lies past the grid's end (1e6) and is counted from the sign at infinity.
    """
    pb, pr = np.array([1e-6, 1e-8]), np.array([2e-6, 0.5e-8])
    cs = C.crossing_stats(pb, pr, C.BUDGET_K)
    assert cs["crossings"] == 1 and cs["beyond_grid"] and cs["bound"] == 1
    d = C.plugin_diff(pb, pr, [1e6, 1e7])
    assert d[0] == pytest.approx((np.exp(-1) - np.exp(-2) + np.exp(-0.01) - np.exp(-0.005)) / 2, rel=1e-5)
    assert d[1] < 0


@pytest.mark.parametrize("m", range(1, 7))
def test_constructed_instances_cross_exactly_m_times(m):
    pb, pr = C.constructed(m, prompts=50_000)
    cs = C.crossing_stats(pb, pr)
    assert cs["crossings"] == m == cs["bound"] == cs["V"]
    assert not cs["beyond_grid"]


def test_omni_math_anchor():
    """SPEC 3: one crossing between 64 and 256, price .008 at 256 (pass@1 gain .149)."""
    r = claim_anchor(False)
    assert r["status"] == "PASS"
    assert r["details"]["price"] == pytest.approx(0.008, abs=1e-12)
    assert r["details"]["price_k"] == 256
    (cr,) = r["details"]["crossings"]
    assert (cr["k_before"], cr["k_after"], cr["direction"]) == (64, 256, "gain_to_loss")
    # straight line in log k through (64, .030) and (256, -.008): 64 * 4^(30/38)
    assert cr["k_continuous"] == pytest.approx(64 * 4 ** (30 / 38), rel=1e-9)
    assert OMNI_MATH["grpo"][0] - OMNI_MATH["base"][0] == pytest.approx(0.149)


@pytest.mark.parametrize("a, b", [(1.1, -1.0), (2.0, 0.0), (4.0, 1.0)])
def test_sharpening_family_preserves_order_with_one_fixed_point(a, b):
    pb, pr = C.sharpening_instance(np.random.default_rng(0), a, b, prompts=500)
    order = np.argsort(pb, kind="stable")
    assert np.all(np.diff(pr[order]) >= 0)  # difficulty order kept
    pstar = 1 / (1 + np.exp(-b / (1 - a)))
    live = (pb > 0) & (pb < 1)
    assert np.all((pr[live] > pb[live]) == (pb[live] > pstar))
    assert np.all(pr[pb == 0] == 0)


def test_monotone_family_preserves_order_and_can_cross_twice():
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(200):
        pb, pr = C.monotone_instance(rng, knots=4)
        order = np.argsort(pb, kind="stable")
        assert np.all(np.diff(pr[order]) >= 0)
        found += C.count_crossings(pb, pr, C.BUDGET_K) >= 2
    assert found > 0  # order preservation alone does not give a single crossing


def test_crossing_bound_reused_from_core():
    pb, pr = np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.4, 0.95])
    assert C.bound(pb, pr) == crossing_bound(pb, pr)["bound"]
