"""``rlvr-boundary rft-select``: pick RFT training data that keeps pass@k (RUC report recipe).

Parse -> :func:`rlvr_boundary.pipelines.rft_select.run` -> print.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.rft_select import RftOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rft-select",
        help="select rejection-sampling fine-tuning data: rule filters + 5%% negatives + high RBF",
        description="Applies the rule filters of the RUC report (a boxed answer, a digit, text "
                    "cut after the answer, 3-gram redundancy <= 0.31) to a rollout table, then "
                    "selects BUDGET samples: a share of random negatives and positives ranked "
                    "by mean RBF (or mean entropy, or at random). Writes the selected rows "
                    "(text cut after the answer) and a JSON summary counting every drop reason.")
    p.add_argument("rollouts", metavar="ROLLOUTS", help="rollout table (Parquet, JSONL or shards)")
    add_flags(p, RftOptions)
    p.add_argument("--out", metavar="OUT",
                   help="selected table, .parquet or .jsonl (default: ROLLOUTS.rft.parquet)")
    p.add_argument("--summary", metavar="JSON",
                   help="summary result file (default: OUT with .summary.json)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import rft_select as P
    from rlvr_boundary.report import words as W

    doc = P.run(args.rollouts, from_args(RftOptions, args), out=args.out, summary=args.summary)
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    summary = Path(args.summary) if args.summary else P.summary_path_for(Path(doc["output"]))
    console.print(f"wrote {doc['output']} and {summary}", markup=False)
    return 0
