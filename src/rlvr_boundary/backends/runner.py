"""Sharded, resumable sampling and scoring runs on top of any backend.

A sampling run is the flat list of work items ``prompts x range(n)`` (prompt
file order, then ``sample_idx``), cut into shards of ``shard_size`` items. Shard
k is generated whole and written atomically as ``part-<first>-<last>.parquet``
(:class:`rlvr_boundary.io.store.ShardedWriter`), so after a crash or SIGKILL the
directory holds only complete shards; a restart skips them and redoes the rest.
Each sample's seed depends on (run seed, prompt_id, sample_idx) only, so a redone
shard draws exactly the samples the lost attempt would have: no duplicates, no
losses, same output as an uninterrupted run. The manifest pins everything the
item list and the samples depend on (model hash, prompts hash, template, every
sampling option, n, shard size); resuming with any of them changed is refused.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

from rlvr_boundary.backends.base import (
    TEMPLATES,
    Backend,
    SamplingParams,
    iter_items,
    render_prompt,
    template_text,
)
from rlvr_boundary.errors import InputError

__all__ = ["SampleOptions", "ScoreOptions", "read_prompts", "sample_run", "score_run",
           "SAMPLE_COLUMNS", "SCORE_COLUMNS", "ID_FIELDS", "PROMPT_FIELDS"]

ID_FIELDS = ("prompt_id", "id", "unique_id", "idx", "task_id")
PROMPT_FIELDS = ("prompt", "problem", "question", "input")

#: Columns a sampling run writes (token arrays added when asked), in this order.
SAMPLE_COLUMNS = ("prompt_id", "model", "sample_idx", "seed", "prompt", "text", "finish_reason",
                  "num_tokens", "truncated", "entropy_mean", "entropy_mean_lo", "entropy_mean_hi",
                  "entropy_kind", "rbf_mean", "rbf_lower_bound", "inv_simpson_mean", "log_ppl",
                  "entropy_bins")
_ARRAY_COLUMNS = ("token_ids", "token_logprobs", "top_ids", "top_logprobs")

#: Columns a scoring run adds: the completion's statistics under the scoring model.
SCORE_COLUMNS = {
    "score_model": pa.string(),
    "score_num_tokens": pa.int64(),
    "score_log_ppl": pa.float64(),
    "score_entropy_mean": pa.float64(),
    "score_rbf_mean": pa.float64(),
    "score_inv_simpson_mean": pa.float64(),
    "score_entropy_bins": pa.list_(pa.float64()),
}


def _sha256_file(path: Path) -> str:
    from rlvr_boundary.io.outputs import note_input

    note_input(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_prompts(path: str | Path, id_field: str | None = None,
                 prompt_field: str | None = None) -> list[dict]:
    """Prompts ``[{"prompt_id", "question"}]`` from JSONL or CSV/TSV, in file order.

    The id is the first of ``prompt_id, id, unique_id, idx, task_id`` present
    (or ``id_field``); the text the first of ``prompt, problem, question,
    input`` (or ``prompt_field``). Duplicate ids and missing fields are errors.
    """
    from rlvr_boundary.io.rollouts import is_jsonl, iter_json_lines

    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    ids = (id_field,) if id_field else ID_FIELDS
    texts = (prompt_field,) if prompt_field else PROMPT_FIELDS
    out: list[dict] = []
    seen: set[str] = set()

    def take(rec: dict, line: int) -> None:
        k = next((f for f in ids if rec.get(f) not in (None, "")), None)
        if k is None:
            raise InputError(f"no prompt id field (tried {list(ids)})", path=path, line=line)
        t = next((f for f in texts if isinstance(rec.get(f), str)), None)
        if t is None:
            raise InputError(f"no prompt text field (tried {list(texts)})", path=path, line=line)
        pid = str(rec[k])
        if pid in seen:
            raise InputError(f"duplicate prompt id {pid!r}", path=path, line=line, field=k)
        seen.add(pid)
        out.append({"prompt_id": pid, "question": rec[t]})

    if is_jsonl(path):
        for line, rec in iter_json_lines(path):
            take(rec, line)
    else:  # streamed, each line bounded (a file without newlines is refused, not loaded)
        from rlvr_boundary.io.text import iter_csv_records

        for i, rec in iter_csv_records(path):
            take(rec, i)
    if not out:
        raise InputError("prompt file has no records", path=path)
    return out


@dataclass
class SampleOptions:
    """Options of a sampling run (``rlvr-boundary sample``)."""

    n: int
    """Samples per prompt."""
    params: SamplingParams = field(default_factory=SamplingParams)
    """Sampling options (temperature, top-p, top-k, max new tokens, stop, seed, logprobs)."""
    template: str = "plain"
    """Prompt template: plain, chat (the tokenizer's chat template) or qwen-boxed."""
    label: str = "model"
    """Value of the ``model`` column."""
    shard_size: int = 256
    """Samples per shard: the unit of resumption (a killed run redoes at most one shard)."""

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise InputError(f"n must be an integer >= 1, got {self.n!r}", field="n")
        if self.template not in TEMPLATES:
            raise InputError(f"template must be one of {list(TEMPLATES)}", field="template")
        if not isinstance(self.shard_size, int) or self.shard_size < 1:
            raise InputError("shard_size must be an integer >= 1", field="shard_size")
        if not self.label:
            raise InputError("label must be non-empty", field="label")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["params"] = self.params.to_dict()
        return d


def _versions() -> dict:
    import importlib.metadata as md

    out = {}
    for pkg in ("torch", "transformers", "vllm", "ray", "httpx", "numpy", "pyarrow"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def _table(rows: list[dict], names: Sequence[str]) -> pa.Table:
    from rlvr_boundary.io.schema import ROLLOUT_BY_NAME

    cols = {}
    for name in names:
        typ = ROLLOUT_BY_NAME[name].type if name in ROLLOUT_BY_NAME else (
            SCORE_COLUMNS.get(name, pa.string()))
        cols[name] = pa.array([r.get(name) for r in rows], type=typ)
    return pa.table(cols)


def sample_run(backend: Backend, prompts: list[dict], out: str | Path, opts: SampleOptions, *,
               prompts_hash: str | None = None,
               progress: Callable[[int], None] | None = None,
               total: Callable[[int, int], None] | None = None) -> dict:
    """Draw ``opts.n`` samples per prompt into the shard directory ``out`` (resumable).

    Parameters
    ----------
    backend
        Any :class:`rlvr_boundary.backends.base.Backend`.
    prompts
        ``[{"prompt_id", "question"}]`` (:func:`read_prompts`).
    out
        Shard directory; an existing one is resumed (its manifest must match).
    opts
        Run options.
    prompts_hash
        sha256 of the prompt file (recorded, and checked on resume).
    progress, total
        Callbacks: ``progress(k)`` after k more samples; ``total(all, already_done)`` once.

    Returns
    -------
    dict
        Summary: samples, shards, seconds, samples_per_second, tokens, tokens_per_second.
    """
    from rlvr_boundary.io.store import ShardedWriter

    params = opts.params
    payload = [{"prompt_id": p["prompt_id"], "question": p["question"],
                **render_prompt(opts.template, p["question"])} for p in prompts]
    items = list(iter_items(payload, opts.n, params))
    info = backend.info()
    manifest = {
        "model": opts.label, "model_path": info.get("model_path"), "model_hash": info.get("model_hash"),
        "engine": info.get("engine"), "engine_version": info.get("engine_version"),
        "backend": info, "library_versions": _versions(),
        "sampling": {**params.to_dict(), "n": opts.n},
        "logprobs_mode": params.logprobs_mode, "top_k_logprobs": params.logprobs,
        "position_bins": params.position_bins,
        "template": opts.template,
        "prompt_template_hash": hashlib.sha256(template_text(opts.template).encode()).hexdigest(),
        "dataset_hash": prompts_hash, "num_prompts": len(prompts), "shard_size": opts.shard_size,
        "seeds": "per sample: first 8 bytes of sha256('{seed}\\x1f{prompt_id}\\x1f{sample_idx}') >> 1",
        "sample_options": opts.to_dict(),
    }
    writer = ShardedWriter(out, manifest, must_match=(
        "model", "model_hash", "engine", "sampling", "template", "dataset_hash", "num_prompts",
        "shard_size", "logprobs_mode", "position_bins"))
    S = opts.shard_size
    order = {p["prompt_id"]: i for i, p in enumerate(prompts)}
    units = [(f"{s:010d}-{min(s + S, len(items)) - 1:010d}", items[s:s + S])
             for s in range(0, len(items), S)]
    done = writer.done()
    already = sum(len(u) for k, u in units if k in done)
    if total is not None:
        total(len(items), already)
    names = list(SAMPLE_COLUMNS)
    if params.token_arrays:
        names += ["token_ids", "token_logprobs"]
    if params.logprobs:
        names += ["top_ids", "top_logprobs"]
    # One generate_items call over every missing unit (a Ray backend keeps one actor pool for
    # the whole run); rows are buffered per unit and each unit is written once it is complete.
    todo = [(k, u) for k, u in units if k not in done]
    unit_of = {(it["prompt_id"], it["sample_idx"]): k for k, u in todo for it in u}
    want = {k: len(u) for k, u in todo}
    question = {p["prompt_id"]: p["question"] for p in prompts}
    buf: dict[str, list[dict]] = {k: [] for k, _ in todo}
    t0, made, tokens = time.perf_counter(), 0, 0
    stream = backend.generate_items([it for _, u in todo for it in u], params) if todo else iter(())
    for row in stream:
        key = unit_of.get((row["prompt_id"], row["sample_idx"]))
        if key is None or len(buf[key]) >= want[key]:
            raise RuntimeError(f"backend returned an unexpected or repeated sample "
                               f"{(row['prompt_id'], row['sample_idx'])}")
        row["model"] = opts.label
        row["prompt"] = question[row["prompt_id"]]
        buf[key].append(row)
        tokens += int(row.get("num_tokens") or 0)
        if progress is not None:
            progress(1)
        if len(buf[key]) == want[key]:
            rows = sorted(buf.pop(key), key=lambda r: (order[r["prompt_id"]], r["sample_idx"]))
            writer.write(key, _table(rows, names))
            made += len(rows)
    if buf:
        raise RuntimeError(f"backend returned too few samples for shards {sorted(buf)[:3]}")
    secs = time.perf_counter() - t0
    summary = {"samples": len(items), "generated_now": made, "resumed_from": already,
               "shards": len(units), "seconds": secs,
               "samples_per_second": made / secs if secs > 0 and made else None,
               "tokens_generated_now": tokens,
               "tokens_per_second": tokens / secs if secs > 0 and made else None}
    writer.finish(summary)
    return summary


@dataclass
class ScoreOptions:
    """Options of a scoring run (``rlvr-boundary score``)."""

    label: str = "scorer"
    """Value of the ``score_model`` column (which model scored the texts)."""
    template: str = "plain"
    """Template the prompts were sampled with (so the completion is scored in context)."""
    position_bins: int = 10
    """Relative-position bins of ``score_entropy_bins``."""
    shard_rows: int = 256
    """Rows per output shard (the unit of resumption)."""

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise InputError(f"template must be one of {list(TEMPLATES)}", field="template")
        if not isinstance(self.shard_rows, int) or self.shard_rows < 1:
            raise InputError("shard_rows must be an integer >= 1", field="shard_rows")
        if not isinstance(self.position_bins, int) or self.position_bins < 1:
            raise InputError("position_bins must be an integer >= 1", field="position_bins")


def score_run(backend: Backend, rollouts: str | Path, out: str | Path, opts: ScoreOptions, *,
              prompts: dict[str, str] | None = None,
              progress: Callable[[int], None] | None = None) -> dict:
    """Add ``score_*`` columns (:data:`SCORE_COLUMNS`) to every row of a rollout table.

    Each row's ``text`` is scored after its prompt (rendered with
    ``opts.template``), taken from ``prompts`` (id -> question) or else from the
    table's ``prompt`` column. Output: a resumable shard directory.
    """
    from rlvr_boundary.io.rollouts import iter_rollout_batches
    from rlvr_boundary.io.store import ShardedWriter

    from rlvr_boundary.io.rollouts import read_manifest

    key_cols = ("prompt_id", "model", "sample_idx")
    # our sampler's summaries include the end-of-sequence token of a sample that stopped on
    # its own; add it back when that is what finish_reason "stop" means (no stop strings)
    src_man = read_manifest(rollouts) or {}
    eos_on_stop = isinstance(src_man.get("sampling"), dict) and not src_man["sampling"].get("stop")
    info = backend.info()
    manifest = {"scored_rollouts": str(rollouts), "score_model": opts.label,
                "score_model_path": info.get("model_path"), "score_model_hash": info.get("model_hash"),
                "score_backend": info, "score_options": asdict(opts),
                "library_versions": _versions(), "position_bins": opts.position_bins}
    writer = ShardedWriter(out, manifest, must_match=("scored_rollouts", "score_model_hash",
                                                      "score_options"))
    done = writer.done()
    t0, rows_total, row0 = time.perf_counter(), 0, 0
    for batch in iter_rollout_batches(rollouts, None, batch_rows=opts.shard_rows,
                                      required=key_cols):
        n = batch.num_rows
        key = f"{row0:010d}-{row0 + n - 1:010d}"
        row0 += n
        rows_total += n
        if key in done:
            if progress is not None:
                progress(n)
            continue
        if "text" not in batch.column_names:
            raise InputError("scoring needs a 'text' column", path=rollouts, field="text")
        pids = [str(x) for x in batch.column("prompt_id").to_pylist()]
        texts = batch.column("text").to_pylist()
        if prompts is None:
            if "prompt" not in batch.column_names:
                raise InputError("no prompts: give --prompts or a table with a 'prompt' column",
                                 path=rollouts, field="prompt")
            qs = dict(zip(pids, batch.column("prompt").to_pylist()))
        else:
            missing = sorted(set(pids) - set(prompts))
            if missing:
                raise InputError(f"prompt ids not in the prompt file: {missing[:5]}", path=rollouts,
                                 field="prompt_id")
            qs = {p: prompts[p] for p in set(pids)}
        plist = [{"prompt_id": p, **render_prompt(opts.template, q)} for p, q in qs.items()]
        stops = (batch.column("finish_reason").to_pylist() if eos_on_stop
                 and "finish_reason" in batch.column_names else [None] * n)
        comps = [{"prompt_id": p, "text": t or "", "append_eos": f == "stop"}
                 for p, t, f in zip(pids, texts, stops)]
        res = backend.score(plist, comps, position_bins=opts.position_bins)
        extra = {"score_model": [opts.label] * n,
                 "score_num_tokens": [r["num_tokens"] for r in res]}
        for k in ("log_ppl", "entropy_mean", "rbf_mean", "inv_simpson_mean", "entropy_bins"):
            extra["score_" + k] = [r.get(k) for r in res]
        table = batch
        for name, vals in extra.items():
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, pa.array(vals, type=SCORE_COLUMNS[name]))
        writer.write(key, table)
        if progress is not None:
            progress(n)
    summary = {"rows": rows_total, "seconds": time.perf_counter() - t0}
    writer.finish(summary)
    return summary


def learning_run(before: Backend, after: Backend, prompts: list[dict], completions: list[dict], *,
                 labels: tuple[str, str] = ("before", "after"), **options) -> dict:
    """Score the same completions under two checkpoints and say where learning landed.

    ``before`` and ``after`` are transformers backends sharing a tokenizer;
    ``prompts`` are ``{"prompt_id", "prompt" | "messages"}``, ``completions``
    ``{"prompt_id", "text"}`` (or ``"token_ids"``). Options go to
    :func:`rlvr_boundary.analysis.learning.learning_landed`.
    """
    from rlvr_boundary.analysis.learning import learning_landed

    a = before.score(prompts, completions, token_arrays=True)
    b = after.score(prompts, completions, token_arrays=True)
    for x, y in zip(a, b):
        if x["token_ids"] != y["token_ids"]:
            raise InputError("the two checkpoints tokenize the texts differently; where-learning-"
                             "landed compares the same tokens, so both need the same tokenizer")
    keep = [i for i, x in enumerate(a) if x["token_ids"]]
    texts = [before.token_texts(a[i]["token_ids"]) for i in keep]
    res = learning_landed(texts, [a[i]["token_logprobs"] for i in keep],
                          [b[i]["token_logprobs"] for i in keep],
                          [a[i]["token_entropy"] for i in keep],
                          [b[i]["token_entropy"] for i in keep], labels=labels, **options)
    res["models"] = {"before": before.info(), "after": after.info()}
    return res


def mean_entropy_of(rollouts: str | Path) -> float:
    """Mean of ``entropy_mean`` over a rollout table's samples (the entropy to match)."""
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    tot, cnt = 0.0, 0
    for t in iter_rollout_batches(rollouts, ["entropy_mean"], required=("prompt_id", "sample_idx")):
        if "entropy_mean" not in t.column_names:
            raise InputError("the table has no entropy_mean column", path=rollouts, field="entropy_mean")
        v = [x for x in t.column("entropy_mean").to_pylist() if x is not None]
        tot += sum(v)
        cnt += len(v)
    if not cnt:
        raise InputError("no entropy_mean values to match", path=rollouts, field="entropy_mean")
    return tot / cnt


def entropy_matched_temperature(backend: Backend, prompts: list[dict], target: float,
                                params: SamplingParams, n: int = 4, *, lo: float = 0.05,
                                hi: float = 2.0, tol: float = 0.01, max_iter: int = 10) -> dict:
    """Temperature at which ``backend``'s mean token entropy on ``prompts`` equals ``target``.

    Each probe samples ``n`` completions per prompt at temperature T with the
    same seeds (common random numbers) and ``logprobs_mode = "processed"``, so
    the entropy is that of the distribution actually sampled from, and takes the
    mean of ``entropy_mean`` over samples. The target should be measured the
    same way (e.g. the RL model's samples at T = 1, where raw = processed).
    """
    from dataclasses import replace

    from rlvr_boundary.analysis.learning import match_temperature

    def measure(t: float) -> float:
        p = replace(params, temperature=t, logprobs_mode="processed", token_arrays=False, logprobs=0)
        vals = [r["entropy_mean"] for r in backend.generate(prompts, n, p)
                if r["entropy_mean"] is not None]
        return float(sum(vals) / len(vals)) if vals else float("nan")

    res = match_temperature(measure, target, lo=lo, hi=hi, tol=tol, max_iter=max_iter)
    res["samples_per_probe"] = n * len(prompts)
    return res


def write_summary_json(path: str | Path, kind: str, opts, summary: dict) -> None:
    from rlvr_boundary.io.results import write_result

    write_result(path, kind, opts, json.loads(json.dumps(summary, default=str)))
