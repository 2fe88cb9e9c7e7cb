"""Coverage: which prompts each model solves, and how those sets overlap.

Inputs are per-prompt counts for M models on the same P prompts: ``n`` and ``c``
of shape ``(M, P)`` (samples and correct samples). Everything here is exact
integer bookkeeping on top of :func:`rlvr_boundary.core.passk.pass_at_k`.

The "solved at budget k" rule
-----------------------------
A prompt is *solved at k* by a model when its unbiased pass@k estimate reaches a
threshold ``tau`` (default ``0.95 = 1 - zeta`` with ``zeta = 0.05``):

.. math:: \\widehat{\\mathrm{pass@}k} = 1 - \\binom{n-c}{k}\\Big/\\binom{n}{k} \\ \\ge\\ \\tau .

- At ``k = n`` the estimate is 0 or 1, so for any ``tau`` in (0, 1] the rule is
  exactly ``c >= 1`` ("found among the n samples"), the usual coverage of Yue et
  al. (2025). ``k=None`` means this rule with each prompt's own ``n``.
- At ``k < n`` the rule asks whether a random k-subset of the samples would
  contain a correct one with probability at least ``tau``. With ``tau = 1 -
  zeta`` it is the plug-in test of ``p >= epsilon = 1 - zeta^(1/k)``, because
  ``1 - (1 - p)^k >= 1 - zeta`` iff ``p >= epsilon``: the same rule as the
  empirical support of :mod:`rlvr_boundary.core.support`, so coverage and support
  agree on the same data (a test checks it).

Comparisons allow a 1e-12 slack (:func:`reaches`): an estimate that equals the
threshold exactly in rationals (19/20 against 0.95) can be computed an ulp below.

Deviation from common practice: many scripts define coverage at k < n as
"solved among the first k samples", which depends on sample order; we use the
order-free rule above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from rlvr_boundary.core.passk import check_counts, pass_at_k

__all__ = [
    "Intersection",
    "reaches",
    "solved_at_k",
    "intersections",
    "venn_counts",
    "table_2x2",
    "accuracy_histogram",
    "rank_changes",
]

#: Slack of threshold comparisons (see :func:`reaches`).
_THRESHOLD_SLACK = 1e-12

#: Decimals at which two differences count as tied when ranking.
_TIE_DECIMALS = 12

#: Default threshold on the pass@k estimate: 1 - zeta with zeta = 0.05 (Invisible Leash).
DEFAULT_TAU = 0.95


def _counts_2d(n, c) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``(M, P)`` (or ``(P,)``) counts; return int64 ``(M, P)`` arrays."""
    n_arr, c_arr = np.asarray(n), np.asarray(c)
    if n_arr.ndim == 1 and c_arr.ndim == 1:
        n_arr, c_arr = n_arr[None, :], c_arr[None, :]  # one model: (1, P)
    if n_arr.ndim != 2 or n_arr.shape != np.shape(c_arr):
        raise ValueError(f"n and c must both have shape (M, P); got {np.shape(n)} and {np.shape(c)}")
    if n_arr.shape[1] == 0:
        raise ValueError("no prompts (P = 0)")
    rows = [check_counts(n_arr[m], c_arr[m]) for m in range(n_arr.shape[0])]
    return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])  # (M, P) each


def reaches(estimate, tau: float) -> np.ndarray:
    """``estimate >= tau`` with a 1e-12 slack for floating-point rounding.

    pass@k estimates are rationals; one that equals the threshold exactly (19/20
    against 0.95) can be computed an ulp below it. The slack makes the rule agree
    with exact arithmetic; :mod:`rlvr_boundary.core.support` uses the same test.
    """
    return np.asarray(estimate) >= float(tau) - _THRESHOLD_SLACK


def solved_at_k(n, c, k: int | None = None, *, tau: float = DEFAULT_TAU) -> np.ndarray:
    """Which prompts each model solves at budget ``k``.

    Parameters
    ----------
    n, c
        ``(M, P)`` samples and correct samples (a 1-D ``(P,)`` pair is one model).
    k
        Budget. ``None``: each prompt at its own ``n`` (the rule is then ``c >= 1``).
        Otherwise ``1 <= k <= min(n)``; larger k has no unbiased pass@k and raises.
    tau
        Threshold in (0, 1] on the pass@k estimate.

    Returns
    -------
    numpy.ndarray
        ``(M, P)`` bool.

    Notes
    -----
    Solved iff :math:`1 - \\binom{n-c}{k}/\\binom{n}{k} \\ge \\tau`. At
    :math:`k = n` this is :math:`c \\ge 1` for every ``tau`` in (0, 1]. With
    ``tau = 1 - zeta`` it estimates :math:`p \\ge 1 - \\zeta^{1/k}` (module docstring).
    """
    if not 0.0 < float(tau) <= 1.0:
        raise ValueError(f"tau must lie in (0, 1], got {tau}")
    n, c = _counts_2d(n, c)
    if k is None:
        return c >= 1
    k = int(k)
    out = np.empty(n.shape, dtype=bool)  # (M, P)
    for m in range(n.shape[0]):
        out[m] = reaches(pass_at_k(n[m], c[m], [k])[:, 0], tau)
    return out


class Intersection(NamedTuple):
    """One exact membership pattern of an UpSet plot."""

    mask: int
    """Bit m set when model m is in the pattern (model order as given)."""
    models: tuple[str, ...]
    """Names of the models in the pattern, in model order; ``()`` is "solved by none"."""
    count: int
    """Number of prompts solved by exactly these models."""


def _names(M: int, names: Sequence[str] | None) -> tuple[str, ...]:
    if names is None:
        return tuple(f"m{i}" for i in range(M))
    names = tuple(str(x) for x in names)
    if len(names) != M:
        raise ValueError(f"{len(names)} names for {M} models")
    if len(set(names)) != M:
        raise ValueError(f"model names must be distinct: {names}")
    return names


def _pattern_counts(solved) -> np.ndarray:
    solved = np.asarray(solved)
    if solved.dtype != bool or solved.ndim != 2:
        raise ValueError("solved must be a (M, P) boolean array")
    M = solved.shape[0]
    if M > 30:
        raise ValueError(f"{M} models: exact intersections are limited to 30 models")
    weights = (1 << np.arange(M, dtype=np.int64))[:, None]  # (M, 1)
    masks = np.sum(solved.astype(np.int64) * weights, axis=0)  # (P,)
    return masks


def intersections(solved, names: Sequence[str] | None = None, *,
                  include_empty: bool = True) -> list[Intersection]:
    """Counts of every exact membership pattern among N models (UpSet style).

    Parameters
    ----------
    solved
        ``(M, P)`` bool, e.g. from :func:`solved_at_k`.
    names
        Model names (default ``m0, m1, ...``).
    include_empty
        Keep the pattern ``()`` (solved by no model) so the counts sum to ``P``.

    Returns
    -------
    list of Intersection
        Patterns with a non-zero count, sorted by count (descending), then by
        number of models (ascending), then by mask (ascending): a total order,
        so the output is deterministic.

    Notes
    -----
    "Exact" means the prompts solved by these models *and by no other*, so the
    patterns partition the prompts. The inclusive intersection of a set S of
    models is the sum over patterns that contain S.
    """
    masks = _pattern_counts(solved)
    M = np.asarray(solved).shape[0]
    names = _names(M, names)
    values, counts = np.unique(masks, return_counts=True)
    out = []
    for v, cnt in zip(values.tolist(), counts.tolist()):
        if v == 0 and not include_empty:
            continue
        members = tuple(names[m] for m in range(M) if (v >> m) & 1)
        out.append(Intersection(int(v), members, int(cnt)))
    out.sort(key=lambda r: (-r.count, len(r.models), r.mask))
    return out


def venn_counts(solved, names: Sequence[str] | None = None) -> dict[tuple[str, ...], int]:
    """Every region of a 2- or 3-set Venn diagram, zeros included.

    Parameters
    ----------
    solved
        ``(M, P)`` bool with ``M`` in {2, 3}.
    names
        Model names.

    Returns
    -------
    dict
        Key: the tuple of model names whose sets contain the region (model
        order; ``()`` is "outside every set"); value: number of prompts. All
        ``2^M`` regions are present, ordered by mask; values sum to ``P``.
    """
    M = np.asarray(solved).shape[0]
    if M not in (2, 3):
        raise ValueError(f"a Venn diagram needs 2 or 3 models, got {M} (use intersections())")
    masks = _pattern_counts(solved)
    names = _names(M, names)
    counts = np.bincount(masks, minlength=1 << M)
    return {tuple(names[m] for m in range(M) if (v >> m) & 1): int(counts[v])
            for v in range(1 << M)}


def table_2x2(base_solved, r_solved) -> np.ndarray:
    """The 2x2 table base-solved x R-solved.

    Parameters
    ----------
    base_solved, r_solved
        ``(P,)`` bool.

    Returns
    -------
    numpy.ndarray
        ``(2, 2)`` int64 ``t`` with ``t[b, r]`` the number of prompts with
        base-solved = b and R-solved = r. In support terms (same rule and
        budget): ``t[1, 1] = P`` (preserved), ``t[0, 1] = E`` (expanded),
        ``t[1, 0] = S`` (shrunk), ``t[0, 0] = O``.
    """
    b = np.asarray(base_solved)
    r = np.asarray(r_solved)
    if b.dtype != bool or r.dtype != bool or b.ndim != 1 or b.shape != r.shape:
        raise ValueError("base_solved and r_solved must be 1-D boolean arrays of equal length")
    t = np.zeros((2, 2), dtype=np.int64)
    np.add.at(t, (b.astype(np.int64), r.astype(np.int64)), 1)
    return t


def accuracy_histogram(n, c, bins: int = 10) -> dict[str, np.ndarray]:
    """Histogram of per-prompt accuracy ``c/n`` with exact-0 and exact-1 bins apart.

    Parameters
    ----------
    n, c
        ``(M, P)`` counts (or ``(P,)`` for one model).
    bins
        Number ``B`` of equal-width interior bins over (0, 1).

    Returns
    -------
    dict
        ``counts``: ``(M, B + 2)`` int64, columns ``[c = 0, bin_1, ..., bin_B, c = n]``;
        ``edges``: ``(B + 1,)`` interior bin edges ``0, 1/B, ..., 1``.

    Notes
    -----
    Interior bin j (1-based) holds :math:`0 < c/n < 1` with
    :math:`(j-1)/B \\le c/n < j/B`; the index is computed in integers,
    :math:`\\lfloor cB/n \\rfloor`, so no prompt lands in the wrong bin through
    rounding (c/n = 0.3 with B = 10 goes to [0.3, 0.4)). Every row sums to P.
    """
    bins = int(bins)
    if bins < 1:
        raise ValueError("bins must be >= 1")
    n, c = _counts_2d(n, c)
    M = n.shape[0]
    idx = np.where(c == 0, 0, np.where(c == n, bins + 1, 1 + (c * bins) // n))  # (M, P)
    counts = np.zeros((M, bins + 2), dtype=np.int64)
    for m in range(M):
        counts[m] = np.bincount(idx[m], minlength=bins + 2)
    return {"counts": counts, "edges": np.linspace(0.0, 1.0, bins + 1)}


def rank_changes(n_base, c_base, n_r, c_r, k: int | None = None, *,
                 prompt_ids: Sequence[str] | None = None,
                 top: int | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Per-prompt regressions and gains of R against the base, ranked.

    Parameters
    ----------
    n_base, c_base, n_r, c_r
        ``(P,)`` counts of the base and of R on the same prompts.
    k
        Compare unbiased pass@k (``1 <= k <= min(n)`` over both models).
        ``None``: compare accuracy ``c/n`` (this is pass@1).
    prompt_ids
        ``(P,)`` ids used to break ties (ascending); default: the prompt index.
    top
        Keep only the first ``top`` of each list.

    Returns
    -------
    dict
        ``{"regressions": ..., "gains": ...}``, each a dict of ``(Q,)`` arrays
        ``index`` (position in the input), ``delta`` (R minus base), ``base``,
        ``r``. Regressions hold every prompt with ``delta < 0``, most negative
        first; gains every prompt with ``delta > 0``, largest first. Ties are
        broken by ``prompt_ids`` (or index) ascending, so the order is total;
        differences equal to 12 decimals count as ties (0.3 - 0.5 and 0.6 - 0.8
        differ in floating point).
    """
    n_base, c_base = check_counts(n_base, c_base)
    n_r, c_r = check_counts(n_r, c_r)
    if n_base.shape != n_r.shape:
        raise ValueError("base and R must cover the same prompts (equal lengths)")
    P = n_base.size
    if k is None:
        vb, vr = c_base / n_base, c_r / n_r
    else:
        vb, vr = pass_at_k(n_base, c_base, [k])[:, 0], pass_at_k(n_r, c_r, [k])[:, 0]
    delta = vr - vb  # (P,)
    if prompt_ids is None:
        tie = np.arange(P)
    else:
        ids = np.asarray([str(x) for x in prompt_ids])
        if ids.shape != (P,):
            raise ValueError(f"prompt_ids must have length {P}")
        tie = np.argsort(np.argsort(ids, kind="stable"), kind="stable")  # rank of each id

    def pick(mask: np.ndarray, sign: float) -> dict[str, np.ndarray]:
        idx = np.flatnonzero(mask)
        key = np.round(sign * delta[idx], _TIE_DECIMALS)  # float noise must not break ties
        order = np.lexsort((tie[idx], key))  # last key is primary
        idx = idx[order][: top if top is not None else None]
        return {"index": idx, "delta": delta[idx], "base": vb[idx], "r": vr[idx]}

    return {"regressions": pick(delta < 0, 1.0), "gains": pick(delta > 0, -1.0)}
