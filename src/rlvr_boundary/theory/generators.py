"""Six documented random instance generators of the strategy model.

Each takes a ``numpy.random.Generator`` and sizes and returns ``(F, pi0)``:
``F`` of shape ``(S, X)`` (strategies x prompts) with entries in [0, 1] and
``pi0`` an interior mixture drawn from Dirichlet(1) (every strategy has mass).
The families span the cases of the paper, from generic (free lunches common)
to specialized (free lunches impossible):

1. :func:`uniform`: i.i.d. ``U[0, 1]`` fitness; generic.
2. :func:`sparse_binary`: i.i.d. ``Bernoulli(density)`` fitness in {0, 1};
   solvable-or-not strategies, many ties and zero rows/columns.
3. :func:`exclusive_blocks`: exclusive specialization (each strategy has
   ``per`` prompts only it solves) plus sparse shared prompts.
4. :func:`dominant`: dominant specialization of strength ``delta``
   (:mod:`.specialization`), with its blocks.
5. :func:`universal_plus_specialists`: a near-universal strategy plus
   specialists, the family of the 3x3 counterexample (free lunches possible
   although every strategy ranks first somewhere).
6. :func:`difficulty_nested`: prompts ordered by difficulty, strategies nested
   by how far down the order they reach.

Deviation from the paper: its generators are not published; these are ours,
chosen to cover the same named families.
"""

from __future__ import annotations

import numpy as np


def _pi0(rng, S):
    return rng.dirichlet(np.ones(S))


def uniform(rng, S: int = 4, X: int = 12):
    """``F[s, x] ~ U[0, 1]`` independently."""
    return rng.uniform(size=(S, X)), _pi0(rng, S)


def sparse_binary(rng, S: int = 4, X: int = 12, density: float = 0.4):
    """``F[s, x] ~ Bernoulli(density)`` in {0, 1} independently (all-zero rows and columns allowed)."""
    F = (rng.random((S, X)) < density).astype(float)
    return F, _pi0(rng, S)


def exclusive_blocks(rng, S: int = 4, X: int = 16, per: int = 2):
    """Exclusive specialization.

    Prompts ``s*per .. (s+1)*per - 1`` are solved by strategy s only (fitness
    ``U[0.2, 1]``, every other strategy 0); the remaining ``X - S*per`` shared
    prompts get ``U[0, 1]`` fitness kept with probability 0.6. Requires
    ``X >= S * per``.
    """
    if X < S * per:
        raise ValueError("need X >= S * per")
    F = rng.uniform(0, 1, (S, X)) * (rng.random((S, X)) < 0.6)  # (S, X)
    for s in range(S):
        cols = np.arange(s * per, (s + 1) * per)
        F[:, cols] = 0.0
        F[s, cols] = rng.uniform(0.2, 1.0, per)
    return F, _pi0(rng, S)


def dominant(rng, S: int = 4, X: int = 16, delta: float = 0.1):
    """Dominant specialization of strength ``delta``; returns ``(F, pi0, blocks)``.

    Prompts are split into S consecutive blocks of ``X // S`` (the remainder
    joins the last block; ``X >= S``). Strategy s has fitness ``U[a, 1]`` on
    its own block, with ``a ~ U[0.6, 1]`` per instance, and ``U[0, e_max]``
    elsewhere with ``e_max = (a - delta) / (2 (S - 1))``, so every off-block
    mean is below ``e_max`` and the margin
    ``min_s G[s,s] - 2 (S-1) max_{s!=t} G[s,t] >= a - (a - delta) = delta``
    holds by construction.
    """
    if X < S:
        raise ValueError("need X >= S")
    blocks = np.minimum(np.arange(X) // max(1, X // S), S - 1)  # (X,)
    a = rng.uniform(0.6, 1.0)
    e_max = (a - delta) / (2 * max(S - 1, 1))
    F = rng.uniform(0, e_max, (S, X))
    for s in range(S):
        F[s, blocks == s] = rng.uniform(a, 1.0, np.count_nonzero(blocks == s))
    return F, _pi0(rng, S), blocks


def universal_plus_specialists(rng, S: int = 3, X: int = 9):
    """A near-universal strategy plus ``S - 1`` specialists.

    Strategy 0 (the generalist) has fitness ``U[0.5, 0.8]`` everywhere; the
    prompts are split at random into ``S - 1`` niches and specialist s has
    ``U[0.8, 1]`` on its niche and ``U[0, 0.5]`` elsewhere. Every specialist
    ranks first on its niche; whether a free lunch exists (mass from the
    specialists to the generalist helping every prompt) varies: this is the
    family of :func:`rlvr_boundary.theory.specialization.three_by_three`.
    """
    X = max(X, S)
    F = np.empty((S, X))
    F[0] = rng.uniform(0.5, 0.8, X)  # the generalist
    niche = np.array_split(rng.permutation(X), S - 1)
    for s in range(1, S):
        F[s] = rng.uniform(0.0, 0.5, X)
        F[s, niche[s - 1]] = rng.uniform(0.8, 1.0, niche[s - 1].size)
    return F, _pi0(rng, S)


def difficulty_nested(rng, S: int = 4, X: int = 16):
    """Difficulty-ordered prompts and nested strategies.

    Prompt difficulties ``d_x`` are sorted uniforms and strategy reaches
    ``c_s`` sorted uniforms: strategy s has fitness ``U[0.7, 1]`` on prompts
    with ``d_x <= c_s`` and ``exp(-8 (d_x - c_s)) * U[0.1, 0.6]`` beyond its
    reach, so deeper strategies solve a superset of the easy prompts well and
    every strategy's fitness decays with difficulty past its reach.
    """
    difficulty = np.sort(rng.uniform(size=X))  # (X,)
    cuts = np.sort(rng.uniform(size=S))  # (S,)
    F = np.empty((S, X))
    for s in range(S):
        F[s] = np.where(difficulty <= cuts[s], rng.uniform(0.7, 1.0, X),
                        np.exp(-8 * (difficulty - cuts[s])) * rng.uniform(0.1, 0.6, X))
    return F, _pi0(rng, S)


#: The six generators by name, each ``(rng, **sizes) -> (F, pi0)``.
GENERATORS = {
    "uniform": uniform,
    "sparse_binary": sparse_binary,
    "exclusive_blocks": exclusive_blocks,
    "dominant": lambda rng, **kw: dominant(rng, **kw)[:2],
    "universal_plus_specialists": universal_plus_specialists,
    "difficulty_nested": difficulty_nested,
}
