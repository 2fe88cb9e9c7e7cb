"""``rlvr-boundary theory``: the No Free Lunch lab (verify, frontier, diagnose).

Parse -> :mod:`rlvr_boundary.pipelines.theory` -> print; the options of each
verb generate its flags.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.theory import FrontierOptions, TheoryVerifyOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("theory", help="No Free Lunch theory lab: verify, frontier, diagnose",
                       description="The shared-strategy model of the No Free Lunch paper: a "
                                   "fixed-seed verification suite, the price frontier of a fitness "
                                   "matrix, and the free-lunch diagnosis.")
    tsub = p.add_subparsers(dest="theory_command", required=True, metavar="SUBCOMMAND")
    v = tsub.add_parser("verify", help="re-check every claim on fixed-seed instances")
    add_flags(v, TheoryVerifyOptions)
    v.add_argument("--json", metavar="OUT", default="theory-verify.json",
                   help="where to write the results as JSON (theory-verify.json)")
    v.set_defaults(func=main_verify)
    matrix_help = ("CSV: header 'strategy,pi0,<prompt ids...>', one row per strategy "
                   "(--example: the 3x3 counterexample)")
    f = tsub.add_parser("frontier", help="plot the price frontier and the tilt path of a matrix")
    f.add_argument("matrix", metavar="MATRIX", nargs="?", help=matrix_help)
    f.add_argument("--example", action="store_true", help="use the shipped 3x3 counterexample")
    f.add_argument("--out", default="frontier.png", metavar="FIG", help="figure (.png/.pdf/.svg)")
    f.add_argument("--json", metavar="OUT", help="write the frontier and path as JSON")
    add_flags(f, FrontierOptions)
    f.set_defaults(func=main_frontier)
    d = tsub.add_parser("diagnose", help="is there a free lunch? the direction or the weights")
    d.add_argument("matrix", metavar="MATRIX", nargs="?", help=matrix_help)
    d.add_argument("--example", action="store_true", help="use the shipped 3x3 counterexample")
    d.add_argument("--json", metavar="OUT", help="write the diagnosis as JSON")
    d.set_defaults(func=main_diagnose)


def _matrix(args) -> str:
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.pipelines.theory import example_matrix

    if args.example == bool(args.matrix):
        raise InputError("give a MATRIX file or --example (not both)")
    return str(example_matrix()) if args.example else args.matrix


def _print(doc: dict) -> None:
    from rlvr_boundary.console import console
    from rlvr_boundary.report import words as W

    for item in W.console_lines(doc):
        console.print(item, markup=False)


def main_verify(args) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import theory as P

    with console.status("running the verification suite") as st:
        doc = P.verify(from_args(TheoryVerifyOptions, args), json_path=args.json,
                       progress=lambda name: st.update(f"checking {name}"))
    _print(doc)
    console.print(f"wrote {args.json}", markup=False)
    return 1 if doc["failed"] else 0


def main_frontier(args) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import theory as P

    doc = P.frontier(_matrix(args), from_args(FrontierOptions, args), json_path=args.json,
                     figure=args.out)
    _print(doc)
    for path in (args.out, args.json):
        if path:
            console.print(f"wrote {path}", markup=False)
    return 0


def main_diagnose(args) -> int:
    from rlvr_boundary.pipelines import theory as P

    _print(P.diagnose(_matrix(args), json_path=args.json))
    return 0
