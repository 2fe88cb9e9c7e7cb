"""``rlvr-boundary report``: one HTML page on what training did to the reasoning boundary.

Parse -> :func:`rlvr_boundary.pipelines.audit.run` (load every input once,
compute the audit, write the result JSON, draw the page from that file alone)
-> print. ``--from RESULT`` is :func:`rlvr_boundary.pipelines.audit.redraw`:
the page from a result file, without reading the inputs or recomputing.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.audit import ReportOptions
from rlvr_boundary.pipelines.compare import CompareOptions

#: CompareOptions fields that are not flags of report: a report takes further runs of a
#: model as inputs labelled NAME#runJ, and its Delta_SE budget is the default one.
NOT_REPORT_FLAGS = ("K_se", "rl_runs", "base_runs")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="audit a base model and its checkpoints: one self-contained HTML page + JSON + figures",
        description="Reads rollout tables or per-prompt counts of a base model and any number of "
                    "checkpoints (files may hold several models) and writes an offline HTML report, "
                    "a JSON file with every number shown, and the figures as PNG and PDF. A model "
                    "labelled NAME#runJ (e.g. --label FILE=ckpt#run2) is a further run "
                    "(training seed or sampling run) of the model labelled NAME: its "
                    "comparison averages over the runs and its band covers run-to-run "
                    "variance.")
    io = p.add_argument_group("inputs")
    io.add_argument("inputs", nargs="*", metavar="ROLLOUTS",
                    help="rollout tables or count files (Parquet, JSONL, CSV, shard dirs, adapters)")
    io.add_argument("--example", nargs="?", const="deepscaler32k", default=None,
                    choices=["deepscaler32k", "lab"], metavar="NAME",
                    help="run on an embedded example: deepscaler32k (default; real counts, "
                         "1,060 problems) or lab (the RLVR lab's rollouts with texts)")
    io.add_argument("--from", dest="from_result", metavar="RESULT",
                    help="redraw the page from a report's JSON result file (no inputs read, "
                         "nothing recomputed)")
    io.add_argument("--prompts", metavar="FILE",
                    help="prompt file (JSONL or CSV with an id and a text, as 'sample "
                         "--prompts' reads) whose texts the page shows beside the problem ids "
                         "(default: the rollouts' 'prompt' column, when they have one)")
    io.add_argument("--learning", action="append", default=[], metavar="FILE",
                    help="where-learning-landed result of 'rlvr-boundary score --before' to show "
                         "in the report (repeatable)")
    groups = {"inputs": io, "statistics": p.add_argument_group("statistics")}
    add_flags(p, CompareOptions, groups=groups, skip=NOT_REPORT_FLAGS)
    out = p.add_argument_group("output")
    groups["output"] = out
    add_flags(p, ReportOptions, groups=groups)
    out.add_argument("--out", default="report.html", metavar="HTML",
                     help="report file; its JSON and figures go beside it (default report.html)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import time

    from rlvr_boundary.console import console, err_console, progress
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import audit as P
    from rlvr_boundary.pipelines.compare import parse_labels
    from rlvr_boundary.report import words as W

    t0 = time.perf_counter()
    P.outputs_of(args.out)  # a page that does not end in .html is refused first
    if args.from_result:
        if args.inputs or args.example or args.learning or args.prompts:
            raise InputError("--from redraws a result file: give no inputs, no --example, "
                             "no --learning and no --prompts")
        doc, files = P.redraw(args.from_result, args.out, figures=args.figures)
        written = [args.out]
    else:
        paths, labels, notes, base = list(args.inputs), {}, [], args.base
        prompts = args.prompts
        if args.example:
            if paths:
                raise InputError("give either --example or input files, not both")
            from rlvr_boundary.pipelines.common import example_inputs

            ex = example_inputs(args.example)
            paths, labels, notes, base = ex.paths, ex.labels, ex.notes, base or ex.base
            prompts = prompts or ex.prompts
        compare = from_args(CompareOptions, args, labels={**labels,
                                                          **parse_labels(args.labels)})
        opts = from_args(ReportOptions, args, compare=compare, base=base)
        with progress() as bar:
            task = bar.add_task("reading inputs", total=None)
            doc, files = P.run(paths, opts, args.out, notes=notes, learning=args.learning,
                               prompts=prompts,
                               progress=lambda k: bar.advance(task, k),
                               warn=lambda text: err_console.print(W.note_line(text)))
        written = [args.out, str(P.outputs_of(args.out)[1])]
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    console.print(f"wrote {', '.join(map(str, written))}"
                  + (f" and {files['folder']}/" if files else "")
                  + f" in {time.perf_counter() - t0:.1f} s", markup=False)
    return 0
