"""One entry point for every input format: :func:`load_counts` and :func:`detect_format`.

Formats recognised (``--format`` names):

``count-jsonl``
    One JSON object per prompt, ``{"id": ..., "c": int, "n": int}`` (``prompt_id``
    is accepted for ``id``); one file per model, as written by public tools such
    as ``passk-inference``. Other keys present on every line are kept as
    per-prompt fields (``Counts.extra``).
``count-table``
    Rows ``(prompt_id, model, n, c)`` in CSV/TSV, JSONL or Parquet; may hold
    several models. ``model`` may be omitted when the file holds one model.
``rollouts``
    The canonical rollout table (docs/schema.md); reduced to counts by streaming.
adapters
    Formats of other tools (lm-evaluation-harness, lighteval, verl, the
    limit-of-RLVR evaluator), see :mod:`rlvr_boundary.io.adapters` and docs/formats.md.

Counts are validated line by line, so errors name the file, line and field:
malformed JSON, a missing field, booleans or non-integers where counts belong,
negative counts, ``c > n``, duplicate ids, an empty file.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters import ADAPTER_NAMES, NATIVE_FORMATS, choice_flag
from rlvr_boundary.io.counts import MAX_PAIRS, Counts, too_many_pairs
from rlvr_boundary.io.text import (
    MAX_LINE_BYTES,
    _check_exists,
    is_jsonl,
    iter_json_lines,
    iter_text_lines,
    path_stem,
)

# pyarrow and the Arrow readers (rollouts, adapters, Parquet) are imported inside
# the branches that read such files: importing pyarrow takes longer than the whole
# comparison of two count files, which needs none of it.


def _is_csv(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz"))


def detect_format(path: str | Path) -> str:
    """Name the format of ``path`` from its first record or schema (cheap)."""
    path = Path(path)
    _check_exists(path)
    if _is_csv(path):
        return "count-table"
    if path.is_dir() and not list(path.glob("part-*.parquet")):
        from rlvr_boundary.io import adapters

        found = adapters.detect(path)
        if found:
            return found
        raise InputError("directory is neither a shard directory nor a known format", path=path)
    try:
        cols = set(_columns(path))
    except InputError:
        # Neither JSON lines nor Parquet: a format with a layout of its own, if any sniffs it.
        from rlvr_boundary.io import adapters

        found = adapters.detect(path)
        if found:
            return found
        raise
    if {"sample_idx", "correct"} <= cols and "prompt_id" in cols:
        return "rollouts"
    if {"n", "c"} <= cols and ("model" in cols or "prompt_id" in cols) and "id" not in cols:
        return "count-table"
    if {"n", "c"} <= cols and ({"id", "prompt_id"} & cols):
        return "count-jsonl" if is_jsonl(path) else "count-table"
    from rlvr_boundary.io import adapters

    found = adapters.detect(path)
    if found:
        return found
    if {"prompt_id", "sample_idx"} <= cols and "correct" not in cols:
        raise InputError(
            "no `correct` column: run `rlvr-boundary verify` first (this looks like an "
            "ungraded rollout table, e.g. straight from `sample`; `verify ROLLOUTS --gold "
            "GOLD` adds `correct`)", path=path, field="correct")
    raise InputError(
        f"cannot tell the format from the fields {sorted(cols)[:12]}; expected a rollout table "
        "(prompt_id, model, sample_idx, correct), counts (id, n, c), or one of the adapter "
        "formats in docs/formats.md (pass --format to choose)", path=path)


def _columns(path: Path) -> list[str]:
    """Field names of a table: the first JSON line's keys, or a Parquet schema's names."""
    if is_jsonl(path):
        for _, obj in iter_json_lines(path):
            return list(obj)
        raise InputError("file has no JSON lines", path=path)
    from rlvr_boundary.io.rollouts import table_columns

    return table_columns(path)


#: Largest count accepted (one billion samples of one prompt): larger values are typos or
#: overflowed integers, and budgets up to ``n`` must stay computable.
MAX_COUNT = 10**9

_ASCII_INT = re.compile(r"[+-]?[0-9]+(?:\.0*)?")


def _as_count(value: Any, *, path: Path, line: int, field: str, text: bool = False) -> int:
    """An integer count in ``[0, MAX_COUNT]``.

    JSON (``text=False``): ints, or floats with an integral value; never bools or strings
    (the schema says counts are numbers). CSV cells (``text=True``): ASCII digits with an
    optional ``.0`` (so ``4.0`` means the same in both); no other digits, exponents or
    separators.
    """
    if isinstance(value, bool):
        raise InputError(f"expected an integer count, found boolean {value}", path=path,
                         line=line, field=field)
    if isinstance(value, int):
        out = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        out = value
    elif text and isinstance(value, str) and _ASCII_INT.fullmatch(value.strip()):
        out = float(value) if "." in value else int(value)
    else:
        raise InputError(f"expected an integer count, found {_short(value)}", path=path,
                         line=line, field=field)
    if out < 0:
        raise InputError(f"counts must be >= 0, found {_short(value)}", path=path, line=line,
                         field=field)
    if out > MAX_COUNT:
        raise InputError(f"count {_short(value)} is larger than the largest accepted "
                         f"({MAX_COUNT:,})", path=path, line=line, field=field)
    return int(out)


def _short(value: Any, limit: int = 60) -> str:
    """``repr`` of a user value, cut to ``limit`` characters (a 128 KB cell stays readable)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit]}... ({len(r):,} characters)"


def _check_row(pid, n: int, c: int, path: Path, line: int, seen: dict, model: str) -> None:
    if n < 1:
        raise InputError(f"n must be >= 1, found {n}", path=path, line=line, field="n")
    if c > n:
        raise InputError(f"c = {c} exceeds n = {n}", path=path, line=line, field="c")
    key = (model, pid)
    if key in seen:
        raise InputError(f"duplicate prompt id {pid!r} (first on line {seen[key]})", path=path,
                         line=line, field="id" if model == "" else "prompt_id")
    seen[key] = line


def _read_count_jsonl(path: Path, label: str) -> list[Counts]:
    ids, ns, cs, extra = [], [], [], {}
    seen: dict = {}
    for line, obj in iter_json_lines(path):
        key = "id" if "id" in obj else "prompt_id" if "prompt_id" in obj else None
        if key is None:
            raise InputError("missing field 'id'", path=path, line=line, field="id")
        for f in ("n", "c"):
            if f not in obj:
                raise InputError(f"missing field '{f}'", path=path, line=line, field=f)
        pid = obj[key]
        if not isinstance(pid, (str, int)) or isinstance(pid, bool):
            raise InputError(f"id must be a string or integer, found {pid!r}", path=path,
                             line=line, field=key)
        pid = str(pid)
        n = _as_count(obj["n"], path=path, line=line, field="n")
        c = _as_count(obj["c"], path=path, line=line, field="c")
        _check_row(pid, n, c, path, line, seen, "")
        if len(seen) > MAX_PAIRS:
            raise too_many_pairs(path, line)
        ids.append(pid)
        ns.append(n)
        cs.append(c)
        for k, v in obj.items():
            if k not in (key, "n", "c") and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                extra.setdefault(k, {})[len(ids) - 1] = v
    if not ids:
        raise InputError("file has no records", path=path)
    cols = {k: np.array([d.get(i) for i in range(len(ids))], dtype=object)
            for k, d in extra.items() if len(d) == len(ids)}
    return [Counts(label, np.array(ids, dtype=object), np.array(ns), np.array(cs), str(path), cols)]


def _iter_table_rows(path: Path):
    """Yield ``(line, dict)`` for CSV/TSV, JSONL or Parquet count tables."""
    if _is_csv(path):
        delim = "\t" if ".tsv" in path.name.lower() else ","
        # Lines are bounded by the line reader; a field may be as long as a line.
        csv.field_size_limit(MAX_LINE_BYTES)
        # Not UTF-8 is an error here (every cell is an id, a label or a count: replacing
        # bytes could merge two ids).
        reader = csv.reader((text for _, text in iter_text_lines(path, replace_invalid=False)),
                            delimiter=delim)
        try:
            header = next(reader, None)
            if not header:
                raise InputError("file is empty", path=path)
            header = [h.strip() for h in header]
            for cells in reader:
                if not cells:
                    continue  # a blank line; reader.line_num still counts it
                if len(cells) > len(header):
                    raise InputError(f"row has {len(cells)} values, the header has "
                                     f"{len(header)}", path=path, line=reader.line_num)
                yield reader.line_num, dict(zip(header, cells))
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=path, line=reader.line_num) from None
    elif is_jsonl(path):
        yield from iter_json_lines(path)
    else:
        import pyarrow.parquet as pq

        from rlvr_boundary.io.rollouts import PARQUET_ERRORS, parquet_files

        row = 1
        for file in parquet_files(path):
            try:
                for batch in pq.ParquetFile(file).iter_batches(batch_size=65536):
                    for rec in batch.to_pylist():
                        yield row, rec
                        row += 1
            except PARQUET_ERRORS as exc:
                raise InputError(f"not a readable Parquet file ({exc})", path=file,
                                 line=row) from None


def _read_count_table(path: Path, default_model: str) -> list[Counts]:
    data: dict[str, dict[str, list]] = {}
    seen: dict = {}
    any_row = False
    for line, rec in _iter_table_rows(path):
        any_row = True
        key = "prompt_id" if "prompt_id" in rec else "id" if "id" in rec else None
        if key is None:
            raise InputError("missing field 'prompt_id'", path=path, line=line, field="prompt_id")
        for f in ("n", "c"):
            if rec.get(f) in (None, ""):
                raise InputError(f"missing field '{f}'", path=path, line=line, field=f)
        pid = rec[key]
        if pid is None or pid == "":
            raise InputError("missing prompt id", path=path, line=line, field=key)
        if not isinstance(pid, (str, int)) or isinstance(pid, bool):
            raise InputError(f"prompt id must be a string or integer, found {_short(pid)}",
                             path=path, line=line, field=key)
        model = rec.get("model")
        if model is not None and not isinstance(model, str):
            raise InputError(f"model must be a string, found {_short(model)}", path=path,
                             line=line, field="model")
        model = model or default_model
        text = _is_csv(path)
        n = _as_count(rec["n"], path=path, line=line, field="n", text=text)
        c = _as_count(rec["c"], path=path, line=line, field="c", text=text)
        _check_row(str(pid), n, c, path, line, seen, str(model))
        if len(seen) > MAX_PAIRS:
            raise too_many_pairs(path, line)
        d = data.setdefault(str(model), {"ids": [], "n": [], "c": []})
        d["ids"].append(str(pid))
        d["n"].append(n)
        d["c"].append(c)
    if not any_row:
        raise InputError("file has no rows", path=path)
    return [Counts(m, np.array(d["ids"], dtype=object), np.array(d["n"]), np.array(d["c"]),
                   str(path)) for m, d in data.items()]


def counts_from_table(table, path: Path, default_model: str, *, facts=None,
                      progress=None) -> list[Counts]:
    """Counts from an adapter's Arrow output (a count table or a rollout table), in memory.

    A rollout-shaped table is validated batch by batch and reduced like a file;
    ``facts`` (a :class:`~rlvr_boundary.io.samples.SampleFacts`), when given,
    sees the same batches. ``progress`` is called with each batch's row count.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from rlvr_boundary.io.rollouts import BATCH_ROWS, CountReducer, validate_batch
    from rlvr_boundary.io.samples import QUALITY_COLUMNS

    names = set(table.column_names)
    if {"n", "c"} <= names:
        if "model" not in names:
            table = table.append_column("model", pa.array([default_model] * table.num_rows))
        out = []
        for model in sorted(set(table.column("model").to_pylist())):
            sub = table.filter(pc.equal(table.column("model"), model))
            out.append(Counts(model, np.array(sub.column("prompt_id").to_pylist(), dtype=object),
                              sub.column("n").to_numpy(), sub.column("c").to_numpy(), str(path)))
        return out
    derive = "text" in names and not (names & set(QUALITY_COLUMNS))
    reducer = CountReducer(path)
    row = 1
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        feed(validate_batch(batch, path, row), reducer, facts, derive, progress)
        row += batch.num_rows
    return list(reducer.result(path).values())


def read_adapter(fmt: str, path: Path, label: str | None, choices: dict | None = None, *,
                 facts=None, progress=None) -> list[Counts]:
    """Counts (and, given ``facts``, per-sample facts) of an input in another tool's format.

    Adapters that declare ``STREAMS`` (all of ours) stream their rows: each
    batch is validated and reduced as it is read, so no table of every text is
    held; what they return besides (lm-eval and lighteval documents scored over
    several samples, as a count table) is added to those counts. An adapter
    without ``STREAMS`` returns a table, reduced in memory.
    """
    from rlvr_boundary.io import adapters
    from rlvr_boundary.io.adapters._common import streaming
    from rlvr_boundary.io.rollouts import CountReducer, validate_batch

    if fmt not in ADAPTER_NAMES:
        raise InputError(f"unknown format '{fmt}'; known: "
                         f"{', '.join([*NATIVE_FORMATS, *ADAPTER_NAMES])}", path=path)
    if getattr(adapters.adapter(fmt), "STREAMS", False):
        reducer = CountReducer(path)
        row = [1]

        def sink(batch) -> None:
            # Their tables carry text and no quality flags: derive the flags from the text.
            feed(validate_batch(batch, path, row[0]), reducer, facts, True, progress)
            row[0] += batch.num_rows

        with streaming(sink):
            rest = adapters.read(fmt, path, model=label, **(choices or {}))
        # Documents scored over several samples come back as a count table (lm-eval,
        # lighteval): add them to the streamed single-sample ones.
        extra = (counts_from_table(rest, path, label or path_stem(path))
                 if rest.num_rows and {"n", "c"} <= set(rest.column_names) else [])
        if not reducer.parts:
            if extra:
                return extra
            raise InputError("table has no rows", path=path)
        return merge_counts(list(reducer.result(path).values()), extra)
    table = adapters.read(fmt, path, model=label, **(choices or {}))
    return counts_from_table(table, path, label or path_stem(path), facts=facts,
                             progress=progress)


def merge_counts(streamed: list[Counts], extra: list[Counts]) -> list[Counts]:
    """Counts of the same models from two disjoint sets of prompts, joined per model."""
    out = {c.model: c for c in streamed}
    for e in extra:
        if e.model not in out:
            out[e.model] = e
            continue
        s = out[e.model]
        ids = np.concatenate([s.prompt_ids, e.prompt_ids])
        if np.unique(ids).size != ids.size:
            raise InputError(f"model '{e.model}': a prompt is both a single sample and "
                             "repeated samples", path=s.source)
        order = np.argsort(ids, kind="stable")
        out[e.model] = Counts(e.model, ids[order], np.concatenate([s.n, e.n])[order],
                              np.concatenate([s.c, e.c])[order], s.source)
    return list(out.values())


def feed(batch, reducer, facts, derive: bool, progress) -> None:
    """One validated rollout batch to the count reducer and, if any, the facts."""
    reducer.add(batch)
    if facts is not None:
        facts.add_batch(batch, derive_quality=derive)
    if progress is not None:
        progress(batch.num_rows)


def load_counts(path: str | Path, *, fmt: str = "auto", label: str | None = None,
                choices: dict | None = None) -> list[Counts]:
    """Read per-prompt counts of every model in ``path``.

    Parameters
    ----------
    path
        A file or directory in any supported format.
    fmt
        ``"auto"`` to detect, or a format name (``count-jsonl``, ``count-table``,
        ``rollouts`` or an adapter name).
    label
        Model label for single-model formats without one (default: file stem).
    choices
        Keyword arguments for an adapter's ``read`` (lm-eval ``filter``, ...).

    Returns
    -------
    list of Counts
        One per model found in the file.
    """
    path = Path(path)
    _check_exists(path)
    fmt = detect_format(path) if fmt == "auto" else fmt
    default = label or path_stem(path)
    if fmt == "count-jsonl":
        return _read_count_jsonl(path, default)
    if fmt == "count-table":
        return _read_count_table(path, default)
    if fmt == "rollouts":
        from rlvr_boundary.io.rollouts import reduce_counts

        return list(reduce_counts(path).values())
    return read_adapter(fmt, path, label, choices)


def load_model_counts(path: str | Path, *, model: str | None = None, fmt: str = "auto",
                      label: str | None = None, choices: dict | None = None,
                      flag: str = "--base-model/--rl-model") -> Counts:
    """Read the counts of one model from ``path``.

    If the file holds several models, ``model`` selects one (an error lists the
    labels found otherwise). ``label`` renames the result.
    """
    found = load_counts(path, fmt=fmt, label=label if model is None else None, choices=choices)
    if model is not None:
        match = [c for c in found if c.model == model]
        if not match:
            raise InputError(f"model '{model}' not found; the file holds "
                             f"{', '.join(c.model for c in found)}", path=path, field="model")
        out = match[0]
    elif len(found) > 1:
        raise InputError(f"the file holds several models ({', '.join(c.model for c in found)}); "
                         f"choose one with {flag}", path=path, field="model")
    else:
        out = found[0]
    if label is not None:
        out.model = label
    return out


#: Most rows of a published curve (k, pass@k base, pass@k RL): papers print a few dozen.
MAX_CURVE_ROWS = 100_000
#: Most distinct success rates per column held for the crossing bound (16 bytes each);
#: more is refused with the advice to round (--round D merges rates to 10^D values).
MAX_DISTINCT_RATES = 4_000_000
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _rate_block(delim: str) -> re.Pattern:
    """Lines of exactly two plain numbers separated by ``delim``."""
    num = _NUMBER.pattern
    return re.compile(rf"(?:{num}{re.escape(delim)}{num}(?:\r?\n|\Z))*")


def _number(cell: str) -> float:
    """A decimal number in ASCII (no other digits, separators, nan or inf)."""
    if not _NUMBER.fullmatch(cell):
        raise ValueError(cell)
    return float(cell)


def _source_lines(path: str | None):
    """``(lines, source name)``: bounded ``(line number, text)`` of a file or of stdin."""
    if path in (None, "-"):
        def stdin_lines():
            lineno = 0
            while True:
                text = sys.stdin.readline(MAX_LINE_BYTES + 1)
                if not text:
                    return
                lineno += 1
                if len(text) > MAX_LINE_BYTES:
                    raise InputError(f"line is longer than {MAX_LINE_BYTES // 2**20} MB",
                                     path="<stdin>", line=lineno)
                yield lineno, text.lstrip("\ufeff") if lineno == 1 else text
        return stdin_lines(), "<stdin>"
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    if p.is_dir():
        raise InputError("is a directory, expected a file", path=p)
    return iter_text_lines(p, replace_invalid=False), str(p)


class _Histogram:
    """Distinct values and their counts, merged chunk by chunk in bounded memory."""

    def __init__(self, source: str, what: str) -> None:
        self.values = np.empty(0)
        self.counts = np.empty(0, dtype=np.int64)
        self.source, self.what = source, what

    def add(self, chunk: np.ndarray) -> None:
        v, c = np.unique(chunk, return_counts=True)
        allv = np.concatenate([self.values, v])
        allc = np.concatenate([self.counts, c])
        self.values, inv = np.unique(allv, return_inverse=True)
        self.counts = np.bincount(inv, weights=allc, minlength=self.values.size).astype(np.int64)
        if self.values.size > MAX_DISTINCT_RATES:
            raise InputError(
                f"more than {MAX_DISTINCT_RATES:,} distinct {self.what} rates; round them "
                "with --round D (e.g. --round 6) to merge nearly equal values",
                path=self.source)


def read_price_table(path: str | None, kind: str = "auto") -> tuple[str, list | None, Any, str]:
    """Read the table of the price diagnostic from a file or stdin, streaming.

    Two columns are per-prompt success rates of base and RL ("rates"), three
    are a published curve ``k, pass@k base, pass@k RL`` ("curve"). Lines are
    read one at a time (each at most ``MAX_LINE_BYTES``); a leading byte-order
    mark is dropped; blank lines and ``#`` comments are skipped but counted in
    line numbers. Only the first non-blank line may be a header.

    Rates are not kept row by row: everything the diagnostic needs depends on
    each column's multiset of rates, so they are reduced to histograms (at most
    ``MAX_DISTINCT_RATES`` distinct values per column) and a table of any
    length is read in bounded memory.

    Returns
    -------
    tuple
        ``(kind, header or None, values, source name)``; ``values`` is the
        ``(rows, 3)`` array of a curve, or for rates a dict ``{"n": rows,
        "base": (rates, counts), "rl": (rates, counts)}`` of distinct rates.
    """
    lines, source = _source_lines(path)
    return _price_from_lines(lines, source, kind)


def parse_price_table(text: str, source: str, kind: str = "auto"):
    """:func:`read_price_table` on text already in hand (pasted, say); ``source`` names it."""
    lines = enumerate(text.lstrip("\ufeff").splitlines(keepends=True), start=1)
    return _price_from_lines(lines, source, kind)


def _check_curve_row(vals: list[float], prev: list[float] | None, header, source: str,
                     line: int) -> None:
    """One row ``k, pass@k base, pass@k RL`` of a published curve, against the row before.

    Budgets increase strictly; pass@k lies in [0, 1] and never decreases as k grows
    (a sample budget that grows can only solve more), so a falling value is a
    misread table, a column of something else (pass@1 per step, a loss), or rows
    out of order, and the crossings and price read from it would be meaningless.
    """
    k = vals[0]
    if k <= 0:
        raise InputError(f"budget k must be > 0, found {k:g}", path=source, line=line, field="k")
    names = header[1:3] if header and len(header) >= 3 else ["base", "RL"]
    for col, v in zip(names, vals[1:]):
        if not 0 <= v <= 1:
            raise InputError(f"pass@k must lie in [0, 1] (give fractions, not percent), found "
                             f"{v:g}", path=source, line=line, field=str(col))
    if prev is None:
        return
    if k <= prev[0]:
        raise InputError(f"budgets must increase down the rows: k = {k:g} after k = {prev[0]:g}",
                         path=source, line=line, field="k")
    for col, v, before in zip(names, vals[1:], prev[1:]):
        if v < before:
            raise InputError(
                f"pass@k of {col} falls from {before:g} at k = {prev[0]:g} to {v:g} at k = {k:g}; "
                "pass@k never decreases as k grows: is this column a pass@k curve?",
                path=source, line=line, field=str(col))


def _price_from_lines(lines, source: str, kind: str):
    """The parser of :func:`read_price_table` on ``(line number, text)`` pairs."""
    header, delim, ncol, first = None, None, None, None
    rows: list[list[float]] = []
    hist = None
    chunk: list[list[float]] = []
    n_rows = 0

    def flush() -> None:
        arr = np.array(chunk, dtype=float).reshape(-1, 2)  # (rows, 2)
        hist[0].add(arr[:, 0])
        hist[1].add(arr[:, 1])
        chunk.clear()

    def parse(i: int, ln: str) -> None:
        nonlocal header, delim, ncol, first, kind, hist, n_rows
        if not ln.strip() or ln.lstrip().startswith("#"):
            return
        if delim is None:
            delim = "\t" if "\t" in ln else "," if "," in ln else " "
        if delim == " ":
            cells = ln.split()
        elif '"' in ln:
            cells = next(csv.reader([ln], delimiter=delim))
        else:  # no quoting: a plain split is what csv would do, and much faster
            cells = ln.rstrip("\r\n").split(delim)
        cells = [c.strip() for c in cells]
        try:
            vals = [_number(c) for c in cells]
        except ValueError:
            if header is None and ncol is None:
                header = cells
                return
            raise InputError(f"expected numbers, found {_short(cells)}", path=source,
                             line=i) from None
        if ncol is None:
            ncol, first = len(vals), i
            if kind == "auto":
                kind = {2: "rates", 3: "curve"}.get(ncol, kind)
                if kind == "auto":
                    raise InputError(f"expected 2 columns (base rate, RL rate) or 3 (k, "
                                     f"pass@k base, pass@k RL), found {ncol}", path=source,
                                     line=i)
            want = 2 if kind == "rates" else 3
            if ncol != want:
                raise InputError(f"--kind {kind} needs {want} columns, found {ncol}",
                                 path=source, line=i)
            if kind == "rates":
                hist = (_Histogram(source, "base"), _Histogram(source, "RL"))
        elif len(vals) != ncol:
            raise InputError(f"expected {ncol} columns, found {len(vals)}", path=source,
                             line=i)
        if not all(math.isfinite(v) for v in vals):
            raise InputError("values must be finite numbers", path=source, line=i)
        n_rows += 1
        if kind == "rates":
            if not all(0 <= v <= 1 for v in vals):
                raise InputError(f"success rates must lie in [0, 1], found {vals}",
                                 path=source, line=i)
            chunk.append(vals)
            if len(chunk) >= 65_536:
                flush()
        else:
            _check_curve_row(vals, rows[-1] if rows else None, header, source, i)
            rows.append(vals)
            if len(rows) > MAX_CURVE_ROWS:
                raise InputError(f"a published curve has at most {MAX_CURVE_ROWS:,} rows",
                                 path=source, line=i)

    block: list[tuple[int, str]] = []

    def run_block() -> None:
        # Fast path for plain "rate<delim>rate" lines: one regex over the block checks every
        # line, numpy converts it; anything else (blank lines, comments, spaces, quotes, a
        # bad value) goes line by line, which also names the offending line.
        nonlocal n_rows
        text = "".join(t for _, t in block)
        if _rate_block(delim).fullmatch(text):
            parts = text.replace("\r", "").replace("\n", delim).split(delim)
            if parts and parts[-1] == "":
                parts.pop()
            arr = np.array(parts, dtype=float).reshape(-1, 2)  # (rows, 2)
            if np.all((arr >= 0) & (arr <= 1)):
                hist[0].add(arr[:, 0])
                hist[1].add(arr[:, 1])
                n_rows += arr.shape[0]
                block.clear()
                return
        for i, ln in block:
            parse(i, ln)
        block.clear()

    try:
        for i, ln in lines:
            if hist is not None and delim in (",", "\t"):
                block.append((i, ln))
                if len(block) >= 65_536:
                    run_block()
            else:
                parse(i, ln)
        if block:
            run_block()
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", path=source) from None
    if not n_rows:
        raise InputError("no data rows", path=source)
    if kind == "rates":
        if chunk:
            flush()
        values = {"n": n_rows, "base": (hist[0].values, hist[0].counts),
                  "rl": (hist[1].values, hist[1].counts)}
        return kind, header, values, source
    return kind, header, np.array(rows, dtype=float), source


# ----------------------------------------------------------------------------- naming inputs


def check_choices_used(choices: dict[str, dict], formats: list[str]) -> None:
    """A choice for a format none of the inputs has is a mistake: say so, naming the flag."""
    for fmt, kwargs in choices.items():
        for key, value in kwargs.items():
            if value is not None and fmt not in formats:
                raise InputError(f"{choice_flag(fmt, key)} applies to {fmt} inputs, "
                                 f"but the inputs are {', '.join(sorted(set(formats)))}")


def label_for(path: Path, labels: dict[str, str] | None) -> str | None:
    """The label given for ``path``: matched as given, or both resolved."""
    if not labels:
        return None
    if str(path) in labels:
        return labels[str(path)]
    resolved = path.resolve()
    for key, value in labels.items():
        if Path(key).resolve() == resolved:
            return value
    return None


def check_labels(labels: dict[str, str], paths: list[Path]) -> None:
    """Every labelled path must be one of the inputs (as given or resolved)."""
    for path, name in (labels or {}).items():
        if label_for(Path(path), {str(p): "x" for p in paths}) is None:
            raise InputError(f"--label {path + '=' + name!r}: {path} is not one of the inputs "
                             f"({', '.join(map(str, paths))})", field="label")
