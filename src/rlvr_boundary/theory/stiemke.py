"""Stiemke's alternative: a free lunch, or strictly positive equalizing prompt weights.

A *free lunch* is a change of mixture ``d`` (``sum d = 0``) that hurts no prompt
and helps some: ``F^T d >= 0`` and ``F^T d != 0``. Stiemke's lemma (applied to
the matrix ``F^T`` with the constraint ``1^T d = 0``) says exactly one holds:

1. a free lunch ``d`` exists, or
2. there are strictly positive prompt weights ``w > 0`` under which every
   strategy has the same weighted fitness: ``F w = c 1``.

Both sides are solved as LPs with scipy's HiGHS and checked to disagree. The
certificates are verified independently of the solver
(:func:`check_direction`, :func:`check_weights`).

References
----------
E. Stiemke, "Über positive Lösungen homogener linearer Gleichungen",
Math. Ann. 76 (1915). "No Free Lunch in RLVR: every pass@1 gain has a pass@k price".
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

#: Decision threshold: a free-lunch gain or a positive weight margin below this is 0.
TOL = 1e-9
#: HiGHS primal/dual feasibility tolerance, 10x below TOL so that a solution the LP
#: calls feasible also passes the independent certificate checks at TOL.
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def free_lunch_direction(F) -> np.ndarray | None:
    """A free-lunch direction ``d`` (max total gain, ``|d_s| <= 1``), or None.

    LP: maximize ``1^T F^T d`` subject to ``F^T d >= 0``, ``1^T d = 0``,
    ``-1 <= d <= 1``. A free lunch exists iff the optimum is positive; we
    report one when the best direction raises some prompt by more than
    :data:`TOL` (1e-9), our resolution: fitness differences below it are 0.
    """
    F = np.asarray(F, float)
    S, X = F.shape
    res = linprog(-F.sum(axis=1), A_ub=-F.T, b_ub=np.zeros(X), A_eq=np.ones((1, S)), b_eq=[0.0],
                  bounds=[(-1, 1)] * S, method="highs", options=_HIGHS)
    if res.status == 2:  # d = 0 is always feasible: "infeasible" is the tight tolerances'
        res = linprog(-F.sum(axis=1), A_ub=-F.T, b_ub=np.zeros(X), A_eq=np.ones((1, S)),
                      b_eq=[0.0], bounds=[(-1, 1)] * S, method="highs")
    if res.status != 0:
        raise RuntimeError(f"free-lunch LP failed: {res.message}")
    # Decide on the largest single-prompt gain, the quantity the certificate check tests.
    if -res.fun <= TOL or (F.T @ res.x).max() <= TOL:
        return None
    return res.x


def equalizing_weights(F) -> tuple[np.ndarray, float] | None:
    """Strictly positive ``w`` (summing to 1) with ``F w = c 1``, and ``c``; or None.

    LP over ``(w, c, t)``: maximize ``t`` subject to ``F w - c 1 = 0``,
    ``sum w = 1``, ``w_x >= t``. Strictly positive weights exist iff ``t* > 0``.
    """
    F = np.asarray(F, float)
    S, X = F.shape
    # variables: w (X), c (1), t (1)
    cost = np.zeros(X + 2)
    cost[-1] = -1.0
    A_eq = np.zeros((S + 1, X + 2))
    A_eq[:S, :X] = F
    A_eq[:S, X] = -1.0
    A_eq[S, :X] = 1.0
    b_eq = np.zeros(S + 1)
    b_eq[S] = 1.0
    A_ub = np.zeros((X, X + 2))
    A_ub[:, :X] = -np.eye(X)
    A_ub[:, -1] = 1.0  # t - w_x <= 0
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(X), A_eq=A_eq, b_eq=b_eq,
                  bounds=[(0, None)] * X + [(None, None), (None, 1.0)], method="highs",
                  options=_HIGHS)
    if res.status != 0:
        return None  # infeasible even with t free: no equalizing weights at all
    if -res.fun <= TOL:
        return None
    return res.x[:X], float(res.x[X])


def check_direction(F, d, tol: float = TOL) -> bool:
    """Independent check of a free-lunch certificate: sum 0, ``F^T d >= 0``, some entry > 0."""
    g = np.asarray(F, float).T @ np.asarray(d, float)
    return bool(abs(np.sum(d)) <= tol and g.min() >= -tol and g.max() > tol)


def check_weights(F, w, tol: float = TOL) -> bool:
    """Independent check of the dual certificate: ``w > 0`` and ``F w`` constant."""
    w = np.asarray(w, float)
    v = np.asarray(F, float) @ w
    return bool(w.min() > 0 and np.ptp(v) <= tol * max(1.0, abs(v).max()))


def alternative(F) -> dict:
    """Solve both sides; exactly one must hold.

    Returns
    -------
    dict
        ``free_lunch`` (bool), ``direction`` or None, ``weights`` or None, ``c``,
        ``exactly_one`` (the two LPs disagree), ``certificate_ok`` (the
        certificate of the side that holds verifies independently).
    """
    d = free_lunch_direction(F)
    eq = equalizing_weights(F)
    w, c = (eq if eq is not None else (None, None))
    exactly_one = (d is None) != (w is None)
    ok = check_direction(F, d) if d is not None else (check_weights(F, w) if w is not None else False)
    return {"free_lunch": d is not None, "direction": d, "weights": w, "c": c,
            "exactly_one": exactly_one, "certificate_ok": ok}
