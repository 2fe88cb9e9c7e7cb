"""Adapters: other tools' evaluation outputs read into our data model.

Each adapter module has ``NAME``, ``sniff(path) -> bool`` (cheap: first JSON line
or the Parquet schema) and ``read(path, model=None) -> pyarrow.Table`` returning
either a rollout table (``prompt_id, model, sample_idx, correct`` and, where the
format has them, ``text`` and ``answer``) or a count table (``prompt_id, model,
n, c``). Verdicts are taken from the tool's own grading; we do not re-grade
(use ``rlvr-boundary verify`` on the texts for that). docs/formats.md shows each
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
    with lists ``code`` (completions), ``pred`` and ``score``; a directory of
    them (several seeds) is pooled per problem.
``vllm-jsonl``
    Generations as vLLM ``RequestOutput``-like lines or OpenAI batch output
    lines, with a verdict per sample.

Detection order matters only if two sniffs could accept the same file; they
key on disjoint field sets (lm-eval: ``doc_id, resps, filtered_resps``; verl:
``input, output, score``; limit-of-RLVR: a ``score`` list with ``code``/``pred``;
vllm-jsonl: ``outputs[].text`` or ``custom_id, response``; lighteval: Parquet).
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters import lighteval, limit_of_rlvr, lm_eval, verl, vllm_jsonl
from rlvr_boundary.io.rollouts import PARQUET_ERRORS

ADAPTERS = {m.NAME: m for m in (lm_eval, lighteval, verl, limit_of_rlvr, vllm_jsonl)}


def detect(path: str | Path) -> str | None:
    """Name of the adapter that recognises ``path`` (a file or directory), or None.

    Cheap: reads the first JSON line of a file, a Parquet schema, or a directory
    listing plus one file's first line.
    """
    path = Path(path)
    if not path.exists():
        return None
    for name, mod in ADAPTERS.items():
        try:
            if mod.sniff(path):
                return name
        except (InputError, *PARQUET_ERRORS):  # a corrupt file is no format's
            continue
    return None


def read(fmt: str, path: str | Path, model: str | None = None, **choices):
    """Read ``path`` with adapter ``fmt`` (see :data:`ADAPTERS`).

    Parameters
    ----------
    fmt
        Adapter name, a key of :data:`ADAPTERS`.
    path
        The tool's output file (or directory, where the adapter reads one).
    model
        Model label to use; default: what the file or its path says.
    **choices
        The adapter's own choices (lm-eval ``filter``/``metric``, lighteval
        ``metric``, verl ``step``); None values mean the adapter's default.

    Returns
    -------
    pyarrow.Table
        A rollout table (``prompt_id, model, sample_idx, correct`` and, where
        the format has them, ``text``, ``answer``, ``finish_reason``,
        ``truncated``, ``num_tokens`` and the extra ``prompt``/``gold`` text
        columns) or a count table (``prompt_id, model, n, c``).
    """
    if fmt not in ADAPTERS:
        raise InputError(f"unknown adapter '{fmt}'; known: {', '.join(ADAPTERS)}", path=path)
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_file() and path.stat().st_size == 0:
        raise InputError("file is empty", path=path)
    try:
        return ADAPTERS[fmt].read(path, model=model,
                                  **{k: v for k, v in choices.items() if v is not None})
    except PARQUET_ERRORS as exc:
        # A corrupt Parquet page or an unreadable file below the adapter's own checks.
        raise InputError(f"cannot read this {fmt} input ({exc})", path=path) from None
