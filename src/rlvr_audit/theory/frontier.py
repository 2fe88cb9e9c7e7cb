"""The price frontier: the best pass@1 reachable while keeping every prompt above a floor.

For a floor ``tau`` in [0, 1] solve the LP

    maximize  pass@1(pi) = mean_x p_x(pi)
    subject to  p_x(pi) >= tau * p_x(pi_0)  for every prompt x,  pi in the simplex,

and record the pass@1 gain over ``pi_0`` and the worst pass@k loss
``max_k max(0, pass@k(pi_0) - pass@k(pi))`` over a budget grid (plug-in pass@k
of the mixture). As ``tau`` goes from 0 to 1 this traces the trade-off: at
``tau = 1`` no prompt may get worse, so under specialization (no free lunch)
the gain is exactly 0, and in general the curves cannot cross (every prompt is
at least as good). The tilt path ``pi_beta`` is drawn against it: any RL
path that lies above the frontier would contradict the LP's optimality.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from rlvr_audit.theory.model import check_model, pass1, passk_curve, success, tilt

DEFAULT_KS = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])


def best_at_floor(F, pi0, tau: float) -> np.ndarray:
    """The pass@1-maximizing mixture with ``p_x >= tau * p_x(pi_0)`` for all x."""
    F, pi0 = check_model(F, pi0)
    if not 0 <= tau <= 1:
        raise ValueError("tau must lie in [0, 1]")
    S, X = F.shape
    floor = tau * success(F, pi0)
    res = linprog(-F.mean(axis=1), A_ub=-F.T, b_ub=-floor + 1e-12, A_eq=np.ones((1, S)),
                  b_eq=[1.0], bounds=[(0, None)] * S, method="highs")
    if res.status != 0:
        raise RuntimeError(f"frontier LP failed at tau = {tau}: {res.message}")
    pi = np.clip(res.x, 0, None)
    return pi / pi.sum()


def _point(F, pi0, pi, ks) -> dict:
    loss = passk_curve(F, pi0, ks) - passk_curve(F, pi, ks)
    j = int(np.argmax(loss))
    return {"gain": pass1(F, pi) - pass1(F, pi0), "price": float(max(0.0, loss[j])),
            "price_k": float(ks[j]) if loss[j] > 0 else None, "pi": pi}


def price_frontier(F, pi0, taus=None, ks=DEFAULT_KS) -> list[dict]:
    """(tau, pass@1 gain, worst pass@k loss) along floors ``taus`` (default 0..1 by 0.05)."""
    taus = np.linspace(0, 1, 21) if taus is None else np.asarray(taus, float)
    return [{"tau": float(t), **_point(F, pi0, best_at_floor(F, pi0, t), ks)} for t in taus]


def tilt_path(F, pi0, betas=None, ks=DEFAULT_KS) -> list[dict]:
    """(beta, pass@1 gain, worst pass@k loss) along the exponential tilt."""
    betas = np.concatenate([[0.0], np.geomspace(0.05, 200, 40)]) if betas is None else betas
    return [{"beta": float(b), **_point(F, pi0, tilt(pi0, F, b), ks)} for b in betas]


def brute_force_best(F, pi0, tau: float, grid: int = 200) -> float:
    """Best pass@1 at floor tau by exhaustive search over a simplex grid (S <= 3; for tests)."""
    F, pi0 = check_model(F, pi0)
    S = F.shape[0]
    floor = tau * success(F, pi0)
    best = -np.inf
    if S == 2:
        cands = [np.array([a, 1 - a]) for a in np.linspace(0, 1, grid + 1)]
    elif S == 3:
        cands = [np.array([i, j, grid - i - j]) / grid for i in range(grid + 1)
                 for j in range(grid + 1 - i)]
    else:
        raise ValueError("brute force supports S = 2 or 3")
    cands.append(pi0)  # always feasible (at tau = 1 it may be the only feasible point)
    for pi in cands:
        if np.all(success(F, pi) >= floor - 1e-12):
            best = max(best, pass1(F, pi))
    return best
