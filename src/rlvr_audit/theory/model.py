"""The shared-strategy model.

Strategies ``s = 1..S`` and prompts ``x = 1..X`` with fitness ``F[s, x]`` in
[0, 1]: the success probability of strategy s on prompt x. A policy is a
mixture ``pi`` over strategies; its success on prompt x is
``p_x = sum_s pi_s F[s, x]`` and its pass@1 the prompt average of ``p``.

The exponential tilt ``pi_beta(s) ∝ pi_0(s) exp(beta * fbar_s)``, with
``fbar_s`` the prompt-averaged fitness, is exactly entropic mirror descent on
pass@1: the gradient of pass@1 in ``pi`` is the constant vector ``fbar``, so
``t`` mirror steps of size ``eta`` multiply by ``exp(eta * t * fbar)``.

References
----------
"No Free Lunch in RLVR" (seed 003), sections on the strategy model and tilt.
"""

from __future__ import annotations

import numpy as np


def check_model(F, pi=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate ``F`` (S, X) in [0, 1] and optionally a mixture ``pi`` (S,)."""
    F = np.asarray(F, dtype=float)
    if F.ndim != 2 or 0 in F.shape:
        raise ValueError(f"F must be a non-empty 2-D (strategies, prompts) array, got {F.shape}")
    if not np.all(np.isfinite(F)) or F.min() < 0 or F.max() > 1:
        raise ValueError("F must lie in [0, 1]")
    if pi is None:
        return F, None
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (F.shape[0],):
        raise ValueError(f"pi must have one weight per strategy ({F.shape[0]}), got {pi.shape}")
    if pi.min() < -1e-12 or abs(pi.sum() - 1) > 1e-9:
        raise ValueError("pi must be a probability vector (non-negative, summing to 1)")
    return F, np.clip(pi, 0, None)


def success(F, pi) -> np.ndarray:
    """Per-prompt success ``p = pi @ F``, shape ``(X,)``.

    Clipped to [0, 1]: a mixture summing to 1 + 1e-16 must not give p = 1 + 1e-16.
    """
    return np.clip(np.asarray(pi, float) @ np.asarray(F, float), 0.0, 1.0)


def pass1(F, pi) -> float:
    """pass@1 of mixture ``pi``: the prompt average of ``p``."""
    return float(success(F, pi).mean())


def fbar(F) -> np.ndarray:
    """Prompt-averaged fitness of each strategy, ``(S,)``."""
    return np.asarray(F, float).mean(axis=1)


def tilt(pi0, F, beta: float) -> np.ndarray:
    """Exponential tilt ``pi_beta ∝ pi_0 exp(beta fbar)`` (zero stays zero).

    Notes
    -----
    Computed in log space with a max shift, so large ``beta`` does not overflow.
    Strategies with ``pi_0(s) = 0`` keep zero mass for every ``beta``: the tilt
    preserves the support of the base (Invisible Leash, Thm C.1).
    """
    pi0 = np.asarray(pi0, float)
    logw = np.full(pi0.shape, -np.inf)
    on = pi0 > 0
    logw[on] = np.log(pi0[on]) + beta * fbar(F)[on]
    logw -= logw[on].max()
    w = np.exp(logw)
    return w / w.sum()


def mirror_descent(pi0, F, eta: float, steps: int) -> np.ndarray:
    """``steps`` entropic mirror-ascent steps on pass@1: ``pi <- pi * exp(eta * grad) / Z``.

    Returns
    -------
    numpy.ndarray
        ``(steps + 1, S)``: the iterates, starting with ``pi0``.
    """
    F = np.asarray(F, float)
    out = [np.asarray(pi0, float)]
    for _ in range(steps):
        pi = out[-1]
        grad = F @ np.ones(F.shape[1]) / F.shape[1]  # d pass@1 / d pi = fbar
        logw = np.where(pi > 0, np.log(np.where(pi > 0, pi, 1)) + eta * grad, -np.inf)
        logw -= logw[np.isfinite(logw)].max()
        w = np.exp(logw)
        out.append(w / w.sum())
    return np.array(out)


def entropy(pi) -> float:
    """Shannon entropy (nats) of a mixture."""
    pi = np.asarray(pi, float)
    nz = pi[pi > 0]
    return float(-(nz * np.log(nz)).sum())


def passk_curve(F, pi, ks) -> np.ndarray:
    """Plug-in pass@k of the mixture on real budgets ``ks``: ``mean_x 1 - (1 - p_x)^k``."""
    p = success(F, pi)
    ks = np.asarray(ks, float)
    q = np.clip(1 - p, 0, 1)
    with np.errstate(divide="ignore"):
        logq = np.log(q)  # (X,)
    return 1 - np.exp(np.outer(ks, logq)).mean(axis=1)  # (K,)
