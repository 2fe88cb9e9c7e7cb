"""Crossings of pass@k curves: observed counts, the bound, constructed instances.

The bound itself lives in :func:`rlvr_audit.core.compare.crossing_bound`
(generalized Descartes rule for the exponential sum
``D(k) = sum_j a_j q_j^k``); here we count observed sign changes of the
plug-in difference on a dense grid of real k, and build instances with a
prescribed number of crossings.
"""

from __future__ import annotations

import numpy as np

from rlvr_audit.core.compare import crossing_bound

DENSE_K = np.geomspace(1e-2, 1e5, 6000)


def plugin_diff(p_base, p_rl, ks=DENSE_K) -> np.ndarray:
    """Plug-in ``D(k) = pass@k(rl) - pass@k(base) = mean_x q_base^k - mean_x q_rl^k`` on real k.

    Evaluated on the distinct failure rates with their signed counts, so 200,000
    prompts with six distinct rates cost six terms.
    """
    qb = np.clip(1 - np.asarray(p_base, float), 0, 1)
    qr = np.clip(1 - np.asarray(p_rl, float), 0, 1)
    uq, inv = np.unique(np.concatenate([qb, qr]), return_inverse=True)
    w = np.bincount(inv, weights=np.concatenate([np.full(qb.size, 1.0 / qb.size),
                                                 np.full(qr.size, -1.0 / qr.size)]),
                    minlength=uq.size)  # (U,)
    keep = (w != 0) & (uq > 0)
    with np.errstate(divide="ignore"):
        lq = np.log(uq[keep])
    ks = np.asarray(ks, float)[:, None]
    return np.exp(ks * lq) @ w[keep]  # (K,)


def count_crossings(p_base, p_rl, ks=DENSE_K, tol: float = 1e-12) -> int:
    """Sign changes of the plug-in D(k) over ``ks`` (|D| <= tol counts as no sign)."""
    d = plugin_diff(p_base, p_rl, ks)
    d = d[np.abs(d) > tol]
    return int(np.count_nonzero(np.sign(d[1:]) != np.sign(d[:-1])))


def bound(p_base, p_rl) -> int:
    return crossing_bound(p_base, p_rl)["bound"]


def constructed(m: int, prompts: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """Base and RL success rates whose plug-in pass@k curves cross exactly ``m`` times.

    We choose ``m + 1`` failure rates ``q_j = exp(-4^-j)`` (term j matters around
    ``k ~ 4^j``) and the signed weights ``a_j`` of an exponential sum
    ``sum_j a_j q_j^k`` with roots at ``k = 2, 8, 32, ...``, one between each
    pair of adjacent scales (a linear system), normalise ``sum |a_j| = 1/2`` and
    realise it with ``prompts`` prompts: prompt counts ``|a_j| * prompts`` at
    ``q_j`` go to the base where ``a_j > 0`` and to RL where ``a_j < 0``; both
    models are padded with solved prompts (``q = 0``, which vanish for k >= 1)
    to the same prompt count. Coefficients alternate in sign, so the bound is m
    as well: these instances attain it.
    """
    if not 1 <= m <= 6:
        raise ValueError("m must be 1..6")
    q = np.exp(-(4.0 ** -np.arange(m + 1)))
    roots = 2.0 * 4.0 ** np.arange(m)
    # rows: sum_j a_j q_j^r = 0 at each root; last row fixes a_0 = 1.
    A = np.vstack([q[None, :] ** roots[:, None], np.eye(1, m + 1)])
    b = np.zeros(m + 1)
    b[-1] = 1.0
    a = np.linalg.solve(A, b)
    a = a / np.abs(a).sum() / 2
    counts = np.rint(np.abs(a) * prompts).astype(int)
    base = np.concatenate([np.repeat(q[a > 0], counts[a > 0])])
    rl = np.concatenate([np.repeat(q[a < 0], counts[a < 0])])
    P = max(base.size, rl.size)
    qb = np.concatenate([base, np.zeros(P - base.size)])
    qr = np.concatenate([rl, np.zeros(P - rl.size)])
    return 1 - qb, 1 - qr


def order_preserving_instance(rng, a: float, b: float, prompts: int = 60):
    """Difficulty-order-preserving pair: ``logit p_rl = a * logit p_base + b`` (a > 0).

    Base rates are drawn from Beta(0.5, 0.5) and half-sampled at 0 or 1 ends
    (unsolved prompts stay unsolved, solved ones stay solved). For ``a > 1`` the
    map sharpens (easy prompts easier, hard ones harder) with one fixed point,
    so every prompt's order is kept and each prompt changes sign at most once;
    whether the *aggregate* D(k) then crosses once is what the suite measures.
    """
    p = rng.beta(0.5, 0.5, prompts)
    p[rng.random(prompts) < 0.1] = 0.0
    with np.errstate(divide="ignore"):
        lg = np.log(p) - np.log1p(-p)
    pr = np.where(p > 0, 1 / (1 + np.exp(-(a * lg + b))), 0.0)
    return p, pr
