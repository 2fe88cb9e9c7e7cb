"""The batched verifier-error bootstrap against the one-refit-at-a-time reference."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.core.verifier_error import verifier_error_band, verifier_error_band_reference


@pytest.mark.parametrize("rates,clustered", [((0.02, 0.05), False), ((0.03, 0.03), False),
                                             ((0.05, 0.01), True)])
def test_batched_refits_match_the_reference(rates, clustered):
    rng = np.random.default_rng(11)
    P, n = 80, 16
    pb = np.where(rng.random(P) < 0.1, 0.0, rng.beta(0.6, 0.9, P))
    pr = np.clip(pb + rng.normal(0.08, 0.1, P), 0, 1)
    nb = np.full(P, n)
    nr = rng.integers(12, 20, P)  # unequal n: the distinct (n, c) pairs differ per model
    cb, cr = rng.binomial(nb, pb), rng.binomial(nr, pr)
    groups = np.arange(P) // 10 if clustered else None
    ks = np.array([1, 2, 4, 8, 12])
    kw = dict(fp=rates[0], fn=rates[1], n_boot=12, seed=3, groups=groups)
    fast = verifier_error_band(nb, cb, nr, cr, ks, **kw)
    ref = verifier_error_band_reference(nb, cb, nr, cr, ks, **kw)
    np.testing.assert_array_equal(fast["diff"], ref["diff"])  # the full-data fits are shared
    # Each refit runs the same EM steps and stopping rule; sums differ in order only.
    np.testing.assert_allclose(fast["lower"], ref["lower"], atol=2e-4)
    np.testing.assert_allclose(fast["upper"], ref["upper"], atol=2e-4)
    assert fast["critical_value"] == pytest.approx(ref["critical_value"], rel=1e-2)
    assert (fast["gain"], fast["loss"]) == (ref["gain"], ref["loss"])
