"""``rlvr-boundary compare``: pass@k of base vs RL, crossover, price and how sure we are."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare a trained checkpoint with its base (pass@k, k*, price, band)",
        description="Exact pass@k curves of both models, where RL stops helping, what it cost, "
                    "and a simultaneous confidence band over the budget grid.")
    io = p.add_argument_group("inputs")
    io.add_argument("--base", metavar="FILE", help="base model results")
    io.add_argument("--rl", metavar="FILE", help="trained model results")
    io.add_argument("--example", action="store_true",
                    help="use the embedded DeepScaleR example (real counts, 1,060 prompts)")
    io.add_argument("--base-model", metavar="LABEL",
                    help="model label to take from a multi-model base file")
    io.add_argument("--rl-model", metavar="LABEL",
                    help="model label to take from a multi-model RL file")
    io.add_argument("--format", default="auto", help="input format (default: detect)")
    io.add_argument("--intersect", action="store_true",
                    help="keep only prompts present for both models (else differing sets are an error)")
    st = p.add_argument_group("statistics")
    st.add_argument("--ks", metavar="GRID", help="budgets: '1-128', '1,2,4,8', 'pow2' (default 1..n)")
    st.add_argument("--bootstrap", type=int, default=4000, metavar="B",
                    help="Gaussian multipliers of the band and paired-bootstrap resamples (4000)")
    st.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level (0.05)")
    st.add_argument("--seed", type=int, default=0, help="random seed (0)")
    st.add_argument("--K-se", type=int, dest="K_se", metavar="K",
                    help="base budget of Delta_SE = pass@K_B - pass@1_R (default 256 or max k)")
    from rlvr_boundary.commands._structure import add_arguments

    add_arguments(st)
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="OUT", help="write the full result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.analysis.pairwise import CompareOptions, compare_aligned
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.counts import align
    from rlvr_boundary.io.formats import load_model_counts
    from rlvr_boundary.io.results import envelope, write_result

    if args.bootstrap < 2:
        raise InputError("--bootstrap must be >= 2", field="bootstrap")
    if not 0 < args.alpha < 1:
        raise InputError("--alpha must lie in (0, 1)", field="alpha")
    if args.example:
        if args.base or args.rl:
            raise InputError("give either --example or --base/--rl, not both", field="example")
        from rlvr_boundary.examples import example_files

        ex = example_files("deepscaler32k")
        args.base, args.rl = ex["base"], ex["rl"]
        base_label, rl_label = ex["base_label"], ex["rl_label"]
    elif not (args.base and args.rl):
        raise InputError("need --base FILE and --rl FILE (or --example)", field="base")
    else:
        base_label = rl_label = None
    opts = CompareOptions(ks=args.ks, bootstrap=args.bootstrap, alpha=args.alpha, seed=args.seed,
                          K_se=args.K_se, intersect=args.intersect, format=args.format,
                          cluster_by=args.cluster_by, rl_runs=tuple(args.rl_run),
                          base_runs=tuple(args.base_run), extrapolate=args.extrapolate,
                          extrapolate_method=args.extrapolate_method,
                          verifier_error=args.verifier_error)
    base = load_model_counts(args.base, model=args.base_model, fmt=args.format, label=base_label)
    rl = load_model_counts(args.rl, model=args.rl_model, fmt=args.format, label=rl_label)
    if base.model == rl.model:
        base.model, rl.model = f"base:{base.model}", f"rl:{rl.model}"
    from rlvr_boundary.commands._structure import cluster_groups, load_runs

    extra_runs, runs = load_runs(args, base, rl)
    aligned = align([base, rl, *extra_runs], intersect=args.intersect)
    if aligned.dropped:
        from rlvr_boundary.console import err_console

        err_console.print(f"[yellow]warning:[/] --intersect kept {aligned.n.shape[1]} common "
                          f"prompts; dropped per model: {aligned.dropped}", highlight=False)
    res = compare_aligned(aligned, base.model, rl.model, opts, runs=runs,
                          groups=cluster_groups(args.cluster_by, aligned, [base, rl]))
    res["inputs"] = {"base": str(args.base), "rl": str(args.rl), "dropped": aligned.dropped}
    print_summary(res, console)
    from rlvr_boundary.commands._structure import print_extras

    print_extras(res, console)
    if args.json:
        write_result(args.json, "compare", opts, res)
        console.print(f"wrote {args.json}")
    else:
        envelope("compare", opts, res)  # same checks as a written result
    return 0


def print_summary(res: dict, console) -> None:
    """Human-readable summary of a comparison result."""
    from rich.table import Table

    from rlvr_boundary.analysis.pairwise import format_ranges, verdict

    base, rl = res["models"]["base"], res["models"]["rl"]
    ks = list(res["ks"])
    console.print(f"[bold]{rl}[/] vs [bold]{base}[/] on {res['n_prompts']} prompts "
                  f"(n = {res['n_samples'][base]['min']}"
                  + (f"..{res['n_samples'][base]['max']}" if res['n_samples'][base]['max']
                     != res['n_samples'][base]['min'] else "") + " samples per prompt)")
    t = Table(show_header=True, header_style="bold")
    for col in ("k", f"pass@k {base}", f"pass@k {rl}", "D(k)", "band"):
        t.add_column(col, justify="right")
    show = sorted({ks[0], ks[-1], *[k for k in ks if k & (k - 1) == 0],
                   *([res["k_star"]] if res["k_star"] else [])})
    band = res.get("band")
    for k in show:
        j = ks.index(k)
        b = (f"[{band['lower'][j]:+.4f}, {band['upper'][j]:+.4f}]" if band else "")
        t.add_row(str(k), f"{res['pass_at_k'][base][j]:.4f}", f"{res['pass_at_k'][rl][j]:.4f}",
                  f"{res['diff'][j]:+.4f}", b)
    console.print(t)
    console.print(f"solved at k = n: {base} {res['solved_at_n'][base]}/{res['n_prompts']}, "
                  f"{rl} {res['solved_at_n'][rl]}/{res['n_prompts']}")
    console.print(f"crossings on the grid: {res['n_crossings']}"
                  + (" at " if res["crossings"] else "") + ", ".join(f"({c['k_before']}, {c['k_after']}] ~ k = {c['k_continuous']:.1f}"
                              for c in res["crossings"])
                  + f"; bound from plug-in rates: {res['crossing_bound']} (V = {res['crossing_bound_V']})")
    ks_note = "" if res["gain_at_1"] in (True, None) else " (no pass@1 gain)"
    console.print(f"k* = {res['k_star']}{ks_note}; price = {res['price']:.5f}"
                  + (f" at k = {res['price_k']}" if res["price_k"] else ""))
    if res.get("delta_se") is not None:
        console.print(f"Delta_SE = pass@{res['delta_se_K']} {base} - pass@1 {rl} = {res['delta_se']:.4f}")
    if band:
        console.print(f"{band['level']:.0%} simultaneous band (critical value {band['critical_value']:.3f}): "
                      f"supported gain at k = {format_ranges(res['gain_budgets'])}; supported loss at "
                      f"k = {format_ranges(res['loss_budgets'])}; first-loss set {res['first_loss_set']}")
        ci = res.get("bootstrap_ci")
        if ci:
            kc = ci["k_star"]["ci"]
            console.print(f"paired bootstrap {1 - ci['alpha']:.0%} CIs: k* [{format(kc[0], 'g') if kc[0] is not None else '> ' + str(ks[-1])}, "
                          f"{format(kc[1], 'g') if kc[1] is not None else '> ' + str(ks[-1])}], price "
                          f"[{ci['price']['ci'][0]:.4f}, {ci['price']['ci'][1]:.4f}]"
                          + (f", Delta_SE [{ci['delta_se']['ci'][0]:.4f}, {ci['delta_se']['ci'][1]:.4f}]"
                             if "delta_se" in ci else ""))
    console.print(verdict(res))
