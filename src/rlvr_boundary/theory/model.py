"""The shared-strategy model: fitness matrix, mixtures, the exponential tilt.

Strategies ``s = 1..S`` and prompts ``x = 1..X`` with fitness ``F[s, x]`` in
[0, 1]: the success probability of strategy s on prompt x. A policy is a
mixture ``pi`` over strategies; its success on prompt x is
``p_x = sum_s pi_s F[s, x]``, its pass@1 the prompt average of ``p`` and its
(plug-in) pass@k the prompt average of ``1 - (1 - p_x)^k``: within a prompt the
k samples are independent draws of a strategy and of a Bernoulli outcome.

The exponential tilt ``pi_beta(s) ∝ pi_0(s) exp(beta * fbar_s)``, with
``fbar_s`` the prompt-averaged fitness, is exactly entropic mirror descent on
pass@1: pass@1 is linear in ``pi`` with the constant gradient ``fbar``, and one
mirror step of size ``eta`` (the KL-proximal step
``argmax_q eta <fbar, q> - KL(q || pi)``) multiplies ``pi`` by
``exp(eta * fbar)``; ``t`` steps give the tilt at ``beta = eta * t``.
:func:`mirror_step_numeric` solves that proximal problem with a generic
optimizer, so the suite can check the equivalence without using the closed form.

Deviation from the paper: none in the model. Mixtures are validated and
refused (``ValueError``) when they are not probability vectors.

References
----------
"No Free Lunch in RLVR: every pass@1 gain has a pass@k price",
the strategy model and the tilt. A. Beck and M. Teboulle, "Mirror descent and
nonlinear projected subgradient methods for convex optimization", Operations
Research Letters 31 (2003).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from rlvr_boundary.core.passk import pass_at_k_plugin


def check_model(F, pi=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate a fitness matrix and, optionally, a mixture.

    Parameters
    ----------
    F
        ``(S, X)`` fitness in [0, 1].
    pi
        ``(S,)`` mixture (non-negative, summing to 1), or None.

    Returns
    -------
    tuple
        ``(F, pi)`` as float arrays (``pi`` clipped at 0 against -1e-13 noise).

    Raises
    ------
    ValueError
        For an empty or non-2-D ``F``, values outside [0, 1], or a ``pi`` of the
        wrong length or not a probability vector.
    """
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
    if not np.all(np.isfinite(pi)) or pi.min() < -1e-12 or abs(pi.sum() - 1) > 1e-9:
        raise ValueError("pi must be a probability vector (non-negative, summing to 1)")
    return F, np.clip(pi, 0, None)


def success(F, pi) -> np.ndarray:
    """Per-prompt success ``p_x = sum_s pi_s F[s, x]``.

    Returns
    -------
    numpy.ndarray
        ``(X,)``, clipped to [0, 1] (a mixture summing to 1 + 1e-16 must not give
        ``p = 1 + 1e-16``).
    """
    return np.clip(np.asarray(pi, float) @ np.asarray(F, float), 0.0, 1.0)  # (X,)


def pass1(F, pi) -> float:
    """pass@1 of mixture ``pi``: the prompt average of ``p``."""
    return float(success(F, pi).mean())


def fbar(F) -> np.ndarray:
    """Prompt-averaged fitness ``fbar_s = mean_x F[s, x]``, ``(S,)``: the gradient of pass@1 in ``pi``."""
    return np.asarray(F, float).mean(axis=1)


def passk_curve(F, pi, ks) -> np.ndarray:
    """Plug-in pass@k of the mixture on real budgets ``ks``.

    Returns
    -------
    numpy.ndarray
        ``(K,)``: ``mean_x 1 - (1 - p_x)^k`` (via :func:`rlvr_boundary.core.passk.pass_at_k_plugin`).
    """
    return pass_at_k_plugin(success(F, pi), ks).mean(axis=0)  # (X, K) -> (K,)


def tilt(pi0, F, beta: float) -> np.ndarray:
    """Exponential tilt ``pi_beta ∝ pi_0 exp(beta fbar)``.

    Parameters
    ----------
    pi0
        ``(S,)`` base mixture.
    F
        ``(S, X)`` fitness.
    beta
        Tilt strength (``beta >= 0`` is the RL direction; negative values are allowed).

    Returns
    -------
    numpy.ndarray
        ``(S,)`` mixture.

    Notes
    -----
    Computed in log space with a max shift, so ``beta = 1e6`` does not overflow.
    Strategies with ``pi_0(s) = 0`` keep exactly zero mass for every ``beta``:
    the tilt preserves the support of the base (Invisible Leash, Thm C.1).
    """
    pi0 = np.asarray(pi0, float)
    logw = np.full(pi0.shape, -np.inf)
    on = pi0 > 0
    logw[on] = np.log(pi0[on]) + beta * fbar(F)[on]
    logw -= logw[on].max()
    w = np.exp(logw)
    return w / w.sum()


def mirror_descent(pi0, F, eta: float, steps: int) -> np.ndarray:
    """Entropic mirror ascent on pass@1 in closed form: ``pi <- pi * exp(eta * fbar) / Z``.

    Returns
    -------
    numpy.ndarray
        ``(steps + 1, S)``: the iterates, starting with ``pi0``.
    """
    F = np.asarray(F, float)
    grad = fbar(F)  # (S,) d pass@1 / d pi, constant in pi
    out = [np.asarray(pi0, float)]
    for _ in range(steps):
        pi = out[-1]
        on = pi > 0
        logw = np.full(pi.shape, -np.inf)
        logw[on] = np.log(pi[on]) + eta * grad[on]
        logw -= logw[on].max()
        w = np.exp(logw)
        out.append(w / w.sum())
    return np.array(out)


def pass1_gradient_fd(F, pi, h: float = 1e-4) -> np.ndarray:
    """Gradient of pass@1 in ``pi`` by central finite differences (no closed form used).

    pass@1 is linear in ``pi``, so the differences are exact up to rounding.
    """
    F = np.asarray(F, float)
    pi = np.asarray(pi, float)
    f = lambda v: float(np.mean(v @ F))  # noqa: E731  unclipped pass@1
    E = np.eye(pi.size)
    return np.array([(f(pi + h * e) - f(pi - h * e)) / (2 * h) for e in E])


def mirror_step_numeric(pi, grad, eta: float) -> np.ndarray:
    """One entropic mirror step solved as its proximal problem by a generic optimizer.

    Parameters
    ----------
    pi
        ``(S,)`` current mixture.
    grad
        ``(S,)`` gradient of the objective at ``pi``.
    eta
        Step size.

    Returns
    -------
    numpy.ndarray
        ``argmax_{q in simplex, supp q ⊆ supp pi} eta <grad, q> - KL(q || pi)``,
        found with L-BFGS on softmax coordinates ``q = softmax(z)`` (gradient
        tolerance 1e-11; the result agrees with the optimum to ~1e-8). A reference
        implementation for the suite: it never uses the closed form
        ``q ∝ pi exp(eta grad)``. About 30 ms a call.
    """
    pi = np.asarray(pi, float)
    g = np.asarray(grad, float)
    on = pi > 0
    lp, gs = np.log(pi[on]), g[on]

    def obj(z):
        z = z - z.max()
        q = np.exp(z) / np.exp(z).sum()
        lq = z - np.log(np.exp(z).sum())
        val = -eta * gs @ q + q @ (lq - lp)
        dq = -eta * gs + lq + 1 - lp  # d val / d q
        return val, q * (dq - q @ dq)  # chain rule through the softmax Jacobian

    res = minimize(obj, np.zeros(on.sum()), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 500})
    z = res.x - res.x.max()
    out = np.zeros_like(pi)
    out[on] = np.exp(z) / np.exp(z).sum()
    return out


def entropy(pi) -> float:
    """Shannon entropy (nats) of a mixture."""
    pi = np.asarray(pi, float)
    nz = pi[pi > 0]
    return float(-(nz * np.log(nz)).sum())


def tv(p, q) -> float:
    """Total-variation distance ``0.5 * sum |p - q|``."""
    return float(0.5 * np.abs(np.asarray(p, float) - np.asarray(q, float)).sum())
