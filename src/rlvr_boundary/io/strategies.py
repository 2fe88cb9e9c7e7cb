"""Read the ``strategy`` column of rollout tables for the report's strategy section.

A second, narrow pass over the native rollout inputs (four columns: model,
prompt_id, correct, strategy), made only when a table has the column. Labels
given with ``--label`` rename a single-model table as the main reader does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlvr_boundary.analysis.strategies import strategy_codes, strategy_counts
from rlvr_boundary.io.formats import label_for
from rlvr_boundary.io.rollouts import iter_rollout_batches, table_columns

COLUMN = "strategy"


def has_strategies(paths: list[Path]) -> bool:
    """True when any of the rollout tables has a ``strategy`` column."""
    return any(COLUMN in table_columns(p) for p in paths)


def read_strategy_counts(paths: list[Path], models: list[str], prompt_ids: list[str], *,
                         labels: dict[str, str] | None = None
                         ) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """Strategy names and ``(M, X, S)`` sample and correct counts, or None without the column.

    Rows of models or prompts outside ``models`` / ``prompt_ids`` (dropped by the
    alignment) are skipped; a model with no ``strategy`` column counts its samples
    as unlabelled.
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
    codes, names = strategy_codes(rows_s)
    m_arr, x_arr, ok_arr = (np.array(v, dtype=t) for v, t in
                            ((rows_m, np.int64), (rows_x, np.int64), (rows_ok, bool)))
    n = np.zeros((len(models), len(prompt_ids), len(names)), np.int64)
    c = np.zeros_like(n)
    for i in range(len(models)):
        sel = m_arr == i
        n[i], c[i] = strategy_counts(x_arr[sel], codes[sel], ok_arr[sel], len(prompt_ids),
                                     len(names))
    return names, n, c
