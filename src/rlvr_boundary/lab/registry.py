"""The lab's experiments: one registry that owns their names, options and help.

Each experiment is a leaf module over the shared stages
(:mod:`rlvr_boundary.lab.stages`) with one entry point ``run(ctx, options)``
and, when it has options of its own, one documented dataclass with presets
(``from_preset(preset, **overrides)``). ``rlvr-boundary lab run`` reads this
registry for its choices and help, so adding an experiment is one module, its
test and one entry here. Entries name their module and class as strings: the
registry imports nothing heavy.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError


@dataclass(frozen=True)
class Experiment:
    """One lab experiment."""

    name: str
    """Its name on the command line (``--experiment NAME``)."""
    help: str
    """One sentence for ``--help``: what it runs and what it measures."""
    runner: str
    """``module:function`` of its entry point ``run(ctx, options) -> dict``."""
    options: str | None = None
    """``module:Class`` of its own options dataclass (None: the run's options only)."""
    tasks: tuple[str, ...] = ("plain", "cued")
    """Task families it runs on."""
    exports_example: bool = False
    """Whether ``--export-example`` applies (the rollouts of the narrowing pipeline)."""

    def load(self, what: str):
        module, name = getattr(self, what).split(":")
        return getattr(importlib.import_module(module), name)


_LAB = "rlvr_boundary.lab"

#: Every experiment, in the order of docs/lab.md.
EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("narrowing",
               "RL raises pass@1; the audit of the base and every checkpoint shows what it "
               "cost at large k (default)",
               f"{_LAB}.narrowing:run", exports_example=True),
    Experiment("distillation",
               "a teacher that knows a fourth strategy, distilled into the base, against the "
               "base and RL (plain task only)",
               f"{_LAB}.distill:run", f"{_LAB}.distill:DistillConfig", tasks=("plain",)),
    Experiment("entropy",
               "narrowing, then token, answer and strategy entropy and support at every "
               "checkpoint and where learning landed (entropy.png, learning.json)",
               f"{_LAB}.entropy:run", exports_example=True),
    Experiment("seeds",
               "the headline over several pretraining and RL seeds, audited as runs, with a "
               "sharpened-base control (the base at the temperature that matches RL's "
               "pass@1) and a random-template baseline",
               f"{_LAB}.seeds:run", f"{_LAB}.seeds:SeedsConfig"),
    Experiment("prolonged",
               "RL several times longer with a KL penalty and reference resets (ProRL), "
               "several RL seeds, every checkpoint audited with the run-level band",
               f"{_LAB}.prolonged:run", f"{_LAB}.prolonged:ProlongedConfig"),
    Experiment("token-replacement",
               "replace a token at a relative position, resample the rest, measure the "
               "change in accuracy by position and perplexity group (plain task only)",
               f"{_LAB}.replace:run", f"{_LAB}.replace:ReplaceConfig", tasks=("plain",)),
)}


def experiment_options(name: str, preset: str, overrides: dict | None = None):
    """The options object of experiment ``name`` at ``preset`` with ``overrides``
    (``InputError`` naming the option when it does not apply or is invalid); None for an
    experiment without options of its own."""
    exp = EXPERIMENTS[name]
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    if exp.options is None:
        if overrides:
            raise InputError(f"--experiment {name} has no option "
                             f"{', '.join(sorted(overrides))}", field=sorted(overrides)[0])
        return None
    cls = exp.load("options")
    fields = {f.name for f in dataclasses.fields(cls)}
    for k in overrides:
        if k not in fields:
            raise InputError(f"--experiment {name} has no option {k.replace('_', '-')}",
                             field=k)
    try:
        return cls.from_preset(preset, **overrides)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc)) from None


def run_experiment(cfg, out: str | Path, *, console=None, base_from: str | Path | None = None,
                   options: dict | None = None, progress=True) -> dict:
    """Run (or resume) ``cfg.experiment`` in ``out``; return its ``lab_result.json`` document.

    Parameters
    ----------
    cfg
        The run's :class:`rlvr_boundary.lab.config.LabConfig`.
    out
        The run folder (created, or resumed when it holds a run with the same options).
    console
        Where lines and warnings go (None: silent).
    base_from
        A run folder whose pretrained base may be copied (same base options only).
    options
        Overrides of the experiment's own options (``{field: value}``).
    progress
        Show progress bars on the console.
    """
    from rlvr_boundary.errors import require
    from rlvr_boundary.lab import stages as S

    torch = require("torch", "hf", "the lab")
    require("transformers", "hf", "the lab")
    exp = EXPERIMENTS[cfg.experiment]
    if cfg.task not in exp.tasks:
        raise InputError(f"--experiment {exp.name} runs on the task famil"
                         f"{'y' if len(exp.tasks) == 1 else 'ies'} {', '.join(exp.tasks)}, "
                         f"not {cfg.task}", field="task")
    opts = experiment_options(exp.name, cfg.preset, options)
    out = Path(out)
    say = console.print if console is not None else (lambda *a, **k: None)

    def warn(text):
        say(f"[bold yellow]warning:[/] {text}" if console is not None else text)

    S.open_folder(cfg, out, warn=warn if console is not None else None)
    if opts is not None:
        _check_experiment_options(out, exp.name, opts)
    torch.set_num_threads(cfg.threads)
    bars = None
    if progress and console is not None:
        from rlvr_boundary.console import progress as bars
    ctx = S.Context(cfg=cfg, out=out, clock=S.Clock(out / "timings.json"), say=say,
                    progress=bars, warn=warn, base_from=None if base_from is None
                    else Path(base_from))
    runner = exp.load("runner")
    return runner(ctx, opts)


def _check_experiment_options(out: Path, name: str, opts) -> None:
    """``experiment_config.json``: the experiment's own options, fixed with the folder."""
    from rlvr_boundary.lab.stages import options_json

    path = out / "experiment_config.json"
    now = options_json(opts)
    if path.exists():
        if json.loads(path.read_text(encoding="utf-8")) != now:
            raise InputError(f"this folder holds a {name} run with different options; use a "
                             "new --out to start another", path=path)
    else:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(now, indent=1), encoding="utf-8")
        tmp.replace(path)
