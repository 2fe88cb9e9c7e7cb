"""Crossings of pass@k curves: observed counts, the bound, constructed and order-preserving instances.

The bound is :func:`rlvr_boundary.core.compare.crossing_bound` (Laguerre's rule of
signs for the exponential sum ``D(k) = sum_j a_j q_j^k``, with the sharper
``V - 1`` when k = 0 is a root); sign changes are counted with
:func:`rlvr_boundary.core.compare.sign_changes`. Here we evaluate the plug-in
difference on a dense log grid of real k, and build instances.

Two grids: :data:`DENSE_K` covers real ``k`` in [1e-2, 1e6] and is used to check
the bound (which holds for every real k > 0, so counting roots below k = 1 makes
the check stricter); :data:`BUDGET_K` covers [1, 1e6], the budgets one can
actually spend, and is used for the single-crossing measurement. A grid can
miss two roots closer than its spacing (a factor 1.006 in k); that can only
*under*-count, so a reported violation of the bound is never a grid artefact.
Beyond the grid's end the sign of ``D`` is known exactly (the term of the
largest failure rate dominates), so a last crossing past 1e6 is still counted.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core.compare import crossing_bound, sign_changes

DENSE_K = np.geomspace(1e-2, 1e6, 3000)
BUDGET_K = np.geomspace(1.0, 1e6, 2500)


def _exp_sum(eb: dict, ks) -> np.ndarray:
    q, a = np.asarray(eb["q"]), np.asarray(eb["a"])  # (U,)
    ks = np.asarray(ks, float)
    if q.size == 0:
        return np.zeros(ks.size)
    return np.exp(np.outer(ks, np.log(q))) @ a  # (K, U) @ (U,) -> (K,)


def plugin_diff(p_base, p_rl, ks=DENSE_K) -> np.ndarray:
    """Plug-in ``D(k) = pass@k(rl) - pass@k(base)`` on real budgets ``ks``.

    Parameters
    ----------
    p_base, p_rl
        ``(P,)`` success rates of the same prompts.
    ks
        ``(K,)`` real budgets > 0.

    Returns
    -------
    numpy.ndarray
        ``(K,)``. Evaluated as the exponential sum ``sum_j a_j q_j^k`` over the
        distinct failure rates returned by ``crossing_bound``, so 200,000 prompts
        with six distinct rates cost six terms.
    """
    return _exp_sum(crossing_bound(p_base, p_rl), ks)


def crossing_stats(p_base, p_rl, ks=DENSE_K, tol: float = 1e-12) -> dict:
    """Observed crossings of the plug-in curves beside the bound.

    Parameters
    ----------
    p_base, p_rl
        ``(P,)`` success rates of the same prompts.
    ks
        ``(K,)`` increasing real budgets.
    tol
        ``|D| <= tol`` counts as zero (a touch, skipped).

    Returns
    -------
    dict
        ``crossings``: sign changes of ``D`` over ``ks`` followed by its sign as
        ``k -> inf`` (the sign of the coefficient of the largest ``q``), so a
        last crossing beyond the grid is counted; ``beyond_grid`` (whether it
        was); ``V`` and ``bound`` from :func:`rlvr_boundary.core.compare.crossing_bound`.
    """
    eb = crossing_bound(p_base, p_rl)
    d = _exp_sum(eb, ks)  # (K,)
    d = np.where(np.abs(d) > tol, d, 0.0)
    tail = np.sign(eb["a"][-1]) if eb["a"] else 0.0  # q sorted ascending: last dominates
    inside = int(sign_changes(d))
    total = int(sign_changes(np.append(d, tail)))
    return {"crossings": total, "beyond_grid": total > inside, "V": eb["V"], "bound": eb["bound"]}


def count_crossings(p_base, p_rl, ks=DENSE_K, tol: float = 1e-12) -> int:
    """Crossings of the plug-in curves over ``ks`` and beyond (see :func:`crossing_stats`)."""
    return crossing_stats(p_base, p_rl, ks, tol)["crossings"]


def bound(p_base, p_rl) -> int:
    """The sharper crossing bound of :func:`rlvr_boundary.core.compare.crossing_bound`."""
    return crossing_bound(p_base, p_rl)["bound"]


def constructed(m: int, prompts: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """Base and RL success rates whose plug-in pass@k curves cross exactly ``m`` times.

    Parameters
    ----------
    m
        Number of crossings, 1..6.
    prompts
        Number of prompts used to realise the coefficients (rounding the counts
        moves the roots slightly; 50,000 is enough to keep all m).

    Returns
    -------
    tuple
        ``(p_base, p_rl)``, each ``(P,)``.

    Notes
    -----
    Choose ``m + 1`` failure rates ``q_j = exp(-4^-j)`` (term j matters around
    ``k ~ 4^j``) and solve for signed weights ``a_j`` of ``sum_j a_j q_j^k``
    with roots at ``k = 2, 8, 32, ...`` (a linear system with ``a_0 = 1``);
    normalise ``sum |a_j| = 1/2`` and realise it with prompt counts
    ``|a_j| * prompts`` at ``q_j``, on the base where ``a_j > 0`` and on RL
    where ``a_j < 0``; both are padded with solved prompts (``q = 0``, which
    vanish for k >= 1) to the same count. The coefficients alternate in sign,
    so the bound is m too: these instances attain it.
    """
    if not 1 <= m <= 6:
        raise ValueError("m must be 1..6")
    q = np.exp(-(4.0 ** -np.arange(m + 1)))  # (m+1,)
    roots = 2.0 * 4.0 ** np.arange(m)  # (m,)
    A = np.vstack([q[None, :] ** roots[:, None], np.eye(1, m + 1)])  # (m+1, m+1)
    b = np.zeros(m + 1)
    b[-1] = 1.0
    a = np.linalg.solve(A, b)
    a = a / np.abs(a).sum() / 2
    counts = np.rint(np.abs(a) * prompts).astype(int)
    base = np.repeat(q[a > 0], counts[a > 0])
    rl = np.repeat(q[a < 0], counts[a < 0])
    P = max(base.size, rl.size)
    qb = np.concatenate([base, np.zeros(P - base.size)])
    qr = np.concatenate([rl, np.zeros(P - rl.size)])
    return 1 - qb, 1 - qr


def _base_rates(rng, prompts: int) -> np.ndarray:
    p = rng.beta(0.5, 0.5, prompts)  # (P,)
    p[rng.random(prompts) < 0.1] = 0.0
    return p


def sharpening_instance(rng, a: float, b: float, prompts: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Family A, difficulty order preserved by a sharpening: ``logit p_rl = a logit p_base + b``.

    Parameters
    ----------
    rng
        ``numpy.random.Generator``.
    a
        Slope (> 1 sharpens: easy prompts easier, hard ones harder).
    b
        Offset; the one fixed point is ``p* = sigmoid(b / (1 - a))``.
    prompts
        Number of prompts.

    Returns
    -------
    tuple
        ``(p_base, p_rl)``.

    Notes
    -----
    Base rates ``p ~ Beta(0.5, 0.5)``, then 10% of the prompts set to 0
    (unsolved; they stay unsolved). The map is strictly increasing, so the
    difficulty order of the prompts is kept exactly, and it has a single fixed
    point: prompts above ``p*`` gain and prompts below lose at every k.
    """
    p = _base_rates(rng, prompts)
    with np.errstate(divide="ignore"):
        lg = np.log(p) - np.log1p(-p)
    pr = np.where(p > 0, 1 / (1 + np.exp(-(a * lg + b))), 0.0)
    pr = np.where(p >= 1, 1.0, pr)
    return p, pr


def monotone_instance(rng, knots: int = 4, prompts: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Family B, difficulty order preserved by an arbitrary increasing map (several fixed points allowed).

    Parameters
    ----------
    rng
        ``numpy.random.Generator``.
    knots
        Number of interior knots of the map.
    prompts
        Number of prompts.

    Returns
    -------
    tuple
        ``(p_base, p_rl)``.

    Notes
    -----
    Base rates as in :func:`sharpening_instance`. ``p_rl = T(p_base)`` with T
    the piecewise-linear interpolation through ``(0, 0)``, ``knots`` points
    ``(u_i, v_i)`` with ``u`` and ``v`` independently sorted uniforms, and
    ``(1, 1)``: strictly increasing (order kept) but free to cross the diagonal
    several times, so gains and losses may alternate along difficulty. This
    family is the test of "order preservation alone"; it is expected to break
    the single-crossing pattern, and the suite reports the counterexamples.
    """
    p = _base_rates(rng, prompts)
    u = np.concatenate([[0.0], np.sort(rng.uniform(0.02, 0.98, knots)), [1.0]])
    v = np.concatenate([[0.0], np.sort(rng.uniform(0.0, 1.0, knots)), [1.0]])
    return p, np.interp(p, u, v)
