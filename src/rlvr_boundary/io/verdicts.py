"""Several scorers' verdicts in one rollout table: which columns, and how they disagree.

``rlvr-boundary verify --backend math-verify,canonical`` stores every backend's
verdict as ``correct__<backend>`` (and, per completion, ``answer_type``: the
kind of the gold answer, and ``gold``). When a table carries two or more such
columns, the readers reduce per-scorer counts per (model, prompt) in the same
pass as the main counts (:class:`rlvr_boundary.io.rollouts.CountReducer`), and
:class:`VerdictTally` counts the verdict patterns by answer type, keeping a few
examples of each disagreement, in bounded memory. The statistics (per-scorer
comparisons, the disagreement table) are computed from these counts and tallies
by :mod:`rlvr_boundary.analysis.scorers`; this module only reads and reshapes.

A table with one verdict column (or none besides ``correct``) is read exactly
as before.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from rlvr_boundary.errors import InputError

#: Prefix of the per-scorer verdict columns.
SCORER_PREFIX = "correct__"
#: Per-completion columns the disagreement table reads when present.
TALLY_COLUMNS = ("answer_type", "gold", "answer")
#: Answer type of a completion whose table has no ``answer_type`` column.
UNTYPED = "all answers"
#: Examples kept per (model, answer type, verdict pattern).
MAX_EXAMPLES = 3
#: Most scorers compared at once (each is one bit of a per-row code).
MAX_SCORERS = 16
#: Longest gold or answer string kept in an example (longer ones are cut, marked "...").
MAX_EXAMPLE_CHARS = 300


def _short(value):
    if isinstance(value, str) and len(value) > MAX_EXAMPLE_CHARS:
        return value[:MAX_EXAMPLE_CHARS] + "..."
    return value


def scorer_columns(names) -> list[str]:
    """The ``correct__<scorer>`` columns among ``names`` (in table order), if two or more."""
    cols = [c for c in names if c.startswith(SCORER_PREFIX) and len(c) > len(SCORER_PREFIX)]
    return cols if len(cols) >= 2 else []


def scorer_name(column: str) -> str:
    """'correct__math_verify' -> 'math_verify': the column's suffix names the scorer."""
    return column[len(SCORER_PREFIX):]


def verdict_array(batch: pa.Table, column: str) -> pa.Array:
    """A verdict column as booleans, a missing verdict (null) counted as incorrect."""
    arr = batch.column(column)
    if not pa.types.is_boolean(arr.type):
        if pa.types.is_integer(arr.type) or pa.types.is_null(arr.type):
            arr = pc.not_equal(arr.cast(pa.int64()), 0)
        else:
            raise InputError(f"expected a boolean verdict, found type {arr.type}",
                             field=column)
    return pc.fill_null(arr, False)


class VerdictTally:
    """Counts of each verdict pattern per (model, answer type), and a few examples.

    A pattern is the string of the scorers' verdicts in column order, ``"10"``
    for "the first accepts, the second rejects". Rows whose scorers all agree
    are only counted; disagreeing rows keep up to :data:`MAX_EXAMPLES` examples
    per (model, type, pattern), with their row number in the file.
    """

    def __init__(self, columns: list[str]) -> None:
        if len(columns) > MAX_SCORERS:
            raise InputError(f"{len(columns)} verdict columns (correct__*); at most "
                             f"{MAX_SCORERS} scorers are compared at once", field=columns[0])
        self.columns = list(columns)
        self.counts: dict[str, dict[str, dict[str, int]]] = {}  # model -> type -> pattern -> n
        self.examples: dict[str, dict[str, dict[str, list]]] = {}
        #: model -> scorer -> rows whose verdict differs from the ``correct`` column
        self.off_main: dict[str, dict[str, int]] = {}
        self.rows = 0

    def add(self, batch: pa.Table) -> None:
        """Tally one validated batch (it must hold every scorer column)."""
        missing = [c for c in self.columns if c not in batch.column_names]
        if missing:
            raise InputError(f"a later part of the table lacks the verdict column(s) {missing} "
                             "of the first", field=missing[0])
        # One small integer per row: bit 0 the 'correct' column, bit i + 1 scorer i. One
        # group-by on (model, type, code) then gives the patterns and the rows where a
        # scorer differs from 'correct', without a string per row.
        code = pc.fill_null(batch.column("correct"), False).cast(pa.int64())
        for i, c in enumerate(self.columns):
            code = pc.add(code, pc.multiply(verdict_array(batch, c).cast(pa.int64()), 2 << i))
        types = (pc.fill_null(batch.column("answer_type").cast(pa.string()), "unknown")
                 if "answer_type" in batch.column_names
                 else pa.array([UNTYPED] * batch.num_rows, pa.string()))
        t = pa.table({"model": batch.column("model"), "type": types, "code": code})
        g = t.group_by(["model", "type", "code"], use_threads=False).aggregate(
            [("code", "count")])
        S = len(self.columns)
        for m, ty, k, n in zip(*(g.column(x).to_pylist()
                                 for x in ("model", "type", "code", "code_count"))):
            bits = [(k >> (i + 1)) & 1 for i in range(S)]
            p = "".join(map(str, bits))
            cell = self.counts.setdefault(m, {}).setdefault(ty, {})
            cell[p] = cell.get(p, 0) + n
            off = self.off_main.setdefault(m, {})
            for i, c in enumerate(self.columns):
                off[scorer_name(c)] = off.get(scorer_name(c), 0) + n * (bits[i] != (k & 1))
        # Rows whose scorers disagree (neither all 0 nor all 1 above bit 0): a few examples.
        scorers_part = pc.shift_right(code, 1)
        dis = pc.and_(pc.not_equal(scorers_part, 0), pc.not_equal(scorers_part, (1 << S) - 1))
        idx = pc.indices_nonzero(dis)
        if len(idx):
            cols = ["model", "prompt_id", "sample_idx",
                    *[c for c in TALLY_COLUMNS[1:] if c in batch.column_names]]
            sub = batch.select(cols).take(idx)
            sub_t = t.take(idx)
            names: dict = {}  # code -> pattern string
            chosen = []
            for j, (m, ty, k) in enumerate(zip(*(sub_t.column(x).to_pylist()
                                                 for x in ("model", "type", "code")))):
                p = names.get(k)
                if p is None:
                    p = names[k] = "".join(str((k >> (i + 1)) & 1) for i in range(S))
                keep = self.examples.setdefault(m, {}).setdefault(ty, {}).setdefault(p, [])
                if len(keep) < MAX_EXAMPLES:
                    keep.append(None)  # filled below, from the few rows kept
                    chosen.append((keep, len(keep) - 1, j))
            if chosen:
                rows = sub.take([j for _, _, j in chosen]).to_pylist()
                for (keep, pos, j), rec in zip(chosen, rows):
                    keep[pos] = {"row": self.rows + idx[j].as_py() + 1,
                                 **{c: _short(v) for c, v in rec.items()}}
        self.rows += batch.num_rows

    def of_model(self, model: str) -> dict:
        """The tally of one model, JSON-ready: ``scorers``, ``counts``, ``examples``."""
        return {"scorers": [scorer_name(c) for c in self.columns],
                "counts": self.counts.get(model, {}), "examples": self.examples.get(model, {}),
                "off_main": self.off_main.get(model, {})}


def use_scorer(counts: list, scorer: str) -> None:
    """Make ``scorer``'s verdicts the main counts ``c`` of every model (``--scorer``).

    ``scorer`` is a column suffix (``math_verify``) or the backend's name
    (``math-verify``). Every model must carry that scorer's verdicts.
    """
    key = scorer.replace("-", "_")
    for ct in counts:
        if key not in ct.scorers:
            have = ", ".join(ct.scorers) or "none"
            raise InputError(f"--scorer {scorer}: model '{ct.model}' has no verdict column "
                             f"'{SCORER_PREFIX}{key}' (scorers found: {have})",
                             path=ct.source, field="scorer")
        ct.c = ct.scorers[key].astype(ct.c.dtype)


def aligned_scorer_counts(counts: list, prompt_ids) -> dict:
    """Per-scorer counts of every model on the aligned prompts.

    Parameters
    ----------
    counts
        The :class:`~rlvr_boundary.io.counts.Counts` of the models (any order of prompts).
    prompt_ids
        ``(P,)`` the aligned prompt order (``Aligned.prompt_ids``).

    Returns
    -------
    dict
        ``{scorer: {model: (n, c)}}`` with ``(P,)`` arrays, over the scorers every
        model carries (in the first model's order); empty when fewer than two.
    """
    import numpy as np

    common = [s for s in counts[0].scorers if all(s in ct.scorers for ct in counts)]
    if len(common) < 2:
        return {}
    out: dict = {s: {} for s in common}
    for ct in counts:
        pos = {p: i for i, p in enumerate(map(str, ct.prompt_ids))}
        idx = np.fromiter((pos[str(p)] for p in prompt_ids), dtype=np.int64,
                          count=len(prompt_ids))
        for s in common:
            c = ct.scorers[s][idx]
            if np.any((c < 0) | (c > ct.n[idx])):
                raise InputError(f"scorer '{s}' counts more correct samples than samples",
                                 path=ct.source, field=SCORER_PREFIX + s)
            out[s][ct.model] = (ct.n[idx], c)
    return out


def primary_scorer(counts: list, chosen: str | None) -> str | None:
    """Which scorer's verdicts are the main counts: ``chosen``, else the first scorer whose
    verdict equals the ``correct`` column on every completion, else None.

    (Without a verdict tally, equal per-prompt counts stand in for equal verdicts.)
    """
    if chosen is not None:
        return chosen.replace("-", "_")
    import numpy as np

    if all(ct.tally is not None for ct in counts):
        for s in counts[0].scorers:
            if all(ct.tally["off_main"].get(s, 1) == 0 for ct in counts):
                return s
        return None
    for s in counts[0].scorers:
        if all(s in ct.scorers and np.array_equal(ct.scorers[s], ct.c) for ct in counts):
            return s
    return None


def choose_scorer(counts: list, chosen: str | None):
    """Apply ``--scorer`` and name the primary scorer (:func:`primary_scorer`).

    Returns False when no model carries several scorers' verdicts (nothing
    changes then; a chosen scorer is an error), else the primary scorer or None.
    """
    if not any(ct.scorers for ct in counts):
        if chosen is not None:
            raise InputError(f"--scorer {chosen}: the inputs carry no per-scorer verdict columns "
                             "(grade them with rlvr-boundary verify --backend "
                             "math-verify,canonical)", field="scorer")
        return False
    if chosen is not None:
        use_scorer(counts, chosen)
    return primary_scorer(counts, chosen)
