"""``rlvr-boundary price``: the count-free pass@k price diagnostic of the No Free Lunch paper.

Parse -> :func:`rlvr_boundary.pipelines.price.run` -> print.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.price import PriceOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "price",
        help="crossings, bound, price and k* from two columns of success rates or a printed curve",
        description="Reads per-prompt success rates of base and RL (two columns, CSV/TSV/space, "
                    "optional header) or a published aggregate curve (three columns: k, pass@k "
                    "base, pass@k RL) from FILE or stdin.")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="table (default: stdin)")
    add_flags(p, PriceOptions)
    p.add_argument("--json", metavar="OUT", help="write the result as JSON")
    p.add_argument("--figure", metavar="DIR",
                   help="also draw the curves and D(k) as price.png, .pdf and .svg in DIR")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import price as P
    from rlvr_boundary.report import words as W

    doc = P.run(args.file, from_args(PriceOptions, args), json_path=args.json,
                figure=args.figure)
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    for path in (args.json, args.figure):
        if path:
            console.print(f"wrote {path}", markup=False)
    return 0
