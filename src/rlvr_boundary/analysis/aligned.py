"""The input of every analysis: counts of several models on one common prompt set."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlvr_boundary.errors import InputError

__all__ = ["Aligned", "align"]


@dataclass
class Aligned:
    """Counts of several models on one common, ordered prompt set.

    Built by :func:`align` from checked counts;
    ``n`` and ``c`` are ``(M, P)``: models x prompts, rows in ``models`` order.
    """

    models: list[str]
    prompt_ids: np.ndarray  # (P,) str
    n: np.ndarray  # (M, P) int64, >= 1
    c: np.ndarray  # (M, P) int64, 0 <= c <= n
    dropped: dict[str, int] = field(default_factory=dict)
    """Prompts each model lost when prompt sets were intersected."""


def align(counts: list, *, intersect: bool = False) -> Aligned:
    """Put several models on the same prompts, in a deterministic order.

    Parameters
    ----------
    counts
        One :class:`~rlvr_boundary.io.counts.Counts` per model (anything with
        ``model``, ``prompt_ids``, ``n``, ``c`` and ``source``); model labels must
        be distinct.
    intersect
        If False (default), differing prompt sets are an error naming some missing
        ids. If True, keep the common prompts and record how many prompts each
        model lost in ``Aligned.dropped`` (the command says so once).

    Returns
    -------
    Aligned
        Prompts sorted by id (string order) so results do not depend on file order.
    """
    labels = [ct.model for ct in counts]
    if len(set(labels)) != len(labels):
        raise InputError(f"model labels must be distinct, got {labels}")
    id_sets = [set(map(str, ct.prompt_ids)) for ct in counts]
    common = set.intersection(*id_sets)
    dropped: dict[str, int] = {}
    if any(len(s) != len(common) for s in id_sets):
        if not intersect:
            lines = []
            for ct, s in zip(counts, id_sets):
                others = set.union(*(t for t in id_sets if t is not s)) - s
                if others:
                    ex = sorted(others)[:5]
                    lines.append(
                        f"model '{ct.model}' ({ct.source or 'input'}) lacks {len(others)} "
                        f"prompt(s) the others have, e.g. {', '.join(ex)}")
            raise InputError(
                "the models were run on different prompt sets: " + "; ".join(lines)
                + ". Pass --intersect to compare on the common prompts only.")
        for ct, s in zip(counts, id_sets):
            dropped[ct.model] = len(s) - len(common)
        if not common:
            raise InputError("the models share no prompt ids; nothing to compare")
    order = np.array(sorted(common), dtype=object)
    n = np.empty((len(counts), len(order)), dtype=np.int64)
    c = np.empty_like(n)
    for m, ct in enumerate(counts):
        pos = {pid: i for i, pid in enumerate(map(str, ct.prompt_ids))}
        idx = np.fromiter((pos[p] for p in order), dtype=np.int64, count=len(order))
        n[m], c[m] = ct.n[idx], ct.c[idx]
    return Aligned(labels, order, n, c, dropped)
