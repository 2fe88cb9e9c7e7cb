"""The price frontier: the best pass@1 reachable while every prompt keeps a floor.

For a floor ``tau`` in [0, 1] solve the linear programme

    maximize    pass@1(pi) = mean_x p_x(pi)
    subject to  p_x(pi) >= tau * p_x(pi_0)   for every prompt x,
                pi in the simplex,

(scipy HiGHS) and record the pass@1 gain over ``pi_0`` and the price, the worst
plug-in pass@k loss ``max_k max(0, pass@k(pi_0) - pass@k(pi))`` over a budget
grid. As ``tau`` goes from 0 to 1 the feasible set shrinks, so the best gain
is non-increasing in ``tau``; at ``tau = 1`` no prompt may get worse, so the
pass@k curves cannot cross, and when no free lunch exists (e.g. under
specialization) the best gain is exactly 0.

The tilt path ``pi_beta`` is drawn against it. The comparison that is a theorem
is *at equal floor*: the tilt at ``beta`` keeps every prompt above
``tau(beta) = min_x p_x(pi_beta) / p_x(pi_0)`` (:func:`achieved_floor`), so it
is feasible for the LP at that floor and its gain cannot exceed the frontier's
there. In the (price, gain) plane the frontier is a parametric curve, not the
solution of "max gain subject to price <= c" (that problem is not an LP), so a
tilt point may sit above the curve drawn there; the figure is a picture, the
floor comparison is the check.

Deviation from the paper: the paper does not state its floor grid or budget
grid; ours are options (21 floors, budgets 1..1024 by powers of two).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linprog

from rlvr_boundary.theory.model import check_model, pass1, passk_curve, success, tilt

DEFAULT_KS = 2.0 ** np.arange(11)  # 1, 2, 4, ..., 1024


def best_at_floor(F, pi0, tau: float) -> np.ndarray:
    """The pass@1-maximizing mixture with ``p_x >= tau * p_x(pi_0)`` for every prompt.

    Parameters
    ----------
    F
        ``(S, X)`` fitness.
    pi0
        ``(S,)`` base mixture (always feasible).
    tau
        Floor in [0, 1].

    Returns
    -------
    numpy.ndarray
        ``(S,)`` an optimal mixture (HiGHS; constraints met to ~1e-9).
    """
    F, pi0 = check_model(F, pi0)
    if not 0 <= tau <= 1:
        raise ValueError("tau must lie in [0, 1]")
    S, X = F.shape
    floor = tau * success(F, pi0)  # (X,)
    res = linprog(-F.mean(axis=1), A_ub=-F.T, b_ub=-floor + 1e-12, A_eq=np.ones((1, S)),
                  b_eq=[1.0], bounds=[(0, None)] * S, method="highs")
    if res.status != 0:
        raise RuntimeError(f"frontier LP failed at tau = {tau}: {res.message}")
    pi = np.clip(res.x, 0, None)
    return pi / pi.sum()


def best_at_floor_brute(F, pi0, tau: float, tol: float = 1e-9) -> float:
    """Best pass@1 at floor ``tau`` by enumerating every vertex of the feasible polytope.

    A reference for tests and the suite (exponential in size; keep ``S + X`` small).

    Notes
    -----
    The feasible set ``{pi >= 0, 1^T pi = 1, F^T pi >= tau p(pi_0)}`` is a
    non-empty (``pi_0`` is in it) bounded polytope, so a linear objective
    attains its maximum at a vertex: a point where ``S - 1`` of the inequality
    constraints are active together with the equality. We solve every such
    ``S x S`` system, keep the feasible solutions and return the best pass@1.
    """
    F, pi0 = check_model(F, pi0)
    S, X = F.shape
    A = np.vstack([F.T, np.eye(S)])  # (X + S, S) rows of A pi >= b
    b = np.concatenate([tau * success(F, pi0), np.zeros(S)])
    best = pass1(F, pi0)
    for rows in itertools.combinations(range(X + S), S - 1):
        M = np.vstack([A[list(rows)], np.ones((1, S))])  # (S, S)
        rhs = np.concatenate([b[list(rows)], [1.0]])
        if np.linalg.cond(M) > 1e10:  # not a vertex system (another subset defines that vertex)
            continue
        pi = np.linalg.solve(M, rhs)
        if np.all(A @ pi >= b - tol):
            best = max(best, float(np.mean(pi @ F)))
    return best


def achieved_floor(F, pi0, pi) -> float:
    """``min_x p_x(pi) / p_x(pi_0)`` over prompts the base solves at all, capped at 1.

    The largest ``tau`` at which ``pi`` is feasible for :func:`best_at_floor`.
    """
    p0, p = success(F, pi0), success(F, pi)
    live = p0 > 0
    if not live.any():
        return 1.0
    return float(min(1.0, np.min(p[live] / p0[live])))


def point(F, pi0, pi, ks=DEFAULT_KS) -> dict:
    """Gain, price and floor of mixture ``pi`` against ``pi0``.

    Returns
    -------
    dict
        ``gain`` (pass@1 difference), ``price`` (worst plug-in pass@k loss on
        ``ks``), ``price_k`` (where; None when the price is 0), ``floor``
        (:func:`achieved_floor`), ``pi``.
    """
    ks = np.asarray(ks, float)
    loss = passk_curve(F, pi0, ks) - passk_curve(F, pi, ks)  # (K,)
    j = int(np.argmax(loss))
    return {"gain": pass1(F, pi) - pass1(F, pi0), "price": float(max(0.0, loss[j])),
            "price_k": float(ks[j]) if loss[j] > 0 else None,
            "floor": achieved_floor(F, pi0, pi), "pi": pi}


def price_frontier(F, pi0, taus=None, ks=DEFAULT_KS) -> list[dict]:
    """The frontier over floors ``taus`` (default 0, 0.05, ..., 1): ``tau`` plus :func:`point`."""
    taus = np.linspace(0, 1, 21) if taus is None else np.asarray(taus, float)
    return [{"tau": float(t), **point(F, pi0, best_at_floor(F, pi0, t), ks)} for t in taus]


def tilt_path(F, pi0, betas=None, ks=DEFAULT_KS) -> list[dict]:
    """The tilt ``pi_beta`` along ``betas`` (default 0 and 40 values 0.05..200).

    Returns one dict per beta: ``beta`` plus the fields of :func:`point`.
    """
    betas = np.concatenate([[0.0], np.geomspace(0.05, 200, 40)]) if betas is None else betas
    return [{"beta": float(b), **point(F, pi0, tilt(pi0, F, b), ks)} for b in betas]


def best_drawn_gain(front, price: float, tol: float = 1e-8) -> float:
    """The highest gain the drawn frontier offers at a price of at most ``price``.

    The frontier is drawn as straight segments joining its points in floor order.
    This is the maximum of the gains of frontier points with price <= ``price``
    and of every segment's linear interpolation at ``price`` where the segment
    spans it; ``-inf`` when no point or segment qualifies. ``tol`` absorbs LP
    round-off in the prices (the floor-1 point has price 0 up to ~1e-10).
    """
    pr = np.array([r["price"] for r in front], float)  # (T,)
    g = np.array([r["gain"] for r in front], float)  # (T,)
    best = float(g[pr <= price + tol].max()) if np.any(pr <= price + tol) else -np.inf
    for (p0, g0), (p1, g1) in zip(zip(pr[:-1], g[:-1]), zip(pr[1:], g[1:])):
        lo, hi = min(p0, p1), max(p0, p1)
        if lo - tol <= price <= hi + tol and hi > lo:
            best = max(best, float(g0 + (g1 - g0) * (price - p0) / (p1 - p0)))
    return best


def above_frontier(F, pi0, front, path, ks=DEFAULT_KS, tol: float = 1e-7) -> list[dict]:
    """Tilt points that lie above the drawn frontier in the (price, gain) plane, and why.

    The frontier is not "the best gain at a given price": each of its points is
    the LP optimum at a floor ``tau`` on every prompt, and its price is measured
    afterwards. So a tilt point can sit above the drawn line, for one of two
    reasons, told apart here by solving the LP at the tilt point's own floor
    ``tau(beta)`` (:func:`achieved_floor`):

    - ``"floor grid"``: that LP solution has at least the tilt's gain at no more
      than its price. The frontier is only computed on a finite grid of floors
      and drawn with straight lines between them; the tilt point falls between
      two grid floors, where the true frontier bulges above the straight line.
    - ``"floor, not price"``: that LP solution has at least the tilt's gain (the
      theorem) but a higher price: the floor constraint and the worst-case pass@k
      loss rank mixtures differently, and the tilt spreads its losses so that its
      worst one is smaller.

    Parameters
    ----------
    F, pi0
        ``(S, X)`` fitness and ``(S,)`` base mixture.
    front, path
        Outputs of :func:`price_frontier` and :func:`tilt_path` on the same ``ks``.
    ks
        Budget grid of the price.
    tol
        Slack of the comparisons (LP constraints are met to about 1e-9).

    Returns
    -------
    list of dict
        One per tilt point above the line: ``index`` into ``path``, ``beta``,
        ``floor``, ``excess`` (its gain minus :func:`best_drawn_gain` at its
        price), ``reason``, and the LP point at that floor (``lp_gain``,
        ``lp_price``).
    """
    out = []
    for i, t in enumerate(path):
        excess = t["gain"] - best_drawn_gain(front, t["price"])
        if excess <= tol:
            continue
        lp = point(F, pi0, best_at_floor(F, pi0, t["floor"]), ks)
        reason = "floor grid" if lp["price"] <= t["price"] + tol else "floor, not price"
        out.append({"index": i, "beta": t["beta"], "floor": t["floor"], "excess": excess,
                    "reason": reason,
                    "lp_gain": lp["gain"], "lp_price": lp["price"]})
    return out
