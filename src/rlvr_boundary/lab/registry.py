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
from dataclasses import dataclass

from rlvr_boundary.errors import InputError


#: The task families (:mod:`rlvr_boundary.lab.task`): plain (no cue; the tilt case) and
#: cued (the gold strategy's cue word in the prompt). Kept here, without numpy, so the
#: command line can offer them without loading the numeric stack.
TASKS = ("plain", "cued")


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
    tasks: tuple[str, ...] = TASKS
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
    Experiment("monitor",
               "narrowing with the boundary monitor at every RL checkpoint (a smaller "
               "sample at a level corrected for the looks), checked against the full audit",
               f"{_LAB}.monitored:run", f"{_LAB}.monitored:MonitoredConfig"),
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
