"""``rlvr-boundary report``: one HTML page on what training did to the reasoning boundary.

The verb orchestrates: load every input once, compute the audit, write the
result JSON, then draw the page from that file alone. ``--from RESULT`` redraws
a page from a result file without reading the inputs or recomputing.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.analysis.options import ReportOptions
from rlvr_boundary.commands._common import add_input_flags, add_stat_flags

R = ReportOptions


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
    io.add_argument("--base", metavar="LABEL", default=R.base,
                    help="label of the base model (default: 'base', else the first model read)")
    io.add_argument("--learning", action="append", default=[], metavar="FILE",
                    help="where-learning-landed result of 'rlvr-boundary score --before' to show "
                         "in the report (repeatable)")
    add_input_flags(io)
    st = p.add_argument_group("statistics")
    st.add_argument("--k", type=int, metavar="K", default=R.k,
                    help="audit budget K for coverage and support (default: the smallest n)")
    add_stat_flags(st)
    from rlvr_boundary.commands._structure import add_arguments

    # Further runs of a model are inputs labelled NAME#runJ (e.g. --label FILE=ckpt#run2).
    add_arguments(st, runs=False)
    st.add_argument("--zeta", type=float, default=R.zeta,
                    help=f"support miss probability (default {R.zeta})")
    st.add_argument("--top", type=int, default=R.top,
                    help=f"regressed and improved problems listed (default {R.top})")
    st.add_argument("--quality-sample", type=int, default=R.quality_sample, metavar="N",
                    help="quality flags derived from completion text use a uniform random "
                         f"sample of at most N completions per model; 0 = all "
                         f"(default {R.quality_sample:,})")
    out = p.add_argument_group("output")
    out.add_argument("--out", default="report.html", metavar="HTML",
                     help="report file; its JSON and figures go beside it (default report.html)")
    out.add_argument("--no-figures", action="store_true",
                     help="do not write PNG/PDF files (the HTML keeps its inline SVG)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.report.build import check_html_path, payload_of, render_report
    from rlvr_boundary.report import words as W

    t0 = time.perf_counter()
    out = check_html_path(args.out)
    if args.from_result:
        if args.inputs or args.example or args.learning:
            raise InputError("--from redraws a result file: give no inputs, no --example and "
                             "no --learning")
        from rlvr_boundary.io.outputs import check_outputs

        check_outputs({"--out": out}, [args.from_result],
                      folders={"--out (its figures)": out.with_name(out.stem + "_figures")})
        doc = read_result(args.from_result, kind="report")
    from rlvr_boundary.io.outputs import removed_on_failure

    # A failed run leaves nothing it created: no result JSON without its page, no figures.
    json_out = None if args.from_result else out.with_suffix(".json")
    with removed_on_failure(out, json_out, out.with_name(out.stem + "_figures")):
        if not args.from_result:
            doc = compute(args, out)
        files = render_report(doc, out, figures=not args.no_figures)
    for line in W.summary_lines(payload_of(doc)):
        console.print(line)
    written = [str(out)] + ([] if args.from_result else [str(out.with_suffix(".json"))])
    console.print(f"wrote {', '.join(written)}"
                  + (f" and {files['folder']}/" if files else "")
                  + f" in {time.perf_counter() - t0:.1f} s")
    return 0


def compute(args: argparse.Namespace, out) -> dict:
    """Inputs and options from the flags, then :func:`rlvr_boundary.report.make_report`."""
    from pathlib import Path

    from rlvr_boundary.commands._common import compare_options
    from rlvr_boundary.console import err_console, progress
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.inputs import parse_labels
    from rlvr_boundary.report.build import make_report

    paths = [Path(p) for p in args.inputs]
    notes: list[str] = []
    labels: dict[str, str] = {}
    if args.example:
        if paths:
            raise InputError("give either --example or input files, not both")
        from rlvr_boundary.examples import EXAMPLES, example_dir, example_files

        if args.example == "lab":
            paths = [example_dir("lab")]
            args.base = args.base or EXAMPLES["lab"]["base_label"]
        else:
            ex = example_files("deepscaler32k")
            paths = [ex["base"], ex["rl"]]
            labels = {str(ex["base"]): ex["base_label"], str(ex["rl"]): ex["rl_label"]}
            args.base = args.base or ex["base_label"]
        readme = (example_dir(args.example) / "README.md").read_text(encoding="utf-8")
        notes.append("Example data: " + " ".join(
            line.strip() for line in readme.split("Source:", 1)[-1].split("\n\n")[0].splitlines()))
    if not paths:
        raise InputError("missing ROLLOUTS: give rollout or count files (or --example, or "
                         "--from RESULT to redraw a page)")
    labels.update(parse_labels(args.label, paths))
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--out": out, "--out (its JSON)": out.with_suffix(".json")}, paths,
                  folders={"--out (its figures)": out.with_name(out.stem + "_figures")})
    opts = ReportOptions(compare=compare_options(args, labels), base=args.base, k=args.k,
                         zeta=args.zeta, top=args.top, quality_sample=args.quality_sample,
                         figures=not args.no_figures)
    with progress() as bar:
        task = bar.add_task("reading inputs", total=None)
        return make_report(paths, out, opts, notes=notes, learning=args.learning,
                           progress=lambda k: bar.advance(task, k),
                           warn=lambda text: err_console.print(f"[yellow]note:[/] {text}",
                                                               highlight=False))
