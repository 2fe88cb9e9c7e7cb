"""Adapters: other tools' evaluation outputs read into our data model.

Each adapter module has ``NAME``, ``sniff(path) -> bool`` (cheap: first JSON line
or the Parquet schema) and ``read(path, model=None) -> pyarrow.Table`` returning
either a rollout table (``prompt_id, model, sample_idx, correct`` and, where the
format has them, ``text`` and ``answer``) or a count table (``prompt_id, model,
n, c``). Verdicts are taken from the tool's own grading; we do not re-grade
(use ``rlvr-audit verify`` on the texts for that). docs/formats.md shows each
layout and where it comes from.

Formats:

``lm-eval``
    lm-evaluation-harness ``--log_samples`` files ``samples_<task>_<time>.jsonl``.
``lighteval``
    lighteval ``--save_details`` Parquet ``details_<task>_<time>.parquet``.
``verl``
    verl validation generation dumps (``trainer.validation_data_dir``): one
    ``<step>.jsonl`` per validation step, or a directory of them.
``limit-of-rlvr``
    The Qwen2.5-Math evaluator used by limit-of-RLVR: one JSON line per problem
    with lists ``code`` (completions), ``pred`` and ``score``.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters import lighteval, limit_of_rlvr, lm_eval, verl

ADAPTERS = {m.NAME: m for m in (lm_eval, lighteval, verl, limit_of_rlvr)}


def detect(path: str | Path) -> str | None:
    """Name of the adapter that recognises ``path``, or None."""
    path = Path(path)
    for name, mod in ADAPTERS.items():
        try:
            if mod.sniff(path):
                return name
        except InputError:
            continue
    return None


def read(fmt: str, path: str | Path, model: str | None = None):
    """Read ``path`` with adapter ``fmt`` (see :data:`ADAPTERS`)."""
    if fmt not in ADAPTERS:
        raise InputError(f"unknown adapter '{fmt}'; known: {', '.join(ADAPTERS)}", path=path)
    return ADAPTERS[fmt].read(Path(path), model=model)
