"""Read, validate and write the canonical rollout table, streaming.

A rollout table is one of:

- a Parquet file (``.parquet``),
- a JSON Lines file (``.jsonl``, ``.jsonl.gz``), one object per completion,
- a directory of Parquet shards (``part-*.parquet``, see :mod:`rlvr_boundary.io.store`).

Everything is read in record batches, so a 10-million-row table reduces to
per-prompt counts in bounded memory (:func:`reduce_counts`). Each batch is
validated and coerced to the canonical types of :mod:`rlvr_boundary.io.schema`;
errors name the file, the line (JSONL) or row (Parquet, 1-based) and the column.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rlvr_boundary._version import __version__
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.atomic import atomic_open, atomic_path
from rlvr_boundary.io.counts import MAX_PAIRS, Counts, too_many_pairs
from rlvr_boundary.io.outputs import note_input
from rlvr_boundary.io.results import SCHEMA_VERSION, to_jsonable
from rlvr_boundary.io.text import (  # noqa: F401 (re-exported: readers use them from here)
    DATA_SUFFIXES,
    MAX_LINE_BYTES,
    iter_text_lines,
    _check_exists,
    is_jsonl,
    iter_json_lines,
    iter_json_lines_sized,
    open_text,
    path_stem,
    sha256_of,
)
from rlvr_boundary.io.schema import (
    REQUIRED_ROLLOUT,
    ROLLOUT_BY_NAME,
    VERIFY_STATUSES,
    find_manifest,
    manifest_path_for,
)

BATCH_ROWS = 65_536
#: The optional chain-of-thought verdict (CoT-pass@k, :mod:`rlvr_boundary.io.cot`).
COT_COLUMN = "cot_correct"
#: A batch also stops growing at about this many bytes of data (JSONL line text, or
#: Parquet column data by the file's metadata): 65,536 completions of 8 KB would be
#: 512 MB in Arrow and several times that as Python objects.
BATCH_BYTES = 32 << 20
#: (file, field) pairs whose lone surrogates were already reported.
_SURROGATES_REPORTED: set[tuple[str, str]] = set()

#: What pyarrow raises on a corrupt Parquet file: a flipped byte in a column name of the
#: footer surfaces as a UnicodeDecodeError.
PARQUET_ERRORS = (pa.ArrowException, OSError, UnicodeDecodeError)

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- sources


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of a table: the file itself, or the shards of a directory."""
    note_input(path)
    if path.is_dir():
        files = sorted(path.glob("part-*.parquet"))
        if not files:
            raise InputError("directory holds no part-*.parquet shards", path=path)
        for f in files:
            note_input(f)
        return files
    return [path]


def table_columns(path: str | Path) -> list[str]:
    """Column names of a rollout/count table without reading its rows (JSONL: first line)."""
    path = Path(path)
    _check_exists(path)
    if is_jsonl(path):
        for _, obj in iter_json_lines(path):
            return list(obj)
        raise InputError("file has no JSON lines", path=path)
    try:
        return list(pq.read_schema(parquet_files(path)[0]).names)
    except PARQUET_ERRORS as exc:
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None


# ----------------------------------------------------------------------------- coercion


def _coerce_column(name: str, arr: pa.Array, path: Path, first_row: int) -> pa.Array:
    """Cast ``arr`` to the canonical type of column ``name`` or raise naming the first bad row."""
    target = ROLLOUT_BY_NAME[name].type if name in ROLLOUT_BY_NAME else None
    if target is None or arr.type == target:
        return arr

    def fail(i: int, what: str) -> InputError:
        return InputError(what, path=path, line=first_row + i, field=name)

    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), type=target)
    if target == pa.bool_():
        if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
            ok = pc.or_(pc.is_null(arr), pc.is_in(arr, value_set=pa.array([0, 1], arr.type)))
            if not pc.all(ok, min_count=0).as_py():
                i = pc.index(ok, False).as_py()
                raise fail(i, f"expected a boolean (or 0/1), found {arr[i].as_py()!r}")
            return pc.not_equal(arr, pa.scalar(0, arr.type))
        raise fail(0, f"expected a boolean, found type {arr.type}")
    if target == pa.string():
        if pa.types.is_integer(arr.type) or pa.types.is_large_string(arr.type):
            return arr.cast(pa.string())
        if pa.types.is_dictionary(arr.type) and (
                pa.types.is_string(arr.type.value_type)
                or pa.types.is_large_string(arr.type.value_type)
                or pa.types.is_integer(arr.type.value_type)):
            return arr.cast(pa.string())
        raise fail(0, f"expected a string, found type {arr.type}")
    if target == pa.int64():
        if pa.types.is_integer(arr.type):
            if pa.types.is_uint64(arr.type):  # values past 2**63 - 1 would wrap negative
                big = pc.fill_null(pc.greater(arr, pa.scalar(2**63 - 1, arr.type)), False)
                if pc.any(big).as_py():
                    i = pc.index(big, True).as_py()
                    raise fail(i, f"integer {arr[i].as_py()} is out of range (at most "
                                  f"{2**63 - 1})")
            return arr.cast(pa.int64())
        if pa.types.is_floating(arr.type):
            whole = pc.or_(pc.is_null(arr), pc.and_(pc.equal(pc.floor(arr), arr),
                                                    pc.less(pc.abs(arr), 2.0**63)))
            if not pc.all(pc.fill_null(whole, False), min_count=0).as_py():
                i = pc.index(pc.fill_null(whole, False), False).as_py()
                raise fail(i, f"expected an integer, found {arr[i].as_py()!r}")
            return arr.cast(pa.int64())
        raise fail(0, f"expected an integer, found type {arr.type}")
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise fail(0, f"cannot convert type {arr.type} to {target} ({exc})") from None


def validate_batch(batch: pa.RecordBatch | pa.Table, path: Path, first_row: int,
                   required: tuple[str, ...] = REQUIRED_ROLLOUT) -> pa.Table:
    """Coerce a batch to canonical types and check the row-level rules.

    ``first_row`` is the 1-based row (or line) number of the batch's first row,
    used in error messages. Non-canonical columns pass through unchanged.
    ``required`` lets a reader of raw completions (the verifier) accept a table
    without verdicts yet.
    """
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise InputError(
            f"missing required column(s) {missing}; a rollout table needs "
            f"{list(required)}", path=path, field=missing[0])
    cols = {}
    for name in table.column_names:
        arr = table.column(name).combine_chunks() if table.num_rows else pa.array([], table.schema.field(name).type)
        cols[name] = _coerce_column(name, arr, path, first_row)
    for name in required:
        nulls = pc.is_null(cols[name])
        if pc.any(nulls).as_py():
            i = pc.index(nulls, True).as_py()
            raise InputError("required value is missing (null)", path=path,
                             line=first_row + i, field=name)
    if COT_COLUMN in cols:  # optional, but once present it judges every row (CoT-pass@k)
        nulls = pc.is_null(cols[COT_COLUMN])
        if pc.any(nulls).as_py():
            i = pc.index(nulls, True).as_py()
            raise InputError(
                f"{COT_COLUMN} has no value (null); a table with a {COT_COLUMN} column needs "
                "the chain-of-thought verdict on every row, or drop the column",
                path=path, line=first_row + i, field=COT_COLUMN)
    neg = pc.less(cols["sample_idx"], 0) if "sample_idx" in cols else pa.array([False])
    if pc.any(neg).as_py():
        i = pc.index(neg, True).as_py()
        raise InputError("sample_idx must be >= 0", path=path, line=first_row + i,
                         field="sample_idx")
    if "verify_status" in cols:
        ok = pc.or_(pc.is_null(cols["verify_status"]),
                    pc.is_in(cols["verify_status"], value_set=pa.array(VERIFY_STATUSES)))
        if not pc.all(ok, min_count=0).as_py():
            i = pc.index(ok, False).as_py()
            raise InputError(
                f"verify_status must be one of {list(VERIFY_STATUSES)}, found "
                f"{cols['verify_status'][i].as_py()!r}", path=path, line=first_row + i,
                field="verify_status")
    return pa.table(cols)


# ----------------------------------------------------------------------------- reading


def iter_rollout_batches(path: str | Path, columns: list[str] | None = None,
                         *, batch_rows: int = BATCH_ROWS,
                         required: tuple[str, ...] = REQUIRED_ROLLOUT) -> Iterator[pa.Table]:
    """Stream a rollout table as validated Arrow tables of at most ``batch_rows`` rows.

    Parameters
    ----------
    path
        Parquet file, JSONL(.gz) file or shard directory.
    columns
        Columns to read (the required ones are always read and validated). None
        reads all columns.
    batch_rows
        Rows per yielded batch.
    """
    path = Path(path)
    _check_exists(path)
    want = None if columns is None else list(dict.fromkeys([*required, *columns]))
    if is_jsonl(path):
        yield from _iter_jsonl(path, want, batch_rows, required)
        return
    row = 1
    for file in parquet_files(path):
        try:
            pf = pq.ParquetFile(file)
        except PARQUET_ERRORS as exc:
            raise InputError(f"not a readable Parquet file ({exc})", path=file) from None
        names = pf.schema_arrow.names
        cols = None if want is None else [c for c in want if c in names]
        missing = [c for c in required if c not in names]
        if missing:
            raise InputError(f"missing required column(s) {missing}", path=file, field=missing[0])
        file_row = 1
        try:  # the footer's column paths are decoded here: a flipped byte is not UTF-8
            batches = pf.iter_batches(batch_size=_rows_per_batch(pf, cols, batch_rows),
                                      columns=cols)
        except PARQUET_ERRORS as exc:
            raise InputError(f"not a readable Parquet file ({exc})", path=file) from None
        while True:
            try:
                batch = next(batches, None)
            except PARQUET_ERRORS as exc:  # a corrupt page or column chunk
                raise InputError(f"not a readable Parquet file ({exc})", path=file,
                                 line=file_row) from None
            if batch is None:
                break
            yield validate_batch(batch, file, file_row, required)
            file_row += batch.num_rows
            row += batch.num_rows
    if row == 1:
        raise InputError("table has no rows", path=path)


def _rows_per_batch(pf: pq.ParquetFile, cols: list[str] | None, batch_rows: int) -> int:
    """At most ``batch_rows`` rows, and about :data:`BATCH_BYTES` of uncompressed data."""
    md = pf.metadata
    if md.num_rows == 0:
        return batch_rows
    names = set(cols) if cols is not None else None
    size = 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for j in range(rg.num_columns):
            c = rg.column(j)
            if names is None or c.path_in_schema.split(".")[0] in names:
                size += c.total_uncompressed_size
    per_row = max(1, size // md.num_rows)
    return int(max(1, min(batch_rows, BATCH_BYTES // per_row)))


def _iter_jsonl(path: Path, want: list[str] | None, batch_rows: int,
                required: tuple[str, ...]) -> Iterator[pa.Table]:
    rows: list[dict] = []
    line_numbers: list[int] = []  # file line of each buffered row
    seen_any = False
    held = 0  # characters of the buffered lines

    def flush() -> pa.Table:
        # Errors inside carry batch-relative rows (1-based); _remap_lines makes them file lines.
        keys = want if want is not None else list(dict.fromkeys(k for r in rows for k in r))
        arrays = {k: _pylist_to_array(k, [r.get(k) for r in rows], path)
                  for k in keys if k in required or any(k in r for r in rows)}
        return validate_batch(pa.table(arrays), path, 1, required)

    for lineno, obj, size in iter_json_lines_sized(path):
        seen_any = True
        for req in required:
            if req not in obj:
                raise InputError("missing required field", path=path, line=lineno, field=req)
        rows.append(obj)
        line_numbers.append(lineno)
        held += size
        if len(rows) >= batch_rows or held >= BATCH_BYTES:
            yield _remap_lines(flush, line_numbers, path)
            rows, line_numbers, held = [], [], 0
    if rows:
        yield _remap_lines(flush, line_numbers, path)
    if not seen_any:
        raise InputError("file has no JSON lines", path=path)


def _remap_lines(flush, line_numbers: list[int], path: Path) -> pa.Table:
    """Run ``flush`` and translate a batch-relative row number into the file's line number."""
    try:
        return flush()
    except InputError as exc:
        if exc.line is not None and exc.path == str(path) and 1 <= exc.line <= len(line_numbers):
            exc.line = line_numbers[exc.line - 1]
            exc.args = (str(exc),)
        raise


def _pylist_to_array(name: str, values: list[Any], path: Path) -> pa.Array:
    """Convert one JSON column to Arrow, rejecting booleans for counts and mixed types."""
    spec = ROLLOUT_BY_NAME.get(name)
    if spec is not None and spec.type == pa.int64():
        for i, v in enumerate(values):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (
                    isinstance(v, float) and (not math.isfinite(v) or not v.is_integer())) or (
                    not -(2**63) <= v < 2**63):
                raise InputError(f"expected an integer, found {v!r}", path=path,
                                 line=i + 1, field=name)
        values = [None if v is None else int(v) for v in values]
    if spec is not None and spec.type == pa.string():
        for i, v in enumerate(values):
            if v is not None and (not isinstance(v, (str, int)) or isinstance(v, bool)):
                raise InputError(f"expected a string, found {v!r}", path=path,
                                 line=i + 1, field=name)
        values = [None if v is None else str(v) for v in values]
    if spec is not None and spec.type == pa.bool_():
        for i, v in enumerate(values):
            if v is not None and not (isinstance(v, bool) or (
                    isinstance(v, (int, float)) and v in (0, 1))):
                raise InputError(f"expected a boolean (or 0/1), found {v!r}", path=path,
                                 line=i + 1, field=name)
        values = [None if v is None else bool(v) for v in values]
    try:
        return pa.array(values, type=spec.type if spec is not None else None)
    except UnicodeEncodeError:
        # JSON can carry lone surrogates ("\udcff" escapes), which no UTF-8 column can
        # hold. Model output is like that sometimes: replace them with U+FFFD, say so,
        # and keep the row (refusing would stop a whole grading batch on one sample).
        fixed, n_bad = [], 0
        for v in values:
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    # UTF-16 round trip: each unpaired surrogate decodes to U+FFFD.
                    v = v.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                    n_bad += 1
            fixed.append(v)
        # Said once per file and field, not once per batch: a long file would repeat it.
        if (str(path), name) not in _SURROGATES_REPORTED:
            _SURROGATES_REPORTED.add((str(path), name))
            log.warning("%s, field '%s': %d value(s) held lone surrogates (invalid Unicode); "
                        "replaced them with U+FFFD (later batches of this file are not "
                        "reported again)", path, name, n_bad)
        return _pylist_to_array(name, fixed, path)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"values of mixed or unsupported types ({exc})", path=path,
                         field=name) from None


def read_rollouts(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read a whole rollout table (validated). For large tables prefer :func:`iter_rollout_batches`."""
    batches = list(iter_rollout_batches(path, columns))
    return pa.concat_tables(batches, promote_options="default")


def take_rows(path: str | Path, indices, columns: list[str] | None = None) -> pa.Table:
    """The validated rows at ``indices`` (0-based over the whole table), read batch by batch.

    Only the rows taken are held: a selection of a few thousand rows from a table of
    millions costs one batch plus the selection. ``indices`` may be in any order and
    is returned ascending. Columns are those of the batches (a JSONL batch has the
    keys its lines have: batches are joined with nulls where a key is missing).
    """
    want = np.unique(np.asarray(indices, dtype=np.int64))  # (S,) ascending
    parts, start, first = [], 0, None
    for batch in iter_rollout_batches(path, columns):
        first = first if first is not None else batch
        stop = start + batch.num_rows
        lo, hi = np.searchsorted(want, [start, stop])
        if hi > lo:
            parts.append(batch.take(pa.array(want[lo:hi] - start, pa.int64())))
        start = stop
        if hi == want.size and want.size:
            break
    if want.size and (not parts or want[-1] >= start):
        raise InputError(f"row {int(want[-1]) + 1} is past the end of the table ({start} rows)",
                         path=path)
    if not parts:
        return first.slice(0, 0) if first is not None else pa.table({})
    return pa.concat_tables(parts, promote_options="default")


def read_manifest(table_path: str | Path) -> dict | None:
    """The run manifest beside a table, or None if there is none.

    A shard directory's is ``_manifest.json``, else ``manifest.json``
    (:func:`~rlvr_boundary.io.schema.find_manifest`).
    """
    mpath = find_manifest(table_path)
    if mpath is None:
        return None
    note_input(mpath)
    if mpath.is_dir() or mpath.stat().st_size > MAX_LINE_BYTES:
        raise InputError(f"manifest is not a JSON file under {MAX_LINE_BYTES >> 20} MB",
                         path=mpath)
    try:
        with open(mpath, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"manifest is not readable JSON ({type(exc).__name__})",
                         path=mpath) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"manifest is not valid JSON ({exc.msg})", path=mpath,
                         line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise InputError("manifest must be a JSON object", path=mpath)
    return doc


# ----------------------------------------------------------------------------- reducing


def _sample_idx_check(agg: pa.Table, path: Path) -> None:
    """Each (prompt, model) must hold sample_idx 0..n-1: no index outside that range.

    Duplicates were refused while reading (:class:`SampleIndexSet`, exact). Without
    a duplicate, ``n`` distinct non-negative integers are exactly ``0..n-1`` iff
    their minimum is 0 and their maximum ``n - 1``; anything else means missing
    samples (a gap) or an index past the end.
    """
    n = agg.column("n").to_numpy()
    lo = agg.column("idx_min").to_numpy()
    hi = agg.column("idx_max").to_numpy()
    ok = (lo == 0) & (hi == n - 1)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        pid = agg.column("prompt_id")[i].as_py()
        model = agg.column("model")[i].as_py()
        raise InputError(
            f"prompt '{pid}' of model '{model}' has {n[i]} rows but sample_idx is not "
            f"0..{n[i] - 1} exactly once (min {lo[i]}, max {hi[i]}): missing samples, or "
            "indices past the end", path=path, field="sample_idx")


class SampleIndexSet:
    """Exact duplicate detection of ``sample_idx`` within each (prompt, model), streaming.

    Moments (count, sum, sum of squares) cannot tell ``{0,1,1,4,5,5,6,6,8,9}`` from
    ``0..9``; this keeps the indices themselves, compactly. Per group it holds a
    prefix length ``L`` (every index below ``L`` seen once) and, for indices that
    arrive ahead of their predecessors, a few sorted runs of 64-bit keys
    ``group << 32 | index``. Tables written in order (any interleaving of groups,
    each group ascending) cost one integer per group; rows out of order within
    their group cost 8 bytes each until the gap before them fills. Every new index
    is checked against the prefix, the runs and its own batch, so the first
    repeated index is refused with its prompt, model and value.

    Notes
    -----
    Memory is bounded by :data:`MAX_PENDING` out-of-order indices (128 MB); a table
    shuffled worse than that is refused with the advice to sort it. Group keys are
    held once each (a dictionary of the (prompt, model) pairs seen).
    """

    #: Most indices held out of order at once (8 bytes each, twice while runs merge).
    MAX_PENDING = 16_000_000
    #: Sorted runs kept before they are merged (and their contiguous heads absorbed).
    MAX_RUNS = 16

    def __init__(self) -> None:
        self.codes: dict[str, dict[str, int]] = {}  # model -> prompt id -> group code
        self.groups = 0
        self.prefix = np.zeros(1024, dtype=np.int64)  # (groups,) every index < L seen
        self.runs: list[np.ndarray] = []  # sorted, disjoint int64 keys
        self.pending = 0

    def add(self, batch: pa.Table, path: Path | None = None) -> None:
        """Record the (prompt_id, model, sample_idx) of a validated batch; refuse a repeat."""
        if batch.num_rows == 0:
            return
        pid = batch.column("prompt_id").combine_chunks()
        model = batch.column("model").combine_chunks()
        idx = batch.column("sample_idx").combine_chunks().to_numpy(zero_copy_only=False)
        if idx.max() >= 2**32:
            i = int(np.argmax(idx >= 2**32))
            raise InputError(f"sample_idx {int(idx[i])} of prompt '{pid[i].as_py()}' is out of "
                             "range: the samples of a (prompt, model) are numbered 0..n-1",
                             path=path, field="sample_idx")
        # Group code of each row: the batch's distinct (prompt, model) pairs looked up once.
        pe = pc.dictionary_encode(pid)
        pl = pe.indices.to_numpy(zero_copy_only=False)
        if model.null_count == 0 and pc.all(pc.equal(model, model[0]), min_count=0).as_py():
            # one model in the batch (the usual case): the prompt's code is the pair's
            nm, mnames = 1, [model[0].as_py()]
            pairs, inv = np.arange(len(pe.dictionary)), pl
        else:
            me = pc.dictionary_encode(model)
            nm, mnames = len(me.dictionary), me.dictionary.to_pylist()
            pairs, inv = np.unique(pl * nm + me.indices.to_numpy(zero_copy_only=False),
                                   return_inverse=True)
        pnames = pe.dictionary.to_pylist()
        by_model = [self.codes.setdefault(m, {}) for m in mnames]  # model -> {prompt: code}

        def code(u: int) -> int:
            d = by_model[u % nm]
            c = d.get(pnames[u // nm])
            if c is None:
                c = d[pnames[u // nm]] = self.groups
                self.groups += 1
            return c

        local = np.fromiter((code(u) for u in pairs.tolist()), np.int64, pairs.size)
        if self.groups > MAX_PAIRS:
            raise too_many_pairs(path)
        if self.groups > self.prefix.size:
            self.prefix = np.concatenate([self.prefix, np.zeros(max(self.groups, self.prefix.size),
                                                                np.int64)])
        g = local[inv.reshape(-1)]  # (rows,) int64 group code
        keys = (g << 32) | idx  # (rows,) int64: codes < 2**31, indices < 2**32
        if keys.size < 2 or bool(np.all(keys[1:] > keys[:-1])):
            order, k = None, keys  # already sorted and distinct: groups in turn, each ascending
        else:
            order = np.argsort(keys, kind="stable")
            k = keys[order]  # (rows,) sorted
            repeat = np.flatnonzero(k[1:] == k[:-1])
            if repeat.size:
                self._fail(batch, int(order[repeat[0] + 1]), path)
        gi, ii = k >> 32, k & 0xFFFFFFFF
        row = (lambda j: j) if order is None else (lambda j: int(order[j]))
        seen = ii < self.prefix[gi]
        if seen.any():
            self._fail(batch, row(int(np.argmax(seen))), path)
        for run in self.runs:
            pos = np.minimum(np.searchsorted(run, k), run.size - 1)
            hit = run[pos] == k
            if hit.any():
                self._fail(batch, row(int(np.argmax(hit))), path)
        ahead = self._extend(gi, ii)
        if ahead.any():
            self.runs.append(k[ahead])
            self.pending += int(ahead.sum())
            if len(self.runs) > self.MAX_RUNS:
                self._compact()

    def _extend(self, gi: np.ndarray, ii: np.ndarray) -> np.ndarray:
        """Grow each group's prefix by its indices that continue it; return the others.

        ``gi, ii`` are sorted by (group, index) without repeats: within a group the
        indices ``L, L+1, ...`` come first, so a row continues the prefix exactly
        when ``index == L + rank in its group``.
        """
        pos = np.arange(gi.size)
        first = np.empty(gi.size, dtype=bool)  # first row of each group
        first[:1] = True
        np.not_equal(gi[1:], gi[:-1], out=first[1:])
        rank = pos - np.maximum.accumulate(np.where(first, pos, 0))
        cont = ii == self.prefix[gi] + rank
        self.prefix += np.bincount(gi[cont], minlength=self.prefix.size)
        return ~cont

    def _compact(self) -> None:
        """Merge the runs into one and absorb the indices that now continue a prefix."""
        k = np.concatenate(self.runs)
        self.runs = []
        k.sort()
        keep = np.ones(k.size, dtype=bool)
        step = 1 << 22  # temporaries of 4M keys at a time, cut at group boundaries
        a = 0
        while a < k.size:
            b = min(a + step, k.size)
            if b < k.size:  # extend to the end of the group at b - 1
                b = int(np.searchsorted(k, ((k[b - 1] >> 32) + 1) << 32))
            gi, ii = k[a:b] >> 32, k[a:b] & 0xFFFFFFFF
            keep[a:b] = self._extend(gi, ii)
            a = b
        rest = k[keep]
        del k, keep
        self.runs = [rest] if rest.size else []
        self.pending = int(rest.size)
        if self.pending > self.MAX_PENDING:
            raise InputError(
                f"more than {self.MAX_PENDING:,} samples arrive ahead of a lower sample_idx of "
                "their (prompt, model): too far out of order to check for duplicates in bounded "
                "memory; sort the table by prompt_id, model, sample_idx")

    @staticmethod
    def _fail(batch: pa.Table, row: int, path: Path | None) -> None:
        pid = batch.column("prompt_id")[row].as_py()
        model = batch.column("model")[row].as_py()
        idx = batch.column("sample_idx")[row].as_py()
        raise InputError(f"prompt '{pid}' of model '{model}' has sample_idx {idx} more than "
                         "once: duplicated samples (a shard or a file read twice?); each index "
                         "0..n-1 must appear exactly once", path=path, field="sample_idx")


class CountReducer:
    """Per-prompt counts of every model, accumulated batch by batch in bounded memory.

    Feed validated rollout batches to :meth:`add` (from a file, a shard
    directory or an adapter's in-memory table); a repeated ``sample_idx`` is refused
    as soon as it is read (:class:`SampleIndexSet`), and :meth:`result` checks that
    every (prompt, model) holds ``sample_idx`` 0..n-1 and returns the counts.
    Partial aggregates are compacted every 16 batches.
    """

    _AGGS = [("correct", "sum"), ("correct", "count"), ("sample_idx", "min"),
             ("sample_idx", "max")]

    def __init__(self, path: str | Path | None = None) -> None:
        self.parts: list[pa.Table] = []
        self.rows = 0
        #: The file named in a duplicate's error (the reader's path).
        self.path = None if path is None else Path(path)
        self.indices = SampleIndexSet()
        #: ``correct__<scorer>`` columns (two or more), fixed by the first batch; their
        #: per-prompt sums and a :class:`~rlvr_boundary.io.verdicts.VerdictTally` ride along.
        self.scorers: list[str] | None = None
        self.tally = None

    def add(self, batch: pa.Table) -> None:
        from rlvr_boundary.io.verdicts import VerdictTally, scorer_columns, verdict_array

        if self.scorers is None:
            self.scorers = scorer_columns(batch.column_names)
            self.tally = VerdictTally(self.scorers) if self.scorers else None
        self.indices.add(batch, self.path)
        t = batch.select(["prompt_id", "model", "sample_idx", "correct"])
        t = t.set_column(t.column_names.index("correct"), "correct",
                         t.column("correct").cast(pa.int64()))
        if self.tally is not None:
            self.tally.add(batch)
            for col in self.scorers:
                t = t.append_column(col, verdict_array(batch, col).cast(pa.int64()))
        aggs = self._AGGS + [(col, "sum") for col in self.scorers or []]
        g = t.group_by(["prompt_id", "model"], use_threads=False).aggregate(aggs)
        self.parts.append(g.rename_columns(
            {"correct_sum": "c", "correct_count": "n", "sample_idx_min": "idx_min",
             "sample_idx_max": "idx_max", **{f"{col}_sum": col for col in self.scorers or []}}))
        self.rows += batch.num_rows
        if len(self.parts) > 16:  # compact partial aggregates to keep memory bounded
            self.parts = [self._merge(self.parts, self.scorers)]

    @staticmethod
    def _merge(tables: list[pa.Table], scorers: list[str] | None = None) -> pa.Table:
        t = pa.concat_tables(tables)
        g = t.group_by(["prompt_id", "model"], use_threads=False).aggregate(
            [("c", "sum"), ("n", "sum"), ("idx_min", "min"), ("idx_max", "max"),
             *[(col, "sum") for col in scorers or []]])
        return g.rename_columns({"c_sum": "c", "n_sum": "n", "idx_min_min": "idx_min",
                                 "idx_max_max": "idx_max",
                                 **{f"{col}_sum": col for col in scorers or []}})

    def result(self, path: str | Path) -> dict[str, Counts]:
        """model label -> :class:`Counts` (prompts sorted by id); ``path`` names errors."""
        path = Path(path)
        if not self.parts:
            raise InputError("table has no rows", path=path)
        self.indices = SampleIndexSet()  # every duplicate was refused on arrival: free it
        agg = self._merge(self.parts, self.scorers)
        _sample_idx_check(agg, path)
        out: dict[str, Counts] = {}
        models = agg.column("model").to_numpy(zero_copy_only=False)
        for model in sorted(set(models)):
            sub = agg.filter(pc.equal(agg.column("model"), model)).sort_by("prompt_id")
            out[str(model)] = Counts(
                str(model), sub.column("prompt_id").to_numpy(zero_copy_only=False),
                sub.column("n").to_numpy(), sub.column("c").to_numpy(), str(path),
                scorers={col[len("correct__"):]: sub.column(col).to_numpy()
                         for col in self.scorers or []},
                tally=self.tally.of_model(str(model)) if self.tally is not None else None)
        return out


def reduce_counts(path: str | Path, *, batch_rows: int = BATCH_ROWS,
                  progress=None) -> dict[str, Counts]:
    """Reduce a rollout table to per-prompt counts per model, in bounded memory.

    Returns
    -------
    dict
        model label -> :class:`Counts` (prompts sorted by id).
    """
    from rlvr_boundary.io.verdicts import TALLY_COLUMNS, scorer_columns

    reducer = CountReducer(path)
    scorers = scorer_columns(table_columns(path))
    want = [*REQUIRED_ROLLOUT, *scorers, *(TALLY_COLUMNS if scorers else ())]
    for batch in iter_rollout_batches(path, want, batch_rows=batch_rows):
        reducer.add(batch)
        if progress is not None:
            progress(batch.num_rows)
    return reducer.result(path)


# ----------------------------------------------------------------------------- writing


#: Endings of a rollout table this tool writes (the format follows the ending).
ROLLOUT_WRITE_SUFFIXES = (".parquet", ".jsonl")


def check_rollout_suffix(path: str | Path, flag: str | None = None) -> None:
    """Refuse a rollout-table output whose ending is not ``.parquet`` or ``.jsonl``.

    The ending chooses the format: ``o.csv`` would otherwise hold Parquet bytes
    under a CSV name, and ``.jsonl.gz`` JSON text under a gzip name.
    """
    if not str(path).lower().endswith(ROLLOUT_WRITE_SUFFIXES):
        raise InputError(f"{flag + ': ' if flag else ''}{path}: a rollout table is written as "
                         "Parquet (.parquet) or JSON Lines (.jsonl); the format follows the "
                         "ending")


def write_rollouts(table: pa.Table, path: str | Path, manifest: dict | None = None, *,
                   required: tuple[str, ...] = REQUIRED_ROLLOUT) -> Path:
    """Write a rollout table atomically (``.parquet`` or ``.jsonl``, by suffix) and its manifest.

    What is written is the validated table: canonical types (0/1 verdicts become
    booleans, integer ids strings, ...), checked row by row as when reading. The
    manifest, if given, is written beside the table; ``schema_version`` and
    ``tool_version`` of this writer come after the manifest's own keys, so a
    copied manifest cannot keep stale versions.
    """
    return write_rollout_batches([table], path, manifest, required=required)


def write_rollout_batches(batches, path: str | Path, manifest: dict | None = None, *,
                          required: tuple[str, ...] = REQUIRED_ROLLOUT,
                          schema: pa.Schema | None = None) -> Path:
    """:func:`write_rollouts` from an iterable of tables, one at a time (bounded memory).

    Each batch is validated, then conformed to ``schema`` (default: the first
    batch's canonical schema): a column it lacks is written as nulls, a column the
    schema lacks is an error. The file appears only when every batch is written.
    """
    path = Path(path)
    check_rollout_suffix(path)
    jsonl = path.name.lower().endswith(".jsonl")
    row = 1
    with atomic_path(path) as tmp:
        writer = None
        with open(tmp, "w", encoding="utf-8") if jsonl else contextlib.nullcontext() as fh:
            try:
                for table in batches:
                    table = validate_batch(table, path, row, required)
                    row += table.num_rows
                    if jsonl:
                        for batch in table.to_batches(BATCH_ROWS):
                            for r in batch.to_pylist():
                                fh.write(json.dumps(to_jsonable(r), ensure_ascii=False) + "\n")
                        continue
                    schema = schema or table.schema
                    table = _conform(table, schema, path)
                    if writer is None:
                        writer = pq.ParquetWriter(tmp, schema, compression="zstd")
                    writer.write_table(table)
                if not jsonl and writer is None:  # no batch at all: an empty table
                    if schema is None:
                        raise InputError("nothing to write: no rows and no columns", path=path)
                    writer = pq.ParquetWriter(tmp, schema, compression="zstd")
            finally:
                if writer is not None:
                    writer.close()
    if manifest is not None:
        doc = {**manifest, "schema_version": SCHEMA_VERSION, "tool_version": __version__}
        with atomic_open(manifest_path_for(path), "w") as fh:
            json.dump(to_jsonable(doc), fh, indent=1)
    return path


def _conform(table: pa.Table, schema: pa.Schema, path: Path) -> pa.Table:
    """``table`` with exactly the columns of ``schema``, in its order and types."""
    extra = [c for c in table.column_names if c not in schema.names]
    if extra:
        raise InputError(f"a batch has columns the others lack: {extra[:5]}", path=path,
                         field=extra[0])
    cols = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            cols.append(col if col.type == f.type else col.cast(f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def table_schema(path: str | Path) -> pa.Schema:
    """One schema for every shard of a Parquet table (their schemas unified: a column
    that is all-null in one shard takes the type it has in the others)."""
    files = parquet_files(Path(path))
    try:
        schemas = [pq.read_schema(f) for f in files]
    except PARQUET_ERRORS as exc:
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
    try:
        return pa.unify_schemas(schemas, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"the shards have columns of different types ({exc})",
                         path=path) from None
