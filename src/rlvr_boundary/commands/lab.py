"""``rlvr-boundary lab run``: train a tiny model from scratch, RL it, audit what RL did."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
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
                   help="quick: every stage at toy size, about 40 CPU seconds (CI); "
                        "full: the experiment at its reported size (default: quick)")
    r.add_argument("--experiment", default="narrowing",
                   choices=["narrowing", "entropy", "distillation", "token-replacement"],
                   help="narrowing: RL raises pass@1 and narrows pass@k at large k (default); "
                        "entropy: narrowing, then token, answer and strategy entropy and "
                        "support at every checkpoint and where learning landed (entropy.png, "
                        "learning.json); "
                        "distillation: a teacher that knows a fourth strategy, distilled into "
                        "the base, against the base and RL; token-replacement: replace the "
                        "token at a relative position, resample the rest, measure the change "
                        "in accuracy by position and perplexity group")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder (resumable)")
    r.add_argument("--seed", type=int, default=0, help="seed of every random draw (0)")
    r.add_argument("--estimator", default="grpo",
                   choices=["grpo", "dr_grpo", "rloo", "reinforce_pp", "reinforce_pp_baseline",
                            "passk"], help="advantage estimator of the RL stage (grpo)")
    r.add_argument("--passk-k", type=int, metavar="K", help="k of the passk estimator")
    r.add_argument("--perplexity-shaping", action="store_true",
                   help="apply the perplexity advantage shaping (alpha 0.01)")
    r.add_argument("--position-shaping", action="store_true",
                   help="apply the position advantage shaping at every step")
    r.add_argument("--kl", type=float, default=0.0, metavar="BETA",
                   help="KL-to-base coefficient (0: none)")
    r.add_argument("--export-example", metavar="DIR",
                   help="also copy the rollouts and numbers into DIR as the report's 'lab' "
                        "example (how the shipped example is made)")
    r.add_argument("--threads", type=int, default=1, help="torch CPU threads (1)")
    r.add_argument("--rl-seed", type=int, metavar="N",
                   help="seed of the RL stage only (default: --seed); the base, the audit's "
                        "problems and its sampling stay those of --seed")
    r.add_argument("--group-size", type=int, metavar="G",
                   help="completions per problem in RL (default: the preset's)")
    r.add_argument("--base-from", metavar="DIR",
                   help="copy the pretrained base of another run folder instead of "
                        "pretraining (its seed, model and pretraining options must match)")
    r.add_argument("--sample", default="all", choices=["all", "last"],
                   help="which models the audit samples: all checkpoints, or the base and "
                        "the last checkpoint only (for tables of many runs) (all)")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError, require

    require("torch", "hf", "the lab")
    require("transformers", "hf", "the lab")
    from rlvr_boundary.lab.run import LabConfig
    from rlvr_boundary.lab.run import run as run_lab
    from rlvr_boundary.shaping import ShapingConfig

    if args.export_example and args.experiment not in ("narrowing", "entropy"):
        raise InputError("--export-example copies the rollouts of the narrowing experiment; "
                         f"it does not apply to --experiment {args.experiment}",
                         field="export-example")
    try:
        shaping = ShapingConfig(estimator=args.estimator, k=args.passk_k,
                                perplexity=args.perplexity_shaping,
                                position=args.position_shaping,
                                pos_window=None if args.position_shaping else (200, 300))
        cfg = LabConfig.from_preset(args.preset, experiment=args.experiment, seed=args.seed,
                                    threads=args.threads, shaping=shaping, kl_coef=args.kl,
                                    rl_seed=args.rl_seed, group_size=args.group_size,
                                    sample=args.sample)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({}, [args.base_from], folders={"--out": args.out,
                                                 "--export-example": args.export_example})
    doc = run_lab(cfg, args.out, console=console, base_from=args.base_from)
    if "headline" in doc:  # the experiments other than narrowing say their own numbers
        for line in doc["headline"]:
            console.print(line)
        console.print(f"wrote {args.out}/lab_result.json")
        return 0
    console.print(f"pass@1: base {doc['pass_at_1']['base']:.3f}, "
                  f"{doc['final_checkpoint']} {doc['pass_at_1']['rl']:.3f}; "
                  f"pass@{doc['pass_at_K']['K']}: base {doc['pass_at_K']['base']:.3f}, "
                  f"{doc['final_checkpoint']} {doc['pass_at_K']['rl']:.3f}")
    console.print(doc["verdict"])
    t = doc["timings"]
    console.print("time (wall / CPU s): " + ", ".join(
        f"{k} {v['wall_s']:.0f}/{v['cpu_s']:.0f}" for k, v in t.items()))
    if "entropy" in doc:
        lr = doc["entropy"]["learning"]
        console.print(f"where learning landed: {lr['barely_moved']['0.05']:.1%} of "
                      f"{lr['tokens']} tokens moved by at most 0.05 in probability; "
                      f"wrote {args.out}/entropy.png, entropy.md, entropy.json, learning.json")
    console.print(f"wrote {args.out}/report.html and {args.out}/lab_result.json")
    if args.export_example:
        from rlvr_boundary.lab.run import export_example

        console.print(f"wrote the example folder {export_example(args.out, args.export_example)}")
    return 0
