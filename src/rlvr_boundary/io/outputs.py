"""Checks of output paths before any work: nothing an input is gets overwritten.

Every command calls :func:`check_outputs` with the files it will write and the
files it reads, so that a mistyped flag (``report a.json b.jsonl --out a.html``
writes ``a.json`` beside the page) stops with a clear error instead of
overwriting an input, and an output that is a directory, or whose folder is a
file, is refused before hours of work rather than after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from rlvr_boundary.errors import InputError


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _inside(child: Path, parent: Path) -> bool:
    try:
        child.resolve().relative_to(parent.resolve())
        return True
    except ValueError:
        return False


def check_outputs(outputs: dict[str, str | Path | None], inputs: list[str | Path] = (), *,
                  folders: dict[str, str | Path | None] | None = None) -> None:
    """Refuse outputs that are inputs, existing directories, or below a file.

    Parameters
    ----------
    outputs
        ``{flag: path}`` of the files to be written (None entries are skipped);
        the flag names the error.
    inputs
        Files or shard directories read by the command.
    folders
        ``{flag: path}`` of directories to be written into (``compare --out``).
    """
    ins = [Path(p) for p in inputs if p not in (None, "-")]
    given = [(f, Path(o)) for f, o in (outputs or {}).items() if o is not None]
    for i, (f1, o1) in enumerate(given):
        for f2, o2 in given[:i]:
            if o1.resolve() == o2.resolve():
                raise InputError(f"{f2} and {f1} would both write {o1}; give different paths")
    for flag, out in (outputs or {}).items():
        if out is None:
            continue
        out = Path(out)
        if out.is_dir():
            raise InputError(f"{flag}: {out} is a directory; give a file name")
        _check_parent(flag, out)
        for src in ins:
            if _same(out, src) or (src.is_dir() and _inside(out, src)):
                raise InputError(f"{flag}: {out} would overwrite the input {src}; "
                                 "choose another output name")
    for flag, folder in (folders or {}).items():
        if folder is None:
            continue
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{flag}: {folder} exists and is not a directory")
        _check_parent(flag, folder / "x")
        for src in ins:
            if _same(folder, src):
                raise InputError(f"{flag}: {folder} is an input; choose another folder")


def _check_parent(flag: str, out: Path) -> None:
    """The nearest existing ancestor of ``out`` must be a writable directory."""
    parent = out.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{flag}: cannot write {out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{flag}: cannot write {out}: {parent} is not writable")


@contextlib.contextmanager
def removed_on_failure(*paths: str | Path | None) -> Iterator[None]:
    """Remove the outputs this run created if the block fails (Ctrl-C included).

    Files and folders in ``paths`` that did not exist on entry are deleted when
    the block raises, so a failed run leaves no result that looks complete (files
    already there are left as they are: their atomic replacement had not happened).
    """
    fresh = [Path(p) for p in paths if p is not None and not Path(p).exists()]
    try:
        yield
    except BaseException:
        for p in fresh:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        raise
