"""A sharded, resumable rollout store: a directory of Parquet shards.

Long jobs (sampling, verification) write their output in shards named by a
stable *unit key* (for example the input row range ``r000000000-000065535`` or a
prompt id block). Each shard is written atomically, so after a crash the
directory holds only complete shards; on restart the job asks
:meth:`ShardedWriter.done` which units are finished and skips them. Nothing is
duplicated (a unit is one shard, rewritten whole if re-run) and nothing is lost
(a unit without a shard is redone).

Readers treat the directory as one table (:func:`rlvr_boundary.io.rollouts.iter_rollout_batches`),
reading shards in name order. The manifest is ``_manifest.json`` in the directory
(:data:`rlvr_boundary.io.schema.SHARD_MANIFEST`); a ``_COMPLETE`` marker is written
by :meth:`ShardedWriter.finish` once every unit is done. Both names start with ``_``
and temporary shards with ``.``, which pyarrow's dataset discovery skips, so
``pandas.read_parquet(directory)`` and ``pyarrow.dataset.dataset(directory)`` read
the shards as one table.

A directory whose manifest is ``manifest.json`` (written by rlvr-boundary 0.1) is
read as well (:func:`rlvr_boundary.io.schema.find_manifest`). Resuming into it
migrates it: the writer checks the old manifest, writes ``_manifest.json``
atomically and only then removes ``manifest.json``; a crash in between leaves both,
and the next run reads ``_manifest.json`` and removes the other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rlvr_boundary.io.atomic import atomic_open, atomic_path
from rlvr_boundary.io.schema import SHARD_MANIFEST, SHARD_MANIFEST_NAMES, find_manifest

_SAFE = re.compile(r"^[A-Za-z0-9_.=-]+$")


class ShardedWriter:
    """Write a table as atomic, key-named Parquet shards under ``directory``.

    Parameters
    ----------
    directory
        Output directory; created if missing.
    manifest
        Run manifest (JSON object). On resume it must equal the stored one in
        every key listed in ``must_match``, otherwise resuming would mix
        incompatible outputs and we refuse.
    must_match
        Manifest keys that must agree with an existing directory's manifest.
    """

    def __init__(self, directory: str | Path, manifest: dict | None = None,
                 must_match: tuple[str, ...] = ()) -> None:
        from rlvr_boundary import __version__
        from rlvr_boundary.errors import InputError
        from rlvr_boundary.io.results import SCHEMA_VERSION, to_jsonable

        from rlvr_boundary.io.outputs import check_folder

        # Not a file, a device or an input of this run; created here (errors say why not).
        self.directory = check_folder(directory)
        mpath = self.directory / SHARD_MANIFEST
        found = find_manifest(self.directory)  # this name, else the one of 0.1
        doc = {"schema_version": SCHEMA_VERSION, "tool_version": __version__, **(manifest or {})}
        doc = to_jsonable(doc)
        if found is not None:
            old = _read_manifest(found)
            diff = [k for k in must_match if old.get(k) != doc.get(k)]
            if diff:
                changes = "; ".join(
                    f"{name}: was {_show(a)}, now {_show(b)}"
                    for k in diff for name, a, b in _differences(k, old.get(k), doc.get(k)))
                raise InputError(
                    f"cannot resume: the existing output was made with other settings ({changes});"
                    " rerun with the stored settings or use a new output directory", path=found)
        with atomic_open(mpath, "w") as fh:
            json.dump(doc, fh, indent=1)
        # The old name goes only once the new one is in place (a no-op in a new folder).
        for name in SHARD_MANIFEST_NAMES[1:]:
            if (self.directory / name).is_file():
                (self.directory / name).unlink()
        self.manifest = doc

    def _shard(self, key: str) -> Path:
        if not _SAFE.match(key):
            raise ValueError(f"shard key must match {_SAFE.pattern!r}, got {key!r}")
        return self.directory / f"part-{key}.parquet"

    def done(self) -> set[str]:
        """Unit keys whose shard is complete."""
        return {p.name[len("part-"):-len(".parquet")] for p in self.directory.glob("part-*.parquet")}

    def write(self, key: str, table: pa.Table) -> Path:
        """Write the shard of unit ``key`` atomically (replacing any earlier one)."""
        (self.directory / "_COMPLETE").unlink(missing_ok=True)
        path = self._shard(key)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp, compression="zstd")
        return path

    def finish(self, summary: dict | None = None) -> None:
        """Mark the store complete, recording an optional summary."""
        from rlvr_boundary.io.results import to_jsonable

        with atomic_open(self.directory / "_COMPLETE", "w") as fh:
            json.dump(to_jsonable(summary or {}), fh, indent=1)
        # Every unit has its shard now: a temporary shard left by a killed run is garbage.
        for tmp in self.directory.glob(".part-*.parquet.*.tmp"):
            tmp.unlink(missing_ok=True)

    @property
    def complete(self) -> bool:
        return (self.directory / "_COMPLETE").exists()


_MISSING = object()


def _differences(name: str, old, new) -> list[tuple[str, object, object]]:
    """The leaves where two manifest values differ, as ``(dotted.name, old, new)``."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in list(old) + [k for k in new if k not in old]:
            a, b = old.get(key, _MISSING), new.get(key, _MISSING)
            if a != b:
                out += _differences(f"{name}.{key}", a, b)
        return out
    return [(name, old, new)]


def _show(value) -> str:
    """A manifest value for a message: JSON, cut at 80 characters; absent said so."""
    if value is _MISSING or value is None:
        return "not set"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _read_manifest(mpath: Path) -> dict:
    """The manifest of an existing output folder (a JSON object under 64 MB), or an error."""
    from rlvr_boundary.errors import InputError

    try:
        if mpath.is_dir() or mpath.stat().st_size > 64 << 20:
            raise InputError("not a manifest of this tool (a JSON file under 64 MB); use a new "
                             "output folder", path=mpath)
        old = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read the manifest of the existing output ({type(exc).__name__});"
                         " use a new output folder", path=mpath) from None
    if not isinstance(old, dict):
        raise InputError("the manifest of the existing output is not a JSON object; use a new "
                         "output folder", path=mpath)
    return old
