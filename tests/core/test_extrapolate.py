"""Extrapolation beyond n: fits against closed forms, invariants, and the exact estimate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import comb

from rlvr_boundary.core import extrapolate as ex
from rlvr_boundary.core.passk import pass_at_k


def _draw(rng, P, n, a=0.4, b=0.9, w0=0.1):
    p = np.where(rng.random(P) < w0, 0.0, rng.beta(a, b, P))
    return np.full(P, n), rng.binomial(n, p)


def test_beta_moment_matches_numerical_integral():
    fit = {"kind": "beta_mixture", "a": np.array([0.5, 3.0]), "b": np.array([2.0, 1.0]),
           "weights": np.array([0.6, 0.3]), "w0": 0.1}
    ks = np.array([1, 7, 300])
    from scipy import integrate, stats
    ref = []
    for k in ks:
        m = sum(w * integrate.quad(lambda p: (1 - p) ** k * stats.beta.pdf(p, a, b), 0, 1,
                                   limit=200)[0] for w, a, b in zip(fit["weights"], fit["a"], fit["b"]))
        ref.append(1 - 0.1 - m)
    np.testing.assert_allclose(ex.mixture_pass_at_k(fit, ks), ref, rtol=1e-6)


def test_npmle_curve_is_the_grid_sum():
    fit = {"kind": "npmle", "grid": np.array([0.0, 0.2, 1.0]), "weights": np.array([0.3, 0.5, 0.2])}
    k = 5
    assert ex.mixture_pass_at_k(fit, [k])[0] == pytest.approx(1 - 0.3 - 0.5 * 0.8**k)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.05, 5.0), min_size=2, max_size=2),
       st.lists(st.floats(0.05, 5.0), min_size=2, max_size=2),
       st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_predicted_curves_increase_and_are_concave(a, b, w0, wsplit):
    w = np.array([wsplit, 1 - wsplit]) * (1 - w0)
    fit = {"kind": "beta_mixture", "a": np.array(a), "b": np.array(b), "weights": w, "w0": w0}
    ks = np.arange(1, 2049)
    y = ex.mixture_pass_at_k(fit, ks)
    d1 = np.diff(y)
    assert np.all(d1 >= -1e-12) and np.all(np.diff(d1) <= 1e-12)
    grid = ex.default_grid(50)
    wg = np.random.default_rng(int(a[0] * 1000)).dirichlet(np.ones(50))
    yg = ex.mixture_pass_at_k({"kind": "npmle", "grid": grid, "weights": wg}, ks)
    dg = np.diff(yg)
    assert np.all(dg >= -1e-12) and np.all(np.diff(dg) <= 1e-12)


@pytest.mark.parametrize("method", ["npmle", "beta_mixture"])
def test_fit_reproduces_the_exact_estimate_at_observed_k(method):
    rng = np.random.default_rng(11)
    n, c = _draw(rng, 600, 32)
    ks = np.arange(1, 33)
    exact = pass_at_k(n, c, ks).mean(axis=0)
    fit = ex._fit(method, n, c)
    model = ex.mixture_pass_at_k(fit, ks)
    # Fit error: the exact estimate's own standard error is ~0.015 at k = 1 here.
    assert np.max(np.abs(model - exact)) < 0.01


def test_beta_mixture_recovers_a_known_distribution_and_extrapolates():
    rng = np.random.default_rng(12)
    n, c = _draw(rng, 4000, 16, a=0.4, b=0.9, w0=0.1)
    fit = ex.fit_beta_mixture(n, c, components=1)
    truth = {"kind": "beta_mixture", "a": np.array([0.4]), "b": np.array([0.9]),
             "weights": np.array([0.9]), "w0": 0.1}
    ks = np.array([64, 256, 1024])
    np.testing.assert_allclose(ex.mixture_pass_at_k(fit, ks), ex.mixture_pass_at_k(truth, ks),
                               atol=0.02)
    assert fit["w0"] == pytest.approx(0.1, abs=0.03)


def test_npmle_em_increases_likelihood_and_matches_brute_force_loglik():
    rng = np.random.default_rng(13)
    n, c = _draw(rng, 200, 8)
    grid = np.linspace(0, 1, 11)
    f1 = ex.fit_npmle(n, c, grid=grid, max_iter=1)
    f2 = ex.fit_npmle(n, c, grid=grid)
    assert f2["loglik"] >= f1["loglik"] - 1e-9
    ll = sum(np.log(sum(w * comb(ni, ci) * p**ci * (1 - p) ** (ni - ci)
                        for w, p in zip(f2["weights"], grid))) for ni, ci in zip(n, c))
    assert f2["loglik"] == pytest.approx(ll, rel=1e-10)
    assert f2["weights"].sum() == pytest.approx(1.0)


def test_npmle_certificate_bounds_the_likelihood_left_and_matches_a_generic_optimiser():
    """max_l D_l - 1 bounds the log-likelihood still to gain (times M); the optimum agrees
    with scipy's SLSQP on the simplex (a generic optimiser, 11 grid points)."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(21)
    n, c = _draw(rng, 150, 10)
    grid = np.linspace(0, 1, 11)
    best = ex.fit_npmle(n, c, grid=grid)
    assert best["converged"] and best["gap"] <= 1e-9
    for steps in range(4):  # intermediate iterates: the certificate holds at each
        f = ex.fit_npmle(n, c, grid=grid, max_iter=steps)
        assert best["loglik"] - f["loglik"] <= 150 * f["gap"] + 1e-9
    lik = np.array([[comb(ni, ci) * p**ci * (1 - p) ** (ni - ci) for p in grid]
                    for ni, ci in zip(n, c)])  # (P, L) brute force

    def nll(w):
        return -np.sum(np.log(lik @ np.maximum(w, 0) + 1e-300))

    res = minimize(nll, np.full(11, 1 / 11), method="SLSQP", bounds=[(0, 1)] * 11,
                   constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1}],
                   options={"ftol": 1e-14, "maxiter": 2000})
    assert -res.fun <= best["loglik"] + 1e-9  # nothing beats the certified maximum
    assert best["loglik"] - (-res.fun) < 1e-5
    # The KKT conditions: D_l <= 1 everywhere, = 1 on the support.
    D = (lik / (lik @ best["weights"])[:, None]).mean(axis=0)
    assert D.max() <= 1 + 1e-8
    np.testing.assert_allclose(D[best["weights"] > 1e-8], 1.0, atol=1e-8)


def test_npmle_start_does_not_change_the_maximum():
    rng = np.random.default_rng(22)
    n, c = _draw(rng, 400, 16)
    cold = ex.fit_npmle(n, c)
    for init in (np.eye(200)[3], np.eye(200)[150] + np.eye(200)[0], cold["weights"]):
        warm = ex.fit_npmle(n, c, init=init)
        assert warm["converged"]
        assert warm["loglik"] == pytest.approx(cold["loglik"], abs=400 * 2e-9)
        # pass@k at k <= n is determined by the fitted probabilities, hence by the data.
        np.testing.assert_allclose(ex.mixture_pass_at_k(warm, [1, 4, 16]),
                                   ex.mixture_pass_at_k(cold, [1, 4, 16]), atol=1e-4)


def test_power_law_recovers_its_own_curve():
    ks = np.arange(1, 65)
    y = np.exp(-0.7 * ks ** (-0.3))
    fit = ex.fit_power_law(ks, y)
    assert fit["A"] == pytest.approx(0.7) and fit["b"] == pytest.approx(0.3)
    assert ex.power_law_pass_at_k(fit, [1000])[0] == pytest.approx(np.exp(-0.7 * 1000 ** -0.3))


def _brute_profile(n, c, grid, k, target):
    """Ends of the profile-likelihood interval of pass@k by a generic optimiser (SLSQP)."""
    from scipy.optimize import minimize

    lik = np.array([[comb(ni, ci) * p**ci * (1 - p) ** (ni - ci) for p in grid]
                    for ni, ci in zip(n, c)])  # (P, L)
    a = 1 - (1 - grid) ** k
    ll_hat = ex.fit_npmle(n, c, grid=grid)["loglik"]
    cons = [{"type": "eq", "fun": lambda w: w.sum() - 1},
            {"type": "ineq", "fun": lambda w: np.sum(np.log(lik @ np.maximum(w, 0) + 1e-300))
             - ll_hat + target}]
    ends = []
    for sign in (1, -1):
        best = None
        for start in (np.full(grid.size, 1 / grid.size), ex.fit_npmle(n, c, grid=grid)["weights"]):
            res = minimize(lambda w: sign * (a @ w), start, method="SLSQP",
                           bounds=[(0, 1)] * grid.size, constraints=cons,
                           options={"ftol": 1e-12, "maxiter": 1000})
            if res.success and (best is None or res.fun < best):
                best = res.fun
        ends.append(sign * best)
    return ends[0], ends[1]  # min and max of pass@k within the deficit


def test_profile_interval_matches_a_generic_optimiser():
    """Each end maximises / minimises pass@k subject to the likelihood deficit chi2_1/2."""
    rng = np.random.default_rng(31)
    n, c = _draw(rng, 60, 6)
    grid = np.concatenate([[0.0], np.geomspace(0.002, 0.9, 12), [1.0]])
    ks = np.array([3, 24])
    prof = ex.profile_interval(n, c, ks, grid=grid)
    assert prof["target"] == pytest.approx(1.920729, abs=1e-6)
    for j, k in enumerate(ks):
        lo, hi = _brute_profile(n, c, grid, k, prof["target"])
        assert prof["lower"][j] == pytest.approx(lo, abs=2e-4)
        assert prof["upper"][j] == pytest.approx(hi, abs=2e-4)
        point = ex.mixture_pass_at_k(ex.fit_npmle(n, c, grid=grid), [k])[0]
        assert prof["lower"][j] <= point + 1e-9 and point <= prof["upper"][j] + 1e-9


def test_difference_interval_is_the_sup_convolution_of_the_profiles():
    """Brute force: dense profiles of each model, then every pair within the summed deficit."""
    rng = np.random.default_rng(32)
    nb, cb = _draw(rng, 300, 8, a=0.5, b=0.9, w0=0.05)
    nr, cr = _draw(rng, 300, 8, a=1.2, b=0.8, w0=0.15)
    ks = np.array([8, 64])
    pb, pr = ex.profile_interval(nb, cb, ks), ex.profile_interval(nr, cr, ks)
    lo, hi = ex.difference_interval(pr, pb)
    grid = ex.default_grid()
    for j, k in enumerate(ks):
        curves = []
        for prof in (pr, pb):
            st = prof["setup"]
            a = 1 - (1 - grid) ** k
            pts = []
            for row in (a, 1 - a):
                L2 = np.vstack([st["lik"], row])
                w = st["w_hat"]
                for lam in np.geomspace(1e-3, 1e5, 160):
                    w = ex.npmle_weights(L2, np.append(st["mult"], lam), init=w)["weights"]
                    pts.append((a @ w, st["ll_hat"] - st["mult"] @ np.log(st["lik"] @ w)))
            pts.sort()
            t = np.linspace(pts[0][0], pts[-1][0], 1500)
            curves.append((t, np.interp(t, [p[0] for p in pts], [p[1] for p in pts])))
        (tr, dr), (tb, db) = curves
        ok = dr[:, None] + db[None, :] <= pb["target"]
        d = tr[:, None] - tb[None, :]
        assert lo[j] == pytest.approx(d[ok].min(), abs=2e-3)
        assert hi[j] == pytest.approx(d[ok].max(), abs=2e-3)


def test_beta_mixture_is_global_deterministic_and_refits_never_lose():
    rng = np.random.default_rng(33)
    n, c = _draw(rng, 500, 16, a=0.3, b=1.5, w0=0.2)
    fits = [ex.fit_beta_mixture(n, c, seed=s) for s in range(3)]
    assert all(f["loglik"] == fits[0]["loglik"] for f in fits)
    np.testing.assert_array_equal(fits[0]["a"], fits[2]["a"])
    # A bootstrap refit started from the full fit ends no worse than a cold fit.
    for b in range(3):
        idx = np.random.default_rng(b).integers(0, 500, 500)
        cold = ex.fit_beta_mixture(n[idx], c[idx])
        warm = ex.fit_beta_mixture(n[idx], c[idx], init=fits[0])
        assert warm["loglik"] >= cold["loglik"] - 1e-9
    assert len(ex.beta_starts(2)) == 15


def test_extrapolate_pair_marks_model_based_and_intervals_cover_the_point():
    rng = np.random.default_rng(14)
    nb, cb = _draw(rng, 300, 16, a=0.5, b=0.8, w0=0.05)
    nr, cr = _draw(rng, 300, 16, a=1.5, b=1.2, w0=0.15)
    ks = np.array([1, 4, 16, 64, 256])
    out = ex.extrapolate_pair(nb, cb, nr, cr, ks, method="npmle")
    assert out["model_based"] is True and out["method"] == "npmle"
    assert out["interval"] == "profile likelihood" and out["level"] == 0.95
    for key in ("pass_base", "pass_rl", "diff"):
        assert np.all(out[f"{key}_lower"] <= out[key] + 1e-9)
        assert np.all(out[key] <= out[f"{key}_upper"] + 1e-9)
    # Wider beyond n than at n: the data cannot see the rates near 0.
    w = out["diff_upper"] - out["diff_lower"]
    assert w[-1] > 2 * w[2]
    # More never-solved prompts for RL: the gain at k = 1 turns into a loss at large k.
    assert out["diff"][0] > 0 and out["diff"][-1] < 0 and out["k_star"] in (4, 16, 64, 256)
    assert out["diff_lower"][0] > 0  # the gain at k = 1 is within the data
    again = ex.extrapolate_pair(nb, cb, nr, cr, ks, method="npmle", seed=5, n_boot=7)
    np.testing.assert_array_equal(again["diff_upper"], out["diff_upper"])
    with pytest.raises(ValueError, match="unknown method"):
        ex.extrapolate_pair(nb, cb, nr, cr, ks, method="spline")


def test_k_star_set_from_intervals():
    ks = [1, 2, 4, 8]
    assert ex.k_star_set(ks, [0.1, 0.05, -0.01, -0.2], [0.3, 0.2, 0.1, -0.05]) == [4.0, 8.0]
    assert ex.k_star_set(ks, [0.1, -0.05, -0.1, -0.2], [0.3, 0.2, 0.1, 0.05]) == [2.0, None]
    assert ex.k_star_set(ks, [0.1, 0.1, 0.1, 0.1], [0.3, 0.3, 0.3, 0.3]) is None
    # An interval that is not calibrated ends the search.
    assert ex.k_star_set(ks, [0.1, 0.1, None, -0.2], [0.3, 0.3, None, -0.1]) is None
