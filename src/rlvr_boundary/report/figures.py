"""The report's figures (matplotlib), as inline SVG and as PNG/PDF files.

Every function takes numbers from the audit payload and returns a titled
Figure one page column wide (:data:`COLUMN_PX`), so the inline SVG is drawn at
its natural size and its text matches the page. SVG text is rendered as paths
(``svg.fonttype = "path"``) so the HTML needs no font files and looks the same
offline everywhere; PDF text is embedded TrueType (``pdf.fonttype = 42``), not
Type 3, so journals' checkers accept it and the text can be selected.

Colours: model lines come from :data:`PALETTE` (Okabe and Ito's colour-blind
safe set without its orange, plus Paul Tol's wine, olive and indigo), the base
model is grey-black,
and the markers for supported gains and losses use two colours reserved for
them (bluish green and vermillion) and triangle shapes, so a loss marker never
looks like a checkpoint's line.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

import numpy as np

#: Content width of the report page in CSS pixels: the ``body`` max-width in
#: :data:`rlvr_boundary.report.html.CSS` (a test keeps the two equal).
COLUMN_PX = 1060
#: CSS pixels per inch (the CSS reference pixel); SVG points are 1/72 inch.
PX_PER_INCH = 96
COLUMN_IN = COLUMN_PX / PX_PER_INCH

# Model colours; the two reserved marker colours below are not among them.
# Okabe-Ito's orange is left out: next to vermillion it reads as a loss marker.
PALETTE = ["#0072B2", "#CC79A7", "#56B4E9", "#882255", "#999933", "#332288"]
BASE_COLOR = "#333333"
GAIN_COLOR = "#009E73"  # supported gain: bluish green, upward triangle
LOSS_COLOR = "#D55E00"  # supported loss: vermillion, downward triangle
TIE_COLOR = "#8C8C8C"  # budgets with no variance: grey open diamond, no band


#: The report's matplotlib style (set on the global rcParams before drawing).
STYLE = {"svg.fonttype": "path", "pdf.fonttype": 42, "ps.fonttype": 42,
         "font.size": 10, "axes.titlesize": 10, "figure.titlesize": 11,
         "axes.spines.top": False, "axes.spines.right": False,
         "figure.dpi": 100,
         "svg.hashsalt": "rlvr-boundary"}  # stable ids: reproducible SVG


def _style() -> None:
    import matplotlib

    matplotlib.rcParams.update(STYLE)


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend with the report's style."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    _style()
    return plt


def figure(height_in: float, nrows: int = 1, **kw):
    """A figure one page column wide with ``nrows`` stacked axes (squeezed when 1).

    Made with matplotlib's object API on an Agg canvas, not through ``pyplot``:
    nothing here needs pyplot's global figure registry, and a command that only
    writes figure files then never imports it.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _style()
    fig = Figure(figsize=(COLUMN_IN, height_in))
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, 1, squeeze=False, **kw)
    return fig, axes[:, 0]


def title_of(fig) -> str:
    """The figure's title: its suptitle, else the titles of its axes joined."""
    sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
    if sup:
        return sup
    return "; ".join(t for ax in fig.axes for loc in ("left", "center", "right")
                     if (t := ax.get_title(loc=loc)))


def colors(models: list[str], base: str) -> dict[str, str]:
    """Colour of each model: grey-black for the base, the palette in order for the rest."""
    out, i = {}, 0
    for m in models:
        if m == base:
            out[m] = BASE_COLOR
        else:
            out[m] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def degenerate_budgets(res: dict) -> np.ndarray:
    """Which budgets of a comparison have a difference with no variance across problems.

    There (for example every problem solved by both models, or by neither) no
    inference is made; the analysis flags these budgets (``degenerate``) and the
    figure marks them instead of drawing a band.

    Parameters
    ----------
    res
        One entry of ``audit["comparisons"]``: ``ks`` and the per-budget ``degenerate``.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` booleans.
    """
    flags = np.asarray(res.get("degenerate", [False] * len(res["ks"])), bool)
    if flags.size != len(res["ks"]):
        raise ValueError("the comparison's degenerate flags do not match its budgets")
    return flags


def _log2_axis(ax, ks) -> None:
    ax.set_xscale("log", base=2)
    ticks = [k for k in ks if k & (k - 1) == 0]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(k) for k in ticks])
    ax.set_xlabel("k (samples per problem)")


def _legend_right(ax, **kw) -> None:
    # Outside the plotting area: a column-wide figure has room, and the legend never hides data.
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), **kw)


#: Size of the k* labels and the distance between their rows (points): a row is taller than
#: the text, so stacked labels never touch.
KSTAR_FONT_PT = 8
KSTAR_ROW_PT = 12


def kstar_labels(comparisons: dict) -> list[tuple[int, list[str]]]:
    """The k* labels of the pass@k figure: one per distinct crossover budget, in order of k*,
    with the checkpoints that cross there (in their order)."""
    by: dict = {}
    for m, res in comparisons.items():
        if res["k_star"] is not None:
            by.setdefault(res["k_star"], []).append(m)
    return sorted(by.items())


def passk_curves(audit: dict):
    """pass@k of every model, with each checkpoint's crossover k* marked."""
    fig, (ax,) = figure(4.0)
    ks = np.asarray(audit["ks"])
    col = colors(audit["models"], audit["base"])
    for m in audit["models"]:
        ax.plot(ks, audit["pass_at_k"][m], color=col[m], lw=2 if m == audit["base"] else 1.6,
                ls="--" if m == audit["base"] else "-", label=m)
    maj = audit.get("maj_at_k")
    if maj:
        for m in audit["models"]:
            ax.plot(maj["ks"], maj["models"][m], color=col[m], lw=0.9, ls="-.", marker=".",
                    ms=3, label=f"{m} maj@k")
    for m, res in audit["comparisons"].items():
        if res["k_star"] is not None:
            ax.axvline(res["k_star"], color=col[m], lw=0.8, ls=":")
    for row, (k_star, names) in enumerate(kstar_labels(audit["comparisons"])):
        # One label per distinct k* (checkpoints sharing it are named together), each on its
        # own row from the top of the axes, KSTAR_ROW_PT apart: labels never overlap.
        ax.annotate(f"k* = {k_star}: {', '.join(names)}", (k_star, 1.0),
                    xycoords=("data", "axes fraction"), textcoords="offset points",
                    xytext=(3, -4 - KSTAR_ROW_PT * row), va="top", fontsize=KSTAR_FONT_PT,
                    color=col[names[0]] if len(names) == 1 else "black",
                    bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none",
                          "alpha": 0.8})
    _log2_axis(ax, ks)
    ax.set_ylabel("pass@k (unbiased)")
    ax.set_title(f"pass@k on {audit['n_prompts']} problems")
    ax.grid(alpha=0.25)
    _legend_right(ax)
    fig.tight_layout()
    return fig


def difference_curves(audit: dict):
    """D(k) = pass@k(checkpoint) - pass@k(base) with the simultaneous band, one panel each.

    All panels share one y-scale, so checkpoints can be compared by eye. Budgets
    where the difference has no variance across problems (:func:`degenerate_budgets`)
    get no band (it would be the uninformative [-1, 1]); they are marked with
    open grey diamonds.
    """
    others = list(audit["comparisons"])
    fig, axes = figure(0.6 + 2.9 * len(others), nrows=len(others), sharey=True)
    col = colors(audit["models"], audit["base"])
    for ax, m in zip(axes, others):
        res = audit["comparisons"][m]
        ks = np.asarray(res["ks"])
        d = np.asarray(res["diff"], float)
        tie = degenerate_budgets(res)
        if res.get("band"):
            lo = np.where(tie, np.nan, np.asarray(res["band"]["lower"], float))
            hi = np.where(tie, np.nan, np.asarray(res["band"]["upper"], float))
            ax.fill_between(ks, lo, hi, color=col[m], alpha=0.2, lw=0,
                            label=f"{res['band']['level']:.0%} simultaneous band")
            gain, loss = lo > 0, hi < 0  # NaN compares False: ties are neither
            if gain.any():
                ax.scatter(ks[gain], d[gain], s=22, marker="^", color=GAIN_COLOR, zorder=3,
                           label="supported gain")
            if loss.any():
                ax.scatter(ks[loss], d[loss], s=22, marker="v", color=LOSS_COLOR, zorder=3,
                           label="supported loss")
        ax.plot(ks, d, color=col[m], lw=1.6, label="D(k)")
        if tie.any():
            ax.scatter(ks[tie], d[tie], s=26, marker="D", facecolors="none",
                       edgecolors=TIE_COLOR, lw=1.2, zorder=4,
                       label="no variance across problems: no band")
        ax.axhline(0, color="black", lw=0.8)
        if res["k_star"] is not None:
            ax.axvline(res["k_star"], color="black", lw=0.8, ls=":")
        if res["price_k"] is not None:
            # Text on the side of the axis centre, so it never runs past an edge.
            left = np.log(res["price_k"]) <= np.log(ks[0] * ks[-1]) / 2
            ax.annotate(f"price {res['price'] * 100:.2f} points", (res["price_k"], -res["price"]),
                        textcoords="offset points", xytext=(6 if left else -6, -14),
                        ha="left" if left else "right", fontsize=8)
        _log2_axis(ax, ks)
        ax.set_ylabel("D(k)")
        ax.set_title(m if len(others) > 1 else f"{m} minus {audit['base']}", loc="left")
        ax.grid(alpha=0.25)
        _legend_right(ax)
    if len(others) > 1:
        fig.suptitle(f"D(k) = pass@k(checkpoint) − pass@k({audit['base']}) for each checkpoint, "
                     "on one y-scale")
    fig.tight_layout()
    return fig


#: Line style of each scorer in :func:`scorer_curves` (in the block's scorer order).
SCORER_STYLES = ["-", "--", ":", "-."]


def scorer_curves(audit: dict):
    """pass@k of every model under each scorer (top) and D(k) per scorer (bottom).

    Colours are the models' (as in :func:`passk_curves`), line styles the
    scorers'; in the bottom panel, triangles mark the budgets where a scorer's
    simultaneous band supports a loss. The same completions under every scorer:
    only the verdicts differ.
    """
    block = audit["scorers"]
    scorers = block["scorers"]
    fig, (top, bottom) = figure(6.4, nrows=2, sharex=True)
    col = colors(audit["models"], audit["base"])
    style = {s: SCORER_STYLES[i % len(SCORER_STYLES)] for i, s in enumerate(scorers)}
    drawn: set = set()
    for m, sens in block["comparisons"].items():
        ks = np.asarray(sens["ks"])
        for s in scorers:
            per = sens["per_scorer"][s]
            for model in (sens["models"]["base"], m):
                if (model, s) in drawn:
                    continue
                drawn.add((model, s))
                top.plot(ks, per["pass_at_k"][model], color=col.get(model, BASE_COLOR),
                         ls=style[s], lw=1.6, label=f"{model}, {s}")
            d = np.asarray(per["diff"], float)
            bottom.plot(ks, d, color=col.get(m, PALETTE[0]), ls=style[s], lw=1.6,
                        label=f"{m}, {s}" if len(block["comparisons"]) > 1 else s)
            loss = np.isin(ks, per["loss_budgets"])
            if loss.any():  # filled for the first scorer, open for the others
                first = s == scorers[0]
                bottom.scatter(ks[loss], d[loss], s=20, marker="v", zorder=3, lw=1.1,
                               facecolors=LOSS_COLOR if first else "none",
                               edgecolors=LOSS_COLOR, label=f"supported loss, {s}")
            if per["k_star"] is not None:
                bottom.axvline(per["k_star"], color=col.get(m, PALETTE[0]), ls=style[s], lw=0.7)
    bottom.axhline(0, color="black", lw=0.8)
    top.set_ylabel("pass@k (unbiased)")
    top.set_title("pass@k of the same completions under each scorer", loc="left")
    bottom.set_ylabel("D(k)")
    bottom.set_title(f"D(k) = pass@k(checkpoint) − pass@k({audit['base']}) per scorer; "
                     "vertical lines at k*", loc="left")
    for ax in (top, bottom):
        ax.grid(alpha=0.25)
        _legend_right(ax)
    _log2_axis(bottom, np.asarray(next(iter(block["comparisons"].values()))["ks"]))
    fig.tight_layout()
    return fig


def cot_curves(audit: dict):
    """CoT-pass@k beside answer-only pass@k (top) and D(k) of each kind (bottom).

    Top: answer-only pass@k (thin) and CoT-pass@k (thick, dotted) of the base and of
    each checkpoint whose comparison carries a computed ``cot`` block, in the
    models' colours. Bottom: D(k) answer-only (thin) and on CoT-pass@k (thick,
    dotted) with the CoT band shaded; dotted vertical lines at the CoT k*.
    """
    blocks = {m: r["cot"]["comparison"] for m, r in audit["comparisons"].items()
              if (r.get("cot") or {}).get("comparison")}
    fig, (top, bottom) = figure(6.4, nrows=2, sharex=True)
    col = colors(audit["models"], audit["base"])
    base = audit["base"]
    drawn_base = False
    for m, cot in blocks.items():
        ans = audit["comparisons"][m]
        ks = np.asarray(cot["ks"])
        for model in ((base, m) if not drawn_base else (m,)):
            top.plot(ks, ans["pass_at_k"][model], color=col[model], lw=1.0, ls="-",
                     alpha=0.8, label=f"{model}, answer only")
            top.plot(ks, cot["pass_at_k"][model], color=col[model], lw=2.2, ls=":",
                     label=f"{model}, CoT")
        drawn_base = True
        bottom.plot(ks, ans["diff"], color=col[m], lw=1.0, ls="-", alpha=0.8,
                    label=f"{m}, answer only")
        if cot.get("band"):
            tie = degenerate_budgets(cot)
            lo = np.where(tie, np.nan, np.asarray(cot["band"]["lower"], float))
            hi = np.where(tie, np.nan, np.asarray(cot["band"]["upper"], float))
            bottom.fill_between(ks, lo, hi, color=col[m], alpha=0.15, lw=0,
                                label=f"{m}, CoT {cot['band']['level']:.0%} band")
        bottom.plot(ks, cot["diff"], color=col[m], lw=2.2, ls=":", label=f"{m}, CoT")
        if cot["k_star"] is not None:
            bottom.axvline(cot["k_star"], color=col[m], lw=0.8, ls=":")
    bottom.axhline(0, color="black", lw=0.8)
    top.set_ylabel("pass@k (unbiased)")
    top.set_title("answer-only pass@k and CoT-pass@k (answer and chain of thought correct)",
                  loc="left")
    bottom.set_ylabel("D(k)")
    bottom.set_title(f"D(k) = pass@k(checkpoint) − pass@k({base}), answer only and CoT",
                     loc="left")
    for ax in (top, bottom):
        ax.grid(alpha=0.25)
        _legend_right(ax)
    _log2_axis(bottom, np.asarray(next(iter(blocks.values()))["ks"]) if blocks
               else np.asarray(audit["ks"]))
    fig.tight_layout()
    return fig


def upset(audit: dict):
    """UpSet plot of the solved sets at K: bars are exact membership patterns."""
    cov = audit["coverage"]
    models = audit["models"]
    rows = [r for r in cov["intersections"] if r["count"] > 0]
    rows.sort(key=lambda r: (-r["count"], len(r["models"])))
    fig, (top, bottom) = figure(2.6 + 0.3 * len(models), nrows=2, sharex=True,
                                gridspec_kw={"height_ratios": [3, max(1, len(models)) * 0.45]})
    x = np.arange(len(rows))
    top.bar(x, [r["count"] for r in rows], color="#444444", width=0.6)
    for xi, r in zip(x, rows):
        top.annotate(str(r["count"]), (xi, r["count"]), ha="center", va="bottom", fontsize=8)
    top.set_ylabel("problems")
    top.set_title(f"Solved at K = {cov['K']}: exact overlaps")
    for yi, m in enumerate(models):
        inside = [m in r["models"] for r in rows]
        bottom.scatter(x, np.full(len(rows), yi), s=40,
                       c=["#222222" if v else "#dddddd" for v in inside], zorder=3)
    for xi, r in zip(x, rows):
        ys = [models.index(m) for m in r["models"]]
        if len(ys) > 1:
            bottom.plot([xi, xi], [min(ys), max(ys)], color="#222222", lw=1.5)
    pad = max(0.0, (12 - len(rows)) / 2)  # few bars stay bar-shaped in a wide figure
    bottom.set_xlim(-0.6 - pad, len(rows) - 0.4 + pad)
    bottom.set_yticks(range(len(models)))
    bottom.set_yticklabels([f"{m} ({cov['solved'][m]})" for m in models], fontsize=8)
    bottom.set_ylim(-0.6, len(models) - 0.4)
    bottom.set_xticks([])
    bottom.spines["bottom"].set_visible(False)
    fig.tight_layout()
    return fig


def accuracy_histograms(audit: dict):
    """Per-problem accuracy c/n, with the exact 0 and exact 1 bins apart."""
    h = audit["coverage"]["histogram"]
    models = audit["models"]
    col = colors(models, audit["base"])
    labels = h["labels"]
    fig, (ax,) = figure(3.4)
    x = np.arange(len(labels))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax.bar(x + (i - (len(models) - 1) / 2) * w, h["counts"][m], width=w, color=col[m], label=m)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlabel("accuracy c/n")
    ax.set_ylabel("problems")
    ax.set_title(f"Per-problem accuracy on {audit['n_prompts']} problems")
    _legend_right(ax)
    fig.tight_layout()
    return fig


def evolution(audit: dict):
    """pass@1 and pass@K against training step."""
    ev = audit["evolution"]
    steps = [r["step"] for r in ev["rows"]]
    fig, (ax,) = figure(3.4)
    ax.plot(steps, [r["pass_at_1"] for r in ev["rows"]], "o-", color=PALETTE[0], label="pass@1")
    ax.plot(steps, [r["pass_at_K"] for r in ev["rows"]], "s-", color=PALETTE[1],
            label=f"pass@{ev['K']}")
    ax.set_xlabel("training step (base = first point)")
    ax.set_ylabel("pass@k")
    ax.set_title(f"pass@1 and pass@{ev['K']} against training step")
    ax.grid(alpha=0.25)
    _legend_right(ax)
    fig.tight_layout()
    return fig


def entropy_by_position(audit: dict):
    """Mean token entropy in relative-position bins, correct vs incorrect samples."""
    bins = audit["tokens"]["entropy_by_position"]
    col = colors(audit["models"], audit["base"])
    fig, (ax,) = figure(3.4)
    for m, d in bins.items():
        for name, ls in (("correct", "-"), ("incorrect", "--")):
            if name in d:
                y = np.array([np.nan if v is None else v for v in d[name]])
                ax.plot((np.arange(y.size) + 0.5) / y.size, y, ls, color=col.get(m, "#777"),
                        label=f"{m} ({name})")
    ax.set_xlabel("relative position in the completion")
    ax.set_ylabel("mean token entropy (nats)")
    ax.set_title("Token entropy by position: correct (solid) and incorrect (dashed) samples")
    _legend_right(ax)
    ax.grid(alpha=0.25)
    fig.tight_layout()
    return fig


def learning_landed(audit: dict):
    """Mean |Δp| of the produced tokens by token kind and by relative position, per result.

    One bar group and one line per where-learning-landed result in
    ``audit["learning"]`` (the label pair names it).
    """
    results = audit["learning"]
    fig, (top, bottom) = figure(5.2, nrows=2)
    cats = list(results[0]["by_category"])
    width = 0.8 / len(results)
    for i, res in enumerate(results):
        name = f"{res['labels']['after']} vs {res['labels']['before']}"
        color = PALETTE[i % len(PALETTE)]
        y = [res["by_category"].get(c, {}).get("mean_abs_dp", np.nan) for c in cats]
        x = np.arange(len(cats)) + (i - (len(results) - 1) / 2) * width
        top.bar(x, [np.nan if v is None else v for v in y], width, color=color, label=name)
        rows = res["by_position"]
        mid = [0.5 * (r["range"][0] + r["range"][1]) for r in rows]
        yp = [np.nan if r.get("mean_abs_dp") is None else r["mean_abs_dp"] for r in rows]
        bottom.plot(mid, yp, "o-", color=color, label=name)
    top.set_xticks(np.arange(len(cats)))
    top.set_xticklabels(cats)
    top.set_ylabel("mean |Δp|")
    top.set_title("Change of token probability by token kind")
    _legend_right(top)
    bottom.set_xlabel("relative position in the text")
    bottom.set_ylabel("mean |Δp|")
    bottom.set_xlim(0, 1)
    bottom.set_title("Change of token probability by relative position")
    bottom.grid(alpha=0.25)
    fig.tight_layout()
    return fig


def extrapolation(audit: dict):
    """Model-based pass@k and D(k) beyond the samples drawn, with the power-law prediction.

    One row per checkpoint with an ``extrapolation`` block: left, the predicted
    pass@k of both models with their intervals (where calibrated) and the measured curves
    up to n; right, the predicted D(k) with its band and the power law's. A
    dotted line marks n, where measurement ends and prediction begins.
    """
    rows = [(m, r["extrapolation"]) for m, r in audit["comparisons"].items()
            if r.get("extrapolation")]
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _style()  # the object API on an Agg canvas, as figure() does, but with two columns
    fig = Figure(figsize=(COLUMN_IN, 0.6 + 3.0 * len(rows)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(rows), 2, squeeze=False)
    col = colors(audit["models"], audit["base"])
    base = audit["base"]
    for (m, ex), (ax, axd) in zip(rows, axes):
        ks = np.asarray(ex["ks"], float)
        res = audit["comparisons"][m]
        obs = np.asarray(res["ks"], float)
        def band(name):  # None outside the validated reach: no interval drawn there
            return [np.nan if v is None else v for v in ex.get(name) or [None] * len(ks)]

        for name, key, c in ((base, "base", col[base]), (m, "rl", col[m])):
            ax.fill_between(ks, band(f"pass_{key}_lower"), band(f"pass_{key}_upper"), color=c,
                            alpha=0.18, lw=0)
            ax.plot(ks, ex[f"pass_{key}"], color=c, lw=1.6, label=f"{name}, predicted")
            ax.plot(ks, ex["power_law"][f"pass_{key}"], color=c, lw=1.0, ls="--",
                    label=f"{name}, power law")
            ax.plot(obs, res["pass_at_k"][name], color=c, lw=0, marker=".", ms=3,
                    label=f"{name}, measured")
        axd.fill_between(ks, band("diff_lower"), band("diff_upper"), color=col[m], alpha=0.2,
                         lw=0, label="interval of the prediction, where calibrated")
        axd.plot(ks, ex["diff"], color=col[m], lw=1.6, label="D(k), predicted")
        axd.plot(ks, ex["power_law"]["diff"], color="black", lw=1.0, ls="--",
                 label="D(k), power law")
        axd.plot(obs, res["diff"], color=col[m], lw=0, marker=".", ms=3, label="D(k), measured")
        axd.axhline(0, color="black", lw=0.8)
        for a in (ax, axd):
            a.axvline(ex["observed_up_to"], color="black", lw=0.8, ls=":")
            _log2_axis(a, [int(k) for k in ks])
            a.grid(alpha=0.25)
        ax.set_ylabel("pass@k")
        axd.set_ylabel("D(k)")
        ax.set_title(f"{m}: pass@k", loc="left", fontsize=9)
        axd.set_title(f"{m}: D(k)", loc="left", fontsize=9)
        ax.legend(frameon=False, fontsize=7, loc="lower right")
        axd.legend(frameon=False, fontsize=7, loc="lower left")
    fig.suptitle(f"Model-based prediction beyond the samples drawn (dotted line: n), "
                 f"against {base}")
    fig.tight_layout()
    return fig


def cover_curves(audit: dict):
    """cover@tau of every model with its simultaneous band (top), and each checkpoint's
    difference from the base with its band (bottom)."""
    comps = audit["comparisons"]
    base = audit["base"]
    fig, (top, bottom) = figure(5.6, nrows=2)
    col = colors(audit["models"], base)
    first = next(iter(comps.values()))["cover"]
    taus = np.asarray(first["taus"])
    curves = {base: first["models"][base]}
    curves.update({m: r["cover"]["models"][m] for m, r in comps.items()})
    level = f"{first['level']:.0%}"
    for m, cv in curves.items():
        if cv["lower"] is not None:
            top.fill_between(taus, cv["lower"], cv["upper"], step="post", color=col[m],
                             alpha=0.15, lw=0)
        top.step(taus, cv["cover"], where="post", color=col[m], lw=1.6, label=m)
    top.set_xlim(0, 1)
    top.set_ylim(-0.02, 1.02)
    top.set_xlabel("reliability threshold tau")
    top.set_ylabel("cover@tau")
    top.set_title(f"Share of problems solved in at least a share tau of samples ({level} "
                  "bands)", loc="left")
    top.grid(alpha=0.25)
    _legend_right(top)
    for m, r in comps.items():
        d = r["cover"]["diff"]
        if d["lower"] is not None:
            bottom.fill_between(taus, d["lower"], d["upper"], step="post", color=col[m],
                                alpha=0.15, lw=0)
        bottom.step(taus, d["diff"], where="post", color=col[m], lw=1.6, label=m)
    bottom.axhline(0, color="black", lw=0.8)
    bottom.set_xlim(0, 1)
    bottom.set_xlabel("reliability threshold tau")
    bottom.set_ylabel(f"cover@tau − {base}")
    bottom.set_title(f"Checkpoint minus {base} ({level} simultaneous bands)", loc="left")
    bottom.grid(alpha=0.25)
    _legend_right(bottom)
    fig.tight_layout()
    return fig


def _layout_final(fig) -> None:
    """Keep the layout ``tight_layout`` computed, without laying the figure out again.

    ``tight_layout`` leaves a placeholder layout engine on the figure, and
    ``savefig`` then runs a whole extra draw per file to redo a layout that is
    already final: a quarter of the time of every PNG and PDF. The files are the
    same byte for byte without it (checked in the figure tests).
    """
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    # Only the placeholder: a constrained layout, say, is computed at save time.
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)


#: Strategy colours (colour-blind safe; the last two for "(other)" and "(none)").
STRATEGY_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442",
                   "#882255", "#999933", "#332288", "#44AA99", "#AA4499", "#117733"]


def strategy_shares(audit: dict):
    """Stacked strategy shares of every model (base first), one bar per model.

    Reads ``audit["strategies"]`` (:mod:`rlvr_boundary.analysis.strategies`);
    a model with no samples draws no bar.
    """
    st = audit["strategies"]
    models = audit["models"]
    names = st["strategies"]
    fig, (ax,) = figure(3.4)
    x = np.arange(len(models))
    bottom = np.zeros(len(models))
    for j, s in enumerate(names):
        y = np.array([st["models"][m]["shares"][s] or 0.0 for m in models])
        color = {"(none)": "#BBBBBB", "(other)": "#777777"}.get(
            s, STRATEGY_COLORS[j % len(STRATEGY_COLORS)])
        ax.bar(x, y, 0.65, bottom=bottom, color=color, label=s, edgecolor="white",
               linewidth=0.5)
        bottom += y
    ax.set_xticks(x)
    ax.set_xticklabels(models, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of samples")
    ax.set_title("Strategy mixture of each model")
    _legend_right(ax)
    fig.tight_layout()
    return fig


def to_svg(fig) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog, no external refs).

    The figure's title (:func:`title_of`) becomes the SVG's ``<title>``, which
    screen readers announce and browsers show on hover; it is HTML-escaped
    because it can carry model labels.
    """
    buf = io.StringIO()
    _layout_final(fig)
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    head = text.index(">") + 1
    title = html.escape(title_of(fig), quote=True)
    return f"{text[:head]}\n <title>{title}</title>{text[head:]}"


def save(fig, folder: Path, name: str, formats=("png", "pdf")) -> list[str]:
    """Write ``name.png`` (200 dpi) and ``name.pdf`` (TrueType fonts); return their file names.

    ``formats`` picks which of the two are written (a PDF costs more than the PNG:
    matplotlib subsets and embeds the font on every file).
    """
    import matplotlib

    from rlvr_boundary.io.atomic import atomic_path

    unknown = set(formats) - {"png", "pdf"}
    if unknown:
        raise ValueError(f"unknown figure formats {sorted(unknown)}; expected png and/or pdf")
    folder.mkdir(parents=True, exist_ok=True)
    _layout_final(fig)
    files = []
    for ext, kw in (("png", {"dpi": 200}), ("pdf", {"metadata": {"CreationDate": None}})):
        if ext not in formats:
            continue
        path = folder / f"{name}.{ext}"
        with atomic_path(path) as tmp:
            with matplotlib.rc_context({"pdf.fonttype": 42}):
                fig.savefig(tmp, format=ext, **kw)
        files.append(path.name)
    return files


def close(fig) -> None:
    """Release a figure (pyplot's registry holds only figures made through pyplot)."""
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close(fig)
