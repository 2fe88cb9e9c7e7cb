"""Prolonged RL: several times the standard run, with a KL penalty and reference resets.

Claim (Liu et al., "ProRL: Prolonged Reinforcement Learning Expands Reasoning
Boundaries in Large Language Models", arXiv 2505.24864): RL run long enough,
kept stable by a KL penalty whose reference is periodically reset to the
current policy (with the optimizer state), keeps improving and can expand the
boundary beyond the base's, where shorter runs only narrow it.

What we run: from one base (pretraining seed ``cfg.seed``, or copied with
``--base-from``), ``len(rl_seeds)`` GRPO runs of ``steps`` steps with
``kl_coef`` and a reset every ``ref_reset_every`` steps, a checkpoint every
``save_every``. Each checkpoint is sampled on the audited problems as it is
written: that per-checkpoint evaluation is the one function the RL stage calls
(:func:`rlvr_boundary.lab.stages.stage_rl`'s ``evaluate``), where a boundary
monitor can replace it. The audit then compares every checkpoint with the base
with the RL seeds as runs (``step-N``, ``step-N#run2``, ...), so the band
carries run-to-run variance, and ``lab_result.json`` holds the trajectory:
pass@1 and pass@K (mean and range over RL seeds), the supported gain and loss
budgets, k*, the price and the strategy mixture (and the cue view in the cued
family) at every checkpoint.

What ProRL also does and we do not: DAPO's decoupled clipping and dynamic
sampling (our loss is on-policy, so clipping never acts), rollout temperature
1.2, a diverse task mix. The KL coefficient and reset interval are ours.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr_boundary.lab import stages as S

#: Options of each preset.
PROLONGED_PRESETS: dict[str, dict] = {
    "quick": {"steps": 8, "save_every": 4, "kl_coef": 0.05, "ref_reset_every": 4,
              "rl_seeds": (0, 1)},
    "full": {"steps": 200, "save_every": 20, "kl_coef": 0.05, "ref_reset_every": 40,
             "rl_seeds": (0, 1, 2)},
}


@dataclass
class ProlongedConfig:
    """Options of the prolonged-RL experiment (they replace the preset's RL length and KL)."""

    steps: int = 200
    """RL steps (the full preset's standard run has 40)."""
    save_every: int = 20
    """A checkpoint, audited, every this many steps."""
    kl_coef: float = 0.05
    """Weight of the k3 KL penalty to the reference."""
    ref_reset_every: int = 40
    """Reset the reference to the current policy (and the optimizer state) every this many
    steps; a multiple of ``save_every``."""
    rl_seeds: tuple = (0, 1, 2)
    """RL seeds (runs of every checkpoint in the audit)."""
    workers: int = 1
    """Worker processes (one RL seed each)."""

    def __post_init__(self) -> None:
        v = tuple(self.rl_seeds)
        if not v or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in v) \
                or len(set(v)) != len(v):
            raise ValueError(f"rl_seeds must be distinct integers >= 0, got {v!r}")
        self.rl_seeds = v
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) \
                or self.workers < 1:
            raise ValueError(f"workers must be a positive integer, got {self.workers!r}")
        self.grpo_overrides()  # validated by GRPOConfig

    def grpo_overrides(self) -> dict:
        """The fields of the RL options this experiment sets."""
        from rlvr_boundary.lab.grpo import GRPOConfig

        out = {"steps": self.steps, "save_every": self.save_every, "kl_coef": self.kl_coef,
               "ref_reset_every": self.ref_reset_every}
        GRPOConfig(**out)
        return out

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "ProlongedConfig":
        """The preset's options with ``overrides`` on top."""
        return cls(**{**PROLONGED_PRESETS[preset], **overrides})


def long_config(cfg, opts: ProlongedConfig, rl_seed: int):
    """The run's options with the prolonged RL options and RL seed ``rl_seed``."""
    from rlvr_boundary.lab.config import LabConfig

    d = S.options_json(cfg)
    d["grpo"].update(opts.grpo_overrides(), seed=rl_seed)
    return LabConfig(**d)


def label(step: int, j: int) -> str:
    """``step-N`` of RL seed index ``j`` (0: the first run)."""
    return f"step-{step}" if j == 0 else f"step-{step}#run{j + 1}"


def unit_rl(cfg_json: dict, opts_json: dict, out: str, r: int, j: int) -> str:
    """RL seed ``r`` (run ``j``): train, and sample every checkpoint as it is written."""
    import torch
    import transformers

    from rlvr_boundary.lab.config import LabConfig

    opts = ProlongedConfig(**opts_json)
    cfg = long_config(LabConfig(**cfg_json), opts, r)
    torch.set_num_threads(cfg.threads)
    transformers.utils.logging.disable_progress_bar()  # a worker prints lines, not bars
    out = Path(out)
    rl = out / f"rl-s{r}"
    rl.mkdir(parents=True, exist_ok=True)

    def say(text, *a, **k):
        print(f"[rl{r}] {text}", flush=True)

    ctx = S.Context(cfg=cfg, out=out, clock=S.Clock(rl / "unit_timings.json"), say=say)

    def evaluate(step: int, folder: Path) -> None:
        """The per-checkpoint evaluation: sample the checkpoint for the audit (resumable)."""
        with ctx.clock.stage("sample"):
            S.stage_sample(ctx, {label(step, j): folder},
                           rollouts=rl / "rollouts" / f"step-{step}")

    with ctx.clock.stage("rl"):
        S.stage_rl(ctx, rl_dir=rl, evaluate=evaluate, label=f"prolonged GRPO s{r}")
    return str(rl)


def run(ctx: S.Context, opts: ProlongedConfig) -> dict:
    """Run (or resume) the prolonged-RL experiment in ``ctx.out``; return ``lab_result.json``."""
    from rlvr_boundary.io.results import write_result
    
    cfg, out = ctx.cfg, ctx.out
    t0 = time.perf_counter()
    with ctx.clock.stage("pretrain"):
        S.stage_base(ctx)
    with ctx.clock.stage("sample base"):
        if ctx.base_from is not None:
            S.copy_base_rollouts(cfg, ctx.base_from, out / "rollouts", out / "base", ctx.say)
        S.stage_sample(ctx, {"base": out / "base"})
    ctx.say(f"prolonged RL: {len(opts.rl_seeds)} RL seeds x {opts.steps} steps, KL "
            f"{opts.kl_coef:g}, reference reset every {opts.ref_reset_every} steps")
    cfg_json, opts_json = S.options_json(cfg), S.options_json(opts)
    with ctx.clock.stage("rl"):
        S.pool_map(opts.workers, unit_rl, [(cfg_json, opts_json, str(out), r, j)
                                          for j, r in enumerate(opts.rl_seeds)])
    steps = S.checkpoint_steps(long_config(cfg, opts, opts.rl_seeds[0]))
    inputs = [out / "rollouts"] + [out / f"rl-s{r}" / "rollouts" / f"step-{s}"
                                   for r in opts.rl_seeds for s in steps]
    with ctx.clock.stage("report", accumulate=False):
        audit = S.stage_audit(ctx, inputs, note=(
            f"Lab prolonged RL ({cfg.task} task): {len(opts.rl_seeds)} RL seeds x "
            f"{opts.steps} steps, KL {opts.kl_coef:g}, reference reset every "
            f"{opts.ref_reset_every}; runs labelled step-N#runJ (see docs/lab.md)."))
    payload = trajectory(cfg, opts, out, audit, inputs)
    payload["wall_s"] = time.perf_counter() - t0
    payload["timings"] = ctx.clock.data
    payload["units_cpu_s"] = {f"rl-s{r}": _cpu(out / f"rl-s{r}" / "unit_timings.json")
                              for r in opts.rl_seeds}
    total = sum(payload["units_cpu_s"].values()) + sum(
        v["cpu_s"] for k, v in ctx.clock.data.items() if k != "rl")
    payload["cpu_s_total"] = total
    payload["headline"].append(f"CPU time: {total / 60:.1f} min; wrote prolonged.md and "
                               "report.html")
    from rlvr_boundary.io.atomic import atomic_open

    with atomic_open(out / "prolonged.md", "w") as fh:
        fh.write(markdown(payload))
    doc = write_result(out / "lab_result.json", "lab-run", {"lab": cfg, "prolonged": opts},
                       payload)
    try:
        plot_trajectory(doc, out / "prolonged.png")
    except ImportError:  # matplotlib is optional: the numbers are in lab_result.json
        pass
    return doc


def plot_trajectory(doc: dict, path: Path) -> Path:
    """pass@1 and pass@K over training: mean over RL seeds, their range shaded, the base at
    step 0, the reference resets as dotted lines."""
    from rlvr_boundary.report.figures import PALETTE, figure

    rows = doc["trajectory"]
    steps = [r["step"] for r in rows]
    fig, (ax,) = figure(3.4)  # one row of axes
    for key, name, color in (("pass_at_1", "pass@1", PALETTE[0]),
                             ("pass_at_K", f"pass@{doc['K']}", PALETTE[1])):
        ax.plot(steps, [r[key]["mean"] for r in rows], "o-", color=color,
                label=f"{name}, mean over RL seeds")
        ax.fill_between(steps, [r[key]["min"] for r in rows], [r[key]["max"] for r in rows],
                        color=color, alpha=0.2, label=f"{name}, range over RL seeds")
    resets = doc["prolonged_options"]["ref_reset_every"]
    for x in range(resets, max(steps), resets) if resets else ():
        ax.axvline(x, color="#999999", ls=":", lw=1)
    ax.set_xlabel("RL step (base = 0; dotted: reference resets)")
    ax.set_ylabel("pass@k")
    ax.set_title(f"Prolonged RL ({doc['task']} task): KL "
                 f"{doc['prolonged_options']['kl_coef']:g}, reset every {resets} steps")
    ax.grid(alpha=0.25)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def _cpu(path: Path) -> float:
    import json

    if not path.exists():
        return 0.0
    return float(sum(v["cpu_s"] for v in json.loads(path.read_text()).values()))


def trajectory(cfg, opts: ProlongedConfig, out: Path, audit: dict, inputs) -> dict:
    """Per checkpoint: pass@1 and pass@K over RL seeds, the run-level band's verdict, k*,
    price, strategy mixture (and cue view); the training log's KL and resets."""
    from rlvr_boundary.core.passk import pass_at_k
    from rlvr_boundary.io.rollouts import reduce_counts
    from rlvr_boundary.report import words as W

    curves = {}
    for d in inputs:
        for lab, ct in reduce_counts(d).items():
            n, c = np.asarray(ct.n), np.asarray(ct.c)
            curves[lab] = pass_at_k(n, c, np.arange(1, int(n.min()) + 1)).mean(axis=0)
    K = len(curves["base"])
    strat = S.strategy_section(cfg, list(inputs))
    steps = S.checkpoint_steps(long_config(cfg, opts, opts.rl_seeds[0]))
    rows = [{"step": 0, "model": "base", "pass_at_1": S.spread([curves["base"][0]]),
             "pass_at_K": S.spread([curves["base"][-1]]),
             "strategy_shares": strat["shares"]["base"],
             **({"cue_following": S.spread([strat["cue_view"]["base"]["following"]])}
                if "cue_view" in strat else {})}]
    for s in steps:
        labs = [label(s, j) for j in range(len(opts.rl_seeds))]
        c = audit["comparisons"][label(s, 0)]
        shares = [strat["shares"][lab] for lab in labs]
        keys = sorted({k for sh in shares for k in sh})
        row = {"step": s, "model": label(s, 0),
               "pass_at_1": S.spread([curves[lab][0] for lab in labs]),
               "pass_at_K": S.spread([curves[lab][-1] for lab in labs]),
               "gain_budgets": c.get("gain_budgets"), "loss_budgets": c.get("loss_budgets"),
               "k_star": c.get("k_star"),
               "price": {"points": None if c.get("price") is None else 100 * c["price"],
                         "k": c.get("price_k")},
               "verdict": W.headline(c),
               "strategy_shares": {k: float(np.mean([sh.get(k, 0.0) for sh in shares]))
                                   for k in keys}}
        if "cue_view" in strat:
            row["cue_following"] = S.spread([strat["cue_view"][lab]["following"] for lab in labs])
        rows.append(row)
    logs = {}
    for r in opts.rl_seeds:
        log = S.read_log(out / f"rl-s{r}" / "train_log.jsonl") or []
        logs[str(r)] = [{k: rec.get(k) for k in ("step", "reward", "entropy", "kl", "ref_reset")}
                        for rec in log]
    doc = {"experiment": "prolonged", "task": cfg.task, "K": K,
           "n_problems": audit["n_prompts"], "n_samples": cfg.n_samples,
           "prolonged_options": dataclasses.asdict(opts), "trajectory": rows, "training": logs,
           "strategy": strat}
    doc["headline"] = headline(doc)
    return doc


def markdown(doc: dict) -> str:
    """The trajectory table of docs/lab.md."""
    from rlvr_boundary.report.words import ranges

    K = doc["K"]
    cue = "cue_following" in doc["trajectory"][0]
    head = (f"| step | pass@1 | pass@{K} | supported gain at k | supported loss at k | k* | "
            "price (points, at k) | add / mul / sub |" + (" cue followed |" if cue else "")
            + "\n|---|---|---|---|---|---|---|---|" + ("---|" if cue else "") + "\n")
    lines = []
    for r in doc["trajectory"]:
        mix = " / ".join(f"{r['strategy_shares'].get(s, 0):.2f}" for s in ("add", "mul", "sub"))
        if r["step"] == 0:
            cells = ["", "", "", ""]
        else:
            p = r["price"]
            cells = [ranges(sorted(r["gain_budgets"])) if r["gain_budgets"] else "none",
                     ranges(sorted(r["loss_budgets"])) if r["loss_budgets"] else "none",
                     str(r["k_star"]) if r["k_star"] is not None else "none",
                     "0" if not p["points"] else f"{p['points']:.1f} at {p['k']}"]
        row = (f"| {'base' if r['step'] == 0 else r['step']} | {S.fmt_spread(r['pass_at_1'])} | "
               f"{S.fmt_spread(r['pass_at_K'])} | " + " | ".join(cells) + f" | {mix} |")
        if cue:
            row += f" {S.fmt_spread(r['cue_following'], 2)} |"
        lines.append(row)
    return head + "\n".join(lines) + "\n"


def headline(doc: dict) -> list[str]:
    """The lines ``lab run --experiment prolonged`` prints."""
    from rlvr_boundary.report.words import ranges

    K = doc["K"]
    out = [f"prolonged RL ({doc['task']} task); mean (range) over RL seeds:"]
    for r in doc["trajectory"]:
        line = (f"  {'base' if r['step'] == 0 else 'step ' + str(r['step'])}: pass@1 "
                f"{S.fmt_spread(r['pass_at_1'])}, pass@{K} {S.fmt_spread(r['pass_at_K'])}")
        if r["step"]:
            line += (f"; loss supported at k = "
                     f"{ranges(sorted(r['loss_budgets'])) if r['loss_budgets'] else 'none'}")
        out.append(line)
    return out
