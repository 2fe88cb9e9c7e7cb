"""Per-prompt counts: the input of every pass@k computation.

:class:`Counts` holds, for one model, the prompt ids with ``n`` samples and ``c``
correct. It is built by the readers (count files, rollout tables, adapters) and
checked once here, so the numeric core can trust its arrays. Putting several
models on one prompt set is :func:`rlvr_boundary.analysis.aligned.align`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rlvr_boundary.errors import InputError

#: Most (prompt, model) pairs one input may hold. Reading counts costs about 0.6 GB per
#: million pairs and a comparison of a million prompts about 0.9 GB (measured), so more
#: is refused while reading rather than exhausting memory later.
MAX_PAIRS = 1_000_000


def too_many_pairs(path, line: int | None = None) -> InputError:
    """The error of an input with more than :data:`MAX_PAIRS` (prompt, model) pairs."""
    return InputError(f"more than {MAX_PAIRS:,} (prompt, model) pairs in one input: about "
                      "0.9 GB of memory per million prompts compared, more than this tool "
                      "holds; split the prompts into parts", path=path, line=line)


__all__ = ["Counts", "MAX_PAIRS", "too_many_pairs"]


@dataclass
class Counts:
    """Per-prompt sample and success counts of one model.

    Attributes
    ----------
    model
        Label of the checkpoint.
    prompt_ids
        ``(P,)`` array of str, unique.
    n
        ``(P,)`` int64, samples per prompt, >= 1.
    c
        ``(P,)`` int64, correct samples per prompt, 0 <= c <= n.
    source
        File the counts came from (for messages and provenance).
    extra
        Per-prompt fields a count file carries besides id, n and c (e.g. the
        benchmark a prompt comes from), for grouping prompts.
    scorers
        ``{scorer: (P,) int64}``: correct counts under each scorer, when a rollout
        table carries two or more ``correct__<scorer>`` verdict columns (else empty).
    tally
        Verdict patterns of those scorers by answer type, with examples
        (:meth:`rlvr_boundary.io.verdicts.VerdictTally.of_model`), or None.
    """

    model: str
    prompt_ids: np.ndarray
    n: np.ndarray
    c: np.ndarray
    source: str | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    scorers: dict[str, np.ndarray] = field(default_factory=dict)
    tally: dict | None = None

    def __post_init__(self) -> None:
        self.prompt_ids = np.asarray(self.prompt_ids, dtype=object)
        self.n = _int64(self.n, "n", self)
        self.c = _int64(self.c, "c", self)
        P = len(self.prompt_ids)
        if self.n.shape != (P,) or self.c.shape != (P,):
            raise ValueError("prompt_ids, n and c must have the same length")
        if P == 0:
            raise InputError(f"model '{self.model}' has no prompts", path=self.source)
        bad = np.flatnonzero(self.n < 1)
        if bad.size:
            raise InputError(
                f"n must be >= 1, prompt '{self.prompt_ids[bad[0]]}' has n = {self.n[bad[0]]}",
                path=self.source, field="n")
        bad = np.flatnonzero((self.c < 0) | (self.c > self.n))
        if bad.size:
            i = bad[0]
            raise InputError(
                f"c must satisfy 0 <= c <= n, prompt '{self.prompt_ids[i]}' has "
                f"c = {self.c[i]}, n = {self.n[i]}", path=self.source, field="c")
        uniq, first, counts = np.unique(self.prompt_ids.astype(str), return_index=True,
                                        return_counts=True)
        if (counts > 1).any():
            dup = uniq[counts > 1]
            raise InputError(
                f"duplicate prompt ids for model '{self.model}': {', '.join(map(str, dup[:5]))}"
                + (f" and {dup.size - 5} more" if dup.size > 5 else ""),
                path=self.source, field="prompt_id")

    def __len__(self) -> int:
        return len(self.prompt_ids)


def _int64(values, name: str, ct: "Counts") -> np.ndarray:
    """``values`` as int64, refusing what would not fit (huge ints, uint64 past 2**63 - 1,
    fractions) instead of letting numpy raise or wrap them negative."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iub" or arr.size == 0:
        if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise InputError(f"{name} = {arr.max()} is out of range", path=ct.source, field=name)
        return arr.astype(np.int64)
    bad = [v for v in arr.ravel().tolist()
           if isinstance(v, bool) or not isinstance(v, (int, float))
           or (isinstance(v, float) and not (math.isfinite(v) and v.is_integer()))
           or not -(2**63) <= v < 2**63]
    if bad:
        raise InputError(f"{name} must hold integers, found {str(bad[0])[:60]!r}",
                         path=ct.source, field=name)
    return arr.astype(np.int64)
