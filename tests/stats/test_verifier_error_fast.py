"""The verifier-error bootstrap's warm-started refits against cold refits, with tolerances
derived from the solver's optimality certificate (not tuned to one BLAS library).

Both paths stop when ``max_l D_l(w) - 1 <= TOL`` (see ``npmle_weights``). By concavity the
log-likelihood is then within ``M * TOL`` of its maximum (``M`` the prompts). Near the
maximum the profile log-likelihood of a pass@k value ``theta`` is quadratic with curvature
``1 / se^2``, so a fit that close to the maximum has ``|theta - theta_hat| <=
se * sqrt(2 M TOL)``; ``se <= 1 / (2 sqrt(M))`` because the maximum-likelihood estimate is
at least as precise as the mean of per-prompt unbiased estimates in [0, 1]. Hence each
refit's pass@k is within ``sqrt(TOL / 2)`` of the maximum's, D(k) of two models within
``2 sqrt(TOL / 2)``, and two paths within twice that. The band ``diff +- c s`` moves by at
most ``eta (1 + 3 c)`` when every replicate moves by ``eta`` (``s`` is 1-Lipschitz up to
``sqrt(B / (B - 1))`` and ``c`` moves by at most ``eta (1 + c sqrt(B / (B - 1))) / s``).
"""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.core import extrapolate as ex
from rlvr_boundary.core import verifier_error as ve

TOL = 1e-9  # the default stopping rule of npmle_weights and fit_npmle
CASES = [((0.02, 0.05), False), ((0.03, 0.03), False), ((0.05, 0.01), True)]


def _data(seed=11):
    rng = np.random.default_rng(seed)
    P, n = 80, 16
    pb = np.where(rng.random(P) < 0.1, 0.0, rng.beta(0.6, 0.9, P))
    pr = np.clip(pb + rng.normal(0.08, 0.1, P), 0, 1)
    nb = np.full(P, n)
    nr = rng.integers(12, 20, P)  # unequal n: the distinct (n, c) pairs differ per model
    return nb, rng.binomial(nb, pb), nr, rng.binomial(nr, pr)


def test_default_tolerance_is_the_one_the_bounds_use():
    import inspect

    for fn in (ex.npmle_weights, ex.fit_npmle):
        assert inspect.signature(fn).parameters["tol"].default == TOL


@pytest.mark.parametrize("rates", [(0.02, 0.05), (0.03, 0.03)])
def test_warm_and_cold_refits_reach_the_same_maximum(rates):
    """Each replicate: the warm refit and the cold refit certify their log-likelihood to within
    M * TOL of the maximum, so they are within M * TOL of each other."""
    nb, cb, _, _ = _data()
    fp, fn = rates
    full = ve.corrected_fit(nb, cb, fp, fn)
    pairs, inv = np.unique(np.stack([nb, cb], axis=1), axis=0, return_inverse=True)
    ll = ex._log_binom(pairs[:, 0], pairs[:, 1], full["observed_grid"])
    shift = ll.max(axis=1, keepdims=True)
    for idx in ve._resamples(nb.size, 12, 3, None):
        mult = np.bincount(inv.reshape(-1)[idx], minlength=pairs.shape[0])
        warm = ex.npmle_weights(np.exp(ll - shift), mult, init=full["weights"])
        cold = ve.corrected_fit(nb[idx], cb[idx], fp, fn)
        assert warm["converged"] and cold["converged"]
        warm_ll = warm["loglik"] + float(mult @ shift[:, 0])
        assert abs(warm_ll - cold["loglik"]) <= nb.size * TOL + 1e-9 * abs(cold["loglik"])


@pytest.mark.parametrize("rates,clustered", CASES)
def test_batched_refits_match_the_reference(rates, clustered):
    nb, cb, nr, cr = _data()
    groups = np.arange(nb.size) // 10 if clustered else None
    ks = np.array([1, 2, 4, 8, 12])  # k <= min n: pass@k is determined by the data
    kw = dict(fp=rates[0], fn=rates[1], n_boot=12, seed=3, groups=groups)
    fast = ve.verifier_error_band(nb, cb, nr, cr, ks, **kw)
    ref = ve.verifier_error_band_reference(nb, cb, nr, cr, ks, **kw)
    # The full-data fits are the same call in both paths.
    np.testing.assert_array_equal(fast["diff"], ref["diff"])
    eta = 4 * np.sqrt(TOL / 2)  # per replicate: two models, two paths
    crit = max(fast["critical_value"], ref["critical_value"])
    atol = eta * (1 + 3 * crit)
    np.testing.assert_allclose(fast["lower"], ref["lower"], rtol=0, atol=atol)
    np.testing.assert_allclose(fast["upper"], ref["upper"], rtol=0, atol=atol)
    width = np.min(fast["upper"] - fast["lower"]) / 2  # c * s at the narrowest budget
    assert abs(fast["critical_value"] - ref["critical_value"]) <= atol * crit / width
    assert (fast["gain"], fast["loss"]) == (ref["gain"], ref["loss"])
