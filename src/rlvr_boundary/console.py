"""Shared rich consoles and a progress-bar factory for long work."""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:  # rich.progress is imported when a bar is made: most runs never show one
    from rich.progress import Progress



def _console(stderr: bool = False) -> Console:
    """A console; piped or redirected output is not wrapped at 80 columns.

    rich assumes 80 columns when the stream is not a terminal, which cuts table
    cells ("inconclusi…") and breaks lines in the middle of a sentence for a
    script reading the output. Unless COLUMNS says otherwise, such output gets
    one line per message and tables at their natural width.
    """
    c = Console(stderr=stderr, highlight=False)
    if c.is_terminal or os.environ.get("COLUMNS"):
        return c
    return _PipedConsole(stderr=stderr, highlight=False, width=10_000, soft_wrap=True)


#: Widest a table gets on piped output: its cells wrap inside it.
PIPED_TABLE_WIDTH = 120


class _PipedConsole(Console):
    """Piped output: messages on one line each, tables at most PIPED_TABLE_WIDTH wide."""

    def print(self, *objects, **kwargs):  # noqa: D102 - rich's print
        from rich.measure import Measurement
        from rich.table import Table

        tables = [o for o in objects if isinstance(o, Table) and o.width is None]
        for t in tables:
            t.width = min(Measurement.get(self, self.options, t).maximum, PIPED_TABLE_WIDTH)
        if tables:
            kwargs.setdefault("soft_wrap", False)
        super().print(*objects, **kwargs)


console = _console()
err_console = _console(stderr=True)


def progress(disable: bool | None = None) -> Progress:
    """A progress bar on stderr; disabled when stderr is not a terminal or under CI."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if disable is None:
        disable = not err_console.is_terminal or bool(os.environ.get("CI"))
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        disable=disable,
    )
