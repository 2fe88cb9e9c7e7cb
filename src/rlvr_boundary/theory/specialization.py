"""Specialization conditions under which no free lunch exists, and a counterexample.

Definitions (ours, written down because the paper leaves "dominant" open):

**Exclusive specialization.** Every strategy s has a prompt x that only it
solves: ``F[s, x] > 0`` and ``F[s', x] = 0`` for all ``s' != s``.

*Claim (no free lunch).* Suppose ``d`` moves mass between strategies
(``sum d = 0``) and hurts no prompt (``F^T d >= 0``). On s's exclusive prompt,
``(F^T d)_x = d_s F[s, x] >= 0`` so ``d_s >= 0`` for every s; with ``sum d = 0``
this forces ``d = 0``, hence ``F^T d = 0``: no direction helps some prompt
without hurting another.

**Dominant specialization of strength delta.** The prompts are partitioned into
S non-empty blocks ``B_1..B_S``; let ``G[s, t]`` be strategy s's mean fitness
on block t. The specialization is dominant of strength ``delta > 0`` when

    min_s G[s, s]  -  2 (S - 1) max_{s != t} G[s, t]  >=  delta.

*Claim (no free lunch).* Give every prompt of block t the weight ``u_t / |B_t|``
with ``u = G^{-1} 1``. Write ``G = D + O`` (diagonal, off-diagonal), ``a`` the
smallest diagonal entry and ``e`` the largest off-diagonal one. From
``u = D^{-1}(1 - O u)``, ``||u||_inf <= 1 / (a - (S-1) e)`` and
``(O u)_s <= (S-1) e ||u||_inf < 1`` because ``2 (S-1) e < a``; so every
``u_s > 0``. Then ``F w = G u = 1`` with ``w > 0``, which by Stiemke's
alternative (:mod:`.stiemke`) rules out a free lunch. Ranking first on one's
own prompts is not enough: see :func:`three_by_three`.
"""

from __future__ import annotations

import numpy as np


def exclusive_prompts(F) -> list[np.ndarray]:
    """For each strategy, the prompts only it solves."""
    F = np.asarray(F, float)
    pos = F > 0
    only = pos & (pos.sum(axis=0, keepdims=True) == 1)
    return [np.flatnonzero(only[s]) for s in range(F.shape[0])]


def is_exclusive(F) -> bool:
    """Exclusive specialization: every strategy has a prompt only it solves."""
    return all(e.size for e in exclusive_prompts(F))


def block_means(F, blocks) -> np.ndarray:
    """``G[s, t]``: mean fitness of strategy s on block t (``blocks[x]`` = block of x)."""
    F = np.asarray(F, float)
    blocks = np.asarray(blocks)
    S = F.shape[0]
    if blocks.shape != (F.shape[1],) or set(np.unique(blocks)) != set(range(S)):
        raise ValueError("blocks must assign every prompt to one of the S blocks, each non-empty")
    return np.stack([F[:, blocks == t].mean(axis=1) for t in range(S)], axis=1)


def dominance_margin(F, blocks) -> float:
    """``min_s G[s,s] - 2 (S-1) max_{s!=t} G[s,t]``: dominant of strength delta iff >= delta > 0."""
    G = block_means(F, blocks)
    S = G.shape[0]
    off = G[~np.eye(S, dtype=bool)]
    return float(np.diag(G).min() - 2 * (S - 1) * (off.max() if off.size else 0.0))


def equalizing_weights_from_blocks(F, blocks) -> np.ndarray:
    """The certificate of the dominant-specialization claim: ``w > 0`` with ``F w = 1``."""
    G = block_means(F, blocks)
    u = np.linalg.solve(G, np.ones(G.shape[0]))
    blocks = np.asarray(blocks)
    sizes = np.bincount(blocks, minlength=G.shape[0])
    return u[blocks] / sizes[blocks]


def argmax_blocks(F) -> np.ndarray | None:
    """Blocks for a user matrix: each prompt goes to the strategy that fits it best.

    Returns
    -------
    numpy.ndarray or None
        ``(X,)`` block index per prompt (ties to the lowest index), or None when
        some strategy is best on no prompt (then no partition into S non-empty
        own-blocks exists by this rule and the dominance test does not apply).
    """
    F = np.asarray(F, float)
    blocks = np.argmax(F, axis=0)  # (X,)
    if np.unique(blocks).size != F.shape[0]:
        return None
    return blocks


def specialization_report(F) -> dict:
    """Which of our sufficient conditions a matrix meets (for ``theory diagnose``).

    Returns
    -------
    dict
        ``exclusive`` (bool), ``exclusive_prompts`` (per strategy, the indices of
        prompts only it solves), ``dominance_margin`` under :func:`argmax_blocks`
        (None when those blocks do not exist) and ``dominant`` (margin > 0).
    """
    blocks = argmax_blocks(F)
    margin = dominance_margin(F, blocks) if blocks is not None else None
    return {"exclusive": is_exclusive(F),
            "exclusive_prompts": [e.tolist() for e in exclusive_prompts(F)],
            "dominance_margin": margin, "dominant": bool(margin is not None and margin > 0)}


def three_by_three() -> np.ndarray:
    """Each strategy ranks first on some prompt, yet a free lunch exists.

    Two specialists (1 on their own prompt, 0 on the other's, 0.6 on the third)
    and a generalist (0.6, 0.6, 0.7) that ranks first only on the third prompt.
    Moving half a unit of mass from each specialist to the generalist,
    ``d = (-1/2, -1/2, 1)``, changes every prompt's success by ``+0.1``.
    """
    return np.array([[1.0, 0.0, 0.6],
                     [0.0, 1.0, 0.6],
                     [0.6, 0.6, 0.7]])
