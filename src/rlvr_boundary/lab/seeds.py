"""The headline over seeds: several pretraining and RL seeds, audited as runs, with controls.

One experiment's headline from one pretraining seed and one RL seed says what
that pair did, not what the recipe does: over GRPO's RL seeds alone the lab's
pass@64 moves by ten points. This experiment runs the narrowing pipeline for
every pretraining seed in ``pretrain_seeds`` and every RL seed in ``rl_seeds``
(same audited problems: the split seed is fixed) and feeds every model to the
audit as runs (``NAME#runJ`` labels; docs/statistics.md, "Several runs per
model"), so the band and its verdict carry run-to-run variance:

==================  =========================================================
label               what it is
==================  =========================================================
``base``            the base of each pretraining seed (``base#run2``, ...)
``rl``              the last GRPO checkpoint of each (pretraining, RL) seed pair
``sharpened``       each base sampled at the temperature whose pass@1 matches
                    the mean pass@1 of its own RL runs (:mod:`.controls`)
``random-template``  a uniformly random strategy's faithful trace (no model)
``cue-sft``         cued family only: each base fine-tuned on traces of the
                    strategy the cue names (is the cue learnable at all?)
==================  =========================================================

The band's estimator treats runs as independent draws. The RL runs of one
base share it (they are nested in the pretraining seed); ``lab_result.json``
reports how much of the RL runs' spread lies between bases
(``nesting``), so a reader can judge what the independence assumption costs.

Independent runs go to worker processes (``workers``); every unit resumes.
Folder layout: ``p<seed>/base``, ``p<seed>/rl-s<rl seed>/step-N``, one rollout
folder per sampled model (``p<seed>/rollouts-*``), ``rollouts-random``,
``report.html`` / ``report.json`` (the audit of them all), ``seeds.md`` (the
table) and ``lab_result.json``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr_boundary.lab import controls as C
from rlvr_boundary.lab import splits
from rlvr_boundary.lab import stages as S

#: Options of each preset.
SEEDS_PRESETS: dict[str, dict] = {
    "quick": {"pretrain_seeds": (0, 1), "rl_seeds": (0, 1), "calibration_samples": 4},
    "full": {"pretrain_seeds": (0, 1, 2), "rl_seeds": (0, 1, 2), "calibration_samples": 16},
}


@dataclass
class SeedsConfig:
    """Options of the seeds experiment (beside the run's ``LabConfig``)."""

    pretrain_seeds: tuple = (0, 1, 2)
    """Pretraining seeds: one base each."""
    rl_seeds: tuple = (0, 1, 2)
    """RL seeds run from every base."""
    calibration_samples: int = 16
    """Samples per audited problem at each temperature tried when matching the sharpened
    base's pass@1 to RL's (a draw with its own seed, not the audit's)."""
    workers: int = 1
    """Worker processes for the independent units (bases, RL runs, controls)."""

    def __post_init__(self) -> None:
        for name in ("pretrain_seeds", "rl_seeds"):
            v = tuple(getattr(self, name))
            if not v or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in v) \
                    or len(set(v)) != len(v):
                raise ValueError(f"{name} must be distinct integers >= 0, got {v!r}")
            setattr(self, name, v)
        for name in ("calibration_samples", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "SeedsConfig":
        """The preset's options with ``overrides`` on top."""
        return cls(**{**SEEDS_PRESETS[preset], **overrides})


def run_label(name: str, j: int) -> str:
    """``rl``, ``rl#run2``, ... : the label of run ``j`` (0-based) of model ``name``."""
    return name if j == 0 else f"{name}#run{j + 1}"


def sub_config(cfg, pretrain_seed: int, rl_seed: int | None = None):
    """The options of one unit: the run's, with this pretraining (and RL) seed."""
    d = S.options_json(cfg)
    d["seed"] = pretrain_seed
    d["pretrain"]["seed"] = pretrain_seed
    d["grpo"]["seed"] = pretrain_seed if rl_seed is None else rl_seed
    d["experiment"], d["sample"] = "narrowing", "last"
    from rlvr_boundary.lab.config import LabConfig

    return LabConfig(**d)


# ----------------------------------------------------------------------------- units

def _unit_ctx(cfg, folder: Path, say) -> S.Context:
    import torch
    import transformers

    torch.set_num_threads(cfg.threads)
    transformers.utils.logging.disable_progress_bar()  # a worker prints lines, not bars
    folder.mkdir(parents=True, exist_ok=True)
    return S.Context(cfg=cfg, out=folder, clock=S.Clock(folder / "unit_timings.json"), say=say)


def _timed(folder: Path, name: str, fn) -> None:
    """Run ``fn()``, adding its wall and CPU seconds to ``folder/unit_timings.json[name]``."""
    with S.Clock(folder / "unit_timings.json").stage(name):
        fn()


def unit_base(cfg_json: dict, out: str, s: int, j: int) -> str:
    """Pretraining seed ``s`` (run ``j``): its base and the base's audit samples."""
    from rlvr_boundary.lab.config import LabConfig

    cfg = sub_config(LabConfig(**cfg_json), s)
    folder = Path(out) / f"p{s}"
    ctx = _unit_ctx(cfg, folder, _prefixed(f"[p{s}]"))
    S.open_folder(cfg, folder)
    _timed(folder, "pretrain", lambda: S.stage_base(ctx))
    _timed(folder, "sample base", lambda: S.stage_sample(
        ctx, {run_label("base", j): folder / "base"}, rollouts=folder / "rollouts-base"))
    return str(folder)


def unit_rl(cfg_json: dict, out: str, s: int, r: int, j: int) -> str:
    """RL seed ``r`` from the base of pretraining seed ``s`` (run ``j`` of ``rl``)."""
    from rlvr_boundary.lab.config import LabConfig

    cfg = sub_config(LabConfig(**cfg_json), s, r)
    folder = Path(out) / f"p{s}"
    rl = folder / f"rl-s{r}"
    ctx = _unit_ctx(cfg, folder, _prefixed(f"[p{s} rl{r}]"))
    steps = S.checkpoint_steps(cfg)
    _timed(rl.parent, f"rl s{r}", lambda: S.stage_rl(ctx, rl_dir=rl, label=f"GRPO p{s} s{r}"))
    _timed(rl.parent, f"sample rl s{r}", lambda: S.stage_sample(
        ctx, {run_label("rl", j): rl / f"step-{steps[-1]}"},
        rollouts=folder / f"rollouts-rl-s{r}"))
    return str(rl)


def unit_sharpened(cfg_json: dict, out: str, s: int, j: int, target: float,
                   calibration: int) -> dict:
    """The sharpened base of pretraining seed ``s``: match RL's pass@1 ``target``, sample."""
    from rlvr_boundary.backends import get_backend
    from rlvr_boundary.lab.config import LabConfig

    cfg = sub_config(LabConfig(**cfg_json), s)
    folder = Path(out) / f"p{s}"
    ctx = _unit_ctx(cfg, folder, _prefixed(f"[p{s} sharpened]"))
    path = folder / "sharpened.json"
    if path.exists():
        match = json.loads(path.read_text(encoding="utf-8"))
    else:
        problems = splits.audit_problems(cfg)
        backend = get_backend("transformers", model=folder / "base", device="cpu",
                              dtype="float32", batch_size=S.SAMPLE_BATCH,
                              num_threads=cfg.threads)
        try:
            with S.Clock(folder / "unit_timings.json").stage("sharpen: match"):
                match = C.match_temperature(
                    lambda t: C.pass1_at(t, backend, problems, calibration,
                                         cfg.seed + 1_000_003, cfg.grpo.max_new_tokens),
                    target)
        finally:
            backend.close()
        match["target"] = target
        S._write_json(path, match)
    ctx.say(f"sharpened base: temperature {match['temperature']:.3f} (calibration pass@1 "
            f"{match['pass_at_1']:.3f}, RL's {target:.3f})")
    _timed(folder, "sample sharpened", lambda: S.stage_sample(
        ctx, {run_label("sharpened", j): folder / "base"},
        rollouts=folder / "rollouts-sharpened", temperature=match["temperature"]))
    return match


def unit_cue_sft(cfg_json: dict, out: str, s: int, j: int) -> str:
    """Cued family: the cue-following fine-tune of base ``s`` and its audit samples."""
    from rlvr_boundary.lab.config import LabConfig

    cfg = sub_config(LabConfig(**cfg_json), s)
    folder = Path(out) / f"p{s}"
    ctx = _unit_ctx(cfg, folder, _prefixed(f"[p{s} cue-sft]"))
    _timed(folder, "cue-sft", lambda: C.cue_sft(cfg, folder / "base", folder / "cue-sft",
                                                ctx.say))
    _timed(folder, "sample cue-sft", lambda: S.stage_sample(
        ctx, {run_label(C.CUE_SFT_LABEL, j): folder / "cue-sft"},
        rollouts=folder / "rollouts-cue-sft"))
    return str(folder)


def _prefixed(prefix: str):
    def say(text, *a, **k):
        print(f"{prefix} {text}", flush=True)
    return say


# ----------------------------------------------------------------------------- the run

def rollout_dirs(out: Path, opts: SeedsConfig, cued: bool = False) -> dict[str, list[Path]]:
    """The rollout folders of every arm, in run order (``cue-sft`` in the cued family)."""
    ps, rs = opts.pretrain_seeds, opts.rl_seeds
    dirs = {"base": [out / f"p{s}" / "rollouts-base" for s in ps],
            "rl": [out / f"p{s}" / f"rollouts-rl-s{r}" for s in ps for r in rs],
            "sharpened": [out / f"p{s}" / "rollouts-sharpened" for s in ps],
            C.RANDOM_LABEL: [out / "rollouts-random"]}
    if cued:
        dirs[C.CUE_SFT_LABEL] = [out / f"p{s}" / "rollouts-cue-sft" for s in ps]
    return dirs


def run(ctx: S.Context, opts: SeedsConfig) -> dict:
    """Run (or resume) the seeds experiment in ``ctx.out``; return ``lab_result.json``."""
    from rlvr_boundary.io.results import write_result

    cfg, out = ctx.cfg, ctx.out
    cfg_json = S.options_json(cfg)
    ps, rs = opts.pretrain_seeds, opts.rl_seeds
    w = opts.workers
    t0 = time.perf_counter()
    ctx.say(f"{len(ps)} bases x {len(rs)} RL seeds ({cfg.task} task), {w} worker(s)")
    with ctx.clock.stage("bases"):
        S.pool_map(w, unit_base, [(cfg_json, str(out), s, j) for j, s in enumerate(ps)])
    jobs = [(cfg_json, str(out), s, r, j) for j, (s, r) in
            enumerate((s, r) for s in ps for r in rs)]
    with ctx.clock.stage("rl"):
        S.pool_map(w, unit_rl, jobs)
    dirs = rollout_dirs(out, opts, cfg.cued)
    targets = {s: float(np.mean([_mean_correct(out / f"p{s}" / f"rollouts-rl-s{r}")
                                 for r in rs])) for s in ps}
    with ctx.clock.stage("sharpened"):
        matches = S.pool_map(w, unit_sharpened, [(cfg_json, str(out), s, j, targets[s],
                                                 opts.calibration_samples)
                                                for j, s in enumerate(ps)])
    if cfg.cued:
        with ctx.clock.stage("cue-sft"):
            S.pool_map(w, unit_cue_sft, [(cfg_json, str(out), s, j) for j, s in enumerate(ps)])
    problems = splits.audit_problems(cfg)
    with ctx.clock.stage("random template"):
        C.write_random_template(out / "rollouts-random", problems, cfg.n_samples, cfg.seed)
    with ctx.clock.stage("report", accumulate=False):
        inputs = [d for arm in dirs.values() for d in arm]
        audit = S.stage_audit(ctx, inputs, note=(
            f"Lab seeds experiment ({cfg.task} task): {len(ps)} pretraining seeds x "
            f"{len(rs)} RL seeds; runs labelled NAME#runJ (see docs/lab.md)."))
    payload = summary(cfg, opts, out, audit, dirs, matches, targets)
    payload["wall_s"] = time.perf_counter() - t0
    payload["timings"] = ctx.clock.data
    payload["units_cpu_s"] = units_cpu(out, ps)
    payload["headline"] += [
        f"CPU time of the units: {payload['units_cpu_s']['total'] / 60:.1f} min "
        f"({w} worker(s)); wrote seeds.md and report.html"]
    from rlvr_boundary.io.atomic import atomic_open

    with atomic_open(out / "seeds.md", "w") as fh:
        fh.write(markdown(payload))
    return write_result(out / "lab_result.json", "lab-run", {"lab": cfg, "seeds": opts}, payload)


def _mean_correct(folder: Path) -> float:
    import pyarrow.parquet as pq

    vals = []
    for f in sorted(folder.glob("part-*.parquet")):
        vals += pq.read_table(f, columns=["correct"]).column("correct").to_pylist()
    return float(np.mean(vals))


def units_cpu(out: Path, pretrain_seeds) -> dict:
    """CPU seconds of every unit (summed over its stages and resumes)."""
    per = {}
    for s in pretrain_seeds:
        f = out / f"p{s}" / "unit_timings.json"
        if f.exists():
            per[f"p{s}"] = {k: v["cpu_s"] for k, v in json.loads(f.read_text()).items()}
    total = sum(v for d in per.values() for v in d.values())
    return {"total": total, "units": per}


def per_run_curves(dirs: list[Path], name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Labels, budgets ``(K,)`` and pass@k ``(R, K)`` (mean over problems) of each run."""
    from rlvr_boundary.core.passk import pass_at_k
    from rlvr_boundary.io.rollouts import reduce_counts

    labels, curves, ks = [], [], None
    for d in dirs:
        for label, ct in reduce_counts(d).items():
            n, c = np.asarray(ct.n), np.asarray(ct.c)
            if ks is None:
                ks = np.arange(1, int(n.min()) + 1)
            labels.append(label)
            curves.append(pass_at_k(n, c, ks).mean(axis=0))
    return labels, ks, np.array(curves)


def nesting(values: np.ndarray, groups: list) -> dict:
    """How the runs' spread splits between and within groups (one-way ANOVA, sums of squares).

    ``values`` are one number per run, ``groups`` its group (pretraining seed); returns
    the total, between-group and within-group sums of squares and the between share.
    """
    v = np.asarray(values, float)
    g = np.asarray(groups)
    grand = v.mean()
    between = sum(len(v[g == k]) * (v[g == k].mean() - grand) ** 2 for k in np.unique(g))
    total = float(((v - grand) ** 2).sum())
    return {"total_ss": total, "between_ss": float(between), "within_ss": total - float(between),
            "between_share": float(between / total) if total > 0 else None}


def summary(cfg, opts: SeedsConfig, out: Path, audit: dict, dirs: dict, matches: list,
            targets: dict) -> dict:
    """The table of the seeds experiment: every arm's pass@1 and pass@K over runs, the
    run-level band's verdict against the base, the controls, and RL against the
    sharpened base."""
    from rlvr_boundary.report import words as W

    arms, K = {}, None
    for name, folders in dirs.items():
        labels, ks, curves = per_run_curves(folders, name)
        K = int(ks[-1])
        arms[name] = {"labels": labels, "pass_at_1": S.spread(curves[:, 0]),
                      "pass_at_K": S.spread(curves[:, -1])}
        if name != "base":
            c = audit["comparisons"][name]
            arms[name].update({
                "gain_budgets": c.get("gain_budgets"), "loss_budgets": c.get("loss_budgets"),
                "k_star": c.get("k_star"),
                "price": {"points": None if c.get("price") is None else 100 * c["price"],
                          "k": c.get("price_k")},
                "verdict": W.headline(c),
                "band": {k: (c.get("band") or {}).get(k) for k in ("unit", "n_runs")}})
    strat = S.strategy_section(cfg, [d for arm in dirs.values() for d in arm])
    for name, arm in arms.items():
        shares = [strat["shares"][lab] for lab in arm["labels"]]
        keys = sorted({k for s in shares for k in s})
        arm["strategy_shares"] = {k: float(np.mean([s.get(k, 0.0) for s in shares]))
                                  for k in keys}
        if "cue_view" in strat:
            arm["cue_following"] = S.spread([strat["cue_view"][lab]["following"]
                                           for lab in arm["labels"]])
            arm["cue_blind"] = S.spread([strat["cue_view"][lab]["blind"] for lab in arm["labels"]])
    labels = {name: arm["labels"] for name, arm in arms.items()}
    rl_vs_sharp = _compare(cfg, dirs, labels["sharpened"], labels["rl"])
    rl_vs_sharp["against"] = "sharpened"
    # The RL runs of one base are nested in it; the band treats them as independent. The
    # same comparison with one RL run per base (the first RL seed) has no nesting.
    first = [lab for i, lab in enumerate(labels["rl"]) if i % len(opts.rl_seeds) == 0]
    one_per_base = _compare(cfg, dirs, labels["base"], first)
    rl_p1 = [arms["rl"]["pass_at_1"]["runs"][i] for i in range(len(arms["rl"]["labels"]))]
    groups = [s for s in opts.pretrain_seeds for _ in opts.rl_seeds]
    doc = {"experiment": "seeds", "task": cfg.task, "K": K, "n_problems": audit["n_prompts"],
           "n_samples": cfg.n_samples, "pretrain_seeds": list(opts.pretrain_seeds),
           "rl_seeds": list(opts.rl_seeds), "arms": arms,
           "sharpened": {"matches": matches, "targets": {str(s): t for s, t in targets.items()}},
           "rl_against_sharpened": rl_vs_sharp,
           "rl_one_run_per_base": one_per_base,
           "random_template_exact_pass_at_1": C.random_template_pass1(
               splits.audit_problems(cfg)),
           "nesting": {"pass_at_1": nesting(rl_p1, groups),
                       "pass_at_K": nesting(arms["rl"]["pass_at_K"]["runs"], groups)},
           "strategy": strat}
    doc["headline"] = headline(doc)
    return doc


def _compare(cfg, dirs: dict, base: list[str], rl: list[str]) -> dict:
    """The run-level comparison of the runs ``rl`` against the runs ``base`` (labels found
    in the rollout folders of ``dirs``): D(k) and the band's verdict."""
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.pipelines.compare import CompareOptions
    from rlvr_boundary.io.results import to_jsonable
    from rlvr_boundary.io.rollouts import reduce_counts
    from rlvr_boundary.report import words as W

    counts = {}
    for folders in dirs.values():
        for d in folders:
            counts.update(reduce_counts(d))
    aligned = align([counts[x] for x in (*base, *rl)])
    res = to_jsonable(compare_aligned(
        aligned, base[0], rl[0], CompareOptions(bootstrap=cfg.bootstrap, seed=cfg.seed),
        runs={"base": list(base[1:]), "rl": list(rl[1:])}))
    return {"base_runs": list(base), "rl_runs": list(rl),
            "gain_budgets": res.get("gain_budgets"), "loss_budgets": res.get("loss_budgets"),
            "k_star": res.get("k_star"), "diff_at_1": float(res["diff"][0]),
            "diff_at_K": float(res["diff"][-1]),
            "critical_value": (res.get("band") or {}).get("critical_value"),
            "verdict": W.headline(res)}


def _budgets(ks) -> str:
    from rlvr_boundary.report.words import ranges

    return ranges(sorted(ks)) if ks else "none"


def markdown(doc: dict) -> str:
    """The seeds table of docs/lab.md: one row per arm."""
    K = doc["K"]
    cue = "cue_following" in doc["arms"]["base"]
    head = (f"| model | runs | pass@1 | pass@{K} | supported gain at k | supported loss at k "
            "| k* | price (points, at k) | add / mul / sub |" + (" cue followed |" if cue else "")
            + "\n|---|---|---|---|---|---|---|---|---|" + ("---|" if cue else "") + "\n")
    lines = []
    for name, a in doc["arms"].items():
        mix = " / ".join(f"{a['strategy_shares'].get(s, 0):.2f}" for s in ("add", "mul", "sub"))
        if name == "base":
            cells = ["", "", "", ""]
        else:
            price = a["price"]
            cells = [_budgets(a["gain_budgets"]), _budgets(a["loss_budgets"]),
                     str(a["k_star"]) if a["k_star"] is not None else "none",
                     "0" if not price["points"] else f"{price['points']:.1f} at {price['k']}"]
        row = (f"| {name} | {len(a['labels'])} | {S.fmt_spread(a['pass_at_1'])} | {S.fmt_spread(a['pass_at_K'])} "
               f"| " + " | ".join(cells) + f" | {mix} |")
        if cue:
            row += f" {S.fmt_spread(a['cue_following'], 2)} |"
        lines.append(row)
    r = doc["rl_against_sharpened"]
    sharp = ", ".join(f"{m['temperature']:.3f}" + ("" if m["reached"] else " (lowest tried)")
                      for m in doc["sharpened"]["matches"])
    foot = (f"\nSharpened base temperatures: {sharp}. RL against the sharpened base: "
            f"D(1) = {r['diff_at_1']:+.3f}, D({K}) = {r['diff_at_K']:+.3f}; supported gain at "
            f"k = {_budgets(r['gain_budgets'])}, supported loss at k = "
            f"{_budgets(r['loss_budgets'])}.")
    o = doc.get("rl_one_run_per_base")
    if o:
        foot += (f" RL with one run per base (no nesting, {len(o['rl_runs'])} runs): supported "
                 f"gain at k = {_budgets(o['gain_budgets'])}, supported loss at k = "
                 f"{_budgets(o['loss_budgets'])}.")
    return head + "\n".join(lines) + "\n" + foot + "\n"


def headline(doc: dict) -> list[str]:
    """The lines ``lab run --experiment seeds`` prints."""
    K = doc["K"]
    out = [f"{doc['task']} task, {len(doc['pretrain_seeds'])} pretraining x "
           f"{len(doc['rl_seeds'])} RL seeds; mean (range) over runs:"]
    for name, a in doc["arms"].items():
        line = (f"  {name}: pass@1 {S.fmt_spread(a['pass_at_1'])}, pass@{K} {S.fmt_spread(a['pass_at_K'])}")
        if name != "base":
            line += (f"; against the base: gain at k = {_budgets(a['gain_budgets'])}, loss at "
                     f"k = {_budgets(a['loss_budgets'])}")
        out.append(line)
    r = doc["rl_against_sharpened"]
    out.append(f"  rl against the sharpened base: gain at k = {_budgets(r['gain_budgets'])}, "
               f"loss at k = {_budgets(r['loss_budgets'])}")
    return out


__all__ = ["SeedsConfig", "SEEDS_PRESETS", "run", "summary", "markdown", "nesting",
           "run_label", "rollout_dirs"]
