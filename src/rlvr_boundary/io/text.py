"""Plain-text helpers of the readers: file names, JSON lines, hashes (standard library only).

Kept apart from the Arrow readers so that reading count files (``compare`` on
two JSONL files of counts) does not import pyarrow, which costs more than the
whole comparison.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from pathlib import Path
from typing import Iterator

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.outputs import note_input

log = logging.getLogger(__name__)

#: Data-file suffixes, longest first: what :func:`path_stem` strips.
DATA_SUFFIXES = (".jsonl.gz", ".csv.gz", ".tsv.gz", ".jsonl", ".json", ".parquet", ".csv", ".tsv")


def path_stem(path: str | Path) -> str:
    """A file's name without its data suffix (``runs/base.jsonl.gz`` -> ``base``).

    The default model label of single-model files and the stem of derived file
    names. Dots inside the name stay (``Qwen2.5-7B.jsonl`` -> ``Qwen2.5-7B``).
    """
    name = Path(path).name
    for ext in DATA_SUFFIXES:
        if name.lower().endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def is_jsonl(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith(".jsonl") or name.endswith(".jsonl.gz") or name.endswith(".json")


def open_text(path: Path):
    """Open a text file, transparently gunzipping ``.gz``; undecodable bytes are an error."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


#: Longest line a line reader accepts (JSONL, CSV), in bytes. A longer line is refused
#: before it is held in memory, so a file without newlines cannot exhaust memory.
MAX_LINE_BYTES = 64 * 1024 * 1024


def _too_long(path: Path, lineno: int) -> InputError:
    return InputError(f"line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MB; is this a "
                      "line-oriented file (JSONL, CSV)?", path=path, line=lineno)


def iter_text_lines(path: Path, *, replace_invalid: bool = True) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` of every line, each at most :data:`MAX_LINE_BYTES` long.

    A byte-order mark at the start is dropped. Bytes that are not UTF-8 are replaced
    with U+FFFD and counted in one warning (model output is like that sometimes; a
    line whose structure they break is then malformed where it is parsed), unless
    ``replace_invalid`` is False, when they are an error naming the line.
    """
    for lineno, text, _ in _decoded_lines(path, replace_invalid):
        yield lineno, text


def _decoded_lines(path: Path, replace_invalid: bool) -> Iterator[tuple[int, str, bytes | None]]:
    """:func:`iter_text_lines`, also giving the raw bytes of a line that was not UTF-8."""
    n_bad = 0
    note_input(path)
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as fh:
            lineno = 0
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise _too_long(path, lineno)
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    yield lineno, raw.decode("utf-8"), None
                except UnicodeDecodeError as exc:
                    if not replace_invalid:
                        raise InputError(f"line is not valid UTF-8 ({exc.reason})", path=path,
                                         line=lineno) from None
                    n_bad += 1
                    yield lineno, raw.decode("utf-8", errors="replace"), raw
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError("file not found", path=path) from None
        if isinstance(exc, IsADirectoryError):
            raise InputError("is a directory, expected a file", path=path) from None
        raise InputError(f"cannot read file ({exc})", path=path) from None
    finally:
        if n_bad:
            log.warning("%s: %d line(s) held bytes that are not UTF-8; replaced them with "
                        "U+FFFD", path, n_bad)


#: JSON keys that name a prompt or a model in some format we read (an id, or verl's prompt
#: text that is hashed into one). Their values must be exact: two ids that differ only in
#: bytes that are not UTF-8 (``p5\xff\xfe``, ``p5\xff\xfd``) would both read as ``p5`` plus
#: replacement characters and be merged into one prompt.
ID_KEYS = frozenset({"id", "prompt_id", "doc_id", "custom_id", "request_id", "idx",
                     "unique_id", "task_id", "question_id", "model", "input"})


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _bad_id(obj, depth: int = 0) -> str | None:
    """The first key of :data:`ID_KEYS` (at any depth) whose string holds a surrogate."""
    if depth > 32:
        return None
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        if isinstance(v, str):
            if k in ID_KEYS and _has_surrogate(v):
                return str(k)
        elif isinstance(v, dict) or (isinstance(v, list) and v and
                                     isinstance(v[0], (dict, list))):
            found = _bad_id(v, depth + 1)
            if found is not None:
                return found
    return None


def _loads(text: str, path: Path, lineno: int):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno})",
                         path=path, line=lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=path, line=lineno) from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Raises :class:`InputError` naming the line on malformed JSON, a non-object
    line, or a line longer than :data:`MAX_LINE_BYTES`. Invalid UTF-8 is
    replaced (see :func:`iter_text_lines`), except in the fields that name a
    prompt or a model (:data:`ID_KEYS`): there bytes that are not UTF-8, or lone
    surrogates written as JSON escapes, are an error naming the line and field,
    because replacing them could make two different ids equal.
    """
    for lineno, obj, _ in iter_json_lines_sized(path):
        yield lineno, obj


def iter_json_lines_sized(path: Path) -> Iterator[tuple[int, dict, int]]:
    """:func:`iter_json_lines` with each line's length in characters (to bound batches)."""
    for lineno, line, raw in _decoded_lines(path, True):
        if not line.strip():
            continue
        obj = _loads(line, path, lineno)
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object, found {type(obj).__name__}",
                             path=path, line=lineno)
        if raw is not None or "\\u" in line:
            exact = obj if raw is None else _loads(raw.decode("utf-8", "surrogateescape"),
                                                   path, lineno)
            bad = _bad_id(exact) if isinstance(exact, dict) else None
            if bad is not None:
                raise InputError("an id holds bytes that are not valid UTF-8 (or a lone "
                                 "surrogate); ids must be exact text, and replacing those bytes "
                                 "could make two different ids equal", path=path, line=lineno,
                                 field=bad)
        yield lineno, obj, len(line)


def iter_csv_records(path: Path, *, replace_invalid: bool = False
                     ) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, {header: cell})`` of a CSV (``.tsv``: tab-separated) file.

    The file is read line by line through :func:`iter_text_lines` (each line at most
    :data:`MAX_LINE_BYTES`, a byte-order mark dropped, bytes that are not UTF-8 an
    error naming the line unless ``replace_invalid``), so a file without newlines is
    refused before it is held in memory. A quoted field may span lines; a field may
    be as long as a line, and no longer. Blank lines are skipped (still counted in
    line numbers); a row with more cells than the header is an error. The line number
    is the first line of the record.
    """
    import csv

    csv.field_size_limit(MAX_LINE_BYTES)
    delim = "\t" if ".tsv" in path.name.lower() else ","
    lines = iter_text_lines(path, replace_invalid=replace_invalid)
    reader = csv.reader((text for _, text in lines), delimiter=delim)
    try:
        header = None
        start = 1
        for cells in reader:
            line = start
            start = reader.line_num + 1
            if not cells or not any(c.strip() for c in cells):
                continue
            if header is None:
                header = [h.strip() for h in cells]
                continue
            if len(cells) > len(header):
                raise InputError(f"row has {len(cells)} values, the header has {len(header)}",
                                 path=path, line=line)
            yield line, dict(zip(header, cells))
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc})", path=path, line=reader.line_num) from None


def count_nonblank_lines(path: Path, chunk: int = 1 << 20) -> int:
    """Lines holding something other than whitespace, counted in chunks (bounded memory).

    For a progress bar's total: a file without newlines is one line, read 1 MB at a
    time, never held whole.
    """
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    n, content = 0, False
    with opener(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            parts = block.split(b"\n")
            for part in parts[:-1]:
                if content or part.strip():
                    n += 1
                content = False
            content = content or bool(parts[-1].strip())
    return n + content


def _check_exists(path: Path) -> None:
    note_input(path)  # a FIFO or a device is refused here, before anything opens it
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_file() and path.stat().st_size == 0:
        raise InputError("file is empty", path=path)


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file, or of a shard directory's ``part-*.parquet`` files in name order."""
    path = Path(path)
    h = hashlib.sha256()
    note_input(path)
    for f in sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]:
        note_input(f)
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


