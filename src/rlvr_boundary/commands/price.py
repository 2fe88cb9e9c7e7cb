"""``rlvr-boundary price``: the count-free pass@k price diagnostic of the No Free Lunch paper."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "price",
        help="crossings, bound, price and k* from two columns of success rates or a printed curve",
        description="Reads per-prompt success rates of base and RL (two columns, CSV/TSV/space, "
                    "optional header) or a published aggregate curve (three columns: k, pass@k "
                    "base, pass@k RL) from FILE or stdin.")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="table (default: stdin)")
    p.add_argument("--kind", choices=["auto", "rates", "curve"], default="auto",
                   help="input kind (default: 2 columns = rates, 3 = curve)")
    p.add_argument("--ks", metavar="GRID", help="budget grid for rates (default 1-1024)")
    p.add_argument("--round", type=int, dest="round_decimals", metavar="D",
                   help="round rates to D decimals before merging equal values in the bound")
    p.add_argument("--json", metavar="OUT", help="write the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.analysis.price import PriceOptions, diagnose
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.formats import read_price_table
    from rlvr_boundary.io.results import write_result

    from rlvr_boundary.io.outputs import check_outputs

    opts = PriceOptions(ks=args.ks, kind=args.kind, round_decimals=args.round_decimals)
    check_outputs({"--json": args.json}, [args.file])
    kind, header, values, source = read_price_table(args.file, opts.kind)
    try:
        res = diagnose(kind, values, opts)
    except InputError as exc:
        exc.path = exc.path or source
        exc.args = (str(exc),)
        raise
    res["columns"] = header
    res["input"] = source
    ks = list(res["ks"])
    if res["input_kind"] == "rates":
        console.print(f"{res['n_prompts']} prompts; rate curves 1-(1-p)^k on k = {ks[0]}..{ks[-1]} "
                      f"({len(ks)} budgets)")
        console.print(f"crossings: {res['n_crossings']}; bound (generalized Descartes): "
                      f"{res['crossing_bound']} (V = {res['crossing_bound_V']})")
    else:
        console.print(f"published curve at k = {', '.join(map(str, ks))}")
        console.print(f"crossings: {res['n_crossings']} in "
                      + (", ".join(f"({a}, {b}]" for a, b in res["crossing_intervals"]) or "-"))
    for c in res["crossings"]:
        console.print(f"  {c['direction'].replace('_', ' ')} between k = {c['k_before']} and "
                      f"{c['k_after']} (log-k interpolation: {c['k_continuous']:.1f})")
    kstar = f"k* = {res['k_star']}" if res["k_star"] is not None else "no k* on the grid"
    price = (f"price = {res['price']:.4f} at k = {res['price_k']}" if res["price"] > 0
             else "no price on the grid")
    console.print(f"{kstar}; {price}")
    if res["input_kind"] == "rates":
        console.print(f"as k -> infinity, D -> {res['asymptotic_diff']:+.4f} "
                      "(difference in the share of prompts with nonzero success rate)")
    if args.json:
        write_result(args.json, "price", opts, res)
        console.print(f"wrote {args.json}")
    return 0
