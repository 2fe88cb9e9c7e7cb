"""The figures of the price diagnostic and of the price frontier, drawn from their result documents.

One figure per result kind, the same in the command line and the app:

- :func:`price_figure`: a ``price`` result, pass@k of both models with the
  crossings marked, and D(k) with the price (in points);
- :func:`frontier_figure`: a ``theory-frontier`` result, gain against price
  (the frontier and the exponential-tilt path, tilt points above the frontier
  line circled and explained) and gain at equal floor, in points.

Drawn with matplotlib's object API in the report's style (no ``pyplot``, so no
figure registry is shared between requests of the app). The words (notes under
the frontier) come from :mod:`rlvr_boundary.report.words`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from rlvr_boundary.report import figures as F
from rlvr_boundary.report import words as W

__all__ = ["price_figure", "frontier_figure", "save", "save_formats"]

BASE_COLOR = "#333333"
RL_COLOR = "#0072B2"
LOSS_COLOR = "#D55E00"
TILT_COLOR = "#E69F00"
#: Points: the unit of gains, losses and prices wherever a person reads them.
PTS = 100.0


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    F._style()
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def save(fig, out: str | Path) -> None:
    """Write ``fig`` to ``out`` in the format its suffix names (PDF text as TrueType)."""
    from rlvr_boundary.io.atomic import atomic_path

    with atomic_path(out) as tmp:
        fig.savefig(tmp, format=str(out).rsplit(".", 1)[-1].lower(),
                    metadata={"png": None, "pdf": {"CreationDate": None},
                              "svg": {"Date": None}}.get(str(out).rsplit(".", 1)[-1].lower()))


def save_formats(fig, folder: Path, name: str, formats=("png", "pdf", "svg")) -> dict[str, str]:
    """Write ``name.<format>`` in ``folder`` for each format; ``{format: path}``."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for ext in formats:
        path = folder / f"{name}.{ext}"
        save(fig, path)
        out[ext] = str(path)
    return out


def price_figure(res: dict):
    """pass@k of both models (crossings marked) and their difference D(k) in points."""
    ks = np.asarray(res["ks"], float)
    base, rl = res["pass_at_k"]["base"], res["pass_at_k"]["rl"]
    labels = res.get("labels") or {"base": "base", "rl": "RL"}
    diff = np.asarray(res["diff"], float) * PTS
    fig = _figure(F.COLUMN_IN, 6.2)
    ax1, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    marker = "o" if res["input_kind"] == "curve" else None
    ax1.plot(ks, base, color=BASE_COLOR, ls="--", lw=2, marker=marker, label=labels["base"])
    ax1.plot(ks, rl, color=RL_COLOR, lw=1.8, marker=marker, label=labels["rl"])
    for c in res["crossings"]:
        for ax in (ax1, ax2):
            ax.axvline(c["k_continuous"], color=LOSS_COLOR, lw=0.8, ls=":")
    ax1.set_ylabel("pass@k" + (" (rate curve 1-(1-p)^k)" if res["input_kind"] == "rates"
                               else " (as printed)"))
    ax1.set_title("pass@k of both models", loc="left")
    ax1.legend(frameon=False, fontsize=8, loc="lower right")
    ax1.grid(alpha=0.25)
    ax2.axhline(0, color="#999999", lw=0.8)
    ax2.plot(ks, diff, color=RL_COLOR, lw=1.6, marker=marker)
    ax2.fill_between(ks, diff, 0, where=diff < 0, color=LOSS_COLOR, alpha=0.25,
                     label="loss (the price)")
    if res.get("price_k") is not None and res["price"] > 0:
        ax2.annotate(f"price {W.pts(res['price'], False)} points at k = {res['price_k']:g}",
                     (res["price_k"], -res["price"] * PTS), textcoords="offset points",
                     xytext=(-150, -4), fontsize=8, color=LOSS_COLOR)
    ax2.set_ylabel("D(k) = RL - base (points)")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("k (samples per problem)")
    ax2.grid(alpha=0.25)
    fig.tight_layout()
    return fig


def frontier_figure(doc: dict):
    """Gain against price (frontier and tilt path) and gain at equal floor, with the notes.

    The left panel never shows a negative loss; when no point loses anything it
    says so. Tilt points above the frontier line are circled and the note under
    the panels says why (:func:`rlvr_boundary.report.words.frontier_notes`).
    """
    front, path, above = doc["frontier"], doc["tilt_path"], doc["tilt_above_frontier"]
    at_floors = doc["frontier_at_floors"]
    kmax = doc["options"]["kmax"]
    shape = (len(doc["strategies"]), len(doc["prompts"]))
    notes = W.frontier_notes(above, len(front))
    lines = "\n".join(textwrap.fill(n, 160) for n in notes)
    n_lines = lines.count("\n") + 1 if notes else 0
    fig = _figure(F.COLUMN_IN, 4.6 + 0.16 * n_lines)
    gs = fig.add_gridspec(2 if notes else 1, 2, width_ratios=[3, 2],
                          height_ratios=[4.4, 0.16 * n_lines] if notes else None)
    ax, bx = fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[0, 1])
    fp = np.array([r["price"] for r in front]) * PTS
    fg = np.array([r["gain"] for r in front]) * PTS
    tp = np.array([r["price"] for r in path]) * PTS
    tg = np.array([r["gain"] for r in path]) * PTS
    # clip_on=False: with no loss every point sits on the y-axis and must stay visible.
    ax.plot(fp, fg, "o-", color=RL_COLOR, ms=4, clip_on=False, zorder=3,
            label=f"price frontier (LP at {len(front)} floors)")
    ax.plot(tp, tg, ".--", color=TILT_COLOR, ms=4, clip_on=False, zorder=3,
            label="exponential tilt path")
    if above:
        idx = [a["index"] for a in above]
        ax.scatter(tp[idx], tg[idx], s=36, facecolors="none", edgecolors="black", lw=1.0,
                   zorder=4,
                   label="tilt above the frontier line, by up to "
                   f"{max(a['excess'] for a in above) * PTS:.2g} points (see note)")
    top = max(fp.max(), tp.max())
    no_loss = W.NO_LOSS * PTS
    ax.set_xlim(0, top * 1.05 if top > no_loss else 1.0)  # a loss is never negative
    if top <= no_loss:
        ax.text(0.02, 0.5, f"no pass@k loss at any budget k <= {kmax:g}:\n"
                "every mixture shown keeps every pass@k", transform=ax.transAxes, fontsize=9)
    ax.set_ylim(bottom=min(0.0, fg.min(), tg.min()))
    ax.set_xlabel(f"price: worst pass@k loss over k <= {kmax:g} (points)")
    ax.set_ylabel("pass@1 gain (points)")
    ax.set_title("Gain against price", loc="left")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    # Right: the comparison that is a theorem, gain at equal floor.
    bx.plot([r["tau"] for r in at_floors], np.array([r["gain"] for r in at_floors]) * PTS, "-",
            color=RL_COLOR, label="frontier (LP at every floor shown)")
    bx.scatter([t["floor"] for t in path], tg, s=14, color=TILT_COLOR, zorder=3,
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
