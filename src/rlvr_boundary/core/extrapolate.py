"""pass@k beyond the samples drawn: fitted distributions of per-prompt success rates.

With ``n`` samples per prompt, pass@k has an unbiased estimate only for
``k <= n`` (:mod:`rlvr_boundary.core.passk` refuses larger ``k``). Beyond ``n``
any number is a *model-based prediction*: it depends on how much probability
the fitted distribution of success rates puts near 0, which ``n`` samples can
only partly see. Every result of this module says so (``model_based: True``).

Three views, all fitted to counts ``(n_i, c_i)``:

- a beta-binomial mixture: the rate ``p`` follows a mixture of ``J`` beta
  laws plus an atom at ``p = 0`` (prompts the model never solves), fitted by
  maximum likelihood; pass@k has the closed form
  ``1 - w_0 - sum_j w_j B(a_j, b_j + k) / B(a_j, b_j)``;
- the nonparametric maximum-likelihood estimate (NPMLE) of the rate
  distribution on a fixed grid (Kiefer and Wolfowitz 1956; computed by the
  constrained Newton method of Wang 2007), pass@k ``= 1 - sum_j w_j (1 - p_j)^k``;
- the power law of Schaeffer et al. 2025: ``-log pass@k = A k^(-b)``, fitted by
  least squares on ``log(-log pass@k)`` against ``log k`` over the observed
  budgets (they derive it from a beta-like left tail of the rate distribution,
  which the mixture models directly).

For a mixture, ``1 - E[(1 - p)^k]`` is increasing and concave in ``k``
(``(1 - p)^k`` is decreasing and convex in ``k`` for each ``p``), so the
predictions are too; the power law is increasing for ``b > 0``.

Uncertainty: :func:`profile_interval` gives, for pass@k at any budget, the
profile-likelihood interval over every rate distribution on the NPMLE's grid
(the predictions no distribution the data cannot reject would contradict), and
:func:`difference_interval` the same for D(k). Unlike a bootstrap within one
parametric family, it carries the uncertainty of the choice of model, and it
widens where the data cannot see (many prompts never solved, ``k`` far beyond
``n``). Every fit here is deterministic: the NPMLE is a concave problem solved
to an optimality certificate (:func:`npmle_weights`), the beta mixture starts
from a fixed design (:func:`beta_starts`).

References
----------
J. Kiefer and J. Wolfowitz, "Consistency of the maximum likelihood estimator in
the presence of infinitely many incidental parameters", Ann. Math. Statist.
27(4), 1956. Y. Wang, "On fast computation of the non-parametric maximum
likelihood estimate of a mixing distribution", JRSS B 69(2), 2007. S. A.
Murphy and A. W. van der Vaart, "On profile likelihood", JASA 95(450), 2000.
R. Schaeffer, J. Kazdan, J. Hughes, J. Juravsky, S. Price, A. Lynch, E. Jones, R. Kirk,
A. Mirhoseini, S. Koyejo, "How Do Large Language Monkeys Get Their Power
(Laws)?", arXiv 2502.17578.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core.passk import check_counts

# scipy.special is imported inside the functions below, not here: this module is
# loaded by every ``compare``, which only calls it with --extrapolate, and importing
# scipy.special costs more than the whole comparison.

__all__ = [
    "default_grid",
    "npmle_weights",
    "fit_npmle",
    "beta_starts",
    "fit_beta_mixture",
    "mixture_pass_at_k",
    "fit_power_law",
    "power_law_pass_at_k",
    "profile_interval",
    "difference_interval",
    "extrapolate_pair",
]


def default_grid(size: int = 200) -> np.ndarray:
    """``(L,)`` rates: 0, 1 and a logistic grid dense near both ends."""
    from scipy.special import expit

    return np.concatenate([[0.0], expit(np.linspace(-12.0, 12.0, size - 2)), [1.0]])


def _distinct(n, c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(n, c)`` pairs and their multiplicities: the likelihood only needs these."""
    pairs, mult = np.unique(np.stack([n, c], axis=1), axis=0, return_counts=True)
    return pairs[:, 0], pairs[:, 1], mult.astype(float)


def _log_binom(n, c, grid) -> np.ndarray:
    """``(P, L)`` log binomial pmf, exact at ``p = 0`` and ``p = 1``."""
    from scipy.special import gammaln

    n, c = n[:, None].astype(float), c[:, None].astype(float)
    p = grid[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = np.where(c > 0, c * np.log(p), 0.0) + np.where(n - c > 0, (n - c) * np.log1p(-p), 0.0)
    return gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1) + lp


def npmle_weights(lik, mult, *, init=None, tol: float = 1e-9,
                  max_iter: int = 500) -> dict:
    """Maximum-likelihood mixing weights on a fixed grid, by the constrained Newton method.

    Parameters
    ----------
    lik
        ``(U, L)`` likelihood of each of ``U`` distinct observations under each
        of ``L`` grid components. Rows may be scaled by any positive constant
        (e.g. divided by their maximum): that shifts the log-likelihood by a
        constant and changes nothing else.
    mult
        ``(U,)`` nonnegative multiplicities (real numbers are allowed: a
        pseudo-observation with weight lambda is how the profile likelihood of
        :func:`profile_interval` is traced).
    init
        ``(L,)`` starting weights (zeros allowed; e.g. a previous fit). None:
        uniform.
    tol
        Stop when :math:`\\max_l D_l(w) - 1 \\le` ``tol`` (see Notes).
    max_iter
        Newton steps at most.

    Returns
    -------
    dict
        ``weights`` ``(L,)``, ``loglik`` (of the scaled rows), ``iters``,
        ``gap`` (:math:`\\max_l D_l - 1` at the end), ``converged``
        (``gap <= tol``).

    Notes
    -----
    Maximises :math:`\\ell(w) = \\sum_u m_u \\log \\sum_l L_{ul} w_l` over the
    simplex. With :math:`f = Lw`, :math:`M = \\sum_u m_u` and the gradient
    function :math:`D_l(w) = \\frac1M \\sum_u m_u L_{ul} / f_u`, ``w`` is the
    maximum if and only if :math:`\\max_l D_l(w) = 1` (Lindsay 1983), and by
    concavity :math:`\\ell(\\hat w) - \\ell(w) \\le M(\\max_l D_l(w) - 1)`: the
    stopping rule bounds the log-likelihood left on the table by
    ``M * tol``, whatever the path. Each step (Wang 2007) adds to the current
    support the grid points where :math:`D_l` has a local maximum above 1,
    solves the quadratic approximation of :math:`\\ell` on that support, a
    nonnegative least-squares problem
    :math:`\\min_{v \\ge 0} \\sum_u m_u (L_u v / f_u - 2)^2` with a heavily
    weighted row for :math:`\\sum_l v_l = 1`, and moves towards its solution
    with a backtracking (Armijo) line search, so the likelihood never drops.
    Convergence is fast (10-20 steps from a uniform start to ``tol = 1e-10``
    on the examples of the tests), where EM, even accelerated, crawls along
    flat directions and its usual stopping rule (a small change of the
    likelihood) says nothing about the distance to the maximum.

    References
    ----------
    B. G. Lindsay, "The Geometry of Mixture Likelihoods: A General Theory",
    Ann. Statist. 11(1), 1983. Y. Wang, "On fast computation of the
    non-parametric maximum likelihood estimate of a mixing distribution",
    JRSS B 69(2), 2007.
    """
    lik = np.asarray(lik, float)
    mult = np.asarray(mult, float)
    U, L = lik.shape
    M = float(mult.sum())
    live = mult > 0
    lik, mult = lik[live], mult[live]
    w = np.full(L, 1.0 / L) if init is None else np.maximum(np.asarray(init, float), 0.0)
    if w.shape != (L,) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError(f"init must be {L} nonnegative weights with a positive sum")
    w = w / w.sum()
    f = lik @ w  # (U,)
    if np.any(f <= 0) or float((mult / f) @ lik.max(axis=1)) > 100 * M:
        # The start (nearly) misses some observation, where a Newton step overflows:
        # blend in the uniform weights, which give every observation its due.
        w = 0.5 * w + 0.5 / L
        f = lik @ w
    ll = float(mult @ np.log(f))
    root = np.sqrt(mult)  # (U,)
    gap, it, stalls = np.inf, 0, 0
    for it in range(max_iter + 1):
        D = (mult / f) @ lik / M  # (L,)
        gap = float(D.max() - 1.0)
        if gap <= tol or it == max_iter or stalls > 3:
            break
        wt = _newton_step(lik, mult, root, w, f, D, ll, M)
        if wt is None:
            # At the limit of floating-point precision the Newton direction is lost in
            # rounding (neighbouring grid points make the least squares ill-conditioned):
            # EM steps, w_l <- w_l D_l, always ascend; a few of them polish the last digits.
            stalls += 1
            wt = w
            for _ in range(50):
                wt = wt * ((mult / (lik @ wt)) @ lik / M)
                wt /= wt.sum()
        wt[wt < 1e-15 * wt.max()] = 0.0
        w = wt / wt.sum()
        f = lik @ w
        ll = float(mult @ np.log(f))
    return {"weights": w, "loglik": ll, "iters": it, "gap": gap, "converged": gap <= tol}


def _newton_step(lik, mult, root, w, f, D, ll, M) -> np.ndarray | None:
    """One constrained Newton step of :func:`npmle_weights` with its line search (None: none)."""
    L = w.size
    peak = np.zeros(L, bool)  # local maxima of D over the grid
    peak[1:-1] = (D[1:-1] >= D[:-2]) & (D[1:-1] >= D[2:])
    peak[0], peak[-1] = D[0] >= D[1], D[-1] >= D[-2]
    S = np.flatnonzero((w > 0) | (peak & (D > 1.0)) | (D >= D.max()))
    A = root[:, None] * lik[:, S] / f[:, None]  # (U, |S|)
    v = _simplex_lsq(A, 2.0 * root)
    if v is None:
        return None
    step = np.zeros(L)
    step[S] = v
    step -= w  # direction within the simplex
    slope = M * float(D @ step)  # directional derivative of the log-likelihood
    if not slope > 0:
        return None
    a = 1.0
    while a >= 1e-10:  # Armijo backtracking
        wt = np.maximum(w + a * step, 0.0)
        ft = lik @ wt
        if np.all(ft > 0) and float(mult @ np.log(ft)) >= ll + 0.25 * a * slope:
            return wt
        a *= 0.5
    return None


def _simplex_lsq(A, b) -> np.ndarray | None:
    """``argmin ||A v - b||`` over ``v >= 0`` with ``sum(v) = 1``.

    First nonnegative least squares with a heavily weighted row for the sum
    (Lawson-Hanson, which grows the support from empty and so stays fast when
    the answer is sparse); then, on that support, the equality-constrained
    least squares exactly, in null-space form (``v = 1/|F| + Z y``, ``1'Z = 0``,
    ``Z`` orthonormal, least squares on ``A Z``: never the normal equations,
    whose condition number is squared, as neighbouring grid points make ``A``
    nearly collinear). If that solution leaves the orthant, the point moves
    towards it as far as feasibility allows and the component that reaches 0
    is dropped, until the solution is feasible (a primal active set: C. L.
    Lawson and R. J. Hanson, "Solving Least Squares Problems", 1974, ch. 23).
    Returns None when no feasible point is found.
    """
    from scipy.optimize import nnls

    rho = 1e3 * max(1.0, float(np.abs(A).max()), float(np.abs(b).max()))
    v, _ = nnls(np.vstack([A, np.full((1, A.shape[1]), rho)]), np.concatenate([b, [rho]]),
                maxiter=max(50, 10 * A.shape[1]))
    if not v.sum() > 0:
        return None
    cur = v / v.sum()  # feasible start
    free = cur > 0
    for _ in range(int(free.sum())):
        F = np.flatnonzero(free)
        if F.size == 1:
            sol = np.ones(1)
        else:
            Z = np.linalg.qr(np.eye(F.size) - 1.0 / F.size)[0][:, :F.size - 1]  # (F, F - 1)
            v0 = np.full(F.size, 1.0 / F.size)
            AF = A[:, F]
            sol = v0 + Z @ np.linalg.lstsq(AF @ Z, b - AF @ v0, rcond=None)[0]
        if np.all(sol >= 0):
            cur[:] = 0.0
            cur[F] = sol
            return cur
        neg = sol < 0
        t = float(np.min(cur[F][neg] / (cur[F][neg] - sol[neg])))  # largest feasible step
        cur[F] += t * (sol - cur[F])
        hit = F[neg][np.argmin(cur[F][neg])]
        cur[hit] = 0.0
        free[hit] = False
        cur = np.maximum(cur, 0.0)
        cur /= cur.sum()
    return cur


def fit_npmle(n, c, *, grid=None, tol: float = 1e-9, max_iter: int = 500, init=None) -> dict:
    """NPMLE of the distribution of per-prompt success rates on a grid.

    Parameters
    ----------
    n, c
        ``(P,)`` samples and successes per prompt.
    grid
        ``(L,)`` rates in [0, 1]; default :func:`default_grid`.
    tol, max_iter
        Convergence of :func:`npmle_weights`: the log-likelihood is within
        ``P * tol`` of its maximum over the grid when ``converged``.
    init
        ``(L,)`` starting weights (e.g. a previous fit, for the bootstrap). The
        maximum does not depend on the start, only the number of steps does.

    Returns
    -------
    dict
        ``kind`` "npmle", ``grid``, ``weights`` ``(L,)``, ``loglik``, ``iters``,
        ``gap``, ``converged``.

    Notes
    -----
    Maximises :math:`\\sum_i \\log \\sum_j w_j \\binom{n_i}{c_i} p_j^{c_i}
    (1-p_j)^{n_i-c_i}` over the simplex (Kiefer and Wolfowitz 1956) by
    :func:`npmle_weights`. Only the fitted probabilities of the observed
    ``(n, c)`` pairs are unique: pass@k of the fit is determined by the data
    for ``k <= min n`` and is not beyond it (:func:`profile_interval` gives the
    range the data allow there).
    """
    n, c = check_counts(n, c)
    grid = default_grid() if grid is None else np.asarray(grid, float)
    if grid.ndim != 1 or np.any((grid < 0) | (grid > 1)):
        raise ValueError("grid must be 1-D rates in [0, 1]")
    n, c, mult = _distinct(n, c)  # (U,) each
    ll = _log_binom(n, c, grid)  # (U, L)
    m = ll.max(axis=1, keepdims=True)  # (U, 1)
    out = npmle_weights(np.exp(ll - m), mult, init=init, tol=tol, max_iter=max_iter)
    return {"kind": "npmle", "grid": grid, "weights": out["weights"],
            "loglik": out["loglik"] + float(mult @ m[:, 0]), "iters": out["iters"],
            "gap": out["gap"], "converged": out["converged"]}


def _bb_loglik(n, c, a, b) -> np.ndarray:
    """``(P, J)`` beta-binomial log pmf."""
    from scipy.special import betaln, gammaln

    n, c = n[:, None].astype(float), c[:, None].astype(float)
    return (gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)
            + betaln(c + a[None, :], n - c + b[None, :]) - betaln(a, b)[None, :])


def beta_starts(J: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The fixed design of starting points of :func:`fit_beta_mixture`: ``(means, concentrations)``.

    Component means ``mu`` (sorted) from :data:`_START_MEANS` (for ``J = 2``;
    evenly spread for other ``J``), each with every concentration
    ``a + b`` in :data:`_START_CONCENTRATIONS`: 15 starts for two components.
    The weights of a start are set from the data (see :func:`fit_beta_mixture`).
    """
    if J == 2:
        means = [np.array(m) for m in _START_MEANS]
    else:
        means = [np.linspace(lo, hi, J) for lo, hi in ((0.05, 0.9), (0.01, 0.6), (0.2, 0.98))]
    return [(m, np.full(J, k)) for m in means for k in _START_CONCENTRATIONS]


#: Component means of the starts for two components: a hard and an easy mode at several
#: places, including a nearly-never-solved mode (rates near 0, the left tail that decides
#: pass@k far beyond n).
_START_MEANS = ((0.02, 0.5), (0.1, 0.7), (0.3, 0.9), (0.005, 0.2), (0.5, 0.97))
#: Concentrations a + b of the starts: diffuse, moderate and peaked components.
_START_CONCENTRATIONS = (0.5, 2.0, 10.0)


def fit_beta_mixture(n, c, *, components: int = 2, zero_atom: bool = True,
                     seed: int = 0, starts: int | None = None, init: dict | None = None) -> dict:
    """Maximum-likelihood mixture of beta-binomials (plus an atom at rate 0).

    Parameters
    ----------
    n, c
        ``(P,)`` samples and successes per prompt.
    components
        Number ``J`` of beta components.
    zero_atom
        Add a point mass at ``p = 0`` (prompts never solved).
    seed, starts
        Kept for compatibility and ignored: the starts are a fixed design
        (:func:`beta_starts`), so the same counts always give the same fit.
    init
        A previous fit (e.g. of the full data, for a resample): tried as one
        more start beside the whole design, so a refit never ends worse than a
        cold fit of the same counts.

    Returns
    -------
    dict
        ``kind`` "beta_mixture", ``a``, ``b``, ``weights`` (``(J,)``), ``w0`` (the
        atom), ``loglik``.

    Notes
    -----
    Likelihood :math:`\\prod_i [w_0 1\\{c_i = 0\\} + \\sum_j w_j \\binom{n_i}{c_i}
    B(c_i + a_j, n_i - c_i + b_j) / B(a_j, b_j)]`, maximised by L-BFGS over
    ``log a``, ``log b`` (bounded to ``[1e-3, 1e3]``) and softmax weights.

    The likelihood has several local maxima (a component can sit on the
    never-solved prompts or on the easy ones), and which one a single start
    finds decides pass@k far beyond ``n``. So the fit is global by design: it
    starts from every point of a fixed, documented design (:func:`beta_starts`:
    15 combinations of component means and concentrations, each with the
    component weights split evenly after the atom takes half the share of
    prompts never solved), plus the data's own quantiles as one more start,
    and keeps the best log-likelihood (ties broken by the order of the
    design). Nothing is random: the same counts give the same fit for every
    seed.
    """
    # Imported here: scipy.optimize takes longer to import than every compare needs.
    from scipy.optimize import minimize
    from scipy.special import digamma, softmax

    n, c = check_counts(n, c)
    J = int(components)
    if J < 1:
        raise ValueError("components must be >= 1")
    n, c, mult = _distinct(n, c)  # (U,) each
    zero = (c == 0).astype(float)  # (U,)

    K1 = J + 1 if zero_atom else J  # components incl. the atom

    def unpack(theta):
        la, lb = theta[:J], theta[J:2 * J]
        w = softmax(np.concatenate([theta[2 * J:], [0.0]]))  # (K1,), last logit fixed at 0
        return np.exp(la), np.exp(lb), w

    def nll_grad(theta):
        a, b, w = unpack(theta)
        comp = _bb_loglik(n, c, a, b) + np.log(np.maximum(w[:J], 1e-300))[None, :]  # (U, J)
        if zero_atom:
            z = np.where(zero > 0, np.log(max(w[J], 1e-300)), -np.inf)[:, None]
            comp = np.concatenate([comp, z], axis=1)  # (U, K1)
        top = comp.max(axis=1, keepdims=True)  # (U, 1), finite: beta terms are
        e = np.exp(comp - top)  # (U, K1)
        tot = e.sum(axis=1)  # (U,)
        resp = e / tot[:, None] * mult[:, None]  # (U, K1) responsibilities x multiplicity
        nf, cf = n[:, None].astype(float), c[:, None].astype(float)
        ab = a + b
        psi_nab = digamma(nf + ab[None, :])  # (U, J)
        ga = a * (digamma(cf + a[None, :]) - psi_nab - digamma(a) + digamma(ab))  # d/d log a
        gb = b * (digamma(nf - cf + b[None, :]) - psi_nab - digamma(b) + digamma(ab))
        g_la = -(resp[:, :J] * ga).sum(axis=0)
        g_lb = -(resp[:, :J] * gb).sum(axis=0)
        g_logit = -(resp.sum(axis=0) - mult.sum() * w)[:K1 - 1]  # softmax, last fixed
        val = -float(mult @ (top[:, 0] + np.log(tot)))
        return val, np.concatenate([g_la, g_lb, g_logit])

    n_logits = K1 - 1
    bounds = [(np.log(1e-3), np.log(1e3))] * (2 * J) + [(-30.0, 30.0)] * n_logits

    def start(mu, conc, w):
        w = np.maximum(np.asarray(w, float), 1e-6)
        return np.concatenate([np.log(mu * conc), np.log((1 - mu) * conc),
                               np.log(w[:-1] / w[-1])])

    f0 = float(mult[c == 0].sum() / mult.sum())  # share of prompts never solved
    w_design = (np.concatenate([np.full(J, (1 - f0 / 2) / J), [f0 / 2]]) if zero_atom
                else np.full(J, 1.0 / J))
    rate = c / n
    mu_q = np.clip(np.quantile(np.repeat(rate, mult.astype(int)), (np.arange(J) + 0.5) / J),
                   0.02, 0.98)
    inits = [start(mu_q, np.full(J, 2.0), w_design)]
    inits += [start(mu, conc, w_design) for mu, conc in beta_starts(J)]
    if init is not None:
        w = np.concatenate([init["weights"], [init["w0"]]] if zero_atom else [init["weights"]])
        inits.append(start(np.clip(init["a"] / (init["a"] + init["b"]), 1e-6, 1 - 1e-6),
                           init["a"] + init["b"], w))
    best = None
    for x0 in inits:
        x0 = np.clip(x0, [b[0] for b in bounds], [b[1] for b in bounds])
        res = minimize(nll_grad, x0, jac=True, method="L-BFGS-B", bounds=bounds)
        if best is None or res.fun < best.fun - 1e-9 * max(1.0, abs(best.fun)):
            best = res
    a, b, w = unpack(best.x)
    order = np.argsort(a / (a + b))
    return {"kind": "beta_mixture", "a": a[order], "b": b[order], "weights": w[:J][order],
            "w0": float(w[J]) if zero_atom else 0.0, "loglik": -float(best.fun),
            "converged": bool(best.success)}


def mixture_pass_at_k(fit: dict, ks) -> np.ndarray:
    """``(K,)`` pass@k implied by a fitted rate distribution, for any ``k >= 1``.

    Parameters
    ----------
    fit
        Output of :func:`fit_npmle` or :func:`fit_beta_mixture`.
    ks
        Budgets (real ``k >= 0`` allowed).

    Notes
    -----
    NPMLE: :math:`1 - \\sum_j w_j (1 - p_j)^k`. Beta mixture:
    :math:`1 - w_0 - \\sum_j w_j B(a_j, b_j + k) / B(a_j, b_j)`, the beta moment
    :math:`E[(1-p)^k]` in closed form.
    """
    ks = np.asarray(ks, float)
    if np.any(ks < 0):
        raise ValueError("budgets must be >= 0")
    if fit["kind"] == "npmle":
        q = 1.0 - fit["grid"]  # (L,)
        with np.errstate(divide="ignore"):
            logq = np.log(q)
        terms = np.exp(np.multiply.outer(ks, logq))  # (K, L); q = 0 gives 0 for k > 0
        terms[ks == 0] = 1.0
        return 1.0 - terms @ fit["weights"]
    from scipy.special import betaln

    a, b, w = fit["a"], fit["b"], fit["weights"]
    moment = np.exp(betaln(a[None, :], b[None, :] + ks[:, None]) - betaln(a, b)[None, :])
    return 1.0 - fit["w0"] * (ks > 0) - moment @ w


def fit_power_law(ks, passk) -> dict:
    """Least-squares power law ``-log pass@k = A k^(-b)`` on observed budgets.

    Parameters
    ----------
    ks
        ``(K,)`` observed budgets.
    passk
        ``(K,)`` pass@k (unbiased estimates) at those budgets, in (0, 1).

    Returns
    -------
    dict
        ``A``, ``b`` and ``n_points``.

    Notes
    -----
    Regresses :math:`\\log(-\\log \\mathrm{pass@}k)` on :math:`\\log k` over
    budgets spaced evenly in ``log k`` (at most 32, so that the many large
    budgets of a dense grid do not outweigh the small ones), as in Schaeffer
    et al. 2025, arXiv 2502.17578.
    """
    ks, y = np.asarray(ks, float), np.asarray(passk, float)
    keep = (y > 0) & (y < 1)
    ks, y = ks[keep], y[keep]
    if ks.size < 2:
        raise ValueError("a power law needs pass@k strictly inside (0, 1) at two budgets")
    pick = np.unique(np.round(np.geomspace(1, ks.size, min(32, ks.size))).astype(int) - 1)
    x, t = np.log(ks[pick]), np.log(-np.log(y[pick]))
    slope, intercept = np.polyfit(x, t, 1)
    return {"A": float(np.exp(intercept)), "b": float(-slope), "n_points": int(pick.size)}


def power_law_pass_at_k(fit: dict, ks) -> np.ndarray:
    """``(K,)`` ``exp(-A k^(-b))``."""
    return np.exp(-fit["A"] * np.asarray(ks, float) ** (-fit["b"]))


def _profile_side(lik, mult, row, w_hat, ll_hat, target, *, lam0: float):
    """Trace one side of the profile log-likelihood of ``row @ w`` (or of ``1 - row @ w``).

    Solves :math:`\\max_w \\ell(w) + \\lambda \\log(r^\\top w)` for increasing
    :math:`\\lambda` (an NPMLE with one pseudo-observation of weight lambda whose
    likelihood row is ``r``) until the log-likelihood deficit
    :math:`\\hat\\ell - \\ell(w_\\lambda)` reaches ``target``. Returns the points
    ``(theta, deficit, slope)`` visited, sorted by deficit, with ``theta = r @ w``
    and ``slope = lambda / theta``, the derivative of the deficit in ``theta``
    there (the profile is concave, so each point lies on it).
    """
    L2 = np.vstack([lik, row[None, :]])
    pts = [(float(row @ w_hat), 0.0, 0.0)]
    cache: dict = {}

    def solve(lam, w0):
        out = npmle_weights(L2, np.append(mult, lam), init=w0)
        w = out["weights"]
        deficit = max(ll_hat - float(mult @ np.log(lik @ w)), 0.0)
        theta = float(row @ w)
        pts.append((theta, deficit, lam / max(theta, 1e-300)))
        cache[lam] = w
        return deficit, w

    solve(lam0 * 1e-6, w_hat)  # the end of a flat top of the profile, if it has one
    lo, hi, w_lo = 0.0, None, w_hat
    lam = lam0
    for _ in range(60):  # bracket: grow lambda until the deficit passes the target
        d, w = solve(lam, w_lo)
        if d >= target:
            hi, d_hi = lam, d
            break
        lo, w_lo, d_lo = lam, w, d
        # In the quadratic regime the deficit grows like lambda^2: aim at the target.
        lam = lam * min(8.0, max(1.5, np.sqrt(target / max(d, 1e-12)) * 1.1))
        if lam > 1e12:
            break
    if hi is None:
        return sorted(pts, key=lambda p: p[1])
    for _ in range(40):  # then the secant of log deficit against log lambda, kept in the bracket
        if lo == 0.0 or d_lo <= 0:
            lam = hi / 2.0
        else:
            t = (np.log(target) - np.log(d_lo)) / (np.log(d_hi) - np.log(d_lo))
            lam = float(np.exp(np.log(lo) + min(max(t, 0.1), 0.9) * (np.log(hi) - np.log(lo))))
        d, w = solve(lam, w_lo)
        if abs(d - target) <= 1e-3 * target:
            break
        if d < target:
            lo, w_lo, d_lo = lam, w, d
        else:
            hi, d_hi = lam, d
        if lo > 0 and hi / lo < 1 + 1e-6:
            break
    return sorted(pts, key=lambda p: p[1])


def _end(points, target) -> float:
    """``theta`` where the traced deficit reaches ``target`` (linear between the points)."""
    th = np.array([p[0] for p in points])
    de = np.array([p[1] for p in points])
    if de[-1] < target:
        return float(th[-1])  # the bound of the parameter space comes first
    j = int(np.searchsorted(de, target))
    if j == 0:
        return float(th[0])
    t = (target - de[j - 1]) / (de[j] - de[j - 1])
    return float(th[j - 1] + t * (th[j] - th[j - 1]))


def profile_interval(n, c, ks, *, level: float = 0.95, grid=None, fit: dict | None = None) -> dict:
    """Profile-likelihood interval of pass@k over every rate distribution on the grid.

    Parameters
    ----------
    n, c
        ``(P,)`` samples and successes per prompt.
    ks
        ``(K,)`` budgets (any ``k >= 1``, also beyond ``n``).
    level
        Confidence level of each interval (pointwise in ``k``).
    grid
        ``(L,)`` rates; default :func:`default_grid`.
    fit
        The NPMLE (:func:`fit_npmle`) of these counts on this grid, if already computed.

    Returns
    -------
    dict
        ``lower``, ``upper`` ``(K,)``; ``paths``: per budget, the traced points
        ``(theta, deficit, slope)`` of each side (for :func:`difference_interval`);
        ``target``: the deficit that defines the interval; ``loglik`` of the NPMLE.

    Notes
    -----
    With :math:`\\ell(w)` the log-likelihood of mixing weights ``w`` on the grid
    (the NPMLE's model: every rate distribution supported on the grid), the
    profile of :math:`\\theta_k(w) = \\sum_l w_l (1 - (1 - p_l)^k)` is
    :math:`\\ell_p(\\theta) = \\max\\{\\ell(w) : \\theta_k(w) = \\theta\\}`, a concave
    function, and the interval is
    :math:`\\{\\theta : \\hat\\ell - \\ell_p(\\theta) \\le \\chi^2_{1, level} / 2\\}`
    (the likelihood-ratio interval of a linear functional of a mixing
    distribution). It contains every pass@k a distribution the data cannot
    reject would give. Beyond ``n`` the data determine only the first ``n``
    moments of the rate distribution, and the interval widens to the range
    those moments leave open (with sampling error on top): it carries the
    uncertainty of the model, not only of the sampling within one family, and
    is wide where the data cannot see (many prompts never solved, ``k`` far
    beyond ``n``). Each end is found by maximising
    :math:`\\ell(w) + \\lambda \\log \\theta_k(w)` (or of ``1 - theta``) over
    ``lambda``: the maximiser lies on the profile for every ``lambda``, and the
    problem is an NPMLE with one pseudo-observation of weight ``lambda``
    (:func:`npmle_weights`); ``lambda`` is found by a bracketed secant search to
    a deficit within 0.1% of the target.

    References
    ----------
    S. A. Murphy and A. W. van der Vaart, "On profile likelihood", JASA 95(450),
    2000. N. Ignatiadis and S. Wager, "Confidence Intervals for Nonparametric
    Empirical Bayes Analysis", JASA 117(539), 2022 (intervals for linear
    functionals of a mixing distribution).
    """
    from scipy.special import ndtri  # scipy.stats costs seconds to import

    n, c = check_counts(n, c)
    grid = default_grid() if grid is None else np.asarray(grid, float)
    fit = fit_npmle(n, c, grid=grid) if fit is None else fit
    nu, cu, mult = _distinct(n, c)
    ll = _log_binom(nu, cu, grid)
    lik = np.exp(ll - ll.max(axis=1, keepdims=True))  # (U, L)
    w_hat = fit["weights"]
    ll_hat = float(mult @ np.log(lik @ w_hat))
    target = float(ndtri((1.0 + level) / 2.0) ** 2 / 2.0)  # chi2_1 quantile / 2
    ks = np.asarray(ks, float)
    P = float(mult.sum())
    lower, upper, paths = np.empty(ks.size), np.empty(ks.size), []
    with np.errstate(divide="ignore"):
        logq = np.log1p(-grid)  # (L,), -inf at p = 1
    lam_up = lam_lo = None
    for j, k in enumerate(ks):
        a = -np.expm1(k * logq)  # (L,) pass@k at each grid rate
        a[grid >= 1.0] = 1.0
        side = {}
        for name, row in (("upper", a), ("lower", 1.0 - a)):
            theta = float(row @ w_hat)
            # First guess: the slope at the end of a quadratic profile with the variance of
            # a mean of P values in [0, 1], times theta; then the previous budget's lambda.
            guess = np.sqrt(2 * target) * 2 * np.sqrt(P) * max(theta, 1e-6) / 4
            prev = lam_up if name == "upper" else lam_lo
            pts = _profile_side(lik, mult, row, w_hat, ll_hat, target,
                                lam0=prev / 2 if prev else guess)
            side[name] = pts
            lam_end = pts[-1][2] * max(pts[-1][0], 1e-300)
            if name == "upper":
                lam_up = lam_end
                upper[j] = _end(pts, target)
            else:
                lam_lo = lam_end
                lower[j] = 1.0 - _end(pts, target)
        paths.append(side)
    return {"lower": lower, "upper": upper, "paths": paths, "target": target,
            "loglik": fit["loglik"], "level": level, "ks": ks,
            "setup": {"lik": lik, "mult": mult, "w_hat": w_hat, "ll_hat": ll_hat, "grid": grid}}


def _side_curve(points, flip: bool):
    """``(slope, theta, deficit)`` of one traced side, increasing in slope, ``theta`` of the model."""
    s = np.array([p[2] for p in points])
    th = np.array([p[0] for p in points])
    de = np.array([p[1] for p in points])
    order = np.argsort(s, kind="stable")
    s, th, de = s[order], th[order], de[order]
    th = np.maximum.accumulate(th)  # theta and the deficit grow with the slope
    de = np.maximum.accumulate(de)
    return s, th, de, flip


def _at_slope(curve, s):
    """``(theta, deficit)`` of a traced side at slopes ``s``.

    ``theta`` is linear between the traced points and the deficit its integral
    :math:`\\int s\\, d\\theta` (trapezoids from the last traced point below):
    both exact for a quadratic profile, where ``theta`` is linear in the slope.
    """
    ss, th, de, flip = curve
    i = np.clip(np.searchsorted(ss, s, side="right") - 1, 0, ss.size - 2)
    t = np.clip((s - ss[i]) / np.where(ss[i + 1] > ss[i], ss[i + 1] - ss[i], 1.0), 0.0, 1.0)
    theta = th[i] + t * (th[i + 1] - th[i])
    deficit = de[i] + (theta - th[i]) * (ss[i] + s) / 2.0
    return (1.0 - theta) if flip else theta, deficit


def _at_exact_slope(setup: dict, row: np.ndarray, slope: float, lam: float):
    """The profile point of ``row @ w`` whose deficit grows at rate ``slope``: ``(theta, deficit, lam)``.

    The maximiser of :math:`\\ell(w) + \\lambda \\log(r^\\top w)` has slope
    :math:`\\lambda / \\theta`; the fixed point :math:`\\lambda = s\\,\\theta(\\lambda)`
    converges in a few solves because ``theta`` moves slowly with ``lambda``.
    """
    lik, mult = setup["lik"], setup["mult"]
    L2 = np.vstack([lik, row[None, :]])
    w = setup["w_hat"]
    theta = float(row @ w)
    for _ in range(12):
        w = npmle_weights(L2, np.append(mult, lam), init=w)["weights"]
        theta = float(row @ w)
        new = slope * theta
        if abs(new - lam) <= 1e-5 * max(lam, 1e-300):
            break
        lam = new
    deficit = max(setup["ll_hat"] - float(mult @ np.log(lik @ w)), 0.0)
    return theta, deficit, lam


def difference_interval(prof_a: dict, prof_b: dict) -> tuple[np.ndarray, np.ndarray]:
    """Profile-likelihood interval of ``theta_a - theta_b`` from two independent fits.

    Parameters
    ----------
    prof_a, prof_b
        Outputs of :func:`profile_interval` for the two models on the same budgets.

    Returns
    -------
    tuple
        ``(lower, upper)``, ``(K,)`` each.

    Notes
    -----
    The two models' counts are treated as independent samples, so the joint
    log-likelihood is the sum and the profile of the difference is the
    sup-convolution :math:`\\max_{\\theta_a - \\theta_b = d} \\ell_a(\\theta_a) +
    \\ell_b(\\theta_b)`. At its maximum the two concave profiles have opposite
    slopes, so the upper end pairs the upper side of ``a`` with the lower side
    of ``b`` at a common slope ``s`` and is :math:`d(s)` where the summed
    deficit reaches the target; ``s`` is found by a bracketed secant search,
    started from the points traced by :func:`profile_interval` and evaluated
    exactly (:func:`_at_exact_slope`), to a summed deficit within 0.2% of the
    target. Ignoring the positive correlation of the two models' rates over
    prompts makes the interval wider than a joint fit's would be: it errs on
    the safe side.
    """
    target = prof_a["target"]
    ks = prof_a["ks"]
    grid_a, grid_b = prof_a["setup"]["grid"], prof_b["setup"]["grid"]
    lower, upper = np.empty(ks.size), np.empty(ks.size)
    for j, k in enumerate(ks):
        rows = {}
        for name, grid in (("a", grid_a), ("b", grid_b)):
            with np.errstate(divide="ignore"):
                a = -np.expm1(k * np.log1p(-grid))
            a[grid >= 1.0] = 1.0
            rows[name] = {"upper": a, "lower": 1.0 - a}
        for a_side, b_side, out in (("upper", "lower", upper), ("lower", "upper", lower)):
            ca = _side_curve(prof_a["paths"][j][a_side], flip=a_side == "lower")
            cb = _side_curve(prof_b["paths"][j][b_side], flip=b_side == "lower")
            s_max = min(ca[0][-1], cb[0][-1])

            def exact(s, lam_a, lam_b):
                ta, da, lam_a = _at_exact_slope(prof_a["setup"], rows["a"][a_side], s, lam_a)
                tb, db, lam_b = _at_exact_slope(prof_b["setup"], rows["b"][b_side], s, lam_b)
                if a_side == "lower":
                    ta = 1.0 - ta
                if b_side == "lower":
                    tb = 1.0 - tb
                return ta - tb, da + db, lam_a, lam_b

            def guess_lam(curve, s):
                th, _ = _at_slope(curve, s)
                return s * ((1.0 - th) if curve[3] else th)

            s_grid = np.linspace(0.0, s_max, 400)
            ta, da = _at_slope(ca, s_grid)
            tb, db = _at_slope(cb, s_grid)
            dsum = da + db
            if dsum[-1] < target:  # a side reached the bound of its parameter first
                out[j] = (ta - tb)[-1]
                continue
            i = max(int(np.searchsorted(dsum, target)), 1)
            s0 = float(s_grid[i])
            lo_s, hi_s, d_lo, d_hi = 0.0, None, 0.0, None
            s_cur = s0
            lam_a, lam_b = guess_lam(ca, s_cur), guess_lam(cb, s_cur)
            value = None
            for _ in range(30):
                diff, dsum_s, lam_a, lam_b = exact(s_cur, lam_a, lam_b)
                value = diff
                if abs(dsum_s - target) <= 2e-3 * target:
                    break
                if dsum_s < target:
                    lo_s, d_lo = s_cur, dsum_s
                else:
                    hi_s, d_hi = s_cur, dsum_s
                if hi_s is None:
                    s_cur = s_cur * min(4.0, max(1.1, np.sqrt(target / max(dsum_s, 1e-12))))
                else:
                    t = (target - d_lo) / (d_hi - d_lo)
                    s_cur = lo_s + min(max(t, 0.05), 0.95) * (hi_s - lo_s)
                    if hi_s - lo_s <= 1e-9 * hi_s:
                        break
            out[j] = value
    return lower, upper


def _fit(method: str, n, c, init=None, seed: int = 0) -> dict:
    if method == "npmle":
        return fit_npmle(n, c, init=None if init is None else init["weights"])
    if method == "beta_mixture":
        return fit_beta_mixture(n, c, init=init)
    raise ValueError(f"unknown method {method!r}; use 'npmle' or 'beta_mixture'")


def _first_negative(ks, diff) -> float:
    neg = np.flatnonzero(diff < 0)
    return float(ks[neg[0]]) if neg.size else np.inf


def k_star_set(ks, lower, upper) -> list | None:
    """Budgets that may be the first with ``D(k) < 0``, from pointwise intervals of ``D``.

    Returns ``[first k whose interval reaches below 0, first k whose interval
    lies below 0]`` (the upper end None if no interval lies below 0 on the
    grid), or None when every interval stays at or above 0 (no crossing up to
    the last budget). Intervals that are None (not calibrated) end the search.
    """
    lo_end = hi_end = None
    for k, lo, hi in zip(ks, lower, upper):
        if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
            break
        if lo_end is None and lo < 0:
            lo_end = float(k)
        if hi < 0:
            hi_end = float(k)
            break
    return None if lo_end is None else [lo_end, hi_end]


def extrapolate_pair(n_base, c_base, n_rl, c_rl, ks, *, method: str = "beta_mixture",
                     n_boot: int = 0, alpha: float = 0.05, seed: int = 0,
                     intervals: bool = True) -> dict:
    """Model-based pass@k of base and trained model, and ``D(k)``, for any budgets.

    Parameters
    ----------
    n_base, c_base, n_rl, c_rl
        ``(P,)`` counts on the same prompts.
    ks
        ``(K,)`` increasing budgets, may exceed ``n``.
    method
        The point prediction: "beta_mixture" (:func:`fit_beta_mixture`) or
        "npmle" (:func:`fit_npmle`).
    n_boot, seed
        Kept for compatibility and ignored: nothing here is random (the
        intervals are profile-likelihood intervals, the fits deterministic).
    alpha
        1 - level of the pointwise intervals.
    intervals
        Compute the intervals (False: the point predictions only).

    Returns
    -------
    dict
        ``model_based`` (True), ``method``, ``ks``, ``pass_base``, ``pass_rl``,
        ``diff`` (``(K,)`` each, the point prediction), ``k_star`` (first budget
        with ``D < 0``, None if none), ``fits`` (the point fits), and with
        ``intervals``: ``pass_base_lower``/``_upper``, ``pass_rl_lower``/
        ``_upper`` (:func:`profile_interval`), ``diff_lower``/``_upper``
        (:func:`difference_interval`), ``k_star_set`` (:func:`k_star_set`),
        ``interval``: "profile likelihood" and ``level``.

    Notes
    -----
    The intervals are those of the nonparametric likelihood (every rate
    distribution on the grid), whichever point method is chosen: they contain
    the prediction of every distribution the data cannot reject, so they carry
    the uncertainty of the choice of model, which a bootstrap within one
    parametric family does not (see docs/statistics.md for their measured
    coverage).
    """
    nb, cb = check_counts(n_base, c_base)
    nr, cr = check_counts(n_rl, c_rl)
    if nb.shape != nr.shape:
        raise ValueError("base and RL counts must be on the same prompts")
    ks = np.asarray(ks)
    fb, fr = _fit(method, nb, cb), _fit(method, nr, cr)
    pb, pr = mixture_pass_at_k(fb, ks), mixture_pass_at_k(fr, ks)
    ks_ = _first_negative(ks, pr - pb)
    out = {"model_based": True, "method": method, "ks": ks.tolist(), "pass_base": pb,
           "pass_rl": pr, "diff": pr - pb, "k_star": None if not np.isfinite(ks_) else ks_,
           "fits": {"base": fb, "rl": fr}}
    if intervals:
        level = 1.0 - alpha
        prof_b = profile_interval(nb, cb, ks, level=level,
                                  fit=fb if method == "npmle" else None)
        prof_r = profile_interval(nr, cr, ks, level=level,
                                  fit=fr if method == "npmle" else None)
        dlo, dhi = difference_interval(prof_r, prof_b)
        out.update({"pass_base_lower": prof_b["lower"], "pass_base_upper": prof_b["upper"],
                    "pass_rl_lower": prof_r["lower"], "pass_rl_upper": prof_r["upper"],
                    "diff_lower": dlo, "diff_upper": dhi,
                    "k_star_set": k_star_set(ks, dlo, dhi),
                    "interval": "profile likelihood", "level": level})
    return out
