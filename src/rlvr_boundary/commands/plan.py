"""``rlvr-boundary plan``: samples per prompt needed to certify a gain or a loss, from a pilot."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="from pilot counts, how many samples per prompt certify a gain or loss with given power",
        description="Fits the success-rate distributions of a small pilot run of both models, "
                    "simulates studies at several samples-per-prompt budgets (uniform, or "
                    "allocated to the prompts that matter) and reports the power of the "
                    "simultaneous band to certify the claims you name.")
    io = p.add_argument_group("inputs")
    io.add_argument("--base", metavar="FILE", required=True, help="pilot counts of the base model")
    io.add_argument("--rl", metavar="FILE", required=True, help="pilot counts of the trained model")
    io.add_argument("--format", default="auto", help="input format (default: detect)")
    cl = p.add_argument_group("claims and design")
    cl.add_argument("--gain-at", dest="gain_at", type=int, metavar="K",
                    help="certify that the trained model is better at budget K (e.g. 1)")
    cl.add_argument("--loss-at", dest="loss_at", type=int, metavar="K",
                    help="certify that the trained model is worse at budget K (e.g. 64)")
    cl.add_argument("--power", type=float, default=0.8, help="required power (0.8)")
    cl.add_argument("--budgets", metavar="N,N,...",
                    help="candidate samples per prompt (default: a search K, 2K, 4K, ... until "
                         "the power is reached)")
    cl.add_argument("--prompts", type=int, metavar="P",
                    help="prompts in the planned study (default: the pilot's)")
    cl.add_argument("--sims", type=int, default=400, help="simulated studies per design (400)")
    cl.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (0.05)")
    cl.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument("--json", metavar="OUT", help="write the plan as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.analysis.plan import PlanOptions, plan_design
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.counts import align
    from rlvr_boundary.io.formats import load_model_counts
    from rlvr_boundary.io.results import envelope, write_result

    try:
        budgets = tuple(int(b) for b in args.budgets.split(",")) if args.budgets else ()
    except ValueError:
        raise InputError(f"--budgets: expected integers such as 64,128,256, got {args.budgets!r}")
    opts = PlanOptions(gain_at=args.gain_at, loss_at=args.loss_at, power=args.power,
                       budgets=budgets, prompts=args.prompts, sims=args.sims, alpha=args.alpha,
                       seed=args.seed)
    base = load_model_counts(args.base, fmt=args.format, label="base")
    rl = load_model_counts(args.rl, fmt=args.format, label="rl")
    al = align([base, rl])
    res = plan_design(al.n[0], al.c[0], al.n[1], al.c[1], opts)
    claims = " and ".join(f"a {w} at k = {k}" for w, k in (("gain", opts.gain_at),
                                                            ("loss", opts.loss_at)) if k)
    console.print(f"Pilot: {res['pilot']['prompts']} prompts, n = {res['pilot']['n_base']} "
                  f"(base) and {res['pilot']['n_rl']} (trained). Planned study: "
                  f"{res['prompts']} prompts; claim: {claims}; band over k = 1..{opts.k_max}.")
    from rlvr_boundary.report import words as W

    for row in res["designs"]:
        console.print(W.plan_design_line(row))
    console.print(W.plan_recommendation(res, opts.power))
    console.print("Use the pilot only to allocate: estimate from the new samples alone.")
    if args.json:
        write_result(args.json, "plan", opts, res)
        console.print(f"wrote {args.json}")
    else:
        envelope("plan", opts, res)
    return 0
