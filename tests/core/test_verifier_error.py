"""Verifier error: the corrected fit recovers true pass@k; two-scorer bounds bracket the truth."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.core import verifier_error as ve
from rlvr_boundary.core.compare import simultaneous_band
from rlvr_boundary.core.passk import pass_at_k


def _true_rates(rng, P):
    return np.where(rng.random(P) < 0.1, 0.0, rng.beta(0.5, 1.0, P))


def test_corrected_fit_recovers_true_pass_at_k_where_plain_counts_do_not():
    rng = np.random.default_rng(0)
    P, n, fp, fn = 2000, 32, 0.05, 0.1
    p = _true_rates(rng, P)
    q = fp + p * (1 - fp - fn)
    c = rng.binomial(n, q)
    ks = np.array([1, 8, 32])
    truth = (1 - (1 - p[:, None]) ** ks).mean(axis=0)
    naive = pass_at_k(np.full(P, n), c, ks).mean(axis=0)
    corrected = ve.corrected_pass_at_k(np.full(P, n), c, ks, fp, fn)
    # At k = n, telling p = 0 from a small p through 5% false positives is hard: the fit
    # error there is ~0.02 (model-based), the uncorrected curve's several times larger.
    err, err_naive = np.abs(corrected - truth), np.abs(naive - truth)
    assert err[0] < 0.005 and err.max() < 0.04
    assert err_naive.max() > 0.05 and err.max() < err_naive.max() / 2
    # No error: the corrected fit is the plain NPMLE and matches the exact curve.
    c0 = rng.binomial(n, p)
    np.testing.assert_allclose(ve.corrected_pass_at_k(np.full(P, n), c0, ks, 0, 0),
                               pass_at_k(np.full(P, n), c0, ks).mean(axis=0), atol=0.01)
    with pytest.raises(ValueError, match="fp \\+ fn < 1"):
        ve.corrected_fit(np.full(3, 4), np.ones(3, int), 0.6, 0.5)


def test_verifier_error_band_reports_classification():
    rng = np.random.default_rng(1)
    P, n = 400, 16
    pb, pr = _true_rates(rng, P), np.clip(_true_rates(rng, P) + 0.2, 0, 1)
    nb = np.full(P, n)
    out = ve.verifier_error_band(nb, rng.binomial(n, pb), nb, rng.binomial(n, pr),
                                 np.array([1, 2, 4, 8, 16]), fp=0.02, fn=0.05, n_boot=12)
    assert out["model_based"] is True and out["critical_value"] > 1.5
    assert np.all(out["lower"] <= out["diff"]) and np.all(out["diff"] <= out["upper"])
    assert 1 in out["gain"]


def test_two_scorer_band_brackets_and_reduces_to_one_scorer():
    rng = np.random.default_rng(2)
    P, n = 300, 16
    nb = np.full(P, n)
    cb, cr = rng.binomial(n, 0.4, P), rng.binomial(n, 0.5, P)
    ks = np.array([1, 2, 4, 8, 16])
    # Scorers that agree: the band is the plain one at level 1 - alpha/2 on each side.
    same = ve.two_scorer_band(nb, cb, cb, nb, cr, cr, ks, n_multipliers=2000, seed=3)
    plain = simultaneous_band(pass_at_k(nb, cr, ks) - pass_at_k(nb, cb, ks), n_multipliers=2000,
                              alpha=0.025, seed=3)
    np.testing.assert_allclose(same["lower"], plain["lower"])
    # Disagreement widens the band on both sides.
    eb, er = np.minimum(cb + 2, n), np.minimum(cr + 2, n)
    wide = ve.two_scorer_band(nb, cb, eb, nb, cr, er, ks, n_multipliers=2000, seed=3)
    assert np.all(wide["lower"] <= same["lower"] + 1e-12)
    assert np.all(wide["upper"] >= same["upper"] - 1e-12)
    with pytest.raises(ValueError, match="cannot exceed"):
        ve.two_scorer_band(nb, eb, cb, nb, cr, er, ks)
