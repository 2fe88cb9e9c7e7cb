"""Metrics beside pass@k, each against its reference implementation or definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import hypergeom

from rlvr_boundary.core import metrics as mt


def _counts(seed=0, P=40, n=12):
    rng = np.random.default_rng(seed)
    return np.full(P, n), rng.binomial(n, rng.beta(0.6, 0.6, P))


def _lighteval_g_pass(n, c, k, tau):
    """The definition lighteval and the G-Pass@k authors use (hypergeometric survival)."""
    m = max(int(np.ceil(k * tau)), 1)
    if m > min(c, k) or k > n or c < 0 or n <= 0 or m < 0:
        return 0.0
    return float(hypergeom.sf(m - 1, n, c, k))


def _lighteval_mg_pass(n, c, k):
    low = int(np.ceil(k * 0.5))
    return 2 * sum(0.0 if i > min(c, k) else float(hypergeom.sf(i - 1, n, c, k))
                   for i in range(low + 1, k + 1)) / k


@pytest.mark.parametrize("k", [1, 4, 7, 12])
@pytest.mark.parametrize("tau", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_g_pass_matches_the_hypergeometric_reference(k, tau):
    n, c = _counts()
    ours = mt.g_pass_at_k(n, c, k, tau)
    ref = [_lighteval_g_pass(int(a), int(b), k, tau) for a, b in zip(n, c)]
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 5, 12])
def test_mg_pass_matches_reference(k):
    n, c = _counts(1)
    ref = [_lighteval_mg_pass(int(a), int(b), k) for a, b in zip(n, c)]
    np.testing.assert_allclose(mt.mg_pass_at_k(n, c, k), ref, atol=1e-12)
    if k == 1:
        assert np.all(mt.mg_pass_at_k(n, c, 1) == 0)  # the reference's convention


def test_pass_hat_k_is_comb_ratio_and_g_pass_at_tau_one():
    n, c = _counts(2)
    for k in (1, 3, 12):
        ref = [math.comb(int(b), k) / math.comb(int(a), k) for a, b in zip(n, c)]
        np.testing.assert_allclose(mt.pass_hat_k(n, c, k), ref, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(mt.g_pass_at_k(n, c, k, 1.0), ref, atol=1e-12)
    with pytest.raises(ValueError, match="exceeds"):
        mt.pass_hat_k(n, c, 13)


def test_cover_at_tau_counts_prompts():
    n = np.array([10, 10, 10, 4])
    c = np.array([3, 0, 10, 1])
    np.testing.assert_allclose(mt.cover_at_tau(n, c, [0.0, 0.25, 0.3, 1.0]),
                               [1.0, 0.75, 0.5, 0.25])


def _matrix(n, c):
    """Binary outcome matrix with c ones per row (scorio's input)."""
    return np.array([[1] * int(b) + [0] * (int(a) - int(b)) for a, b in zip(n, c)])


def test_against_scorio():
    scorio = pytest.importorskip("scorio.eval")
    n, c = _counts(3, P=25, n=10)
    R = _matrix(n, c)
    for k in (1, 3, 10):
        assert mt.pass_hat_k(n, c, k).mean() == pytest.approx(scorio.pass_hat_k(R, k), abs=1e-12)
        assert mt.g_pass_at_k(n, c, k, 0.75).mean() == pytest.approx(
            scorio.g_pass_at_k_tau(R, k, 0.75), abs=1e-12)
        assert mt.mg_pass_at_k(n, c, k).mean() == pytest.approx(scorio.mg_pass_at_k(R, k),
                                                                 abs=1e-12)
        for kind, fn in (("pass@k", scorio.pass_at_k_ci), ("pass^k", scorio.pass_hat_k_ci)):
            mu, sd, lo, hi = fn(R, k, alpha0=1.0, beta0=1.0)
            post = mt.passk_posterior(n, c, k, kind=kind)
            assert (post["mean"], post["sd"], post["lower"], post["upper"]) == pytest.approx(
                (mu, sd, lo, hi), abs=1e-10)


def test_posterior_doc_example():
    # scorio's documented example: rows [0,1,1,0,1] and [1,1,0,1,1], uniform prior.
    post = mt.passk_posterior([5, 5], [3, 4], 1)
    assert post["mean"] == pytest.approx(0.642857, abs=1e-6)
    assert post["sd"] == pytest.approx(0.118451, abs=1e-6)
    assert mt.passk_posterior([5, 5], [3, 4], 2)["mean"] == pytest.approx(0.839286, abs=1e-6)


def test_certified_fields_match_passk_inference():
    pk = pytest.importorskip("passk_inference.core")
    from rlvr_boundary.core.compare import classify_budgets, simultaneous_band

    rng = np.random.default_rng(9)
    ks = np.arange(1, 9)
    for trial in range(30):
        lower = np.sort(rng.normal(0, 0.05, ks.size))[::-1] * rng.choice([-1, 1])
        upper = lower + rng.uniform(0.01, 0.1, ks.size)
        ours = classify_budgets(ks, lower, upper)
        ref = pk.certify(ks, lower, upper)
        assert ours["certified_crossing"] == ref["certified_crossing"]
        assert ours["gain"] == ref["certified_positive_budgets"]
        assert ours["loss"] == ref["certified_negative_budgets"]
        if ours["first_loss_set"] is not None and ours["first_loss_set"][0] is not None:
            assert ours["first_loss_set"] == ref["first_loss_interval"]
    # Degenerate columns: both tools flag the same budgets and neither divides by zero.
    d = rng.normal(size=(30, 5))
    d[:, 2] = 0.0
    d[:, 4] = 0.25
    ours = simultaneous_band(d, n_multipliers=200)
    ref = pk.simultaneous_band(d, bootstrap=200)
    assert ours["degenerate"] == ref["degenerate_columns"] == [2, 4]
    assert np.all(np.isfinite(ours["lower"])) and ours["lower"][2] == -1.0
