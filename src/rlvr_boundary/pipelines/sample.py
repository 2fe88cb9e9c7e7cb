"""The sample workflow: a checkpoint and prompts in, a sharded rollout table and the ``sample`` result out.

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

:func:`run` is ``rlvr-boundary sample`` between parsing and printing: read the
prompts, optionally find the temperature whose token entropy matches another
model's (:func:`entropy_matched_temperature`), sample (:func:`sample_run`),
and return the ``sample`` result document (written when asked).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from rlvr_boundary.backends.base import (
    TEMPLATES,
    Backend,
    SamplingParams,
    iter_items,
    render_prompt,
    template_text,
)
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.prompts import read_prompts
from rlvr_boundary.options import check, option

__all__ = ["SampleOptions", "run", "sample_run", "SAMPLE_COLUMNS", "MAX_SAMPLES_PER_PROMPT",
           "MAX_ITEMS", "mean_entropy_of", "entropy_matched_temperature"]

#: Columns a sampling run writes (token arrays added when asked), in this order.
SAMPLE_COLUMNS = ("prompt_id", "model", "sample_idx", "seed", "prompt", "text", "finish_reason",
                  "num_tokens", "truncated", "entropy_mean", "entropy_mean_lo", "entropy_mean_hi",
                  "entropy_kind", "rbf_mean", "rbf_lower_bound", "inv_simpson_mean", "log_ppl",
                  "entropy_bins")
_ARRAY_COLUMNS = ("token_ids", "token_logprobs", "top_ids", "top_logprobs")



#: Most samples per prompt, and most (prompt, sample) items of one run: the run's item list is
#: held in memory (a few hundred bytes an item), so larger runs are refused before starting.
MAX_SAMPLES_PER_PROMPT = 1_000_000
MAX_ITEMS = 20_000_000


@dataclass
class SampleOptions:
    """Options of a sampling run (``rlvr-boundary sample``; recorded in its manifest)."""

    n: int = option(low=1, high=MAX_SAMPLES_PER_PROMPT, help="samples per prompt")
    params: SamplingParams = option(default_factory=SamplingParams, cli=False,
                                    help="sampling options (temperature, top-p, top-k, max new "
                                         "tokens, stop, seed, logprobs)")
    template: str = option("plain", choices=TEMPLATES, help="prompt template")
    label: str = option("model", cli=False,
                        help="value of the model column (default: the model folder's name)")
    shard_size: int = option(256, low=1, high=1_000_000,
                             help="samples per shard, the unit of resumption")

    def __post_init__(self) -> None:
        if isinstance(self.params, dict):
            self.params = SamplingParams(**self.params)
        check(self)
        if not self.label:
            raise InputError("label must be non-empty", field="label")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["params"] = self.params.to_dict()
        return d


def _table(rows: list[dict], names: Sequence[str]):
    import pyarrow as pa

    from rlvr_boundary.io.schema import ROLLOUT_BY_NAME, SCORE_COLUMNS

    cols, scored = {}, SCORE_COLUMNS
    for name in names:
        typ = ROLLOUT_BY_NAME[name].type if name in ROLLOUT_BY_NAME else (
            scored.get(name, pa.string()))
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
    import hashlib

    from rlvr_boundary.io.results import RUN_LIBRARIES, library_versions
    from rlvr_boundary.io.store import ShardedWriter

    params = opts.params
    payload = [{"prompt_id": p["prompt_id"], "question": p["question"],
                **render_prompt(opts.template, p["question"])} for p in prompts]
    items = list(iter_items(payload, opts.n, params))
    info = backend.info()
    manifest = {
        "model": opts.label, "model_path": info.get("model_path"), "model_hash": info.get("model_hash"),
        "engine": info.get("engine"), "engine_version": info.get("engine_version"),
        "backend": info, "library_versions": library_versions(RUN_LIBRARIES),
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
    t0, made, tokens, bare = time.perf_counter(), 0, 0, 0
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
        ent = row.get("entropy_mean")
        bare += ent is None or ent != ent  # NaN: no logprobs came back for this sample
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
               "tokens_per_second": tokens / secs if secs > 0 and made else None,
               "without_token_summaries": bare}
    writer.finish(summary)
    return summary


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
    from rlvr_boundary.analysis.learning import match_temperature

    def measure(t: float) -> float:
        p = replace(params, temperature=t, logprobs_mode="processed", token_arrays=False, logprobs=0)
        vals = [r["entropy_mean"] for r in backend.generate(prompts, n, p)
                if r["entropy_mean"] is not None]
        return float(sum(vals) / len(vals)) if vals else float("nan")

    res = match_temperature(measure, target, lo=lo, hi=hi, tol=tol, max_iter=max_iter)
    res["samples_per_probe"] = n * len(prompts)
    return res




def run(model: str, prompts_path: str | Path, out: str | Path, opts: SampleOptions, backend_opts,
        *, id_field: str | None = None, prompt_field: str | None = None,
        match_entropy_of: str | Path | None = None, match_n: int = 4,
        json_path: str | Path | None = None, progress=None, total=None, say=None) -> dict:
    """Sample ``opts.n`` completions per prompt into ``out``; return the ``sample`` document.

    Parameters
    ----------
    model
        Hugging Face model folder (or the served model name of an OpenAI-compatible server).
    prompts_path
        JSONL or CSV of prompts (:func:`read_prompts`).
    out
        Output shard directory (an existing one is resumed).
    opts, backend_opts
        Sampling options and the engine's (:class:`rlvr_boundary.backends.BackendOptions`).
    match_entropy_of
        First find the temperature at which this model's mean token entropy on the
        prompts equals the mean ``entropy_mean`` of these rollouts
        (:func:`entropy_matched_temperature`, ``match_n`` samples per prompt a
        probe), then sample at it; the match is written as ``entropy_match.json``
        in ``out`` and kept in the result.
    json_path
        Where to write the ``sample`` result document.
    progress, total
        Progress callbacks (:func:`sample_run`).
    say
        Called with a sentence when the temperature was matched.
    """
    from rlvr_boundary.backends import build_backend
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc
    from rlvr_boundary.io.text import sha256_of

    if not isinstance(match_n, int) or not 1 <= match_n <= 1_000:
        raise InputError(f"--match-n must be an integer from 1 to 1,000, got {match_n!r}")
    check_outputs({"--json": json_path}, [prompts_path, match_entropy_of],
                  folders={"--out": out})
    prompts = read_prompts(prompts_path, id_field, prompt_field)
    if len(prompts) * opts.n > MAX_ITEMS:
        raise InputError(f"{len(prompts):,} prompts x n = {opts.n:,} is {len(prompts) * opts.n:,} "
                         f"samples, more than the {MAX_ITEMS:,} one run holds in its work list; "
                         "split the prompts into several runs", field="n")
    backend = build_backend(backend_opts, model)
    matched = None
    try:
        if match_entropy_of:
            target = mean_entropy_of(match_entropy_of)
            payload = [{"prompt_id": p["prompt_id"], **render_prompt(opts.template, p["question"])}
                       for p in prompts]
            matched = entropy_matched_temperature(backend, payload, target, opts.params,
                                                  n=match_n)
            matched["target_rollouts"] = str(match_entropy_of)
            if say is not None:
                from rlvr_boundary.report import words as W

                say(W.entropy_match_sentence(matched, target))
            params = replace(opts.params, temperature=round(matched["temperature"], 4))
            opts = SampleOptions(n=opts.n, params=params, template=opts.template,
                                 label=opts.label, shard_size=opts.shard_size)
        summary = sample_run(backend, prompts, out, opts,
                             prompts_hash=sha256_of(prompts_path),
                             progress=progress, total=total)
    finally:
        backend.close()
    summary["prompts"] = len(prompts)
    summary["n"] = opts.n
    if matched is not None:
        write_doc(Path(out) / "entropy_match.json", envelope("entropy-match", opts, matched))
    doc = envelope("sample", opts.to_dict(), {**summary, "entropy_match": matched})
    if json_path:
        write_doc(json_path, doc)
    return doc
