"""``rlvr-boundary report``: one HTML page on what training did to the reasoning boundary."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="audit a base model and its checkpoints: one self-contained HTML page + JSON + figures",
        description="Reads rollout tables or per-prompt counts of a base model and any number of "
                    "checkpoints (files may hold several models) and writes an offline HTML report, "
                    "a JSON file with every number shown, and the figures as PNG and PDF.")
    p.add_argument("inputs", nargs="*", metavar="ROLLOUTS",
                   help="rollout tables or count files (Parquet, JSONL, CSV, shard dirs, adapters)")
    p.add_argument("--example", nargs="?", const="deepscaler32k", default=None,
                   choices=["deepscaler32k", "lab"], metavar="NAME",
                   help="run on an embedded example: deepscaler32k (default; real counts, "
                        "1,060 problems) or lab (the RLVR lab's rollouts with texts)")
    p.add_argument("--base", metavar="LABEL", help="label of the base model (default: 'base' or the first)")
    p.add_argument("--label", action="append", default=[], metavar="FILE=LABEL",
                   help="model label for a single-model file without one (repeatable)")
    p.add_argument("--out", default="report.html", metavar="HTML", help="report file (report.html)")
    p.add_argument("--format", default="auto", help="input format (default: detect)")
    p.add_argument("--k", type=int, metavar="K", help="audit budget K for coverage and support "
                   "(default: the smallest n)")
    p.add_argument("--ks", metavar="GRID", help="pass@k grid, e.g. 1-128 (default 1..n)")
    p.add_argument("--zeta", type=float, default=0.05, help="support miss probability (0.05)")
    p.add_argument("--bootstrap", type=int, default=4000, metavar="B",
                   help="Gaussian multipliers / bootstrap resamples (4000)")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (0.05)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument("--top", type=int, default=10, help="regressed/improved problems listed (10)")
    p.add_argument("--intersect", action="store_true",
                   help="audit the common prompts when prompt sets differ (else an error)")
    p.add_argument("--no-figures", action="store_true",
                   help="do not write PNG/PDF files (the HTML keeps its inline SVG)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from rlvr_boundary.analysis.audit import ReportOptions
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.report import make_report

    t0 = time.perf_counter()
    labels, notes = {}, []
    for spec in args.label:
        if "=" not in spec:
            raise InputError(f"--label needs FILE=LABEL, got {spec!r}", field="label")
        f, lab = spec.rsplit("=", 1)
        labels[str(Path(f))] = lab
    paths = [Path(p) for p in args.inputs]
    if args.example:
        if paths:
            raise InputError("give either --example or input files, not both", field="example")
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
    if len(paths) < 1:
        raise InputError("give rollout or count files (or --example)", field="inputs")
    for name, ok in (("bootstrap", args.bootstrap >= 2), ("alpha", 0 < args.alpha < 1),
                     ("zeta", 0 < args.zeta < 1), ("top", args.top >= 0)):
        if not ok:
            raise InputError(f"--{name} is out of range", field=name)
    opts = ReportOptions(base=args.base, k=args.k, ks=args.ks, zeta=args.zeta,
                         bootstrap=args.bootstrap, alpha=args.alpha, seed=args.seed, top=args.top,
                         intersect=args.intersect, format=args.format,
                         figures=not args.no_figures)
    audit = make_report(paths, Path(args.out), opts, labels=labels, notes=notes, console=console)
    for line in audit["summary"]:
        console.print(line)
    out = Path(args.out)
    console.print(f"wrote {out}, {out.with_suffix('.json')}"
                  + (f" and {audit['figures']['folder']}/" if audit["figures"] else "")
                  + f" in {time.perf_counter() - t0:.1f} s")
    return 0
