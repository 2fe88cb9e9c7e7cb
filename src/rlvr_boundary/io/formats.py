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
import io
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.counts import Counts
from rlvr_boundary.io.text import _check_exists, is_jsonl, iter_json_lines, open_text, path_stem

# pyarrow and the Arrow readers (rollouts, adapters, Parquet) are imported inside
# the branches that read such files: importing pyarrow takes longer than the whole
# comparison of two count files, which needs none of it.

NATIVE_FORMATS = ("count-jsonl", "count-table", "rollouts")


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
    cols = set(_columns(path))
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


def _as_count(value: Any, *, path: Path, line: int, field: str) -> int:
    """An integer count from JSON: ints, or floats with an integral value; never bools."""
    if isinstance(value, bool):
        raise InputError(f"expected an integer count, found boolean {value}", path=path,
                         line=line, field=field)
    if isinstance(value, int):
        out = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        out = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        out = int(value)
    else:
        raise InputError(f"expected an integer count, found {value!r}", path=path, line=line,
                         field=field)
    if out < 0:
        raise InputError(f"counts must be >= 0, found {out}", path=path, line=line, field=field)
    return out


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
        try:
            with open_text(path) as fh:
                reader = csv.DictReader(fh, delimiter=delim)
                if not reader.fieldnames:
                    raise InputError("file is empty", path=path)
                for i, row in enumerate(reader, start=2):
                    if None in row:
                        raise InputError("row has more values than the header", path=path,
                                         line=i)
                    yield i, row
        except UnicodeDecodeError as exc:
            raise InputError(f"file is not valid UTF-8 ({exc.reason})", path=path) from None
    elif is_jsonl(path):
        yield from iter_json_lines(path)
    else:
        import pyarrow.parquet as pq

        from rlvr_boundary.io.rollouts import parquet_files

        row = 1
        for file in parquet_files(path):
            for batch in pq.ParquetFile(file).iter_batches(batch_size=65536):
                for rec in batch.to_pylist():
                    yield row, rec
                    row += 1


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
        if pid in (None, ""):
            raise InputError("missing prompt id", path=path, line=line, field=key)
        model = rec.get("model") or default_model
        n = _as_count(rec["n"], path=path, line=line, field="n")
        c = _as_count(rec["c"], path=path, line=line, field="c")
        _check_row(str(pid), n, c, path, line, seen, str(model))
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
    reducer = CountReducer()
    row = 1
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        feed(validate_batch(batch, path, row), reducer, facts, derive, progress)
        row += batch.num_rows
    return list(reducer.result(path).values())


def read_adapter(fmt: str, path: Path, label: str | None, choices: dict | None = None, *,
                 facts=None, progress=None) -> list[Counts]:
    """Counts (and, given ``facts``, per-sample facts) of an input in another tool's format.

    Adapters that can (verl, limit-of-RLVR) stream their rows: each batch is
    validated and reduced as it is read, so no table of every text is held.
    The others return a table, reduced in memory.
    """
    from rlvr_boundary.io import adapters
    from rlvr_boundary.io.adapters._common import streaming
    from rlvr_boundary.io.rollouts import CountReducer, validate_batch

    if fmt not in adapters.ADAPTERS:
        raise InputError(f"unknown format '{fmt}'; known: "
                         f"{', '.join([*NATIVE_FORMATS, *adapters.ADAPTERS])}", path=path)
    if getattr(adapters.ADAPTERS[fmt], "STREAMS", False):
        reducer = CountReducer()
        row = [1]

        def sink(batch) -> None:
            # Their tables carry text and no quality flags: derive the flags from the text.
            feed(validate_batch(batch, path, row[0]), reducer, facts, True, progress)
            row[0] += batch.num_rows

        with streaming(sink):
            adapters.read(fmt, path, model=label, **(choices or {}))
        return list(reducer.result(path).values())
    table = adapters.read(fmt, path, model=label, **(choices or {}))
    return counts_from_table(table, path, label or path_stem(path), facts=facts,
                             progress=progress)


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


def read_columns(text: str, source: str) -> tuple[list[str] | None, np.ndarray, list[int]]:
    """Parse a CSV/TSV/whitespace table of numbers with an optional header row.

    Returns
    -------
    tuple
        ``(header or None, values (rows, cols), line numbers)``.
    """
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise InputError("no data rows", path=source)
    sample = lines[0][1]
    delim = "\t" if "\t" in sample else "," if "," in sample else None
    rows, numbers, header = [], [], None
    for i, ln in lines:
        cells = next(csv.reader(io.StringIO(ln), delimiter=delim)) if delim else ln.split()
        cells = [c.strip() for c in cells]
        try:
            vals = [float(c) for c in cells]
        except ValueError:
            if header is None and not rows:
                header = cells
                continue
            raise InputError(f"expected numbers, found {cells}", path=source, line=i) from None
        if rows and len(vals) != len(rows[0]):
            raise InputError(f"expected {len(rows[0])} columns, found {len(vals)}", path=source,
                             line=i)
        if not all(math.isfinite(v) for v in vals):
            raise InputError("values must be finite numbers", path=source, line=i)
        rows.append(vals)
        numbers.append(i)
    if not rows:
        raise InputError("no data rows", path=source)
    return header, np.array(rows, dtype=float), numbers


def read_price_table(path: str | None, kind: str = "auto") -> tuple[str, list | None, np.ndarray, str]:
    """Read the small table of the price diagnostic from a file or stdin.

    Two columns are per-prompt success rates of base and RL ("rates"), three
    are a published curve ``k, pass@k base, pass@k RL`` ("curve").

    Returns
    -------
    tuple
        ``(kind, header or None, values (rows, cols), source name)``.
    """
    text, source = read_source(path)
    return parse_price_table(text, source, kind)


def parse_price_table(text: str, source: str, kind: str = "auto"):
    """:func:`read_price_table` on text already in hand (pasted, say); ``source`` names it."""
    header, values, lines = read_columns(text, source)
    ncol = values.shape[1]
    if kind == "auto":
        kind = {2: "rates", 3: "curve"}.get(ncol)
        if kind is None:
            raise InputError(f"expected 2 columns (base rate, RL rate) or 3 (k, pass@k base, "
                             f"pass@k RL), found {ncol}", path=source, line=lines[0])
    want = 2 if kind == "rates" else 3
    if ncol != want:
        raise InputError(f"--kind {kind} needs {want} columns, found {ncol}", path=source,
                         line=lines[0])
    if kind == "rates":
        bad = np.flatnonzero(((values < 0) | (values > 1)).any(axis=1))
        if bad.size:
            raise InputError(f"success rates must lie in [0, 1], found {values[bad[0]].tolist()}",
                             path=source, line=lines[bad[0]])
    return kind, header, values, source


def read_source(path: str | None) -> tuple[str, str]:
    """Text of a file, or of stdin when ``path`` is None or "-"."""
    if path in (None, "-"):
        return sys.stdin.read(), "<stdin>"
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not valid UTF-8 ({exc.reason})", path=p) from None


# ----------------------------------------------------------------------------- naming inputs


#: The command-line flag of each adapter choice, by (format, keyword of the adapter's read).
CHOICE_FLAGS = {("lm-eval", "filter"): "--lm-eval-filter", ("lm-eval", "metric"): "--lm-eval-metric",
                ("lighteval", "metric"): "--lighteval-metric", ("verl", "step"): "--verl-step"}


def check_choices_used(choices: dict[str, dict], formats: list[str]) -> None:
    """A choice for a format none of the inputs has is a mistake: say so, naming the flag."""
    for fmt, kwargs in choices.items():
        for key, value in kwargs.items():
            if value is not None and fmt not in formats:
                raise InputError(f"{CHOICE_FLAGS.get((fmt, key), key)} applies to {fmt} inputs, "
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


def parse_labels(specs: list[str], paths: list[Path]) -> dict[str, str]:
    """``PATH=NAME`` strings into a dict; each PATH must be one of the inputs."""
    out: dict[str, str] = {}
    for spec in specs:
        if "=" not in spec:
            raise InputError(f"--label needs PATH=NAME, got {spec!r}", field="label")
        path, name = spec.rsplit("=", 1)
        if not name:
            raise InputError(f"--label {spec!r} gives an empty name", field="label")
        if label_for(Path(path), {str(p): "x" for p in paths}) is None:
            raise InputError(f"--label {spec!r}: {path} is not one of the inputs "
                             f"({', '.join(map(str, paths))})", field="label")
        out[path] = name
    return out
