"""A progress bar that also shows the rate (samples per second)."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def sample_progress(description: str, unit: str):
    """Yield ``(advance(k), set_total(total, already_done))`` driving a rich bar with a rate column."""
    from rich.progress import TextColumn

    from rlvr_boundary.console import progress

    bar = progress()

    class _Rate(TextColumn):
        def render(self, task):  # noqa: D102 - rich API
            speed = task.finished_speed or task.speed
            self.text_format = f"{speed:.1f} {unit}/s" if speed else f"- {unit}/s"
            return super().render(task)

    bar.columns = (*bar.columns, _Rate(""))
    with bar:
        task = bar.add_task(description, total=None)

        def set_total(total: int, done: int) -> None:
            bar.update(task, total=total, completed=done)
            bar.reset(task, total=total, completed=done)

        yield (lambda k: bar.advance(task, k)), set_total
