"""``rlvr-boundary plan``: samples per prompt needed to certify a gain or a loss, from a pilot.

Parse -> :func:`rlvr_boundary.pipelines.plan.run` -> print.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.plan import PlanOptions


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
    add_flags(p, PlanOptions, groups={"inputs": io})
    p.add_argument("--json", metavar="OUT", help="write the plan as JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import plan as P
    from rlvr_boundary.report import words as W

    doc = P.run(args.base, args.rl, from_args(PlanOptions, args), json_path=args.json)
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    if args.json:
        console.print(f"wrote {args.json}", markup=False)
    return 0
