"""The canonical rollout table, count table and run manifest (docs/schema.md).

One row per completion. Only ``prompt_id``, ``model``, ``sample_idx`` and
``correct`` are required; every other column is optional and, when present, must
have the type below. Readers coerce the usual near-misses (0/1 integers for
``correct``, integer ``prompt_id``) and refuse anything else with the file, row
and column named.

This module is the single source of truth for column names and types: the
schema document is checked against it by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

#: Statuses a verifier may give (``verify_status``). Anything but "ok" is incorrect.
VERIFY_STATUSES = ("ok", "no_answer", "parse_fail", "timeout", "error")


@dataclass(frozen=True)
class Column:
    """One column of the rollout table."""

    name: str
    type: pa.DataType
    required: bool
    doc: str


ROLLOUT_COLUMNS: tuple[Column, ...] = (
    # identity
    Column("prompt_id", pa.string(), True, "Stable id of the problem."),
    Column("model", pa.string(), True, "Label of the checkpoint that generated the sample."),
    Column("sample_idx", pa.int64(), True, "0..n-1 within (prompt_id, model), each exactly once."),
    # content and verdict
    Column("text", pa.string(), False, "The completion (omit for count-only data)."),
    Column("answer", pa.string(), False, "Extracted final answer in canonical form; null if none."),
    Column("correct", pa.bool_(), True, "Verdict of the verifier."),
    Column("verify_status", pa.string(), False, "One of: " + ", ".join(VERIFY_STATUSES) + "."),
    Column("cot_correct", pa.bool_(), False,
           "Verdict on the chain of thought (e.g. from an LLM judge), for CoT-pass@k: a "
           "sample counts only when both correct and cot_correct are true. When the column "
           "is present every row needs a value."),
    Column("check_mode", pa.string(), False,
           "Code grading: where the verdict was made, 'outside' the program's process or "
           "'in-process' (tests that need the program's own objects); null for math."),
    # generation facts
    Column("finish_reason", pa.string(), False, "Engine finish reason (stop, length, ...)."),
    Column("num_tokens", pa.int64(), False, "Number of generated tokens."),
    Column("truncated", pa.bool_(), False, "True when generation hit max_tokens."),
    Column("seed", pa.int64(), False,
           "Seed of this sample's random stream, derived from (run seed, prompt_id, sample_idx)."),
    # token summaries (computed while streaming; token arrays need not be kept)
    Column("entropy_mean", pa.float64(), False,
           "Mean per-token entropy (nats). Exact when entropy_kind = 'exact'; with top-K "
           "logprobs it is the midpoint of [entropy_mean_lo, entropy_mean_hi]."),
    Column("entropy_mean_lo", pa.float64(), False, "Rigorous lower bound on entropy_mean (top-K)."),
    Column("entropy_mean_hi", pa.float64(), False, "Rigorous upper bound on entropy_mean (top-K)."),
    Column("entropy_kind", pa.string(), False, "'exact' (from logits) or 'topk_bounds'."),
    Column("rbf_mean", pa.float64(), False,
           "Rollout branching factor: mean over steps of the number of tokens inside the "
           "top 95% of probability mass."),
    Column("rbf_lower_bound", pa.bool_(), False,
           "True if some step's top-K mass was below 0.95, making rbf_mean a lower bound."),
    Column("inv_simpson_mean", pa.float64(), False,
           "Mean over steps of the inverse Simpson index 1/sum p^2 (top-K: midpoint of its bounds)."),
    Column("log_ppl", pa.float64(), False,
           "Mean negative log-likelihood per token under the generating model (log PPL)."),
    Column("entropy_bins", pa.list_(pa.float64()), False,
           "Mean token entropy in each of B equal relative-position bins (B in the manifest, "
           "default 10); null for a bin with no tokens."),
    # quality flags (rlvr_boundary.verify.quality)
    Column("q_no_boxed", pa.bool_(), False, "No \\boxed{} answer in the text."),
    Column("q_multi_boxed", pa.bool_(), False, "Several \\boxed{} answers in the text."),
    Column("q_text_after_answer", pa.bool_(), False, "Non-trivial text after the last boxed answer."),
    Column("q_cjk_share", pa.float64(), False, "Share of CJK characters among letters."),
    Column("q_language_mix", pa.bool_(), False,
           "Language mixing: CJK in an answer to a non-CJK prompt, or the reverse."),
    Column("q_redundancy3", pa.float64(), False,
           "3-gram redundancy 1 - unique/all over whitespace tokens."),
    # optional token arrays, for a subset when asked
    Column("token_ids", pa.list_(pa.int32()), False, "Generated token ids."),
    Column("token_logprobs", pa.list_(pa.float32()), False, "Log-probability of each sampled token."),
    Column("top_ids", pa.list_(pa.list_(pa.int32())), False, "Top-K candidate ids per step."),
    Column("top_logprobs", pa.list_(pa.list_(pa.float32())), False, "Top-K logprobs per step."),
)

ROLLOUT_BY_NAME = {c.name: c for c in ROLLOUT_COLUMNS}

#: Columns a scoring run (``rlvr-boundary score``) adds: the completion's statistics under
#: the scoring model, exact from its full logits.
SCORE_COLUMNS = {
    "score_model": pa.string(),
    "score_num_tokens": pa.int64(),
    "score_log_ppl": pa.float64(),
    "score_entropy_mean": pa.float64(),
    "score_rbf_mean": pa.float64(),
    "score_inv_simpson_mean": pa.float64(),
    "score_entropy_bins": pa.list_(pa.float64()),
}
REQUIRED_ROLLOUT = tuple(c.name for c in ROLLOUT_COLUMNS if c.required)

#: The count-only table: one row per (prompt_id, model).
COUNT_COLUMNS: tuple[Column, ...] = (
    Column("prompt_id", pa.string(), True, "Stable id of the problem."),
    Column("model", pa.string(), True, "Label of the checkpoint."),
    Column("n", pa.int64(), True, "Number of samples drawn (>= 1)."),
    Column("c", pa.int64(), True, "Number of correct samples (0 <= c <= n)."),
)

#: Keys of the run manifest (JSON beside the table). All optional; unknown keys are kept.
MANIFEST_FIELDS: dict[str, str] = {
    "schema_version": "Version of this schema the table follows.",
    "tool_version": "rlvr-boundary version that wrote the table.",
    "model": "Label used in the `model` column.",
    "model_path": "Path or hub name of the checkpoint.",
    "model_hash": "Hash of the checkpoint weights (sha256 of the safetensors index or files).",
    "engine": "Generation engine (transformers, vllm, openai-server, ...).",
    "engine_version": "Its version.",
    "sampling": "temperature, top_p, top_k, max_tokens, seed, n.",
    "logprobs_mode": "'raw' (before temperature/top-p) or 'processed' logprobs.",
    "top_k_logprobs": "K of the stored top-K logprobs.",
    "position_bins": "Number of bins in entropy_bins.",
    "prompt_template_hash": "sha256 of the prompt template.",
    "dataset_hash": "sha256 of the dataset file the prompts came from.",
    "verifier": "name, version and config of the verifier.",
    "source": "Where the data came from (paper, package, licence) for published data.",
}


#: The manifest of a shard folder. The leading ``_`` makes pyarrow's (and so pandas')
#: dataset discovery skip it, so ``pandas.read_parquet(folder)`` reads the shards only.
SHARD_MANIFEST = "_manifest.json"
#: The names a shard folder's manifest is looked up under, first match wins: the current
#: one, then ``manifest.json`` (folders written by rlvr-boundary 0.1). Writers write
#: only :data:`SHARD_MANIFEST`; :class:`rlvr_boundary.io.store.ShardedWriter` renames
#: the other when it resumes into the folder.
SHARD_MANIFEST_NAMES = (SHARD_MANIFEST, "manifest.json")


def manifest_path_for(table_path) -> Path:
    """Where the manifest of a table is written: ``x.parquet`` -> ``x.manifest.json``;
    a shard directory -> ``dir/_manifest.json`` (:data:`SHARD_MANIFEST`)."""
    p = Path(table_path)
    if p.is_dir():
        return p / SHARD_MANIFEST
    name = p.name
    for suffix in (".parquet", ".jsonl.gz", ".jsonl", ".json", ".csv", ".tsv"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(name + ".manifest.json")


def find_manifest(table_path) -> Path | None:
    """The manifest of a table, or None if there is none: ``x.manifest.json`` beside a
    file; in a shard directory the first of :data:`SHARD_MANIFEST_NAMES` present.

    Anything under a manifest name is returned, a folder too, so that the reader
    refuses it with its path instead of quietly taking the next name.
    """
    p = Path(table_path)
    for m in [p / n for n in SHARD_MANIFEST_NAMES] if p.is_dir() else [manifest_path_for(p)]:
        if m.exists():
            return m
    return None
