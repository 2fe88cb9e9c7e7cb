"""``rlvr-boundary compare``: pass@k of base vs RL, crossover, price and how sure we are."""

from __future__ import annotations

import argparse

from rlvr_boundary.commands._common import add_input_flags, add_stat_flags

CURVES_HEADER = ["k", "base_pass_at_k", "rl_pass_at_k", "diff", "band_lower", "band_upper",
                 "verdict"]


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
    add_input_flags(io)
    st = p.add_argument_group("statistics")
    add_stat_flags(st)
    st.add_argument("--K-se", type=int, dest="K_se", metavar="K",
                    help="base budget of the sampling-efficiency gap pass@K(base) - pass@1(RL) "
                         "(default 256, or the largest k)")
    from rlvr_boundary.commands._structure import add_arguments

    add_arguments(st)
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="FILE", help="write the full result as JSON")
    out.add_argument("--out", metavar="DIR",
                     help="write result.json, curves.csv and the two figures (PNG) to DIR")
    out.add_argument("--pdf", action="store_true",
                     help="with --out, also write the figures as PDF (embedded TrueType fonts, "
                          "for papers); off by default because it doubles the time of --out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.commands._common import compare_options
    from rlvr_boundary.console import console, err_console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.counts import align
    from rlvr_boundary.io.formats import (
        check_choices_used,
        detect_format,
        label_for,
        load_model_counts,
        parse_labels,
    )
    from rlvr_boundary.io.results import envelope, read_result, write_doc
    from rlvr_boundary.report import words as W

    if args.example:
        if args.base or args.rl:
            raise InputError("give either --example or --base/--rl, not both")
        from rlvr_boundary.examples import example_files

        ex = example_files("deepscaler32k")
        args.base, args.rl = str(ex["base"]), str(ex["rl"])
        labels = {args.base: ex["base_label"], args.rl: ex["rl_label"]}
    else:
        missing = [f for f, v in (("--base FILE", args.base), ("--rl FILE", args.rl)) if not v]
        if missing:
            raise InputError(f"missing {' and '.join(missing)} (or use --example to try the "
                             "embedded example)")
        labels = {}
    if args.pdf and not args.out:
        raise InputError("--pdf writes the figures' PDFs into the --out folder: give --out DIR")
    paths = [Path(args.base), Path(args.rl)]
    labels.update(parse_labels(args.label, paths))
    opts = compare_options(args, labels)
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--json": args.json,
                   "--out (result.json)": Path(args.out) / "result.json" if args.out else None,
                   "--out (curves.csv)": Path(args.out) / "curves.csv" if args.out else None},
                  [*paths, *opts.rl_runs, *opts.base_runs], folders={"--out": args.out})
    choices = opts.adapter_choices()
    formats = [detect_format(p) if opts.format == "auto" else opts.format for p in paths]
    check_choices_used(choices, formats)
    counts = [load_model_counts(path, model=model, fmt=fmt, label=label_for(path, labels),
                                choices=choices.get(fmt), flag=flag)
              for path, fmt, model, flag in ((paths[0], formats[0], args.base_model, "--base-model"),
                                             (paths[1], formats[1], args.rl_model, "--rl-model"))]
    base, rl = counts
    if base.model == rl.model:
        base.model, rl.model = f"base:{base.model}", f"rl:{rl.model}"
    primary = False  # several scorers' verdicts in the inputs: the primary one (else False)
    if opts.scorer or base.scorers or rl.scorers:
        from rlvr_boundary.io.verdicts import choose_scorer

        primary = choose_scorer([base, rl], opts.scorer)
    from rlvr_boundary.commands._structure import cluster_groups, load_runs

    extra_runs, runs = load_runs(args, base, rl)
    aligned = align([base, rl, *extra_runs], intersect=opts.intersect)
    note = W.dropped_note(aligned.dropped, aligned.n.shape[1])
    if note:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False)
    res = compare_aligned(aligned, base.model, rl.model, opts, runs=runs,
                          groups=cluster_groups(opts.cluster_by, aligned, [base, rl]))
    res["inputs"] = {"base": str(paths[0]), "rl": str(paths[1]), "dropped": aligned.dropped}
    if primary is not False:
        from rlvr_boundary.io.verdicts import scorer_result

        block = scorer_result([base, rl], aligned.prompt_ids, base.model, [rl.model], res["ks"],
                              opts, primary)
        if block is not None:
            res["scorers"] = block
    from rlvr_boundary.io.outputs import removed_on_failure

    out_dir = Path(args.out) if args.out else None
    made = [args.json] + ([out_dir] if out_dir is not None and not out_dir.exists() else
                          [out_dir / "result.json", out_dir / "curves.csv"] if out_dir else [])
    with removed_on_failure(*made):  # a failed run leaves none of the outputs it created
        targets = []
        if args.out:
            out = Path(args.out)
            if out.exists() and not out.is_dir():
                raise InputError(f"--out: {out} exists and is not a directory")
            out.mkdir(parents=True, exist_ok=True)
            targets.append(out / "result.json")
        if args.json:
            targets.append(Path(args.json))
        doc = envelope("compare", opts, res)  # validates the payload before anything is written
        for t in targets:
            write_doc(t, doc)
        if args.out:
            doc = read_result(targets[0], kind="compare")  # the files come from the result alone
            write_curves_csv(Path(args.out) / "curves.csv", doc)
            from rlvr_boundary.report.compare_figures import render_compare_figures

            render_compare_figures(doc, Path(args.out), pdf=args.pdf)
    print_summary(doc, console)
    from rlvr_boundary.commands._structure import print_extras

    print_extras(doc, console)
    for t in targets:
        console.print(f"wrote {t}")
    if args.out:
        kinds = "PNG and PDF" if args.pdf else "PNG; --pdf adds PDF copies"
        console.print(f"wrote {Path(args.out) / 'curves.csv'} and the figures ({kinds}) in "
                      f"{args.out}")
    return 0


def write_curves_csv(path, doc: dict) -> None:
    """k, pass@k of each model, D(k), band and verdict per budget (model labels in result.json)."""
    import csv

    from rlvr_boundary.io.atomic import atomic_open

    base, rl = doc["models"]["base"], doc["models"]["rl"]
    band = doc.get("band") or {}
    n = len(doc["ks"])
    lower, upper = band.get("lower") or [None] * n, band.get("upper") or [None] * n
    with atomic_open(path, "w") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CURVES_HEADER)
        for j, k in enumerate(doc["ks"]):
            w.writerow([k, repr(doc["pass_at_k"][base][j]), repr(doc["pass_at_k"][rl][j]),
                        repr(doc["diff"][j]), "" if lower[j] is None else repr(lower[j]),
                        "" if upper[j] is None else repr(upper[j]), doc["verdict_per_k"][j]])


def print_summary(res: dict, console) -> None:
    """What a person reads after ``compare``: a short table and the words of the result."""
    from rich.table import Table

    from rlvr_boundary.report import words as W

    base, rl = res["models"]["base"], res["models"]["rl"]
    ks = list(res["ks"])
    nb = res["n_samples"][base]
    n_text = f"{nb['min']}" if nb["min"] == nb["max"] else f"{nb['min']} to {nb['max']}"
    console.print(f"[bold]{rl}[/] against [bold]{base}[/] on {res['n_prompts']} prompts, "
                  f"n = {n_text} samples per prompt")
    t = Table(show_header=True, header_style="bold")
    for col in ("k", f"pass@k {base}", f"pass@k {rl}", "D(k), points", "band, points",
                "verdict"):
        t.add_column(col, justify="right")
    show = sorted({ks[0], ks[-1], *[k for k in ks if k & (k - 1) == 0],
                   *([res["k_star"]] if res["k_star"] else [])})
    band = res.get("band")
    for k in show:
        j = ks.index(k)
        b = f"{W.pts(band['lower'][j])} to {W.pts(band['upper'][j])}" if band else "-"
        t.add_row(str(k), f"{res['pass_at_k'][base][j]:.4f}", f"{res['pass_at_k'][rl][j]:.4f}",
                  W.pts(res["diff"][j]), b, res["verdict_per_k"][j])
    console.print(t)
    nr = res["n_samples"][rl]
    note = W.one_sample_note(max(nb["max"], nr["max"]))
    if note:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"Solved by at least one sample: {base} {res['solved_at_n'][base]} of "
                  f"{res['n_prompts']}, {rl} {res['solved_at_n'][rl]} of {res['n_prompts']}.")
    console.print(W.crossings_sentence(res))
    price = (f"price {W.pts(res['price'], False)} points ({res['price']:.5f}) at k = "
             f"{res['price_k']}" if res["price"] > 0 else "no price on the grid")
    kstar = f"k* = {res['k_star']}" if res["k_star"] is not None else "no k* on the grid"
    console.print(f"{kstar}; {price}.")
    for sentence in (W.delta_se_sentence(res), W.band_sentence(res), W.bootstrap_sentence(res)):
        if sentence:
            console.print(sentence)
    console.print(f"[bold]{W.headline(res)}[/]")
    console.print(W.explanation(res))
    if res.get("scorers"):
        for line in W.scorer_lines(res["scorers"]):
            console.print(line, highlight=False, markup=False)
