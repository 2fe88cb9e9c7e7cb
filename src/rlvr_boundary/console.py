"""Shared rich consoles and a progress-bar factory for long work."""

from __future__ import annotations

import os

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def progress(disable: bool | None = None) -> Progress:
    """A progress bar on stderr; disabled when stderr is not a terminal or under CI."""
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
