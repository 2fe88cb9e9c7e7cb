"""``rlvr-boundary lab``: train a tiny model from scratch, RL it, audit what RL did.

Verbs: ``run`` (run or resume an experiment of :mod:`rlvr_boundary.lab.registry`)
and ``entropy`` (experiment 4's table and figure from a finished audit). The
experiments, their help and the estimators come from their registries; this
module only parses, calls and prints.
"""

from __future__ import annotations

import argparse


def _seeds(text: str) -> tuple[int, ...]:
    """``"0,1,2"`` -> ``(0, 1, 2)``: distinct integers >= 0."""
    try:
        out = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not out or min(out) < 0 or len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"expected distinct integers >= 0, got {text!r}")
    return out


#: Command-line flags of experiment options: flag -> (field, type, help). The experiment's
#: options dataclass validates them; a flag its experiment has no field for is refused.
EXPERIMENT_FLAGS = {
    "--pretrain-seeds": ("pretrain_seeds", _seeds, "pretraining seeds, e.g. 0,1,2 (seeds)"),
    "--rl-seeds": ("rl_seeds", _seeds, "RL seeds of every base, e.g. 0,1,2 (seeds, prolonged)"),
    "--workers": ("workers", int, "parallel worker processes for the independent runs "
                                  "(seeds, prolonged; default 1)"),
}


def register(sub: argparse._SubParsersAction) -> None:
    # Only the registry (no numpy) at parser construction: --help must stay light. The
    # estimator names live in the shaping package, which loads numpy; ShapingConfig
    # checks the name and lists the known ones when it is wrong.
    from rlvr_boundary.lab.registry import EXPERIMENTS, TASKS

    p = sub.add_parser(
        "lab",
        help="the RLVR lab: pretrain a tiny model, run GRPO, sample and audit every checkpoint",
        description="Trains a tiny Llama from scratch on CPU on a synthetic task with three "
                    "solution strategies readable from the text, runs GRPO on it, samples the "
                    "base and every checkpoint, verifies, and writes rollouts, the audit "
                    "report and lab_result.json. Every stage resumes where it stopped.")
    verbs = p.add_subparsers(dest="lab_command", required=True, metavar="VERB")
    r = verbs.add_parser("run", help="run (or resume) a lab experiment",
                         description="Run (or resume) a lab experiment in --out.")
    r.add_argument("--preset", default="quick", choices=["quick", "full"],
                   help="quick: every stage at toy size, about 40 CPU seconds, mechanics only "
                        "(CI); full: the experiment at its reported size (default: quick)")
    r.add_argument("--experiment", default="narrowing", choices=list(EXPERIMENTS),
                   help="; ".join(f"{e.name}: {e.help}" for e in EXPERIMENTS.values()))
    r.add_argument("--task", default="plain", choices=list(TASKS),
                   help="task family: plain (the strategy is decidable from the prompt only "
                        "by computing all three values: RL tilts the global mixture) or cued "
                        "(the prompt carries a cue word of the strategy that solves it) "
                        "(plain)")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder (resumable)")
    r.add_argument("--seed", type=int, default=0,
                   help="pretraining seed, also of the audit's sampling (0)")
    r.add_argument("--rl-seed", type=int, metavar="N",
                   help="seed of the RL stage only (default: --seed); the base, the audit's "
                        "problems and its sampling stay those of --seed")
    r.add_argument("--estimator", default="grpo", metavar="NAME",
                   help="advantage estimator of the RL stage: a name of "
                        "rlvr_boundary.shaping.ESTIMATORS but remax; a wrong name is refused "
                        "with the list (grpo)")
    r.add_argument("--passk-k", type=int, metavar="K", help="k of the passk estimator")
    r.add_argument("--perplexity-shaping", action="store_true",
                   help="apply the perplexity advantage shaping (alpha 0.01)")
    r.add_argument("--position-shaping", action="store_true",
                   help="apply the position advantage shaping at every step")
    r.add_argument("--kl", type=float, default=0.0, metavar="BETA",
                   help="KL-to-base coefficient (0: none)")
    r.add_argument("--group-size", type=int, metavar="G",
                   help="completions per problem in RL (default: the preset's)")
    r.add_argument("--base-from", metavar="DIR",
                   help="copy the pretrained base of another run folder instead of "
                        "pretraining (its seeds, task, model and pretraining options must match)")
    r.add_argument("--sample", default="all", choices=["all", "last"],
                   help="which models the audit samples: all checkpoints, or the base and "
                        "the last checkpoint only (for tables of many runs) (all)")
    r.add_argument("--threads", type=int, default=1, help="torch CPU threads (1)")
    r.add_argument("--export-example", metavar="DIR",
                   help="also copy the rollouts and numbers into DIR as the report's 'lab' "
                        "example (how the shipped example is made)")
    for flag, (_, kind, text) in EXPERIMENT_FLAGS.items():
        r.add_argument(flag, type=kind, help=text)
    r.set_defaults(func=run)

    e = verbs.add_parser(
        "entropy", help="entropy and support per checkpoint from a finished audit",
        description="Experiment 4's table and figure (entropy.json, entropy.md, entropy.png) "
                    "from an audit result: report.json of a lab run, or of "
                    "'rlvr-boundary report --example lab'.")
    e.add_argument("report", metavar="REPORT.json", help="an audit result (report.json)")
    e.add_argument("--train-log", metavar="FILE", help="rl/train_log.jsonl of the run")
    e.add_argument("--out", required=True, metavar="DIR", help="output folder")
    e.set_defaults(func=entropy)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError, require

    require("torch", "hf", "the lab")
    require("transformers", "hf", "the lab")
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.launch import run_experiment
    from rlvr_boundary.lab.registry import EXPERIMENTS, experiment_options
    from rlvr_boundary.shaping import ShapingConfig

    exp = EXPERIMENTS[args.experiment]
    if args.export_example and not exp.exports_example:
        raise InputError("--export-example copies the rollouts of the narrowing pipeline; "
                         f"it does not apply to --experiment {args.experiment}",
                         field="export-example")
    overrides = {field: getattr(args, flag[2:].replace("-", "_"))
                 for flag, (field, _, _) in EXPERIMENT_FLAGS.items()}
    experiment_options(args.experiment, args.preset, overrides)  # refuse before any work
    try:
        shaping = ShapingConfig(estimator=args.estimator, k=args.passk_k,
                                perplexity=args.perplexity_shaping,
                                position=args.position_shaping,
                                pos_window=None if args.position_shaping else (200, 300))
        cfg = LabConfig.from_preset(args.preset, experiment=args.experiment, task=args.task,
                                    seed=args.seed, threads=args.threads, shaping=shaping,
                                    kl_coef=args.kl, rl_seed=args.rl_seed,
                                    group_size=args.group_size, sample=args.sample)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({}, [args.base_from], folders={"--out": args.out,
                                                 "--export-example": args.export_example})
    doc = run_experiment(cfg, args.out, console=console, base_from=args.base_from,
                         options=overrides)
    for line in doc.get("headline", []):
        console.print(line, markup=False, highlight=False)
    console.print(f"wrote {args.out}/lab_result.json"
                  + (f" and {args.out}/report.html" if "report.html" in _written(args.out) else ""))
    if args.export_example:
        from rlvr_boundary.lab.narrowing import export_example

        console.print(f"wrote the example folder {export_example(args.out, args.export_example)}")
    return 0


def _written(out: str) -> set[str]:
    from pathlib import Path

    return {p.name for p in Path(out).iterdir()}


def entropy(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.lab.entropy import markdown, write_table
    from rlvr_boundary.lab.stages import read_log

    doc = read_result(args.report, kind="report")
    log = read_log(Path(args.train_log), required=True) if args.train_log else None
    out = Path(args.out)
    table = write_table(doc, log, out, {"report": str(args.report),
                                        "train_log": args.train_log})
    console.print(markdown(table), markup=False, highlight=False)
    console.print(f"wrote {out}/entropy.json, entropy.md, entropy.png")
    return 0
