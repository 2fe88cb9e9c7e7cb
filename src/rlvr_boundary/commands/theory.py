"""``rlvr-boundary theory``: the No Free Lunch lab (verify, frontier, diagnose)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from rlvr_boundary.analysis.options import FrontierOptions  # noqa: F401 (its options)


@dataclass
class TheoryVerifyOptions:
    """Options of ``rlvr-boundary theory verify``."""

    quick: bool = False
    """Fewer instances per claim (for CI)."""
    seed: int = 20260003
    """Base seed of the suite (fixed; claim i draws from ``default_rng(seed + i)``)."""


@dataclass
class DiagnoseOptions:
    """Options of ``rlvr-boundary theory diagnose``."""

    matrix: str = ""
    """The fitness matrix CSV that was diagnosed."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("theory", help="No Free Lunch theory lab: verify, frontier, diagnose",
                       description="The shared-strategy model of the No Free Lunch paper: a "
                                   "fixed-seed verification suite, the price frontier of a fitness "
                                   "matrix, and the free-lunch diagnosis.")
    tsub = p.add_subparsers(dest="theory_command", required=True, metavar="SUBCOMMAND")
    v = tsub.add_parser("verify", help="re-check every claim on fixed-seed instances")
    v.add_argument("--quick", action="store_true", help="fewer instances per claim (CI)")
    v.add_argument("--json", metavar="OUT", default="theory-verify.json",
                   help="where to write the results as JSON (theory-verify.json)")
    v.set_defaults(func=run_verify)
    f = tsub.add_parser("frontier", help="plot the price frontier and the tilt path of a matrix")
    f.add_argument("matrix", metavar="MATRIX",
                   help="CSV: header 'strategy,pi0,<prompt ids...>', one row per strategy")
    f.add_argument("--out", default="frontier.png", metavar="FIG", help="figure (.png/.pdf/.svg)")
    f.add_argument("--json", metavar="OUT", help="write the frontier and path as JSON")
    f.add_argument("--taus", type=int, default=21, help="number of floors tau in [0, 1] (21)")
    f.add_argument("--kmax", type=int, default=1024, help="largest budget of the pass@k loss")
    f.set_defaults(func=run_frontier)
    d = tsub.add_parser("diagnose", help="is there a free lunch? the direction or the weights")
    d.add_argument("matrix", metavar="MATRIX", help="CSV as for 'frontier'")
    d.add_argument("--json", metavar="OUT", help="write the diagnosis as JSON")
    d.set_defaults(func=run_diagnose)


def run_verify(args) -> int:
    from rich.table import Table

    from rlvr_boundary.console import console
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.theory.suite import SEED, run_suite

    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--json": args.json}, [])  # before the suite runs, not after
    opts = TheoryVerifyOptions(quick=args.quick, seed=SEED)
    with console.status("running the verification suite") as st:
        res = run_suite(quick=args.quick, progress=lambda name: st.update(f"checking {name}"))
    t = Table(show_header=True, header_style="bold", show_lines=True)
    for c, kw in (("status", {"no_wrap": True}), ("claim", {"ratio": 2}), ("instances", {"justify": "right"}),
                  ("figure", {"ratio": 3}), ("s", {"justify": "right"})):
        t.add_column(c, overflow="fold", **kw)
    for c in res:
        color = {"PASS": "green", "FAIL": "red"}.get(c["status"], "yellow")
        t.add_row(f"[{color}]{c['status']}[/]", c["claim"], f"{c['instances']:,}", c["figure"],
                  f"{c['seconds']:.1f}")
    console.print(t)
    failed = [c for c in res if c["status"] == "FAIL"]
    passed = sum(c["status"] == "PASS" for c in res)
    console.print(f"{passed} PASS, {len(failed)} FAIL, {len(res) - passed - len(failed)} MEASURED "
                  f"({'quick' if args.quick else 'full'} suite, "
                  f"{sum(c['seconds'] for c in res):.1f} s)")
    write_result(args.json, "theory-verify", opts,
                 {"claims": res, "passed": passed, "failed": len(failed)})
    console.print(f"wrote {args.json}")
    return 1 if failed else 0


def run_frontier(args) -> int:
    import numpy as np

    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.theory.frontier import above_frontier, price_frontier, tilt_path

    if not 2 <= args.taus <= 10_000 or not 1 <= args.kmax <= 10**9:
        raise InputError("--taus must lie in 2..10000 and --kmax in 1..10^9", field="taus")
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--out": args.out, "--json": args.json}, [args.matrix],
                  suffixes={"--out": (".png", ".pdf", ".svg")})
    opts = FrontierOptions(taus=args.taus, kmax=args.kmax)
    from rlvr_boundary.io.matrix import read_matrix

    names, pi0, F, _ = read_matrix(args.matrix)
    ks = np.unique(np.append(2.0 ** np.arange(int(np.log2(args.kmax)) + 1), args.kmax))  # (K,)
    front = price_frontier(F, pi0, np.linspace(0, 1, args.taus), ks)
    path = tilt_path(F, pi0, ks=ks)
    above = above_frontier(F, pi0, front, path, ks)
    # The frontier at every tilt point's own floor too: the comparison that is a theorem.
    floors = np.unique(np.concatenate([[r["tau"] for r in front], [t["floor"] for t in path]]))
    at_floors = price_frontier(F, pi0, floors, ks)
    save_figure(frontier_figure(front, path, above, at_floors, args.kmax, F.shape), args.out)
    step = max(1, len(front) // 6)
    for i in sorted(set(range(0, len(front), step)) | {len(front) - 1}):
        console.print(frontier_line(front[i], args.kmax))
    for sentence in above_notes(above, args.taus):
        console.print(sentence)
    console.print(f"wrote {args.out}")
    if args.json:
        write_result(args.json, "theory-frontier", opts,
                     {"strategies": names, "frontier": front, "tilt_path": path,
                      "tilt_above_frontier": above})
    return 0


#: Prices below this are LP round-off (constraints hold to about 1e-9), not a loss.
NO_LOSS = 1e-8


def frontier_line(r: dict, kmax: int) -> str:
    """One console line of the frontier, in points; says so when nothing is lost."""
    gain = f"tau = {r['tau']:.2f}: pass@1 gain {r['gain'] * 100:+.2f} points, "
    if r["price"] <= NO_LOSS:
        return gain + f"no pass@k loss at any budget k <= {kmax:g}"
    loss = "< 0.01" if r["price"] * 100 < 0.005 else f"{r['price'] * 100:.2f}"
    return gain + f"worst pass@k loss {loss} points at k = {r['price_k']:g}"


def above_notes(above: list[dict], n_floors: int) -> list[str]:
    """Why tilt points lie above the frontier line, one sentence per reason found."""
    reasons = {a["reason"] for a in above}
    notes = []
    if "floor grid" in reasons:
        notes.append(f"Some tilt points lie above the frontier line because the frontier is "
                     f"computed at {n_floors} floors tau and drawn with straight lines between "
                     "them; between two floors the true frontier bulges above the line. At each "
                     "such point's own floor the LP gains at least as much for no more price.")
    if "floor, not price" in reasons:
        notes.append("Some tilt points lie above the frontier line because each frontier point "
                     "maximizes pass@1 under a floor on every prompt (p_x >= tau p_x(pi0)), not "
                     "under a price: its price is measured afterwards. The tilt spreads its "
                     "losses more evenly, so its worst pass@k loss can be smaller at the same "
                     "gain. At equal floor it never gains more than the frontier (right panel).")
    return notes


def save_figure(fig, out) -> None:
    """Write ``fig`` to ``out`` in the format its suffix names (PDF text as TrueType)."""
    from rlvr_boundary.io.atomic import atomic_path
    from rlvr_boundary.report.figures import pyplot

    plt = pyplot()
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format=str(out).rsplit(".", 1)[-1])
    plt.close(fig)


def frontier_figure(front, path, above, at_floors, kmax, shape):
    """Gain against price (frontier and tilt path) and gain at equal floor, with the notes.

    The left panel never shows a negative loss; when no point loses anything it
    says so. Tilt points above the frontier line are circled and the note under
    the panels says why (:func:`above_notes`).
    """
    import textwrap

    import numpy as np

    from rlvr_boundary.report.figures import COLUMN_IN, pyplot

    plt = pyplot()
    notes = above_notes(above, len(front))
    lines = "\n".join(textwrap.fill(n, 160) for n in notes)
    n_lines = lines.count("\n") + 1 if notes else 0
    fig = plt.figure(figsize=(COLUMN_IN, 4.6 + 0.16 * n_lines))
    gs = fig.add_gridspec(2 if notes else 1, 2, width_ratios=[3, 2],
                          height_ratios=[4.4, 0.16 * n_lines] if notes else None)
    ax, bx = fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[0, 1])
    pts = 100.0  # points: the unit of gains and losses throughout rlvr-boundary
    fp = np.array([r["price"] for r in front]) * pts
    fg = np.array([r["gain"] for r in front]) * pts
    tp = np.array([r["price"] for r in path]) * pts
    tg = np.array([r["gain"] for r in path]) * pts
    # clip_on=False: with no loss every point sits on the y-axis and must stay visible.
    ax.plot(fp, fg, "o-", color="#0072B2", ms=4, clip_on=False, zorder=3,
            label=f"price frontier (LP at {len(front)} floors)")
    ax.plot(tp, tg, ".--", color="#E69F00", ms=4, clip_on=False, zorder=3,
            label="exponential tilt path")
    if above:
        idx = [a["index"] for a in above]
        ax.scatter(tp[idx], tg[idx], s=36, facecolors="none", edgecolors="black", lw=1.0,
                   zorder=4,
                   label="tilt above the frontier line, by up to "
                   f"{max(a['excess'] for a in above) * pts:.2g} points (see note)")
    top = max(fp.max(), tp.max())
    ax.set_xlim(0, top * 1.05 if top > NO_LOSS * pts else 1.0)  # a loss is never negative
    if top <= NO_LOSS * pts:
        ax.text(0.02, 0.5, f"no pass@k loss at any budget k <= {kmax:g}:\n"
                "every mixture shown keeps every pass@k", transform=ax.transAxes, fontsize=9)
    ax.set_ylim(bottom=min(0.0, fg.min(), tg.min()))
    ax.set_xlabel(f"price: worst pass@k loss over k <= {kmax:g} (points)")
    ax.set_ylabel("pass@1 gain (points)")
    ax.set_title("Gain against price", loc="left")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    # Right: the comparison that is a theorem, gain at equal floor.
    bx.plot([r["tau"] for r in at_floors], np.array([r["gain"] for r in at_floors]) * pts, "-",
            color="#0072B2", label="frontier (LP at every floor shown)")
    bx.scatter([t["floor"] for t in path], tg, s=14, color="#E69F00", zorder=3,
               label="tilt at its own floor")
    bx.set_xlim(0, 1.02)
    bx.set_xlabel("floor tau (every prompt keeps >= tau of its base success)", fontsize=9)
    bx.set_ylabel("pass@1 gain (points)")
    bx.set_title("Gain at equal floor: the tilt never beats the LP", loc="left")
    bx.grid(alpha=0.3)
    bx.legend(frameon=False, fontsize=8, loc="lower left")
    fig.suptitle(f"Price frontier and exponential tilt path ({shape[0]} strategies, "
                 f"{shape[1]} prompts)")
    if notes:
        nx = fig.add_subplot(gs[1, :])
        nx.axis("off")
        nx.text(0.0, 1.0, lines, fontsize=8, va="top", ha="left", transform=nx.transAxes)
    fig.tight_layout()
    return fig


def run_diagnose(args) -> int:
    import numpy as np
    from rich.markup import escape

    from rlvr_boundary.console import console
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.theory.specialization import specialization_report
    from rlvr_boundary.theory.stiemke import alternative

    from rlvr_boundary.io.matrix import read_matrix
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--json": args.json}, [args.matrix])
    names, pi0, F, prompts = read_matrix(args.matrix)
    res = alternative(F)
    spec = specialization_report(F)
    if res["free_lunch"]:
        d = res["direction"]
        gain = F.T @ d  # (X,)
        console.print("[bold]A free lunch exists[/]: moving mass along d (sum 0) raises some prompts "
                      "and lowers none, so pass@1 can rise at no pass@k price.")
        for n, v in zip(names, d):
            console.print(f"  d({escape(n)}) = {v:+.4f}")
        console.print("  change of success per prompt, per unit step: " + ", ".join(
            f"{escape(p)} {g:+.4f}" for p, g in zip(prompts, gain)))
        room = [pi0[s] / -d[s] for s in range(d.size) if d[s] < 0]
        console.print(f"  from pi0 the step can go up to {min(room):.4f} before a weight hits 0.")
    else:
        w = res["weights"]
        console.print("[bold]No free lunch[/]: every change of mixture that raises pass@1 lowers some "
                      "prompt. Certificate (Stiemke): strictly positive prompt weights under which "
                      f"every strategy scores the same, {res['c']:.4f}:")
        console.print("  " + ", ".join(f"{escape(p)} {v:.4f}" for p, v in zip(prompts, w)))
    if spec["exclusive"]:
        console.print("The matrix has exclusive specialization (every strategy has a prompt only it "
                      "solves), which alone rules out a free lunch.")
    if spec["dominance_margin"] is not None:
        m = spec["dominance_margin"]
        console.print(f"Dominance margin with blocks by best strategy: {m:+.4f} "
                      + ("(> 0: dominant specialization, which alone rules out a free lunch)" if m > 0
                         else "(<= 0: our dominance condition does not apply)"))
    if args.json:
        write_result(args.json, "theory-diagnose", DiagnoseOptions(matrix=str(args.matrix)),
                     {"strategies": names, "prompts": prompts, "pi0": pi0,
                      "free_lunch": res["free_lunch"],
                      "direction": None if res["direction"] is None else np.asarray(res["direction"]),
                      "prompt_change": None if res["direction"] is None else F.T @ res["direction"],
                      "weights": None if res["weights"] is None else np.asarray(res["weights"]),
                      "c": res["c"], **spec})
    return 0
