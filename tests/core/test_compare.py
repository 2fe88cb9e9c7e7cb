"""Paired comparison: crossings, bound, price, simultaneous band, bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k_plugin


def test_sign_changes_ignores_zeros():
    assert cc.sign_changes([1, 0, -1, 0, 0, 2, -3]) == 3
    assert cc.sign_changes([0, 0, 0]) == 0
    np.testing.assert_array_equal(cc.sign_changes(np.array([[1, -1, 1], [1, 2, 3]])), [2, 0])


def test_grid_crossings_log_interpolation():
    out = cc.grid_crossings([1, 2, 4, 8], [0.2, 0.1, 0.0, -0.1])
    assert len(out) == 1
    x = out[0]
    assert (x["k_before"], x["k_after"], x["direction"]) == (2, 8, "gain_to_loss")
    # straight line through (log 2, .1) and (log 8, -.1): zero at log k = log 4
    assert x["k_continuous"] == pytest.approx(4.0)
    assert cc.grid_crossings([1, 2], [0.1, 0.2]) == []


def test_first_negative_and_price():
    ks = np.array([1, 2, 4, 8, 16])
    d = np.array([0.1, 0.0, -0.02, -0.05, -0.03])
    assert cc.first_negative(ks, d) == 4
    assert cc.price(ks, d) == (pytest.approx(0.05), 8)
    assert cc.first_negative(ks, np.abs(d)) is None
    assert cc.price(ks, np.abs(d)) == (0.0, None)
    batch = np.stack([d, np.abs(d)])
    np.testing.assert_array_equal(cc.first_negative(ks, batch), [4, np.nan])
    v, k = cc.price(ks, batch)
    np.testing.assert_allclose(v, [0.05, 0.0])
    np.testing.assert_array_equal(k, [8, np.nan])


def test_crossing_bound_hand_example():
    # Base rates {0.5, 0.5}, RL {0.9, 0.1}: q_B = {.5,.5}, q_R = {.1,.9}
    # a over q ascending (.1, .5, .9) = (-1, +2, -1)/2: V = 2, sum = 0 -> bound 1.
    out = cc.crossing_bound([0.5, 0.5], [0.9, 0.1])
    assert out["V"] == 2 and out["zero_at_k0"] and out["bound"] == 1
    np.testing.assert_allclose(out["q"], [0.1, 0.5, 0.9])
    np.testing.assert_allclose(out["a"], [-0.5, 1.0, -0.5])


def test_crossing_bound_refuses_bad_rates():
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        cc.crossing_bound([1.2], [0.1])
    with pytest.raises(ValueError, match="equal length"):
        cc.crossing_bound([0.1, 0.2], [0.1])


def _continuous_sign_changes(p_base, p_rl) -> int:
    """Sign changes of the plug-in D(k) on a dense log grid of real k > 0."""
    ks = np.geomspace(1e-3, 1e4, 20_000)
    d = (pass_at_k_plugin(p_rl, ks) - pass_at_k_plugin(p_base, ks)).mean(axis=0)
    d = d[np.abs(d) > 1e-13]  # a numerical zero is not a sign
    return int(np.count_nonzero(np.sign(d[1:]) != np.sign(d[:-1])))


rates = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.95, 1.0])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(rates, rates), min_size=1, max_size=8))
def test_crossings_never_exceed_the_bound(pairs):
    pb = np.array([p for p, _ in pairs])
    pr = np.array([q for _, q in pairs])
    assume(not np.array_equal(np.sort(pb), np.sort(pr)))
    bound = cc.crossing_bound(pb, pr)["bound"]
    assert _continuous_sign_changes(pb, pr) <= bound


def test_bound_is_attained_by_a_specialisation_example():
    # Two prompts; RL fixes the hard one and breaks the easy one less than it helps at k=1.
    pb, pr = np.array([0.9, 0.05]), np.array([0.6, 0.45])
    assert _continuous_sign_changes(pb, pr) == 1
    assert cc.crossing_bound(pb, pr)["bound"] == 1


def _direct_band_critical(d, B, alpha, seed):
    """Textbook multiplier bootstrap: xi ~ N(0, I_P) per draw (no SVD)."""
    P = d.shape[0]
    c = d - d.mean(axis=0)
    se = c.std(axis=0, ddof=1) / np.sqrt(P)
    rng = np.random.default_rng(seed)
    xi = rng.standard_normal((B, P))
    t = np.max(np.abs(xi @ c) / (P * se), axis=1)
    return float(np.quantile(t, 1 - alpha))


def test_band_critical_value_matches_direct_multiplier_bootstrap():
    rng = np.random.default_rng(5)
    P, K = 300, 20
    base = rng.normal(size=(P, 1)) + 0.3 * rng.normal(size=(P, K))
    d = np.cumsum(base, axis=1) / np.arange(1, K + 1)
    ours = cc.simultaneous_band(d, n_multipliers=20_000, seed=1)["critical_value"]
    direct = _direct_band_critical(d, 20_000, 0.05, seed=2)
    # Monte Carlo error of a 95% quantile with 20,000 draws is ~0.01 here.
    assert ours == pytest.approx(direct, abs=0.04)
    # One budget alone: the sup-t critical value is the normal quantile 1.96.
    one = cc.simultaneous_band(d[:, :1], n_multipliers=40_000, seed=3)["critical_value"]
    assert one == pytest.approx(1.95996, abs=0.03)


def test_band_marks_degenerate_budgets():
    d = np.zeros((10, 3))
    d[:, 0] = np.arange(10) / 10
    out = cc.simultaneous_band(d, n_multipliers=500)
    assert out["degenerate"] == [1, 2]
    assert out["lower"][1] == -1.0 and out["upper"][2] == 1.0
    with pytest.raises(ValueError, match="at least 2 prompts"):
        cc.simultaneous_band(d[:1])


def test_classify_budgets_first_loss_set():
    ks = np.arange(1, 8)
    lower = np.array([0.1, 0.05, -0.1, -0.2, -0.3, -0.3, -0.4])
    upper = np.array([0.3, 0.2, 0.1, 0.05, -0.01, -0.02, -0.1])
    out = cc.classify_budgets(ks, lower, upper)
    assert out["gain"] == [1, 2] and out["loss"] == [5, 6, 7] and out["inconclusive"] == [3, 4]
    assert out["first_loss_set"] == [3, 5] and out["first_loss_scope"] == "integers"
    # No supported gain at k = 1: nothing can be said about where the loss starts.
    assert cc.classify_budgets(ks, lower - 1, upper)["first_loss_set"] is None
    # A gap in the grid: the ends are grid points only.
    assert cc.classify_budgets([1, 2, 4], [1, -1, -1], [2, 1, -0.5])["first_loss_scope"] == "grid"


def test_paired_bootstrap_reproducible_and_covers_estimate():
    rng = np.random.default_rng(0)
    P = 400
    ks = np.array([1, 2, 4, 8, 16])
    pb = pass_at_k_plugin(rng.beta(0.5, 0.5, P), ks)
    pr = pass_at_k_plugin(np.clip(rng.beta(0.5, 0.5, P) * 1.1, 0, 1), ks)
    a = cc.paired_bootstrap(pb, pr, ks, K_se=16, n_boot=500, seed=7)
    b = cc.paired_bootstrap(pb, pr, ks, K_se=16, n_boot=500, seed=7)
    assert a["delta_se"] == b["delta_se"]
    est = float(pb[:, 4].mean() - pr[:, 0].mean())
    lo, hi = a["delta_se"]["ci"]
    assert a["delta_se"]["K"] == 16 and lo < est < hi
    # The bootstrap spread of a mean over P prompts is about its standard error.
    se = (pb[:, 4] - pr[:, 0]).std(ddof=1) / np.sqrt(P)
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.25)
    plo, phi = a["price"]["ci"]
    assert 0.0 <= plo <= phi


def test_kurtosis_df_against_loops():
    rng = np.random.default_rng(31)
    d = np.concatenate([rng.normal(size=(40, 2)), np.zeros((40, 1))], axis=1)
    d[:3, 2] = [-1.0, -1.0, 0.5]  # sparse and heavy-tailed, as pass@k differences at large k
    nu = cc.kurtosis_df(d)
    P = d.shape[0]
    for k in range(3):
        x = d[:, k]
        m2 = sum((v - x.mean()) ** 2 for v in x) / P
        m4 = sum((v - x.mean()) ** 4 for v in x) / P
        kappa = max(m4 / m2**2 - 3, 0.0)
        assert nu[k] == pytest.approx(2 / (2 / (P - 1) + kappa / P), rel=1e-12)
    assert nu[2] < 10 < P - 1  # a few prompts carry the variance: few degrees of freedom
    # Normal data keep about P - 1; no variance gives P - 1 (nothing to correct).
    assert cc.kurtosis_df(np.zeros((8, 1)))[0] == pytest.approx(7)


def test_min_prompts_is_where_a_sign_flip_test_can_reach_the_level():
    for alpha in (0.05, 0.01, 0.2):
        P = cc.min_prompts(alpha)
        assert 2.0 ** (1 - P) <= alpha < 2.0 ** (2 - P)
    assert cc.min_prompts(0.05) == 6


def test_too_few_prompts_support_nothing():
    d = np.tile([[0.5, 0.4]], (5, 1)) + np.arange(5)[:, None] * 1e-3  # 5 prompts, all gains
    band = cc.simultaneous_band(d, n_multipliers=500)
    assert band["too_few_units"] and np.all(band["lower"] == -1) and np.all(band["upper"] == 1)
    six = cc.simultaneous_band(np.vstack([d, d[:1] + 2e-3]), n_multipliers=500)
    assert not six["too_few_units"] and np.all(six["lower"] > 0)


def test_small_sample_correction_below_the_threshold_only():
    rng = np.random.default_rng(32)

    def draw(P):
        d = np.zeros((P, 3))
        d[:, 0] = rng.normal(0.1, 0.3, P)
        d[rng.random(P) < 0.08, 1] = -1.0  # sparse, like D(k) at large k
        d[:, 2] = rng.normal(size=P)
        return d

    small = cc.simultaneous_band(draw(60), n_multipliers=2000)
    assert small["small_sample"] == "kurtosis-t" and len(small["df"]) == 3
    crit = np.asarray(small["critical_values"])
    assert np.all(crit >= small["critical_value"]) and crit[1] > crit[0]
    np.testing.assert_allclose(small["upper"] - small["mean"], crit * small["se"])
    big = cc.simultaneous_band(draw(cc.SMALL_SAMPLE_PROMPTS), n_multipliers=2000)
    assert big["small_sample"] is None and big["df"] is None
    off = cc.simultaneous_band(draw(60), n_multipliers=2000, small_sample=False)
    assert off["df"] is None and np.all(off["critical_values"] == off["critical_value"])
    with pytest.raises(ValueError, match="independent prompts"):
        cc.simultaneous_band(draw(60), groups=np.arange(60) // 6, small_sample=True)
