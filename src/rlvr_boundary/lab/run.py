"""The lab pipeline behind ``rlvr-boundary lab run``: pretrain, RL, sample, verify, audit.

Stages, each resumable (a finished stage is skipped on restart, a killed one
redone from its last checkpoint):

1. ``base/``: train the tokenizer, pretrain the tiny Llama on strategy traces.
2. ``rl/step-N/``: GRPO from the base; a checkpoint every ``save_every`` steps
   (weights, tokenizer, optimizer state and the training log).
3. ``rollouts/``: sample every checkpoint (and the base) on held-out problems,
   with token statistics, verify, and write one Parquet shard per checkpoint
   (canonical rollout columns plus ``strategy``).
4. ``report.html``: the audit report of the rollouts (``rlvr-boundary report``).
5. ``entropy.*``, ``learning.json`` (``--experiment entropy`` only): experiment 4's
   table and figure and where learning landed (``lab/entropy.py``).
6. ``lab_result.json``: the experiment's numbers, options, seeds and the wall and
   CPU time of every stage.

Each stage writes only through temporary names renamed at the end, so a
directory never looks finished when it is not.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import InputError, require
from rlvr_boundary.lab import task as T
from rlvr_boundary.lab.grpo import GRPOConfig
from rlvr_boundary.lab.model import ModelConfig
from rlvr_boundary.lab.pretrain import PretrainConfig

#: Options of each preset (the fields of :class:`LabConfig` they set).
PRESETS: dict[str, dict] = {
    # Mechanics (CI): every stage runs at toy size. The base is trained just long enough
    # to copy the operands (below ~400 steps it never answers correctly, and GRPO with
    # all-zero rewards would not move the weights).
    "quick": {
        "model": {"hidden": 64, "layers": 2, "heads": 4, "mlp": 192},
        "pretrain": {"traces": 5000, "steps": 400, "batch_size": 64, "lr": 1e-2},
        "grpo": {"steps": 6, "prompts_per_step": 8, "group_size": 4, "save_every": 3},
        "eval_prompts": 24, "n_samples": 8, "bootstrap": 200,
    },
    # Experiment 1: RL narrows the boundary.
    "full": {
        "model": {"hidden": 64, "layers": 2, "heads": 4, "mlp": 192},
        "pretrain": {"traces": 20000, "steps": 600, "batch_size": 64, "lr": 1e-2},
        "grpo": {"steps": 40, "prompts_per_step": 16, "group_size": 8, "save_every": 10,
                 "lr": 1e-3},
        "eval_prompts": 120, "n_samples": 64, "bootstrap": 2000,
    },
}

EXPERIMENTS = ("narrowing", "entropy", "distillation", "token-replacement")


@dataclass
class LabConfig:
    """Options of one lab run (written to ``lab_config.json`` and every result)."""

    preset: str = "quick"
    """quick (mechanics, CI) or full (experiment 1)."""
    experiment: str = "narrowing"
    """Which experiment: narrowing (RL raises pass@1 and narrows pass@k at large k),
    entropy (narrowing, then entropy and support at every checkpoint and where learning
    landed between the base and the last checkpoint; ``lab/entropy.py``), distillation
    (a teacher's strategy distilled into the base; ``lab/distill.py``) or
    token-replacement (replace a token, resample the rest; ``lab/replace.py``)."""
    seed: int = 0
    """Seed of the corpus, the initialisation, the problem draws and the sampling."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Size of the tiny Llama."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Pretraining options."""
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    """RL options (estimator and shapings inside)."""
    n_eval_triples: int = 200
    """Digit triples held out from RL; the audit's problems use only these."""
    eval_prompts: int = 150
    """Distinct held-out problems the audit samples."""
    n_samples: int = 64
    """Samples per problem and checkpoint (the largest k of the audit)."""
    bootstrap: int = 2000
    """Gaussian multipliers of the simultaneous band."""
    threads: int = 1
    """Torch CPU threads (1: on a shared machine, more threads mostly spin and wait)."""
    sample: str = "all"
    """Which models the audit samples: all (the base and every checkpoint) or last (the
    base and the last checkpoint only: enough for a table of runs, two models instead of
    five in the full preset)."""

    def __post_init__(self) -> None:
        for name, cls in (("model", ModelConfig), ("pretrain", PretrainConfig),
                          ("grpo", GRPOConfig)):
            if isinstance(getattr(self, name), dict):
                setattr(self, name, cls(**getattr(self, name)))
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if self.experiment not in EXPERIMENTS:
            raise ValueError(f"unknown experiment {self.experiment!r}; known: {list(EXPERIMENTS)}")
        for name in ("eval_prompts", "n_samples", "bootstrap", "threads", "n_eval_triples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.n_samples < 2 or self.bootstrap < 2:
            raise ValueError("n_samples and bootstrap must be >= 2")
        if self.sample not in ("all", "last"):
            raise ValueError(f"sample must be 'all' or 'last', got {self.sample!r}")

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "LabConfig":
        """The preset's options, with ``overrides`` (top-level fields) on top."""
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
        p = PRESETS[preset]
        seed = overrides.get("seed", 0)
        grpo = dict(p["grpo"])
        if "shaping" in overrides:
            grpo["shaping"] = overrides.pop("shaping")
        if "kl_coef" in overrides:
            grpo["kl_coef"] = overrides.pop("kl_coef")
        group_size = overrides.pop("group_size", None)
        if group_size is not None:
            grpo["group_size"] = group_size
        # The RL seed alone (problem draws and rollouts of GRPO): the base, the audit's
        # problems and its sampling seeds stay those of ``seed``.
        rl_seed = overrides.pop("rl_seed", None)
        grpo["seed"] = seed if rl_seed is None else rl_seed
        kw = {k: v for k, v in p.items() if k not in ("model", "pretrain", "grpo")}
        kw.update(overrides)
        return cls(preset=preset, model=ModelConfig(**p["model"]),
                   pretrain=PretrainConfig(**p["pretrain"], seed=seed),
                   grpo=GRPOConfig(**grpo), **kw)


def eval_problems(cfg: LabConfig) -> list[T.Problem]:
    """The audit's distinct held-out problems (fixed by the seed)."""
    _, ev = T.eval_split(cfg.n_eval_triples, seed=cfg.seed)
    rng = np.random.default_rng([cfg.seed, 7])
    seen: dict[str, T.Problem] = {}
    while len(seen) < cfg.eval_prompts:
        for p in T.make_problems(cfg.eval_prompts, rng, triples=ev):
            if len(seen) < cfg.eval_prompts:
                seen.setdefault(p.prompt_id, p)
    return list(seen.values())


class _Clock:
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
                    clock.path.write_text(json.dumps(clock.data, indent=1))
        return _Ctx()


def run(cfg: LabConfig, out: str | Path, *, console=None, base_from: str | Path | None = None
        ) -> dict:
    """Run (or resume) the lab in ``out``; return the ``lab_result.json`` document.

    ``base_from`` is another run folder whose pretrained base is copied instead of
    pretraining again (pretraining is deterministic, so the copy equals a fresh base);
    its pretraining options must equal ``cfg``'s (:func:`copy_base`).
    """
    torch = require("torch", "hf", "the lab")
    from rlvr_boundary.console import progress
    from rlvr_boundary.io.results import to_jsonable, write_result

    say = console.print if console is not None else (lambda *a, **k: None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    options = to_jsonable(dataclasses.asdict(cfg))
    cfg_path = out / "lab_config.json"
    if cfg_path.exists():
        if json.loads(cfg_path.read_text(encoding="utf-8")) != json.loads(json.dumps(options)):
            raise InputError("this folder holds a lab run with different options; "
                             "use a new --out to start another", path=cfg_path)
    else:
        cfg_path.write_text(json.dumps(options, indent=1), encoding="utf-8")
    torch.set_num_threads(cfg.threads)
    clock = _Clock(out / "timings.json")

    if cfg.experiment == "distillation":
        from rlvr_boundary.lab.distill import run_distillation, tokenizer_texts

        with clock.stage("pretrain"):
            _stage_base(cfg, out, say, progress, extra_texts=tokenizer_texts(cfg))
        return run_distillation(cfg, out, clock, say, progress)
    with clock.stage("pretrain"):
        if base_from is not None:
            copy_base(cfg, base_from, out, say)
        _stage_base(cfg, out, say, progress)
    if cfg.experiment == "token-replacement":
        from rlvr_boundary.lab.replace import run_replacement

        return run_replacement(cfg, out, clock, say, progress)
    with clock.stage("rl"):
        steps = _stage_rl(cfg, out, say, progress)
    if cfg.sample == "last":
        steps = steps[-1:]
    labels = {"base": out / "base", **{f"step-{s}": out / "rl" / f"step-{s}" for s in steps}}
    with clock.stage("sample"):
        if base_from is not None:
            copy_base_rollouts(cfg, base_from, out, say)
        _stage_sample(cfg, out, labels, say, progress)
    with clock.stage("report", accumulate=False):
        audit = _stage_report(cfg, out, say)
    extra = {}
    if cfg.experiment == "entropy":
        from rlvr_boundary.lab import entropy as E

        with clock.stage("entropy"):
            prompts = {p.prompt_id: p.prompt for p in eval_problems(cfg)}
            extra["entropy"] = E.summary(E.run_stage(out, list(labels)[-1], prompts, say=say,
                                                     threads=cfg.threads))
    doc = write_result(out / "lab_result.json", "lab-run", cfg,
                       {**_summary(cfg, out, audit, labels, clock.data), **extra})
    return doc


def export_example(out: str | Path, dest: str | Path) -> Path:
    """Copy a finished run's rollouts, manifest and numbers into an example folder ``dest``.

    The folder is what ``rlvr-boundary report --example lab`` reads: the rollout
    shards, ``manifest.json``, ``expected.json`` (the run's ``lab_result.json``
    numbers, which the tests check against the shards) and a README.
    """
    import shutil

    from rlvr_boundary.io.results import read_result

    out, dest = Path(out), Path(dest)
    doc = read_result(out / "lab_result.json", kind="lab-run")
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for f in sorted((out / "rollouts").glob("part-*.parquet")):
        shutil.copy2(f, tmp / f.name)
    man = json.loads((out / "rollouts" / "manifest.json").read_text(encoding="utf-8"))
    for m in man.get("models", {}).values():  # paths relative to the run folder
        p = Path(m["model_path"])
        m["model_path"] = p.relative_to(out).as_posix() if p.is_relative_to(out) else p.as_posix()
    (tmp / "manifest.json").write_text(json.dumps(man, indent=1), encoding="utf-8")
    keep = ("options", "pass_at_1", "pass_at_K", "k_star", "loss_supported_at_K",
            "pass_at_1_by_checkpoint", "final_checkpoint", "n_problems", "n_samples", "strategy",
            "tool_version", "schema_version")
    (tmp / "expected.json").write_text(json.dumps({k: doc[k] for k in keep if k in doc}, indent=1),
                                       encoding="utf-8")
    o = doc["options"]
    (tmp / "README.md").write_text(
        "# Lab example: a tiny model before and after GRPO\n\n"
        f"Rollouts of the RLVR lab's `{o['preset']}` preset (seed {o['seed']}): the base model "
        f"and {len(doc['pass_at_1_by_checkpoint']) - 1} GRPO checkpoints, "
        f"{doc['n_problems']} held-out problems x {doc['n_samples']} samples each, with texts, "
        "answers, verdicts, strategies and token summaries.\n\n"
        "Source: synthetic task and models trained from scratch by rlvr-boundary's lab "
        "(Apache-2.0); no external data.\n\n"
        "Regenerate (seeded; the numbers in expected.json are re-derived by the tests):\n\n"
        "    rlvr-boundary lab run --preset full --out lab-full "
        "--export-example src/rlvr_boundary/examples/data/lab\n", encoding="utf-8")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest


#: Options that decide the pretrained base (tokenizer corpus, initialisation, pretraining).
BASE_OPTIONS = ("seed", "model", "pretrain")


def copy_base(cfg: LabConfig, src: str | Path, out: Path, say=None) -> bool:
    """Copy the finished base of the run folder ``src`` into ``out/base``.

    Refuses (``InputError``) a folder without a finished base, or whose options in
    ``BASE_OPTIONS`` differ from ``cfg``'s: then the base would not be the one this
    run's options would pretrain. Returns False when ``out`` already has a base.
    """
    import shutil

    from rlvr_boundary.lab.model import is_complete

    src = Path(src)
    if is_complete(out / "base"):
        return False
    cfg_path = src / "lab_config.json"
    if not cfg_path.exists() or not is_complete(src / "base"):
        raise InputError("--base-from needs a lab run folder with a finished base model",
                         path=src)
    theirs = json.loads(cfg_path.read_text(encoding="utf-8"))
    from rlvr_boundary.io.results import to_jsonable

    ours = json.loads(json.dumps(to_jsonable(dataclasses.asdict(cfg))))
    differ = [k for k in BASE_OPTIONS if theirs.get(k) != ours.get(k)]
    if differ:
        raise InputError(f"its base was pretrained with other options ({', '.join(differ)} "
                         "differ); pretrain this run's own base instead", path=cfg_path)
    tmp = out / "base.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src / "base", tmp)
    if (out / "base").exists():
        shutil.rmtree(out / "base")
    tmp.rename(out / "base")
    if say is not None:
        say(f"base model: copied from {src / 'base'}")
    return True


#: Options that decide the base model's audit samples (with the base itself).
SAMPLE_OPTIONS = (*BASE_OPTIONS, "n_eval_triples", "eval_prompts", "n_samples")


def copy_base_rollouts(cfg: LabConfig, src: str | Path, out: Path, say=None) -> bool:
    """Copy the base model's rollout shard of ``src`` when it is exactly what ``out`` would sample.

    Every audit sample is drawn from its own seed (seed, prompt, sample index), so
    the base's shard depends only on the base weights, the problems, the sampling
    options and the transformers version. It is copied only when all of these are
    equal (the weights by hash); otherwise nothing is copied and the base is
    sampled as usual. Returns whether it copied.
    """
    import shutil

    import transformers

    from rlvr_boundary.io.rollouts import sha256_of

    src = Path(src)
    shard, man_path = src / "rollouts" / "part-base.parquet", src / "rollouts" / "manifest.json"
    dest = out / "rollouts" / "part-base.parquet"
    if dest.exists() or not shard.exists() or not man_path.exists():
        return False
    theirs = json.loads((src / "lab_config.json").read_text(encoding="utf-8"))
    from rlvr_boundary.io.results import to_jsonable

    ours = json.loads(json.dumps(to_jsonable(dataclasses.asdict(cfg))))
    man = json.loads(man_path.read_text(encoding="utf-8"))
    same = (all(theirs.get(k) == ours.get(k) for k in SAMPLE_OPTIONS)
            and theirs["grpo"]["max_new_tokens"] == cfg.grpo.max_new_tokens
            and man.get("engine_version") == transformers.__version__
            and man.get("models", {}).get("base", {}).get("model_hash")
            == sha256_of(out / "base" / "model.safetensors"))
    if not same:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copy2(shard, tmp)
    tmp.rename(dest)
    if say is not None:
        say(f"base rollouts: copied from {shard} (same weights, problems and seeds)")
    return True


def _stage_base(cfg: LabConfig, out: Path, say, progress, extra_texts=()) -> None:
    """Tokenizer and pretrained base; ``extra_texts`` join the tokenizer's training texts only."""
    from rlvr_boundary.lab.model import build_model, is_complete, save_checkpoint
    from rlvr_boundary.lab.pretrain import corpus, pretrain
    from rlvr_boundary.lab.tokenizer import train_tokenizer

    if is_complete(out / "base"):
        say("base model: done (resumed)")
        return
    prompts, comps = corpus(2000, np.random.default_rng([cfg.seed, 1]))
    tok = train_tokenizer([p + c for p, c in zip(prompts, comps)] + list(extra_texts))
    model = build_model(cfg.model, tok, seed=cfg.seed)
    with progress() as bar:
        task = bar.add_task("pretraining the base model", total=cfg.pretrain.steps)
        losses = pretrain(model, tok, cfg.pretrain, max_len=cfg.model.max_len,
                          progress=lambda s, loss: bar.update(task, completed=s))
    save_checkpoint(model, tok, out / "base", extra={"stage": "pretrain",
                                                     "final_loss": float(np.mean(losses[-20:]))})
    say(f"base model: pretrained {cfg.pretrain.steps} steps, final loss {np.mean(losses[-20:]):.3f}")


def _stage_rl(cfg: LabConfig, out: Path, say, progress, make_problems=None) -> list[int]:
    from rlvr_boundary.lab import grpo as G
    from rlvr_boundary.lab.model import load_checkpoint, save_checkpoint

    g = cfg.grpo
    steps = sorted({*range(g.save_every, g.steps + 1, g.save_every), g.steps})
    rl = out / "rl"
    rl.mkdir(exist_ok=True)
    marker = rl / "last_step"
    if marker.exists() and int(marker.read_text()) == g.steps:
        say("RL: done (resumed)")
        return steps
    model, tok = load_checkpoint(out / "base")
    ref = load_checkpoint(out / "base")[0] if g.kl_coef > 0 else None
    tr, _ = T.eval_split(cfg.n_eval_triples, seed=cfg.seed)
    with progress() as bar:
        task = bar.add_task("GRPO", total=g.steps)

        def tick(step, rec):
            bar.update(task, completed=step,
                       description=f"GRPO (reward {rec['reward']:.2f})")

        log = G.train(model, tok, g, tr, rl, ref_model=ref, progress=tick,
                      make_problems=make_problems,
                      save=lambda m, s: save_checkpoint(m, tok, rl / f"step-{s}",
                                                        extra={"stage": "rl", "step": s}))
    tail = log[-max(1, g.steps // 10):]
    say(f"RL: {g.steps} steps, mean reward of the last {len(tail)}: "
        f"{np.mean([r['reward'] for r in tail]):.3f}")
    return steps


def _stage_sample(cfg: LabConfig, out: Path, labels: dict, say, progress, *, problems=None,
                  verify=None) -> None:
    """Sample every model of ``labels`` on ``problems`` (default: :func:`eval_problems`) and
    grade with ``verify(problem, text)`` (default: the task's verifier)."""
    import pyarrow as pa
    import transformers

    from rlvr_boundary.backends import SamplingParams, get_backend
    from rlvr_boundary.io.rollouts import sha256_of, validate_batch
    from rlvr_boundary.io.store import ShardedWriter

    problems = eval_problems(cfg) if problems is None else problems
    verify = T.verify if verify is None else verify
    by_id = {p.prompt_id: p for p in problems}
    prompts = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]
    # The model's own distribution: temperature 1, no truncation (pass@k at large k is
    # only meaningful for it); token summaries from the raw logits. Each sample has its
    # own seed from (seed, prompt_id, sample index), so a resumed audit draws the same.
    params = SamplingParams(temperature=1.0, top_p=1.0, top_k=0,
                            max_new_tokens=cfg.grpo.max_new_tokens, seed=cfg.seed,
                            logprobs_mode="raw", position_bins=10)
    manifest = {
        "engine": "transformers", "engine_version": transformers.__version__,
        "sampling": {**params.to_dict(), "n": cfg.n_samples},
        "logprobs_mode": params.logprobs_mode, "position_bins": params.position_bins,
        "models": {lab: {"model_path": p.relative_to(out).as_posix(),
                         "model_hash": sha256_of(p / "model.safetensors")}
                   for lab, p in labels.items()},
        "verifier": {"name": "rlvr-boundary lab task", "version": "1"},
        "source": "rlvr-boundary lab (synthetic task, models trained from scratch)",
        "dataset": [p.prompt_id for p in problems],
    }
    writer = ShardedWriter(out / "rollouts", manifest,
                           must_match=("sampling", "models", "dataset"))
    todo = [lab for lab in labels if lab not in writer.done()]
    with progress() as bar:
        for lab in todo:
            backend = get_backend("transformers", model=labels[lab], device="cpu",
                                  dtype="float32", batch_size=_SAMPLE_BATCH,
                                  num_threads=cfg.threads)
            try:
                enc = backend.encode_prompt(prompts[0])
                if not enc or enc[0] != backend.tok.bos_token_id:
                    raise InputError("the checkpoint's tokenizer does not start prompts with "
                                     "the BOS token (a run folder from an older version); "
                                     "start a new run with a new --out", path=labels[lab])
                task = bar.add_task(f"sampling {lab}", total=len(problems) * cfg.n_samples)
                rows = []
                for r in backend.generate(prompts, cfg.n_samples, params):
                    r.update(model=lab, **verify(by_id[r["prompt_id"]], r["text"]))
                    rows.append(r)
                    bar.update(task, completed=len(rows))
            finally:
                backend.close()
            table = pa.Table.from_pylist(rows)
            writer.write(lab, validate_batch(table, out / "rollouts", 1))
    writer.finish({"models": list(labels)})
    say(f"sampled {len(labels)} models x {len(problems)} problems x {cfg.n_samples}")


#: Sequences the audit decodes together (one KV cache; the lab's model is tiny).
_SAMPLE_BATCH = 256


def _stage_report(cfg: LabConfig, out: Path, say) -> dict:
    from rlvr_boundary.io.results import payload_of
    from rlvr_boundary.pipelines import audit
    from rlvr_boundary.pipelines.compare import CompareOptions

    opts = audit.ReportOptions(compare=CompareOptions(bootstrap=cfg.bootstrap, seed=cfg.seed),
                               base="base")
    doc, _ = audit.run([out / "rollouts"], opts, out / "report.html",
                       notes=["Lab run: a tiny model trained from scratch on a synthetic "
                              "task with three strategies (see docs/lab.md)."])
    return payload_of(doc)


def _strategy_section(cfg: LabConfig, out: Path) -> dict:
    """Strategy shares of every checkpoint and the strategy view against the tilt."""
    import pyarrow.parquet as pq

    from rlvr_boundary.lab.strategy import mixture_counts, strategy_view

    problems = eval_problems(cfg)
    index = {p.prompt_id: i for i, p in enumerate(problems)}
    F = T.fitness_matrix(problems)  # (S, X)
    shares, counts = {}, {}
    for f in sorted((out / "rollouts").glob("part-*.parquet")):
        t = pq.read_table(f, columns=["model", "prompt_id", "strategy"]).to_pydict()
        model = t["model"][0]
        vals = [s if s is not None else "none" for s in t["strategy"]]
        shares[model] = {s: vals.count(s) / len(vals) for s in sorted(set(vals))}
        counts[model] = mixture_counts(t["strategy"], [index[p] for p in t["prompt_id"]],
                                       len(problems))
    view = {m: strategy_view(F, counts["base"], c) for m, c in counts.items() if m != "base"}
    return {"shares": shares, "fbar": F.mean(axis=1), "tilt_view": view}


def _summary(cfg: LabConfig, out: Path, audit: dict, labels: dict, timings: dict) -> dict:
    from rlvr_boundary.report import words as W

    last = list(labels)[-1]
    cmp_ = audit["comparisons"][last]
    ks = list(cmp_["ks"])
    K = ks[-1]
    pk = cmp_["pass_at_k"]
    return {
        "experiment": cfg.experiment,
        "final_checkpoint": last,
        "n_problems": audit["n_prompts"],
        "n_samples": cfg.n_samples,
        "pass_at_1": {"base": pk["base"][0], "rl": pk[last][0]},
        "pass_at_K": {"K": K, "base": pk["base"][-1], "rl": pk[last][-1]},
        "gain_at_1_points": 100 * (pk[last][0] - pk["base"][0]),
        "loss_at_K_points": 100 * (pk["base"][-1] - pk[last][-1]),
        "k_star": cmp_["k_star"],
        "loss_supported_at_K": K in (cmp_.get("loss_budgets") or []),
        "loss_budgets": cmp_.get("loss_budgets"),
        "gain_budgets": cmp_.get("gain_budgets"),
        "price": {"points": 100 * cmp_["price"] if cmp_.get("price") is not None else None,
                  "k": cmp_.get("price_k")},
        "verdict": W.headline(cmp_),
        "verdict_per_k": cmp_.get("verdict_per_k"),
        "pass_at_1_by_checkpoint": {m: audit["pass_at_k"][m][0] for m in audit["models"]},
        "strategy": _strategy_section(cfg, out),
        "timings": timings,
    }
