"""Experiment 9: the boundary monitor during the lab's GRPO, checked against the full audit.

``rlvr-boundary lab run --preset full --experiment monitor --out lab-monitor`` runs the
narrowing pipeline with a :class:`rlvr_boundary.monitor.BoundaryMonitor` on the audited
problems at every RL checkpoint (the RL stage's ``evaluate`` hook, the place a trainer
callback would call it). Each look samples the checkpoint ``n`` times per problem (16 by
default, a quarter of the audit's 64), grades the samples with the task's verifier and
compares them with the base's at the level its correction leaves for that look
(Bonferroni over the scheduled looks by default), so the run's chance of a false alarm
stays at ``alpha`` whatever the number of looks. Then the full audit runs as in
experiment 1 (64 samples per problem, one comparison per checkpoint at 95%).

The lab knows the outcome (the audit), so it can say what the monitor catches: the
first step at which the alarm rule fires, and the loss budgets of every look beside the
audit's at the same checkpoint. A look is a smaller sample at a stricter level than the audit, so it may
see a loss later or at fewer budgets; it never claims one the band does not support.

The looks are stored in ``monitor/`` (``steps/step-N.json``, ``monitor.json``); a
resumed run reads them back instead of sampling again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.lab import stages as S

#: The options of each preset.
MONITOR_PRESETS: dict[str, dict] = {
    "quick": {"n": 8, "rule": "stop:loss>=8"},
    "full": {"n": 16, "rule": "stop:loss>=16"},
}


@dataclass
class MonitoredConfig:
    """Options of the monitored experiment."""

    n: int = 16
    """Samples per audited problem at every look."""
    rule: str = "stop:loss>=16"
    """The alarm rule (``ACTION:loss>=K``: a loss supported at some budget >= K)."""
    correction: str = "bonferroni"
    """How the level is spread over the looks: bonferroni, spending, open or none."""
    alpha: float = 0.05
    """The run's false-alarm budget (and the level of every look's band before the
    correction)."""

    def __post_init__(self) -> None:
        from rlvr_boundary.monitor.rules import CORRECTIONS, parse_rule

        if isinstance(self.n, bool) or not isinstance(self.n, int) or not 1 <= self.n <= 1024:
            raise ValueError(f"n must be an integer from 1 to 1024, got {self.n!r}")
        parse_rule(self.rule)  # refused with its own message
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {sorted(CORRECTIONS)}, "
                             f"got {self.correction!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie strictly between 0 and 1, got {self.alpha!r}")

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "MonitoredConfig":
        """The preset's options with ``overrides`` on top."""
        return cls(**{**MONITOR_PRESETS[preset], **overrides})


def monitor_options(cfg, opts: MonitoredConfig):
    """The monitor's options for the run ``cfg``: one look per RL checkpoint, sampled as
    the audit samples (temperature 1, the RL stage's completion length)."""
    from rlvr_boundary.monitor import MonitorOptions
    from rlvr_boundary.monitor.rules import parse_rule

    steps = S.checkpoint_steps(cfg)
    return MonitorOptions(n=opts.n, every=cfg.grpo.save_every, alpha=opts.alpha,
                          correction=opts.correction, looks=len(steps),
                          rules=(parse_rule(opts.rule),), seed=cfg.seed,
                          max_new_tokens=cfg.grpo.max_new_tokens, batch_size=S.SAMPLE_BATCH)


def run(ctx: S.Context, opts: MonitoredConfig) -> dict:
    """Run (or resume) the monitored experiment in ``ctx.out``; return ``lab_result.json``."""
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.lab import splits
    from rlvr_boundary.lab import task as T
    from rlvr_boundary.lab.model import load_checkpoint
    from rlvr_boundary.monitor import BoundaryMonitor

    cfg, out = ctx.cfg, ctx.out
    problems = splits.audit_problems(cfg)
    by_id = {p.prompt_id: p for p in problems}
    heldout = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]

    def verify(prompt: dict, text: str) -> bool:
        return bool(T.verify(by_id[prompt["prompt_id"]], text)["correct"])

    with ctx.clock.stage("pretrain"):
        S.stage_base(ctx)
    with BoundaryMonitor(heldout, verify, out / "monitor", monitor_options(cfg, opts)) as mon:
        if not mon.has_base:
            mon.sample_base(*load_checkpoint(out / "base"))

        def evaluate(step: int, folder: Path) -> None:
            if step not in mon.history:  # a resumed run reads its looks back
                mon.step(step, *load_checkpoint(folder))

        with ctx.clock.stage("rl"):  # the looks' sampling is timed with the RL stage
            S.stage_rl(ctx, evaluate=evaluate)
        history = dict(mon.history)
        alarms = mon.alarms()
    audit, labels = S.train_and_audit(ctx)  # resumes: base and RL are done
    payload = S.run_summary(ctx, audit, labels)
    payload["monitor"] = monitor_section(history, alarms, audit, opts)
    payload["headline"] += monitor_lines(payload["monitor"])
    return write_result(out / "lab_result.json", "lab-run", {"lab": cfg, "monitor": opts},
                        payload)


def monitor_section(history: dict, alarms: list, audit: dict, opts: MonitoredConfig) -> dict:
    """Every look beside the audit's comparison of the same checkpoint."""
    looks = []
    for step, doc in sorted(history.items()):
        band = doc.get("rule_band") or {}
        cmp_ = doc["comparison"]
        full = audit["comparisons"].get(f"step-{step}") or {}
        looks.append({
            "step": step, "look": doc["look"], "alpha_look": doc["alpha_look"],
            "pass_at_1": doc["metrics"].get("boundary/pass@k/1"),
            "look_loss_budgets": band.get("loss_budgets", cmp_.get("loss_budgets")),
            "look_gain_budgets": band.get("gain_budgets", cmp_.get("gain_budgets")),
            "fired": [r["rule"] for r in doc["fired"]],
            "audit_loss_budgets": full.get("loss_budgets"),
            "audit_gain_budgets": full.get("gain_budgets"),
        })
    first = alarms[0] if alarms else None
    return {"rule": opts.rule, "n": opts.n, "correction": opts.correction,
            "alpha": opts.alpha, "looks": looks,
            "first_alarm_step": None if first is None else first["step"]}


def monitor_lines(sec: dict) -> list[str]:
    """What ``lab run`` prints about the monitor."""
    first = sec["first_alarm_step"]
    when = (f"first fired at step {first}" if first is not None
            else "did not fire at any checkpoint")
    return [f"boundary monitor ({sec['n']} samples per problem, rule {sec['rule']}, "
            f"{sec['correction']} over {len(sec['looks'])} looks): {when}"]
