"""Helpers shared by the adapters: sniffing, count recovery, and a batched table builder."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import re
from pathlib import Path

import pyarrow as pa

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.rollouts import BATCH_ROWS, is_jsonl, iter_json_lines, path_stem
from rlvr_boundary.io.counts import MAX_PAIRS
from rlvr_boundary.io.schema import ROLLOUT_BY_NAME

#: ``<name>_<ISO timestamp with ':' replaced by '-'>`` as lm-eval and lighteval name files.
TIMESTAMP = re.compile(r"_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)$")


def first_json(path: Path) -> dict | None:
    """The first JSON object of a JSONL file, or None if it is not one (never raises)."""
    if not path.is_file() or not is_jsonl(path) or path.stat().st_size == 0:
        return None
    try:
        for _, obj in iter_json_lines(path):
            return obj
    except InputError:
        return None
    return None


def split_timestamp(stem: str, prefix: str) -> tuple[str, str | None]:
    """``samples_gsm8k_2024-06-01T12-30-00.1`` -> ``("gsm8k", "2024-06-01T12-30-00.1")``."""
    if stem.startswith(prefix):
        stem = stem[len(prefix):]
    m = TIMESTAMP.search(stem)
    return (stem[:m.start()], m.group(1)) if m else (stem, None)


def latest_per_task(files: list[Path], prefix: str) -> list[tuple[str, Path]]:
    """One file per task (the newest timestamp) from a directory of per-task files.

    Re-running an evaluation into the same folder leaves one file per run; pooling
    them would duplicate every prompt, so we keep the latest run of each task.
    """
    best: dict[str, tuple[str, Path]] = {}
    for f in files:
        task, stamp = split_timestamp(path_stem(f), prefix)
        key = stamp or ""
        if task not in best or key > best[task][0]:
            best[task] = (key, f)
    return [(task, best[task][1]) for task in sorted(best)]


def short_hash(text: str) -> str:
    """First 16 hex digits of the SHA-1 of ``text`` (a prompt id for formats without one)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def count_from_metric(value, n: int, *, path: Path, line: int, field: str) -> int:
    """Correct samples from a per-document metric that is a mean over ``n`` samples.

    A document-level metric is only usable as a count when ``value * n`` is a
    whole number in 0..n (accuracy averaged over the samples, the unbiased
    pass@1 = c/n, or a 0/1 verdict when n = 1). Anything else (a majority vote,
    a pass@k with k > 1) cannot be turned back into a count: we refuse rather
    than round.
    """
    if isinstance(value, bool):
        value = float(value)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"metric value must be a number, found {value!r}", path=path, line=line,
                         field=field)
    c = value * n
    if abs(c - round(c)) > 1e-6 * max(1, n) or not 0 <= round(c) <= n:
        raise InputError(
            f"metric {field} = {value!r} over {n} sample(s) is not a share of correct samples "
            f"(value x n = {c:g}); it cannot be turned into a count", path=path, line=line,
            field=field)
    return int(round(c))


def as_text(value) -> str | None:
    """Strings stay strings; other JSON values become their JSON text; None stays None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


#: Where a streaming reader sends each batch (see :func:`streaming`); None: keep them.
_SINK: contextvars.ContextVar = contextvars.ContextVar("rlvr_boundary_adapter_sink",
                                                      default=None)


@contextlib.contextmanager
def streaming(sink):
    """Within this block, the :class:`TableBuilder` of a streaming adapter (``STREAMS``)
    hands every batch of 65,536 rows to ``sink`` instead of holding it; its
    ``table()`` then returns an empty table with the schema. A dump of millions
    of samples (verl, limit-of-RLVR, vLLM generations) or of documents
    (lm-eval, lighteval) is reduced as it is read.

    A streaming adapter may still return a non-empty count table: the documents
    it could not stream as rollout rows (lm-eval and lighteval documents scored
    over several samples; see :class:`Documents`). The caller adds those counts
    to the streamed ones."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


class TableBuilder:
    """Accumulate rows column-wise and convert them to Arrow every ``BATCH_ROWS`` rows.

    Python lists of a few hundred thousand strings cost far more memory than the
    Arrow arrays they become, so rows are flushed into record batches as they
    arrive. Column types are the canonical ones (:mod:`rlvr_boundary.io.schema`);
    the extra text columns are strings. A column that stayed all-null is
    dropped from the result.
    """

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.types = {c: (ROLLOUT_BY_NAME[c].type if c in ROLLOUT_BY_NAME else pa.string())
                      for c in columns}
        self.cols: dict[str, list] = {c: [] for c in columns}
        self.batches: list[pa.RecordBatch] = []
        self.non_null: set[str] = set()
        self.rows = 0
        self.pending = 0
        self.sink = _SINK.get()

    def add(self, **values) -> None:
        """Append one row; columns not given are null."""
        get = values.get
        for c, lst in self.cols.items():
            lst.append(get(c))
        self.rows += 1
        self.pending += 1
        if self.pending >= BATCH_ROWS:
            self._flush()

    def extend(self, m: int, **values) -> None:
        """Append ``m`` rows; a list value gives one entry per row, a scalar is repeated."""
        for c, lst in self.cols.items():
            v = values.get(c)
            lst.extend(v if isinstance(v, list) else [v] * m)
        self.rows += m
        self.pending += m
        if self.pending >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            arrays = [pa.array(v, self.types[c]) for c, v in self.cols.items()]
            self.non_null.update(c for c, a in zip(self.cols, arrays) if a.null_count < len(a))
            batch = pa.RecordBatch.from_arrays(arrays, names=list(self.cols))
            if self.sink is not None:
                self.sink(batch)
            else:
                self.batches.append(batch)
            self.cols = {c: [] for c in self.cols}
            self.pending = 0

    def table(self) -> pa.Table:
        self._flush()
        schema = pa.schema([pa.field(c, t) for c, t in self.types.items()])
        t = pa.Table.from_batches(self.batches, schema=schema)
        self.batches = []
        keep = [c for c in t.column_names
                if c in self.non_null or (c in ROLLOUT_BY_NAME and ROLLOUT_BY_NAME[c].required)]
        return t.select(keep)


class Documents:
    """Per-document counts of a reader whose documents are single samples or several.

    lm-eval and lighteval score each document on one sample (a verdict: the row
    is a rollout with its text) or on several (a share: only ``(n, c)`` is
    known). Holding the whole table, a reader returns the rollout rows when every
    document has n = 1 and a count table of every document otherwise. Streaming
    (:func:`streaming`), the single-sample rows go to the sink as they are read
    and only the documents with n > 1 are kept here, as short ``(id, n, c)``
    entries with no text, and returned as a count table for the caller to add.
    Either way every document is counted once, with the same ``n`` and ``c``.
    """

    def __init__(self, rows: TableBuilder) -> None:
        self.rows = rows
        self.ids: list[str] = []
        self.n: list[int] = []
        self.c: list[int] = []
        self.repeated = False

    def add(self, pid: str, n: int, c: int) -> bool:
        """Record one document; True when its rollout row should be added to ``rows``."""
        if len(self.ids) >= MAX_PAIRS:
            from rlvr_boundary.io.counts import too_many_pairs

            raise too_many_pairs(None)
        if n > 1:
            self.repeated = True
        if n > 1 or self.rows.sink is None:
            self.ids.append(pid)
            self.n.append(n)
            self.c.append(c)
        return n == 1

    def table(self, label: str) -> pa.Table:
        """The rollout rows (streamed: none left), or a count table when some n > 1."""
        rows = self.rows.table()  # streaming: hands the last batch to the sink
        if not self.repeated:
            return rows
        return count_table(self.ids, self.n, self.c, label)


def count_table(ids: list[str], n: list[int], c: list[int], model: str) -> pa.Table:
    """A count table ``(prompt_id, model, n, c)``."""
    return pa.table({"prompt_id": pa.array(ids, pa.string()),
                     "model": pa.array([model] * len(ids), pa.string()),
                     "n": pa.array(n, pa.int64()), "c": pa.array(c, pa.int64())})
