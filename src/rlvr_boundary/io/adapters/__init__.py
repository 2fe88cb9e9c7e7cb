"""Adapters: other tools' evaluation outputs read into our data model.

This package's ``__init__`` is the registry of every input format
(:data:`FORMATS`): its ``--format`` name, one line of help, the adapter module
that reads it and the adapter's own choices with their flags. The command line
and the app list formats and add the adapters' flags from it; nothing else
copies them.

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

import importlib
from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError

# The registry below is read when the command line is built (format names, help and
# the adapters' own flags): it imports no adapter module and no Arrow. An adapter is
# imported when a file of its format is detected or read.


@dataclass(frozen=True)
class Choice:
    """One choice an adapter's ``read`` takes, and the option that sets it."""

    key: str
    """Keyword of the adapter's ``read``."""
    field: str
    """Field of the workflow options (``CompareOptions``) that holds it; its flag is the
    field name with dashes (``lm_eval_filter`` -> ``--lm-eval-filter``)."""
    kind: str
    """``str`` or ``int``."""
    metavar: str
    help: str

    @property
    def flag(self) -> str:
        return "--" + self.field.replace("_", "-")


@dataclass(frozen=True)
class Format:
    """An input format: its ``--format`` name, one line of help, and who reads it."""

    name: str
    help: str
    module: str | None = None
    """The adapter module (``NAME``, ``sniff``, ``read``); None: a native format read by
    :mod:`rlvr_boundary.io.formats`."""
    choices: tuple[Choice, ...] = ()


#: Every input format, native ones first (their order is the detection order of adapters).
FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("count-jsonl", "per-prompt counts, one {id, n, c} JSON object per line"),
    Format("count-table", "counts as rows (prompt_id, model, n, c) in CSV/TSV, JSONL or "
                          "Parquet"),
    Format("rollouts", "the rollout table: one row per sample (docs/schema.md)"),
    Format("lm-eval", "lm-evaluation-harness --log_samples JSONL",
           "rlvr_boundary.io.adapters.lm_eval",
           (Choice("filter", "lm_eval_filter", "str", "NAME",
                   "lm-evaluation-harness filter to read (default: the first non-majority "
                   "filter in the file)"),
            Choice("metric", "lm_eval_metric", "str", "NAME",
                   "lm-evaluation-harness per-document metric (default: exact_match, acc, "
                   "... whichever is present)"))),
    Format("lighteval", "lighteval --save-details Parquet", "rlvr_boundary.io.adapters.lighteval",
           (Choice("metric", "lighteval_metric", "str", "NAME",
                   "lighteval metric (default: a sampling metric such as avg@n, else a 0/1 "
                   "match)"),)),
    Format("verl", "verl validation dumps (trainer.validation_data_dir), one model per step",
           "rlvr_boundary.io.adapters.verl",
           (Choice("step", "verl_step", "int", "STEP",
                   "verl validation step to read from a directory of dumps (default: every "
                   "step, one model each)"),)),
    Format("limit-of-rlvr", "the Qwen2.5-Math / limit-of-RLVR evaluator JSONL",
           "rlvr_boundary.io.adapters.limit_of_rlvr"),
    Format("vllm-jsonl", "graded vLLM RequestOutput or OpenAI batch output lines",
           "rlvr_boundary.io.adapters.vllm_jsonl"),
)}

#: Formats read by :mod:`rlvr_boundary.io.formats` itself.
NATIVE_FORMATS = tuple(n for n, f in FORMATS.items() if f.module is None)
#: Formats of other tools, each read by its adapter module.
ADAPTER_NAMES = tuple(n for n, f in FORMATS.items() if f.module is not None)


def adapter(name: str):
    """The adapter module of format ``name``, imported now."""
    fmt = FORMATS.get(name)
    if fmt is None or fmt.module is None:
        raise InputError(f"unknown adapter '{name}'; known: {', '.join(ADAPTER_NAMES)}")
    return importlib.import_module(fmt.module)


def choice_flag(fmt: str, key: str) -> str:
    """The flag that sets the choice ``key`` of format ``fmt`` (``--lm-eval-filter``)."""
    for c in FORMATS[fmt].choices if fmt in FORMATS else ():
        if c.key == key:
            return c.flag
    return key


def detect(path: str | Path) -> str | None:
    """Name of the adapter that recognises ``path`` (a file or directory), or None.

    Cheap: reads the first JSON line of a file, a Parquet schema, or a directory
    listing plus one file's first line.
    """
    from rlvr_boundary.io.rollouts import PARQUET_ERRORS

    path = Path(path)
    if not path.exists():
        return None
    for name in ADAPTER_NAMES:
        try:
            if adapter(name).sniff(path):
                return name
        except (InputError, *PARQUET_ERRORS):  # a corrupt file is no format's
            continue
    return None


def read(fmt: str, path: str | Path, model: str | None = None, **choices):
    """Read ``path`` with adapter ``fmt`` (see :data:`FORMATS`).

    Parameters
    ----------
    fmt
        Adapter name, one of :data:`ADAPTER_NAMES`.
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
    from rlvr_boundary.io.rollouts import PARQUET_ERRORS

    mod = adapter(fmt)
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_file() and path.stat().st_size == 0:
        raise InputError("file is empty", path=path)
    try:
        return mod.read(path, model=model, **{k: v for k, v in choices.items() if v is not None})
    except PARQUET_ERRORS as exc:
        # A corrupt Parquet page or an unreadable file below the adapter's own checks.
        raise InputError(f"cannot read this {fmt} input ({exc})", path=path) from None
