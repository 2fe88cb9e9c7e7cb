"""Run one experiment of the registry in a folder: open it, check it, hand it to the leaf.

:func:`run_experiment` is what ``rlvr-boundary lab run`` calls: it opens (or
reopens) the run folder (:func:`rlvr_boundary.lab.stages.open_folder`: the
options must match, the library versions are recorded and compared), fixes the
experiment's own options in ``experiment_config.json``, sets the torch threads
and calls the experiment's entry point with a :class:`rlvr_boundary.lab.stages.Context`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.lab.registry import EXPERIMENTS, experiment_options


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
