"""The score workflow: rollouts under another model, and where learning landed between two checkpoints.

- :func:`score_run` adds ``score_*`` columns (log-PPL, entropy, branching factor
  under the scoring model) to every row of a rollout table, as a resumable
  shard directory (``rlvr-boundary score``);
- :func:`learning_run` scores the same texts under a checkpoint before and after
  RL and computes where learning landed
  (:func:`rlvr_boundary.analysis.learning.learning_landed`): the
  ``learning_landed`` result (``score --before``; the lab's entropy stage).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rlvr_boundary.backends.base import TEMPLATES, Backend, render_prompt
from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

__all__ = ["ScoreOptions", "LearningOptions", "run", "score_run", "learning_run", "learning_rows"]


@dataclass
class ScoreOptions:
    """Options of a scoring run (``rlvr-boundary score``)."""

    label: str = option("scorer", cli=False,
                        help="value of the score_model column (which model scored the texts)")
    template: str = option("plain", choices=TEMPLATES, cli=False,
                           help="template the samples were drawn with (so the completion is "
                                "scored in context)")
    position_bins: int = option(10, low=1, high=1_000,
                                help="relative-position bins of score_entropy_bins")
    shard_rows: int = option(256, low=1, high=1_000_000,
                             help="rows per output shard (the unit of resumption)")

    def __post_init__(self) -> None:
        check(self)


def score_run(backend: Backend, rollouts: str | Path, out: str | Path, opts: ScoreOptions, *,
              prompts: dict[str, str] | None = None,
              progress: Callable[[int], None] | None = None) -> dict:
    """Add ``score_*`` columns (:data:`rlvr_boundary.io.schema.SCORE_COLUMNS`) to every row.

    Each row's ``text`` is scored after its prompt (rendered with
    ``opts.template``), taken from ``prompts`` (id -> question) or else from the
    table's ``prompt`` column. Output: a resumable shard directory.
    """
    import pyarrow as pa

    from rlvr_boundary.io.results import RUN_LIBRARIES, library_versions
    from rlvr_boundary.io.rollouts import iter_rollout_batches, read_manifest
    from rlvr_boundary.io.schema import SCORE_COLUMNS
    from rlvr_boundary.io.store import ShardedWriter

    key_cols = ("prompt_id", "model", "sample_idx")
    types = SCORE_COLUMNS
    # our sampler's summaries include the end-of-sequence token of a sample that stopped on
    # its own; add it back when that is what finish_reason "stop" means (no stop strings)
    src_man = read_manifest(rollouts) or {}
    eos_on_stop = isinstance(src_man.get("sampling"), dict) and not src_man["sampling"].get("stop")
    info = backend.info()
    manifest = {"scored_rollouts": str(rollouts), "score_model": opts.label,
                "score_model_path": info.get("model_path"), "score_model_hash": info.get("model_hash"),
                "score_backend": info, "score_options": asdict(opts),
                "library_versions": library_versions(RUN_LIBRARIES), "position_bins": opts.position_bins}
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
            table = table.append_column(name, pa.array(vals, type=types[name]))
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




@dataclass
class LearningOptions:
    """Options of a where-learning-landed comparison (``score --before``; recorded)."""

    before: str = option("", cli=False, help="checkpoint before RL")
    after: str = option("", cli=False, help="checkpoint after RL (the scoring model)")
    template: str = option("plain", choices=TEMPLATES, cli=False,
                           help="template the samples were drawn with")
    rows: int = option(2000, flag="--learning-rows", low=1, high=1_000_000,
                       group="where learning landed",
                       help="texts compared, the first N of the table")

    def __post_init__(self) -> None:
        check(self)


def template_of(rollouts: str | Path, template: str | None) -> str:
    """The template given, else the one the rollouts' manifest records, else ``plain``."""
    if template is not None:
        return template
    from rlvr_boundary.io.rollouts import read_manifest

    return (read_manifest(rollouts) or {}).get("template") or "plain"


def run(rollouts: str | Path, model: str, opts: ScoreOptions, backend_opts, *,
        out: str | Path | None = None, prompts_path: str | Path | None = None,
        progress=None, learning: LearningOptions | None = None,
        learning_json: str | Path | None = None) -> dict:
    """Score a rollout table under ``model``; with ``learning``, also where learning landed.

    Returns
    -------
    dict
        ``{"out": shard directory, "summary": {rows, seconds}, "learning": the
        learning_landed document or None, "learning_json": its path}``.
    """
    from rlvr_boundary.backends import BACKENDS, build_backend

    if not BACKENDS[backend_opts.backend].scores:
        able = [n for n, b in BACKENDS.items() if b.scores]
        raise InputError(f"scoring needs full logits: use --backend {' or '.join(able)}",
                         field="backend")
    src = Path(rollouts)
    out = Path(out) if out else src.with_name(src.name.split(".")[0] + f".scored-{opts.label}")
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.rollouts import table_columns

    path = None if learning is None else (
        Path(learning_json) if learning_json else out.with_name(out.name + ".learning.json"))
    check_outputs({"--learning": path}, [src, prompts_path], folders={"--out": out},
                  stdout=("--learning",))
    table_columns(src)  # a missing or unreadable table is said before the model loads
    prompts = None
    if prompts_path:
        from rlvr_boundary.io.prompts import read_prompts

        prompts = {p["prompt_id"]: p["question"] for p in read_prompts(prompts_path)}
    backend = build_backend(backend_opts, model)
    summary = score_run(backend, src, out, opts, prompts=prompts, progress=progress)
    doc = None
    if learning is not None:
        doc = learning_doc(src, backend, learning, backend_opts, prompts=prompts,
                           labels=(Path(str(learning.before).rstrip("/")).name, opts.label),
                           json_path=path)
    return {"out": out, "summary": summary, "learning": doc, "learning_json": path}


def learning_rows(rollouts: str | Path, rows: int) -> list[dict]:
    """The first ``rows`` rows of a rollout table."""
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    out: list[dict] = []
    for t in iter_rollout_batches(rollouts, None, required=("prompt_id", "model", "sample_idx")):
        out += t.to_pylist()
        if len(out) >= rows:
            break
    return out[:rows]


def learning_doc(src: Path, after: Backend, opts: LearningOptions, backend_opts, *,
                 prompts: dict | None, labels: tuple[str, str],
                 json_path: str | Path | None = None) -> dict:
    """Where learning landed on the first ``opts.rows`` texts of ``src``: the
    ``learning_landed`` document (written to ``json_path`` when given)."""
    from dataclasses import replace

    from rlvr_boundary.backends import build_backend
    from rlvr_boundary.io.results import envelope, write_doc

    rows = learning_rows(src, opts.rows)
    qs = prompts or {str(r["prompt_id"]): r.get("prompt") for r in rows}
    if any(q is None for q in qs.values()):
        raise InputError("no prompts: give --prompts or a table with a 'prompt' column", path=src)
    plist = [{"prompt_id": p, **render_prompt(opts.template, q)} for p, q in qs.items()]
    comps = [{"prompt_id": str(r["prompt_id"]), "text": r.get("text") or ""} for r in rows]
    before = build_backend(replace(backend_opts, backend="transformers"), opts.before)
    res = learning_run(before, after, plist, comps, labels=labels)
    doc = envelope("learning_landed", {"before": opts.before, "after": opts.after,
                                       "template": opts.template, "rows": len(rows)}, res)
    if json_path:
        write_doc(json_path, doc)
    return doc
