"""What may be written where: outputs never destroy an input or anything that is not a file.

Two layers, so that no command has to remember a check:

1. **At the writer** (:func:`check_destination`, called by
   :func:`rlvr_boundary.io.atomic.atomic_path` for every file the tool writes,
   and by :func:`check_folder` for every shard folder): a path is only ever
   replaced when it is absent or a regular file we may write. Refused, with a
   message naming the path and what it is:

   - an existing directory, character or block device, FIFO or socket (an atomic
     rename would replace the device node or pipe by a regular file: ``/dev/full``
     as root, a FIFO another program reads);
   - a symbolic link, whatever it points to. We do not write through links: the
     default outputs of ``verify`` and ``rft-select`` sit beside their input, in
     a folder that may have come with the data, and a planted link
     ``x.verified.parquet -> ~/.bashrc`` must not turn a grading run into an
     overwrite of another file. Give the file's own path instead;
   - a regular file without write permission (also for root: a read-only mode
     says "keep");
   - a file or a shard folder that an input reader of this process has opened
     (:func:`note_input`, called by every reader of :mod:`rlvr_boundary.io`), or
     a path inside such a folder: ``plan --json rl.jsonl`` cannot replace its
     own input even if the command forgot to say what its inputs are;
   - a folder where nothing can be created (read-only, a file in the way).

2. **Before any work** (:func:`check_outputs`, called by each command with its
   output flags and input paths): the same checks plus "two outputs on one path"
   and "an output is an input", so a mistyped flag fails in a second instead of
   after an hour of grading.

The output ``-`` means standard output for a flag that writes one JSON document
(``--json``, ``--summary``); the verb's messages then go to standard error, so
standard output holds the document alone. Files the tool wrote in this process
(:func:`note_written`) are its own: reading them back later (``compare --out``
redraws its figures from ``result.json``) does not make them inputs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path
from typing import Iterator

from rlvr_boundary.errors import InputError

#: The path that means standard output.
STDOUT = "-"
#: Output flags that may be ``-`` (one JSON document each).
STDOUT_FLAGS = ("--json", "--summary")

# (st_dev, st_ino) -> path as the reader named it; dictionaries keep insertion order, so
# the oldest entries are dropped first when a long-lived process (the app) reads a lot.
_INPUTS: dict[tuple[int, int], str] = {}
_INPUT_DIRS: dict[tuple[int, int], str] = {}
_WRITTEN: set[tuple[int, int]] = set()
_WRITTEN_DIRS: set[tuple[int, int]] = set()
_MAX_NOTED = 100_000


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _remember(table: dict, key, value) -> None:
    if key not in table and len(table) >= _MAX_NOTED:
        table.pop(next(iter(table)))
    table[key] = value


def note_input(path: str | Path) -> None:
    """Record that an input reader is about to open ``path`` (a file or a shard folder).

    Called by the readers of :mod:`rlvr_boundary.io`; afterwards no writer of this
    process replaces that file or writes into that folder. Files and folders this
    process wrote itself stay writable. A path that cannot be examined is ignored
    (the reader reports it).

    Raises
    ------
    InputError
        When ``path`` is a FIFO, a device or a socket. Inputs are read more than
        once (format detection, hashing, reading), which a pipe cannot give, and a
        FIFO without a writer would block forever; standard input is ``-`` where a
        command reads it.
    """
    try:
        st = os.stat(path)
        where = os.path.abspath(path)
    except (OSError, ValueError):
        return
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise InputError(f"is {_kind(st.st_mode)}, not a regular file: inputs are read more "
                         "than once (format, hash, rows); save it to a file first", path=path)
    key = _identity(st)
    if stat.S_ISDIR(st.st_mode):
        if key not in _WRITTEN_DIRS:
            _remember(_INPUT_DIRS, key, where)
    elif key not in _WRITTEN:
        _remember(_INPUTS, key, where)


def _noted(table: dict, key: tuple[int, int]) -> str | None:
    """The input recorded under ``key`` if its path still names that file, else None.

    A recorded path that now names another file (the input was deleted and its inode
    number reused) is stale: it is dropped rather than refusing an unrelated output.
    """
    where = table.get(key)
    if where is None:
        return None
    try:
        if _identity(os.stat(where)) == key:
            return where
    except OSError:
        pass
    del table[key]
    return None


def note_written(path: str | Path) -> None:
    """Record a file this process has just written (and its folder) as its own output."""
    with contextlib.suppress(OSError):
        key = _identity(os.stat(path))
        _WRITTEN.add(key)
        _INPUTS.pop(key, None)
    with contextlib.suppress(OSError):
        key = _identity(os.stat(Path(path).parent))
        if _noted(_INPUT_DIRS, key) is None:
            _WRITTEN_DIRS.add(key)


def forget_inputs() -> None:
    """Forget every input and output noted so far (called when a command starts)."""
    _INPUTS.clear()
    _INPUT_DIRS.clear()
    _WRITTEN.clear()
    _WRITTEN_DIRS.clear()


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    for test, word in _KINDS:
        if test(mode):
            return word
    return None if stat.S_ISREG(mode) else "not a regular file"


def _pre(flag: str | None) -> str:
    return f"{flag}: " if flag else ""


def _input_folder_of(path: Path) -> str | None:
    """The input shard folder that ``path`` lies in (any ancestor), if any."""
    if not _INPUT_DIRS:
        return None
    parent = path.absolute().parent
    for folder in (parent, *parent.parents):
        try:
            key = _identity(os.stat(folder))
        except OSError:
            continue
        found = _noted(_INPUT_DIRS, key)
        if found is not None:
            return found
    return None


def check_destination(path: str | Path, flag: str | None = None) -> Path:
    """Refuse to replace ``path`` unless it is absent or a regular file we may write.

    Parameters
    ----------
    path
        The file about to be written (by an atomic rename onto it).
    flag
        The command-line flag that named it, for the message.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        For ``-`` (standard output is the caller's business), a symbolic link, an
        existing non-regular file, a read-only file, an input of this process, a
        path inside an input folder, or a folder where the file cannot be created.
    """
    if str(path) == STDOUT:
        raise InputError(f"{flag or 'output'}: '-' (standard output) is accepted only for a "
                         "JSON result (--json, --summary); give a file name")
    path = Path(path)
    pre = _pre(flag)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # the parent check says which
        st = None
    except OSError as exc:  # a name too long, a loop of links, ...
        raise InputError(f"{pre}cannot write {path} ({exc.strerror or exc})") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(path)
            raise InputError(f"{pre}{path} is a symbolic link (to {target}); give the file's own "
                             "path: outputs are never written through links")
        kind = _kind(st.st_mode)
        if kind == "a directory":
            raise InputError(f"{pre}{path} is a directory; give a file name")
        if kind is not None:
            raise InputError(f"{pre}{path} exists and is {kind}, not a regular file; refusing to "
                             "replace it (give the name of a regular file)")
        source = _noted(_INPUTS, _identity(st))
        if source is not None:
            raise InputError(f"{pre}{path} would overwrite the input {source}; choose another "
                             "output name")
        if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
            raise InputError(f"{pre}{path} exists and is read-only; make it writable or choose "
                             "another name")
    folder = _input_folder_of(path)
    if folder is not None:
        raise InputError(f"{pre}{path} would write into the input folder {folder}; choose an "
                         "output outside it")
    _check_parent(flag, path)
    return path


def check_folder(path: str | Path, flag: str | None = None) -> Path:
    """Refuse a shard folder that is not a folder, is an input, or cannot be created.

    Creates the folder (and its parents) when it is missing; an ``OSError`` doing so
    becomes an :class:`InputError` with the system's reason.
    """
    if str(path) == STDOUT:
        raise InputError(f"{flag or 'output'}: '-' (standard output) cannot hold a folder of "
                         "shards; give a folder name")
    path = Path(path)
    pre = _pre(flag)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as exc:
        raise InputError(f"{pre}cannot create the folder {path} ({exc.strerror or exc})") from None
    if st is not None:
        real = os.stat(path) if path.exists() else st
        if stat.S_ISLNK(st.st_mode) and not stat.S_ISDIR(real.st_mode):
            raise InputError(f"{pre}{path} is a symbolic link to something that is not a folder; "
                             "give a folder")
        source = _noted(_INPUTS, _identity(real))
        if source is not None:
            raise InputError(f"{pre}{path} is an input of this run ({source}); choose another "
                             "output folder")
        if not stat.S_ISDIR(real.st_mode):
            raise InputError(f"{pre}{path} exists and is {_kind(real.st_mode) or 'a file'}, not a "
                             "folder; choose another output folder")
        if _noted(_INPUT_DIRS, _identity(real)) is not None:
            raise InputError(f"{pre}{path} is an input folder of this run; choose another output "
                             "folder")
    folder = _input_folder_of(path / "x")
    if folder is not None:
        raise InputError(f"{pre}{path} would be created inside the input folder {folder}; choose "
                         "an output outside it")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{pre}cannot create the folder {path} ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK):
        raise InputError(f"{pre}cannot write into the folder {path}: it is not writable")
    return path


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
                  folders: dict[str, str | Path | None] | None = None,
                  suffixes: dict[str, tuple[str, ...]] | None = None,
                  stdout: tuple[str, ...] = STDOUT_FLAGS) -> None:
    """Refuse, before any work, outputs that are inputs or cannot be written.

    Parameters
    ----------
    outputs
        ``{flag: path}`` of the files to be written (None entries are skipped);
        the flag names the error.
    inputs
        Files or shard directories read by the command (``-``, standard input, is
        skipped).
    folders
        ``{flag: path}`` of directories to be written into (``compare --out``).
    suffixes
        ``{flag: (".png", ".pdf", ...)}``: the endings a flag's file may have (the
        format is chosen by the ending; anything else is refused, not guessed).
    stdout
        Flags for which ``-`` means standard output. When one is used, the
        command's messages go to standard error from here on.

    Notes
    -----
    Each output also passes :func:`check_destination` (no link, device, FIFO,
    socket or directory is replaced; the folder must be writable).
    """
    ins = [Path(p) for p in inputs if p is not None and str(p) != STDOUT]
    given = [(f, Path(o)) for f, o in (outputs or {}).items()
             if o is not None and str(o) != STDOUT]
    for i, (f1, o1) in enumerate(given):
        for f2, o2 in given[:i]:
            if o1.resolve() == o2.resolve():
                raise InputError(f"{f2} and {f1} would both write {o1}; give different paths")
    to_stdout = [f for f, o in (outputs or {}).items() if o is not None and str(o) == STDOUT]
    for flag in to_stdout:
        if flag not in stdout:
            raise InputError(f"{flag}: '-' (standard output) is accepted only for a JSON result "
                             f"({', '.join(stdout) or 'none here'}); give a file name")
    if len(to_stdout) > 1:
        raise InputError(f"{' and '.join(to_stdout)} would both write to standard output")
    for flag, allowed in (suffixes or {}).items():
        out = (outputs or {}).get(flag)
        if out is not None and str(out) != STDOUT and \
                not str(out).lower().endswith(tuple(s.lower() for s in allowed)):
            raise InputError(f"{flag}: {out} has an ending this command cannot write; use "
                             f"{', '.join(allowed)} (the format follows the ending)")
    for flag, out in given:
        check_destination(out, flag)
        for src in ins:
            if _same(out, src) or (src.is_dir() and _inside(out, src)):
                raise InputError(f"{flag}: {out} would overwrite the input {src}; "
                                 "choose another output name")
    for flag, folder in (folders or {}).items():
        if folder is None:
            continue
        if str(folder) == STDOUT:
            raise InputError(f"{flag}: '-' (standard output) cannot hold a folder of outputs; "
                             "give a folder name")
        folder = Path(folder)
        for src in ins:
            if _same(folder, src):
                raise InputError(f"{flag}: {folder} is an input; choose another folder")
            if src.is_dir() and _inside(folder, src):
                raise InputError(f"{flag}: {folder} is inside the input folder {src}; choose "
                                 "another folder")
        if os.path.lexists(folder) and not folder.is_dir():
            raise InputError(f"{flag}: {folder} exists and is not a directory")
        _check_parent(flag, folder / "x")
    if to_stdout:
        _messages_to_stderr()


def _messages_to_stderr() -> None:
    """Send the console's messages to standard error: standard output carries a document."""
    import sys

    from rlvr_boundary import console as con

    con.console.file = sys.stderr


def _check_parent(flag: str | None, out: Path) -> None:
    """The nearest existing ancestor of ``out`` must be a writable directory."""
    parent = out.parent
    while not parent.exists() and not parent.is_symlink():
        if parent == parent.parent:
            break
        parent = parent.parent
    pre = _pre(flag)
    if not parent.is_dir():
        raise InputError(f"{pre}cannot write {out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise InputError(f"{pre}cannot write {out}: {parent} is not writable"
                         + (" (a read-only file system)" if _read_only_fs(parent) else ""))


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def removed_on_failure(*paths: str | Path | None) -> Iterator[None]:
    """Remove the outputs this run created if the block fails (Ctrl-C included).

    Files and folders in ``paths`` that did not exist on entry are deleted when
    the block raises, so a failed run leaves no result that looks complete (files
    already there are left as they are: their atomic replacement had not happened).
    The cleanup never hides the error that caused it: what cannot be removed is
    left (a read-only folder holds nothing of ours anyway).
    """
    fresh = [Path(p) for p in paths
             if p is not None and str(p) != STDOUT and not os.path.lexists(p)]
    try:
        yield
    except BaseException:
        for p in fresh:
            if not os.path.lexists(p):
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    p.unlink()
        raise
