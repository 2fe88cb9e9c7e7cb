"""Atomic file writes: a result file is either complete or absent, and never replaces what it should not.

We write to a temporary file in the destination directory and ``os.replace`` it
into place, so an interrupted run (Ctrl-C, crash, bad input discovered late)
never leaves a partial file that looks complete.

A rename replaces whatever the name pointed to, so every destination is checked
first and once more just before the rename (:func:`rlvr_boundary.io.outputs.check_destination`):
only an absent path or a regular file we may write is replaced; a device, FIFO,
socket, directory or symbolic link, an input of this process, or a path inside
an input folder is refused with an :class:`~rlvr_boundary.errors.InputError`.
An operating-system error while writing (read-only file system, disk full,
permission) is reported with the path and the system's reason; the temporary
file is removed, and a failure to remove it never hides the first error.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.outputs import check_destination, note_written

#: errno values of a write that failed for a reason the user can act on (no traceback).
_WRITE_ERRORS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT,
                 errno.EFBIG, errno.EIO, errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR,
                 errno.EEXIST, errno.EMLINK, errno.EXDEV}


def _cannot_write(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot write {path} ({exc.strerror or exc})")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    Use this for writers that want a path (pyarrow, matplotlib). On any
    exception the temporary file is removed and ``path`` is left untouched.
    ``path`` must be absent or a regular file we may write (see
    :func:`rlvr_boundary.io.outputs.check_destination`).
    """
    path = check_destination(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # the folder is a file, not writable, or the name is too long
        raise _cannot_write(path, exc) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            yield tmp_path
        except OSError as exc:
            if exc.errno in _WRITE_ERRORS:
                raise _cannot_write(path, exc) from None
            raise
        # mkstemp creates the file 0600; give the result the permissions of a normal file.
        umask = os.umask(0)
        os.umask(umask)
        try:
            os.chmod(tmp_path, 0o666 & ~umask)
            check_destination(path)  # again: something may have appeared there meanwhile
            os.replace(tmp_path, path)
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        note_written(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file for writing; it replaces ``path`` only if the block succeeds."""
    if "b" in mode:
        encoding = None
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
