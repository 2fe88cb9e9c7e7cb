"""``rlvr-boundary compare``: pass@k of base vs RL, crossover, price and how sure we are.

Parse -> :func:`rlvr_boundary.pipelines.compare.run` -> print. The flags of the
options are generated from :class:`~rlvr_boundary.pipelines.compare.CompareOptions`.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.compare import CompareOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare a trained checkpoint with its base (pass@k, k*, price, band)",
        description="Exact pass@k curves of both models, where RL stops helping, what it cost, "
                    "and a simultaneous confidence band over the budget grid.")
    io = p.add_argument_group("inputs")
    io.add_argument("--base", metavar="FILE", help="base model results (any input format)")
    io.add_argument("--rl", metavar="FILE", help="trained model results (any input format)")
    io.add_argument("--example", action="store_true",
                    help="use the embedded DeepScaleR example (real counts, 1,060 prompts)")
    io.add_argument("--base-model", metavar="LABEL",
                    help="model to take from a base file that holds several")
    io.add_argument("--rl-model", metavar="LABEL",
                    help="model to take from an RL file that holds several")
    groups = {"inputs": io, "statistics": p.add_argument_group("statistics")}
    add_flags(p, CompareOptions, groups=groups)
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="FILE", help="write the full result as JSON")
    out.add_argument("--out", metavar="DIR",
                     help="write result.json, curves.csv and the two figures (PNG) to DIR")
    out.add_argument("--pdf", action="store_true",
                     help="with --out, also write the figures as PDF (embedded TrueType fonts, "
                          "for papers); off by default because it doubles the time of --out")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console, err_console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import compare as P
    from rlvr_boundary.report import words as W

    labels: dict = {}
    if args.example:
        if args.base or args.rl:
            raise InputError("give either --example or --base/--rl, not both")
        from rlvr_boundary.pipelines.common import example_inputs

        ex = example_inputs("deepscaler32k")
        (args.base, args.rl), labels = map(str, ex.paths), ex.labels
    else:
        missing = [f for f, v in (("--base FILE", args.base), ("--rl FILE", args.rl)) if not v]
        if missing:
            raise InputError(f"missing {' and '.join(missing)} (or use --example to try the "
                             "embedded example)")
    opts = from_args(CompareOptions, args, labels={**labels, **P.parse_labels(args.labels)})
    doc = P.run(args.base, args.rl, opts, base_model=args.base_model, rl_model=args.rl_model,
                json_path=args.json, out_dir=args.out, pdf=args.pdf,
                warn=lambda text: err_console.print(W.note_line(text)))
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    if args.out:
        console.print(f"wrote {Path(args.out) / 'result.json'}", markup=False)
    if args.json:
        console.print(f"wrote {args.json}", markup=False)
    if args.out:
        kinds = "PNG and PDF" if args.pdf else "PNG; --pdf adds PDF copies"
        console.print(f"wrote {Path(args.out) / 'curves.csv'} and the figures ({kinds}) in "
                      f"{args.out}", markup=False)
    return 0
