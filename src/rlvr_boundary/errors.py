"""Errors for bad user input.

Every reader raises :class:`InputError` with the file, the line (1-based, for
line-oriented formats) or row, and the field at fault, so that a user can fix the
input without reading our code. The CLI prints the message and exits with code 2.
"""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad user input, located as precisely as we can.

    Parameters
    ----------
    message
        What is wrong and what was expected.
    path
        The file at fault, if any.
    line
        1-based line number (JSONL/CSV) or row number (Parquet), if known.
    field
        The column or JSON key at fault, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path if self.line is None else f"{self.path}:{self.line}")
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, module: str, extra: str | None, purpose: str = "", *,
                 install: str | None = None) -> None:
        what = f" for {purpose}" if purpose else ""
        how = install or f"pip install 'rlvr-boundary[{extra}]'"
        super().__init__(f"'{module}' is needed{what} but is not installed. Install it with: {how}")
        self.module = module
        self.extra = extra


def require(module: str, extra: str | None, purpose: str = "", *, install: str | None = None):
    """Import an optional dependency lazily, or raise :class:`MissingExtraError`.

    ``extra`` names the extra of rlvr-boundary that installs it; a dependency no extra
    provides (a trainer installed on its own) gives the command in ``install`` instead.

    >>> np = require("numpy", "core")
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised with a fake module name
        raise MissingExtraError(module, extra, purpose, install=install) from exc
