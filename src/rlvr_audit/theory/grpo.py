"""GRPO simulated on the strategy model, and its distance to the exponential tilt.

The policy is a softmax over strategy logits (strategies with ``pi_0(s) = 0``
have logit ``-inf`` and are never sampled, so they never receive gradient:
on-policy RL preserves the base's support). One step: draw ``batch`` prompts;
for each, sample a group of ``group`` strategies from ``pi`` and a Bernoulli
reward ``F[s, x]`` for each; advantages are the group-centred rewards, divided
by the group's standard deviation when ``std_norm`` (GRPO) and left centred
otherwise (Dr. GRPO); the logits move along ``lr * mean(A_i (e_{s_i} - pi))``.

Why this is *not* the tilt in general: the tilt is the natural-gradient
(entropic mirror descent) path, whose logit update is ``fbar_s - const``;
softmax policy gradient multiplies each strategy's update by ``pi_s`` (its
expected update is ``pi_s (fbar_s - pi . fbar)``), and the std normalization
reweights prompts by ``1/sqrt(p_x (1 - p_x))``. Closeness at matched entropy is
therefore a measured property of a setting (:func:`tv_to_tilt`), reported with
its distribution, not a theorem.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from rlvr_audit.theory.model import entropy, tilt


@dataclass
class GRPOSettings:
    """One simulation setting."""

    lr: float = 0.5
    group: int = 8
    batch: int = 16
    steps: int = 200
    std_norm: bool = True
    eps: float = 1e-6


def simulate_grpo(F, pi0, settings: GRPOSettings, rng: np.random.Generator) -> np.ndarray:
    """Final mixture after ``settings.steps`` GRPO steps from ``pi0``."""
    F = np.asarray(F, float)
    pi0 = np.asarray(pi0, float)
    S, X = F.shape
    logits = np.where(pi0 > 0, np.log(np.where(pi0 > 0, pi0, 1.0)), -np.inf)
    on = np.isfinite(logits)
    for _ in range(settings.steps):
        z = logits - logits[on].max()
        pi = np.where(on, np.exp(z), 0.0)
        pi /= pi.sum()
        xs = rng.integers(0, X, settings.batch)
        grad = np.zeros(S)
        for x in xs:
            s = rng.choice(S, size=settings.group, p=pi)
            r = (rng.random(settings.group) < F[s, x]).astype(float)
            a = r - r.mean()
            if settings.std_norm:
                a = a / (r.std() + settings.eps)
            # sum_i A_i (e_{s_i} - pi) / G
            g = np.bincount(s, weights=a, minlength=S) - a.sum() * pi
            grad += g / settings.group
        logits = np.where(on, logits + settings.lr * grad / settings.batch, -np.inf)
    z = logits - logits[on].max()
    pi = np.where(on, np.exp(z), 0.0)
    return pi / pi.sum()


def matched_tilt(F, pi0, target_entropy: float) -> tuple[np.ndarray, float]:
    """The tilt ``pi_beta`` (beta >= 0) whose entropy equals ``target_entropy``.

    Entropy decreases along the tilt from ``H(pi_0)`` towards the entropy of
    ``pi_0`` restricted to the best strategies; targets outside that range are
    clipped to its ends.
    """
    h0 = entropy(tilt(pi0, F, 0.0))
    if target_entropy >= h0:
        return tilt(pi0, F, 0.0), 0.0
    hi = 1.0
    while entropy(tilt(pi0, F, hi)) > target_entropy and hi < 1e6:
        hi *= 2
    if entropy(tilt(pi0, F, hi)) > target_entropy:
        return tilt(pi0, F, hi), hi
    beta = brentq(lambda b: entropy(tilt(pi0, F, b)) - target_entropy, 0.0, hi, xtol=1e-10)
    return tilt(pi0, F, beta), float(beta)


def tv_to_tilt(F, pi0, pi) -> dict:
    """Total-variation distance from ``pi`` to the tilt of the same entropy."""
    t, beta = matched_tilt(F, pi0, entropy(pi))
    return {"tv": float(0.5 * np.abs(np.asarray(pi) - t).sum()), "beta": beta,
            "entropy": entropy(pi)}
