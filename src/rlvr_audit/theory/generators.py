"""Six documented random instance generators ``F[s, x]`` (strategies x prompts).

Each takes a ``numpy.random.Generator`` and sizes and returns ``(F, pi0)``
with ``pi0`` a random interior mixture (Dirichlet(1)) unless stated.

1. :func:`uniform`: ``F ~ U[0, 1]`` independently. Generic: free lunches are common.
2. :func:`sparse_binary`: ``F[s, x] ~ Bernoulli(density)`` in {0, 1}.
3. :func:`exclusive_blocks`: exclusive specialization (every strategy has
   prompts only it solves) plus shared prompts with random fitness.
4. :func:`dominant`: dominant specialization of strength ``delta``
   (:mod:`.specialization`): block-diagonal means ``a`` on own blocks, small
   off-block fitness, with the margin condition enforced.
5. :func:`universal_plus_specialists`: one near-universal strategy with good
   fitness everywhere and specialists that are excellent on their niche and
   weak elsewhere (the family of the 3x3 counterexample).
6. :func:`difficulty_nested`: prompts ordered by difficulty and nested
   strategies: strategy s solves the first ``cut_s`` prompts with high fitness
   and the rest with fitness decaying in difficulty.
"""

from __future__ import annotations

import numpy as np


def _pi0(rng, S):
    return rng.dirichlet(np.ones(S))


def uniform(rng, S=4, X=12):
    return rng.uniform(size=(S, X)), _pi0(rng, S)


def sparse_binary(rng, S=4, X=12, density=0.4):
    F = (rng.random((S, X)) < density).astype(float)
    return F, _pi0(rng, S)


def exclusive_blocks(rng, S=4, X=16, per=2):
    F = rng.uniform(0, 1, (S, X)) * (rng.random((S, X)) < 0.6)
    for s in range(S):
        cols = np.arange(s * per, (s + 1) * per)
        F[:, cols] = 0.0
        F[s, cols] = rng.uniform(0.2, 1.0, per)
    return F, _pi0(rng, S)


def dominant(rng, S=4, X=16, delta=0.1):
    """Blocks of X // S prompts (the rest in the last block); margin >= delta by construction."""
    blocks = np.minimum(np.arange(X) // max(1, X // S), S - 1)
    a = rng.uniform(0.6, 1.0)
    e_max = (a - delta) / (2 * (S - 1))
    F = rng.uniform(0, e_max, (S, X))
    for s in range(S):
        F[s, blocks == s] = rng.uniform(a, 1.0, np.count_nonzero(blocks == s))
    return F, _pi0(rng, S), blocks


def universal_plus_specialists(rng, S=3, X=9):
    X = max(X, S)
    F = np.empty((S, X))
    F[0] = rng.uniform(0.5, 0.8, X)  # the generalist
    niche = np.array_split(rng.permutation(X), S - 1)
    for s in range(1, S):
        F[s] = rng.uniform(0.0, 0.5, X)
        F[s, niche[s - 1]] = rng.uniform(0.8, 1.0, niche[s - 1].size)
    return F, _pi0(rng, S)


def difficulty_nested(rng, S=4, X=16):
    difficulty = np.sort(rng.uniform(size=X))
    cuts = np.sort(rng.uniform(size=S))
    F = np.empty((S, X))
    for s in range(S):
        F[s] = np.where(difficulty <= cuts[s], rng.uniform(0.7, 1.0, X),
                        np.exp(-8 * (difficulty - cuts[s])) * rng.uniform(0.1, 0.6, X))
    return F, _pi0(rng, S)


GENERATORS = {
    "uniform": uniform,
    "sparse_binary": sparse_binary,
    "exclusive_blocks": exclusive_blocks,
    "dominant": lambda rng, **kw: dominant(rng, **kw)[:2],
    "universal_plus_specialists": universal_plus_specialists,
    "difficulty_nested": difficulty_nested,
}
