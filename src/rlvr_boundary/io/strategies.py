"""Read the ``strategy`` column of rollout tables for the report's strategy section.

A second, narrow pass over the native rollout inputs (four columns: model,
prompt_id, correct, strategy), made only when a table has the column. Labels
given with ``--label`` rename a single-model table as the main reader does.
The rows are returned as read; the counting is
:func:`rlvr_boundary.analysis.strategies.strategy_tables`.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.io.formats import label_for
from rlvr_boundary.io.rollouts import iter_rollout_batches, table_columns

COLUMN = "strategy"


def has_strategies(paths: list[Path]) -> bool:
    """True when any of the rollout tables has a ``strategy`` column."""
    return any(COLUMN in table_columns(p) for p in paths)


def read_strategy_rows(paths: list[Path], models: list[str], prompt_ids: list[str], *,
                       labels: dict[str, str] | None = None) -> dict | None:
    """The samples' model and prompt indices, strategy labels and verdicts, or None without
    the column.

    Rows of models or prompts outside ``models`` / ``prompt_ids`` (dropped by the
    alignment) are skipped; a model with no ``strategy`` column gives None labels.

    Returns
    -------
    dict or None
        ``{"model": [...], "prompt": [...], "strategy": [...], "correct": [...]}``,
        one entry per sample kept, indices into ``models`` and ``prompt_ids``.
    """
    paths = [Path(p) for p in paths]
    if not has_strategies(paths):
        return None
    mi = {m: i for i, m in enumerate(models)}
    xi = {p: i for i, p in enumerate(prompt_ids)}
    rows_m, rows_x, rows_s, rows_ok = [], [], [], []
    for path in paths:
        cols = table_columns(path)
        label = label_for(path, labels)
        want = [COLUMN] if COLUMN in cols else []
        for batch in iter_rollout_batches(path, want):
            d = batch.to_pydict()
            ms = [label] * batch.num_rows if label is not None else d["model"]
            strat = d.get(COLUMN) or [None] * batch.num_rows
            for m, p, ok, s in zip(ms, d["prompt_id"], d["correct"], strat):
                if m in mi and p in xi:
                    rows_m.append(mi[m])
                    rows_x.append(xi[p])
                    rows_s.append(s)
                    rows_ok.append(bool(ok))
    return {"model": rows_m, "prompt": rows_x, "strategy": rows_s, "correct": rows_ok}
