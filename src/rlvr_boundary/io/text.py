"""Plain-text helpers of the readers: file names, JSON lines, hashes (standard library only).

Kept apart from the Arrow readers so that reading count files (``compare`` on
two JSONL files of counts) does not import pyarrow, which costs more than the
whole comparison.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Iterator

from rlvr_boundary.errors import InputError

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


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Raises :class:`InputError` naming the line on malformed JSON, a non-object
    line, or bytes that are not UTF-8.
    """
    try:
        with open_text(path) as fh:
            lineno = 0
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno})",
                                     path=path, line=lineno) from None
                if not isinstance(obj, dict):
                    raise InputError(f"expected a JSON object, found {type(obj).__name__}",
                                     path=path, line=lineno)
                yield lineno, obj
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not valid UTF-8 ({exc.reason})", path=path) from None
    except (OSError, EOFError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError("file not found", path=path) from None
        raise InputError(f"cannot read file ({exc})", path=path) from None


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_file() and path.stat().st_size == 0:
        raise InputError("file is empty", path=path)


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file, or of a shard directory's ``part-*.parquet`` files in name order."""
    path = Path(path)
    h = hashlib.sha256()
    for f in sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]:
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


