"""Versioned result files: the seam between compute and presentation.

Every JSON result written by rlvr-boundary has the same envelope::

    {"schema_version": "...", "tool": "rlvr-boundary", "tool_version": "...",
     "kind": "compare", "created": "...", "options": {...},
     "versions": {"numpy": "...", "scipy": "...", ...}, ...payload}

so a result can always be traced to the options, the code and the libraries
that made it (``versions``: numpy and scipy, and torch and transformers when
the run loaded them). The payload is checked against its kind's declaration in
:mod:`rlvr_boundary.kinds` when the envelope is built, before anything is
written. The report reads these files; compute code never calls the report.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_boundary._version import __version__
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.atomic import atomic_open
from rlvr_boundary.io.outputs import note_input

#: Version of the JSON result and rollout-table schemas (docs/schema.md). 1.1 adds keys
#: (each comparison's ``gain_run_end``); 1.0 files are read and upgraded
#: (:func:`rlvr_boundary.kinds.upgrade`).
SCHEMA_VERSION = "1.1"


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses and paths into plain JSON values.

    Non-finite floats become ``null``: JSON has no NaN, and a silent ``NaN`` token
    breaks strict parsers.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if math.isfinite(value) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj


#: Keys every result file has besides its payload (``versions`` from schema 1.1 on).
ENVELOPE_KEYS = ("schema_version", "tool", "tool_version", "kind", "created", "options",
                 "versions")

#: Libraries whose versions every result records.
RESULT_LIBRARIES = ("numpy", "scipy")
#: Libraries recorded too when the run loaded them (models, engines).
LOADED_LIBRARIES = ("torch", "transformers")
#: Libraries a sampling or scoring run's manifest records (those installed).
RUN_LIBRARIES = ("torch", "transformers", "vllm", "ray", "httpx", "numpy", "pyarrow")


def _version_of(name: str) -> str | None:
    """A library's version without importing it: its ``__version__`` when it is loaded, else
    the name of its ``<name>-<version>.dist-info`` folder beside it (None when absent).

    ``importlib.metadata`` would do the second too, but importing it and scanning every
    path costs about a tenth of a second, a fifth of a whole ``compare``.
    """
    mod = sys.modules.get(name)
    if mod is not None and isinstance(getattr(mod, "__version__", None), str):
        return mod.__version__
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    site = Path(spec.origin).parent.parent
    for d in site.glob(f"{name}-*.dist-info"):
        return d.name[len(name) + 1:-len(".dist-info")]
    return None


def library_versions(names=RESULT_LIBRARIES, loaded=LOADED_LIBRARIES) -> dict[str, str]:
    """``{library: version}`` of ``names`` (when installed) and of ``loaded`` (when imported)."""
    out = {}
    for pkg in (*names, *(m for m in loaded if m in sys.modules)):
        v = _version_of(pkg)
        if v is not None:
            out[pkg] = v
    return out


def payload_of(doc: dict) -> dict:
    """The payload of a result document (without the envelope keys)."""
    return {k: v for k, v in doc.items() if k not in ENVELOPE_KEYS}


def envelope(kind: str, options: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Wrap a result payload with schema version, tool version, kind, options and library
    versions, after checking it against its kind (:func:`rlvr_boundary.kinds.check`)."""
    from rlvr_boundary.kinds import check

    head = {
        "schema_version": SCHEMA_VERSION,
        "tool": "rlvr-boundary",
        "tool_version": __version__,
        "kind": kind,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": to_jsonable(options),
        "versions": library_versions(),
    }
    clash = set(head) & set(payload)
    if clash:
        raise ValueError(f"payload keys clash with the envelope: {sorted(clash)}")
    doc = {**head, **to_jsonable(payload)}
    check(doc)
    return doc


def write_result(path: str | Path, kind: str, options: Any, payload: dict[str, Any]) -> dict:
    """Write a result JSON atomically and return the dict that was written."""
    return write_doc(path, envelope(kind, options, payload))


def write_doc(path: str | Path, doc: dict[str, Any]) -> dict:
    """Write an enveloped result (from :func:`envelope`) atomically; return it.

    ``path`` ``-`` writes the document to standard output instead (the command's
    messages go to standard error then, see :func:`rlvr_boundary.io.outputs.check_outputs`).
    """
    if str(path) == "-":
        import sys

        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
        return doc
    with atomic_open(path, "w") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False)
        fh.write("\n")
    return doc


#: Largest result file read back (a report of many checkpoints is a few MB).
MAX_RESULT_BYTES = 256 << 20


def read_result(path: str | Path, kind: str | None = None) -> dict[str, Any]:
    """Read a result JSON and check its schema version (and kind, if given).

    A file over :data:`MAX_RESULT_BYTES` is refused before it is parsed (results
    are written by this tool and are far smaller).
    """
    note_input(path)
    try:
        if Path(path).stat().st_size > MAX_RESULT_BYTES:
            raise InputError(f"larger than {MAX_RESULT_BYTES >> 20} MB: not a result file of "
                             "this tool", path=path)
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a result file", path=path) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason})", path=path) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise InputError("not an rlvr-boundary result file (no schema_version)", path=path)
    major = str(doc["schema_version"]).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise InputError(
            f"schema_version {doc['schema_version']} is not readable by this version "
            f"(reads {SCHEMA_VERSION.split('.')[0]}.x)",
            path=path,
            field="schema_version",
        )
    if kind is not None and doc.get("kind") != kind:
        raise InputError(f"expected a '{kind}' result, found '{doc.get('kind')}'", path=path)
    from rlvr_boundary.kinds import upgrade

    return upgrade(doc)
