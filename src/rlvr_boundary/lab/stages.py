"""The shared stages of every lab experiment: pretrain, RL, sample, audit, summary.

Each experiment (:mod:`rlvr_boundary.lab.registry`) is a leaf module that calls
these stages in its own order; no experiment imports another. Every stage
resumes: a finished stage is skipped on restart (it reads what it wrote), a
killed one is redone from its last checkpoint, and every file is written
through a temporary name renamed at the end, so a folder never looks finished
when it is not.

===============  ==================================================================
stage            writes
===============  ==================================================================
base             ``base/``: BPE tokenizer and the pretrained tiny Llama
rl               ``rl/step-N/``: GRPO checkpoints, optimizer state, training log;
                 ``evaluate(step, folder)`` runs at every checkpoint (the place a
                 boundary monitor plugs in)
sample           ``rollouts/part-<label>.parquet``: every model sampled on the
                 audited problems through the transformers backend, verified
audit            ``report.html`` / ``report.json``: the audit of the rollouts,
                 exactly as ``rlvr-boundary report`` makes it
summary          the numbers of ``lab_result.json`` (pass@1 and pass@K, the band's
                 verdict, price, k*, the strategy view)
===============  ==================================================================

All stages take a :class:`Context`: the run's options, its folder, a clock and
where to print.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from rlvr_boundary.errors import InputError, require
from rlvr_boundary.lab import splits
from rlvr_boundary.lab import task as T
from rlvr_boundary.lab import versions as V
from rlvr_boundary.lab.config import BASE_OPTIONS, SAMPLE_OPTIONS, LabConfig


class Clock:
    """Wall and CPU seconds of each stage, kept in ``timings.json`` across resumes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def stage(self, name: str, accumulate: bool = True):
        """Time a stage; ``accumulate`` adds to the time of earlier (interrupted) attempts,
        otherwise the stage's time is replaced (a stage that is redone whole)."""
        clock = self

        class _Ctx:
            def __enter__(self):
                self.w, self.c = time.perf_counter(), time.process_time()

            def __exit__(self, *exc):
                if exc[0] is None:
                    old = clock.data.get(name) if accumulate else None
                    old = old or {"wall_s": 0.0, "cpu_s": 0.0}
                    clock.data[name] = {"wall_s": old["wall_s"] + time.perf_counter() - self.w,
                                        "cpu_s": old["cpu_s"] + time.process_time() - self.c}
                    tmp = clock.path.with_name(clock.path.name + ".tmp")
                    tmp.write_text(json.dumps(clock.data, indent=1))
                    tmp.replace(clock.path)
        return _Ctx()


@dataclass
class Context:
    """What every stage needs: options, folder, clock, and where to print."""

    cfg: LabConfig
    out: Path
    clock: Clock
    say: Callable = print
    """``say(text)``: one line for the user."""
    progress: Callable | None = None
    """A context manager factory of progress bars (``rlvr_boundary.console.progress``)."""
    warn: Callable | None = None
    """``warn(text)``: a warning line (default: ``say``)."""
    base_from: Path | None = None
    """A run folder whose pretrained base (and base rollouts) may be copied."""

    def bars(self):
        """A progress-bar context (a silent one when none was given)."""
        if self.progress is not None:
            return self.progress()
        return _Silent()


class _Silent:
    """A progress context that shows nothing (worker processes, tests)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *a, **k):
        return 0

    def update(self, *a, **k):
        pass


def options_json(cfg) -> dict:
    """The options as the JSON ``lab_config.json`` holds (for equality checks)."""
    from rlvr_boundary.io.results import to_jsonable

    return json.loads(json.dumps(to_jsonable(dataclasses.asdict(cfg))))


def open_folder(cfg: LabConfig, out: Path, *, warn=None, name: str = "lab_config.json") -> dict:
    """Create or reopen a run folder; return the versions it was started with.

    Writes ``lab_config.json`` (the options) and ``versions.json`` (the installed
    library versions) on creation; on reopening refuses other options
    (``InputError``) and warns (``warn``) when the installed versions differ from the
    folder's, or from the versions the documented numbers come from
    (:data:`rlvr_boundary.lab.versions.DOCUMENTED`).
    """
    out.mkdir(parents=True, exist_ok=True)
    options = options_json(cfg)
    cfg_path, ver_path = out / name, out / "versions.json"
    now = V.installed()
    if cfg_path.exists():
        if json.loads(cfg_path.read_text(encoding="utf-8")) != options:
            raise InputError("this folder holds a lab run with different options; "
                             "use a new --out to start another", path=cfg_path)
    else:
        _write_json(cfg_path, options)
    if not ver_path.exists():
        _write_json(ver_path, now)
    started = json.loads(ver_path.read_text(encoding="utf-8"))
    if warn is not None:
        moved = V.differences(started, now)
        if moved:
            warn("this run folder was started with other library versions ("
                 + ", ".join(moved) + "); its stages will not reproduce the finished ones "
                 "exactly")
        moved = V.differences(V.DOCUMENTED, now)
        if moved:
            warn("the installed libraries differ from the ones the documented lab numbers "
                 "were measured with (" + ", ".join(moved) + "); expect other checkpoints "
                 "and numbers within the tolerances of docs/lab.md, not the same ones")
    return started


def _write_json(path: Path, doc) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    tmp.replace(path)


# ----------------------------------------------------------------------------- base

def stage_base(ctx: Context, *, folder: Path | None = None, extra_texts=()) -> Path:
    """Tokenizer and pretrained base in ``folder`` (default ``out/base``).

    ``extra_texts`` join the tokenizer's training texts only (the distillation
    experiment's ``mad`` traces). With ``ctx.base_from`` the base of that run folder is
    copied instead (:func:`copy_base`).
    """
    from rlvr_boundary.lab.model import build_model, is_complete, save_checkpoint
    from rlvr_boundary.lab.pretrain import pretrain
    from rlvr_boundary.lab.tokenizer import train_tokenizer

    cfg = ctx.cfg
    folder = ctx.out / "base" if folder is None else folder
    if is_complete(folder):
        ctx.say("base model: done (resumed)")
        return folder
    if ctx.base_from is not None and not extra_texts and copy_base(cfg, ctx.base_from, folder,
                                                                   ctx.say):
        return folder
    tok = train_tokenizer(splits.tokenizer_corpus(cfg) + list(extra_texts))
    model = build_model(cfg.model, tok, seed=cfg.seed)
    prompts, completions = splits.pretrain_corpus(cfg)
    with ctx.bars() as bar:
        task = bar.add_task("pretraining the base model", total=cfg.pretrain.steps)
        losses = pretrain(model, tok, cfg.pretrain, prompts, completions,
                          max_len=cfg.model.max_len,
                          progress=lambda s, loss: bar.update(task, completed=s))
    save_checkpoint(model, tok, folder, extra={"stage": "pretrain",
                                               "final_loss": float(np.mean(losses[-20:])),
                                               "versions": V.installed()})
    ctx.say(f"base model: pretrained {cfg.pretrain.steps} steps, "
            f"final loss {np.mean(losses[-20:]):.3f}")
    return folder


def copy_base(cfg: LabConfig, src: str | Path, dest: Path, say=None) -> bool:
    """Copy the finished base of the run folder ``src`` into ``dest``.

    Refuses (``InputError``) a folder without a finished base, or whose options in
    ``BASE_OPTIONS`` differ from ``cfg``'s: then the base would not be the one this
    run would pretrain. Pretraining is deterministic on one machine with the same
    libraries, so the copy equals a fresh base.
    """
    from rlvr_boundary.lab.model import is_complete

    src = Path(src)
    cfg_path = src / "lab_config.json"
    if not cfg_path.exists() or not is_complete(src / "base"):
        raise InputError("--base-from needs a lab run folder with a finished base model",
                         path=src)
    theirs = json.loads(cfg_path.read_text(encoding="utf-8"))
    ours = options_json(cfg)
    differ = [k for k in BASE_OPTIONS if theirs.get(k) != ours.get(k)]
    if differ:
        raise InputError(f"its base was pretrained with other options ({', '.join(differ)} "
                         "differ); pretrain this run's own base instead", path=cfg_path)
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src / "base", tmp)
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    if say is not None:
        say(f"base model: copied from {src / 'base'}")
    return True


def copy_base_rollouts(cfg: LabConfig, src: str | Path, rollouts: Path, base: Path,
                       say=None) -> bool:
    """Copy the base model's rollout shard of ``src`` when it is exactly what this run would
    sample into ``rollouts``.

    Every audit sample is drawn from its own seed (seed, prompt, sample index), so
    the base's shard depends only on the base weights, the problems, the sampling
    options and the library versions. It is copied only when all of these are
    equal (the weights by hash); otherwise nothing is copied and the base is
    sampled as usual. Returns whether it copied.
    """
    from rlvr_boundary.io.rollouts import sha256_of
    from rlvr_boundary.io.schema import find_manifest

    src = Path(src)
    shard, man_path = src / "rollouts" / "part-base.parquet", find_manifest(src / "rollouts")
    dest = rollouts / "part-base.parquet"
    if dest.exists() or not shard.exists() or man_path is None:
        return False
    theirs = json.loads((src / "lab_config.json").read_text(encoding="utf-8"))
    ours = options_json(cfg)
    man = json.loads(man_path.read_text(encoding="utf-8"))
    same = (all(theirs.get(k) == ours.get(k) for k in SAMPLE_OPTIONS)
            and theirs["grpo"]["max_new_tokens"] == cfg.grpo.max_new_tokens
            and not V.differences(man.get("versions") or {}, V.installed())
            and man.get("versions") is not None
            and man.get("models", {}).get("base", {}).get("model_hash")
            == sha256_of(base / "model.safetensors"))
    if not same:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copy2(shard, tmp)
    tmp.rename(dest)
    if say is not None:
        say(f"base rollouts: copied from {shard} (same weights, problems and seeds)")
    return True


# ----------------------------------------------------------------------------- RL

def checkpoint_steps(cfg: LabConfig) -> list[int]:
    """The RL steps with a checkpoint: every ``save_every`` and the last."""
    g = cfg.grpo
    return sorted({*range(g.save_every, g.steps + 1, g.save_every), g.steps})


def stage_rl(ctx: Context, *, base: Path | None = None, rl_dir: Path | None = None,
             make=None, evaluate=None, label: str = "GRPO") -> list[int]:
    """GRPO from ``base`` (default ``out/base``) into ``rl_dir`` (default ``out/rl``).

    Parameters
    ----------
    ctx
        The run.
    base, rl_dir
        The base checkpoint and the folder of ``step-N`` checkpoints.
    make
        ``make(count, rng, triples)``: the prompt distribution of the RL problems
        (default the task's; :func:`rlvr_boundary.lab.splits.rl_problems`).
    evaluate
        ``evaluate(step, folder)``, called after every checkpoint is written and, on
        a resumed run, for every checkpoint already written: the per-checkpoint
        evaluation (sampling it for the audit, or a boundary monitor). It must be
        resumable itself (skip what it has done).
    label
        Name on the progress bar.

    Returns
    -------
    list of int
        The checkpoint steps.
    """
    from rlvr_boundary.lab import grpo as G
    from rlvr_boundary.lab.model import load_checkpoint, save_checkpoint

    cfg, g = ctx.cfg, ctx.cfg.grpo
    base = ctx.out / "base" if base is None else base
    rl = ctx.out / "rl" if rl_dir is None else rl_dir
    steps = checkpoint_steps(cfg)
    rl.mkdir(parents=True, exist_ok=True)
    marker = rl / "last_step"
    last = int(marker.read_text()) if marker.exists() else 0
    if evaluate is not None:  # checkpoints written before a restart
        for s in steps:
            if s <= last:
                evaluate(s, rl / f"step-{s}")
    if last == g.steps:
        ctx.say(f"{label}: done (resumed)")
        return steps
    model, tok = load_checkpoint(base)
    ref = load_checkpoint(base)[0] if g.kl_coef > 0 else None

    def save(m, s):
        save_checkpoint(m, tok, rl / f"step-{s}",
                        extra={"stage": "rl", "step": s, "versions": V.installed()})

    def after_save(step):
        if evaluate is not None:
            evaluate(step, rl / f"step-{step}")

    with ctx.bars() as bar:
        task = bar.add_task(label, total=g.steps)

        def tick(step, rec):
            bar.update(task, completed=step, description=f"{label} (reward {rec['reward']:.2f})")
            if step in steps:
                after_save(step)

        log = G.train(model, tok, g, lambda s: splits.rl_problems(cfg, s, make), rl,
                      ref_model=ref, progress=tick, save=save)
    tail = log[-max(1, g.steps // 10):]
    ctx.say(f"{label}: {g.steps} steps, mean reward of the last {len(tail)}: "
            f"{np.mean([r['reward'] for r in tail]):.3f}")
    return steps


# ----------------------------------------------------------------------------- sample

#: Sequences the audit decodes together (one KV cache; the lab's model is tiny).
SAMPLE_BATCH = 256


def shard_key(label: str) -> str:
    """The shard name of a model label: ``rl#run2`` -> ``rl=run2`` (shard names allow no ``#``).

    >>> shard_key("step-40#run3")
    'step-40=run3'
    """
    return label.replace("#", "=")


def stage_sample(ctx: Context, labels: dict[str, Path], *, rollouts: Path | None = None,
                 problems=None, verify=None, temperature: float = 1.0,
                 seed: int | None = None, n_samples: int | None = None) -> Path:
    """Sample every model of ``labels`` on ``problems`` into ``rollouts`` and verify.

    Parameters
    ----------
    ctx
        The run.
    labels
        ``{label: checkpoint folder}``; one shard ``part-<label>.parquet`` each (a
        label with a finished shard is skipped).
    rollouts
        The shard folder (default ``out/rollouts``).
    problems
        The audited problems (default :func:`rlvr_boundary.lab.splits.audit_problems`).
    verify
        ``verify(problem, text)`` -> verdict columns (default the task's verifier).
    temperature
        Sampling temperature (1: the model's own distribution; lower: the sharpened
        base control). Token summaries always describe the raw distribution.
    seed
        Sampling seed (default ``cfg.seed``); each sample has its own seed from
        (seed, prompt_id, sample index), so a resumed audit draws the same.
    n_samples
        Samples per problem (default ``cfg.n_samples``).
    """
    import pyarrow as pa

    from rlvr_boundary.backends import SamplingParams, get_backend
    from rlvr_boundary.io.rollouts import sha256_of, validate_batch
    from rlvr_boundary.io.store import ShardedWriter

    cfg = ctx.cfg
    rollouts = ctx.out / "rollouts" if rollouts is None else rollouts
    problems = splits.audit_problems(cfg) if problems is None else problems
    verify = T.verify if verify is None else verify
    n = cfg.n_samples if n_samples is None else n_samples
    by_id = {p.prompt_id: p for p in problems}
    prompts = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]
    # The model's own distribution: no truncation (pass@k at large k is only meaningful
    # for it); token summaries from the raw logits.
    params = SamplingParams(temperature=temperature, top_p=1.0, top_k=0,
                            max_new_tokens=cfg.grpo.max_new_tokens,
                            seed=cfg.seed if seed is None else seed,
                            logprobs_mode="raw", position_bins=10)

    def rel(p: Path) -> str:
        p = Path(p)
        return p.relative_to(ctx.out).as_posix() if p.is_relative_to(ctx.out) else p.as_posix()

    manifest = {
        "engine": "transformers", "engine_version": V.installed()["transformers"],
        "sampling": {**params.to_dict(), "n": n},
        "logprobs_mode": params.logprobs_mode, "position_bins": params.position_bins,
        "models": {lab: {"model_path": rel(p), "model_hash": sha256_of(p / "model.safetensors")}
                   for lab, p in labels.items()},
        "verifier": {"name": "rlvr-boundary lab task", "version": "2"},
        "source": "rlvr-boundary lab (synthetic task, models trained from scratch)",
        "task": cfg.task,
        "dataset": [p.prompt_id for p in problems],
        "versions": V.installed(),
    }
    writer = ShardedWriter(rollouts, manifest, must_match=("sampling", "models", "dataset"))
    todo = [lab for lab in labels if shard_key(lab) not in writer.done()]
    with ctx.bars() as bar:
        for lab in todo:
            backend = get_backend("transformers", model=labels[lab], device="cpu",
                                  dtype="float32", batch_size=SAMPLE_BATCH,
                                  num_threads=cfg.threads)
            try:
                enc = backend.encode_prompt(prompts[0])
                if not enc or enc[0] != backend.tok.bos_token_id:
                    raise InputError("the checkpoint's tokenizer does not start prompts with "
                                     "the BOS token (a run folder from an older version); "
                                     "start a new run with a new --out", path=labels[lab])
                task = bar.add_task(f"sampling {lab}", total=len(problems) * n)
                rows = []
                for r in backend.generate(prompts, n, params):
                    # the problem's text rides along, so the report shows it beside the id
                    r.update(model=lab, prompt=by_id[r["prompt_id"]].prompt,
                             **verify(by_id[r["prompt_id"]], r["text"]))
                    rows.append(r)
                    bar.update(task, completed=len(rows))
            finally:
                backend.close()
            table = pa.Table.from_pylist(rows)
            writer.write(shard_key(lab), validate_batch(table, rollouts, 1))
    writer.finish({"models": list(labels)})
    if todo:
        ctx.say(f"sampled {len(todo)} model(s) x {len(problems)} problems x {n}"
                + (f" at temperature {temperature:g}" if temperature != 1.0 else ""))
    return rollouts


# ----------------------------------------------------------------------------- audit

def stage_audit(ctx: Context, inputs: list[Path] | None = None, *, html: Path | None = None,
                base: str = "base", note: str | None = None) -> dict:
    """The audit report of the rollout folders ``inputs`` (default ``[out/rollouts]``), as
    ``rlvr-boundary report`` makes it; returns its payload. Labels ``NAME#runJ`` are
    further runs of ``NAME`` (the band then carries run-to-run variance)."""
    from rlvr_boundary.io.results import payload_of
    from rlvr_boundary.pipelines import audit
    from rlvr_boundary.pipelines.compare import CompareOptions

    cfg = ctx.cfg
    inputs = [ctx.out / "rollouts"] if inputs is None else inputs
    html = ctx.out / "report.html" if html is None else html
    opts = audit.ReportOptions(compare=CompareOptions(bootstrap=cfg.bootstrap, seed=cfg.seed),
                               base=base)
    note = note or ("Lab run: a tiny model trained from scratch on a synthetic task with "
                    "three strategies (see docs/lab.md).")
    doc, _ = audit.run(list(inputs), opts, html, notes=[note])
    return payload_of(doc)


# ----------------------------------------------------------------------------- summary

def read_strategies(rollouts: list[Path], problems) -> tuple[dict, dict]:
    """Per model: shares of every strategy label, and ``(X, S)`` named-strategy counts."""
    import pyarrow.parquet as pq

    from rlvr_boundary.lab.strategy import mixture_counts

    index = {p.prompt_id: i for i, p in enumerate(problems)}
    shares, counts = {}, {}
    for folder in rollouts:
        for f in sorted(Path(folder).glob("part-*.parquet")):
            t = pq.read_table(f, columns=["model", "prompt_id", "strategy"]).to_pydict()
            model = t["model"][0]
            vals = [s if s is not None else "none" for s in t["strategy"]]
            shares[model] = {s: vals.count(s) / len(vals) for s in sorted(set(vals))}
            counts[model] = mixture_counts(t["strategy"], [index[p] for p in t["prompt_id"]],
                                           len(problems))
    return shares, counts


def strategy_section(cfg: LabConfig, rollouts: list[Path], base: str = "base") -> dict:
    """Strategy shares of every model, the strategy view against the tilt and, in the cued
    family, whether each model chooses its strategy by the cue."""
    from rlvr_boundary.lab.strategy import cue_view, strategy_view

    problems = splits.audit_problems(cfg)
    F = T.fitness_matrix(problems)  # (S, X)
    shares, counts = read_strategies(rollouts, problems)
    view = {m: strategy_view(F, counts[base], c) for m, c in counts.items() if m != base}
    out = {"shares": shares, "fbar": F.mean(axis=1), "tilt_view": view}
    if cfg.cued:
        names = list(T.STRATEGIES)
        cue = [names.index(p.cued_strategy) for p in problems]
        out["cue_view"] = {m: cue_view(cue, c) for m, c in counts.items()}
    return out


def audit_summary(cfg: LabConfig, audit: dict, last: str, *, base: str = "base") -> dict:
    """The headline numbers of checkpoint ``last`` against ``base`` from an audit payload."""
    from rlvr_boundary.report import words as W

    cmp_ = audit["comparisons"][last]
    ks = list(cmp_["ks"])
    K = ks[-1]
    pk = cmp_["pass_at_k"]
    return {
        "final_checkpoint": last,
        "n_problems": audit["n_prompts"],
        "n_samples": cfg.n_samples,
        "pass_at_1": {"base": pk[base][0], "rl": pk[last][0]},
        "pass_at_K": {"K": K, "base": pk[base][-1], "rl": pk[last][-1]},
        "gain_at_1_points": 100 * (pk[last][0] - pk[base][0]),
        "loss_at_K_points": 100 * (pk[base][-1] - pk[last][-1]),
        "k_star": cmp_["k_star"],
        "loss_supported_at_K": K in (cmp_.get("loss_budgets") or []),
        "loss_budgets": cmp_.get("loss_budgets"),
        "gain_budgets": cmp_.get("gain_budgets"),
        "price": {"points": 100 * cmp_["price"] if cmp_.get("price") is not None else None,
                  "k": cmp_.get("price_k")},
        "verdict": W.headline(cmp_),
        "verdict_per_k": cmp_.get("verdict_per_k"),
        "pass_at_1_by_checkpoint": {m: audit["pass_at_k"][m][0] for m in audit["models"]},
    }


#: What the quick preset says on screen: its size checks the mechanics only.
QUICK_NOTE = ("quick preset: every stage runs at toy size to check the mechanics; its "
              "numbers are not the experiment (run --preset full for that)")


def run_summary(ctx: Context, audit: dict, labels: dict) -> dict:
    """The ``lab_result.json`` payload of a train-and-audit run (narrowing, entropy)."""
    cfg = ctx.cfg
    last = list(labels)[-1]
    doc = {"experiment": cfg.experiment, "task": cfg.task,
           **audit_summary(cfg, audit, last),
           "strategy": strategy_section(cfg, [ctx.out / "rollouts"]),
           # The run's environment (Python, the libraries the numbers depend on, the
           # machine); the envelope's "versions" holds the libraries the result was
           # computed with.
           "lab_versions": V.installed(), "timings": ctx.clock.data}
    doc["headline"] = headline(doc, cfg.preset)
    return doc


def headline(doc: dict, preset: str) -> list[str]:
    """The lines ``lab run`` prints for a narrowing run."""
    last, K = doc["final_checkpoint"], doc["pass_at_K"]["K"]
    lines = [QUICK_NOTE] if preset == "quick" else []
    lines += [f"pass@1: base {doc['pass_at_1']['base']:.3f}, {last} {doc['pass_at_1']['rl']:.3f}; "
              f"pass@{K}: base {doc['pass_at_K']['base']:.3f}, {last} "
              f"{doc['pass_at_K']['rl']:.3f}", doc["verdict"]]
    cue = (doc.get("strategy") or {}).get("cue_view")
    if cue:
        lines.append("cue followed (share of samples using the cued strategy): " + ", ".join(
            f"{m} {v['following']:.2f}" for m, v in cue.items() if v["following"] is not None))
    t = doc["timings"]
    lines.append("time (wall / CPU s): " + ", ".join(
        f"{k} {v['wall_s']:.0f}/{v['cpu_s']:.0f}" for k, v in t.items()))
    return lines


def train_and_audit(ctx: Context) -> tuple[dict, dict[str, Path]]:
    """The narrowing pipeline: base, RL, sample (all checkpoints or the last), audit.

    Returns the audit payload and ``{label: folder}`` of the sampled models.
    """
    cfg, out = ctx.cfg, ctx.out
    with ctx.clock.stage("pretrain"):
        stage_base(ctx)
    with ctx.clock.stage("rl"):
        steps = stage_rl(ctx)
    if cfg.sample == "last":
        steps = steps[-1:]
    labels = {"base": out / "base", **{f"step-{s}": out / "rl" / f"step-{s}" for s in steps}}
    with ctx.clock.stage("sample"):
        if ctx.base_from is not None:
            copy_base_rollouts(cfg, ctx.base_from, out / "rollouts", out / "base", ctx.say)
        stage_sample(ctx, labels)
    with ctx.clock.stage("report", accumulate=False):
        audit = stage_audit(ctx)
    return audit, labels


# ----------------------------------------------------------------------------- runs

def pool_map(workers: int, fn, jobs: list[tuple]) -> list:
    """``[fn(*job) for job in jobs]``, in worker processes when ``workers > 1``."""
    if workers <= 1 or len(jobs) <= 1:
        return [fn(*job) for job in jobs]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)),
                             mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        return [f.result() for f in futures]


def spread(xs) -> dict:
    """``{"mean", "min", "max", "runs"}`` of a list of numbers."""
    xs = [float(x) for x in xs]
    return {"mean": float(np.mean(xs)), "min": min(xs), "max": max(xs), "runs": xs}


def fmt_spread(sp: dict, d: int = 3) -> str:
    """``0.590 (0.587-0.595)``: mean and range of a :func:`spread` (the mean alone for one run)."""
    if len(sp["runs"]) == 1:
        return f"{sp['mean']:.{d}f}"
    return f"{sp['mean']:.{d}f} ({sp['min']:.{d}f}-{sp['max']:.{d}f})"


def read_log(path: Path, *, required: bool = False) -> list[dict] | None:
    """Records of an RL training log (``train_log.jsonl``); None when there is none and it
    is not ``required``. Every record needs numeric ``step``, ``reward`` and ``entropy``
    (``InputError`` naming the line otherwise)."""
    from rlvr_boundary.errors import InputError

    path = Path(path)
    if not path.is_file():
        if required:
            raise InputError("file not found", path=path)
        return None
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason})", path=path) from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", path=path, line=i) from None
        for key in ("step", "reward", "entropy"):
            v = rec.get(key) if isinstance(rec, dict) else None
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError(f"expected a number in '{key}' (a record of an RL training "
                                 "log)", path=path, line=i, field=key)
        out.append(rec)
    return out


def require_lab() -> None:
    """The lab's extras: torch and transformers (the ``hf`` extra)."""
    require("torch", "hf", "the lab")
    require("transformers", "hf", "the lab")
