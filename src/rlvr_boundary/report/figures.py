"""The report's figures (matplotlib), as inline SVG and as PNG/PDF files.

Every function takes numbers from the audit payload and returns a Figure. SVG
text is rendered as paths (``svg.fonttype = "path"``) so the HTML needs no font
files and looks the same offline everywhere.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

# Colour-blind-safe palette (Okabe and Ito); the base model is always grey-black.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"]
BASE_COLOR = "#333333"


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "path", "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "figure.dpi": 100,
                         "svg.hashsalt": "rlvr-boundary"})  # stable ids: reproducible SVG
    return plt


def colors(models: list[str], base: str) -> dict[str, str]:
    out, i = {}, 0
    for m in models:
        if m == base:
            out[m] = BASE_COLOR
        else:
            out[m] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def _log2_axis(ax, ks) -> None:
    ax.set_xscale("log", base=2)
    ticks = [k for k in ks if k & (k - 1) == 0]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(k) for k in ticks])
    ax.set_xlabel("k (samples per problem)")


def passk_curves(audit: dict):
    """pass@k of every model, with each checkpoint's crossover k* marked."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ks = np.asarray(audit["ks"])
    col = colors(audit["models"], audit["base"])
    for m in audit["models"]:
        ax.plot(ks, audit["pass_at_k"][m], color=col[m], lw=2 if m == audit["base"] else 1.6,
                ls="--" if m == audit["base"] else "-", label=m)
    for m, res in audit["comparisons"].items():
        if res["k_star"] is not None:
            ax.axvline(res["k_star"], color=col[m], lw=0.8, ls=":")
            y = float(np.interp(np.log(res["k_star"]), np.log(ks), audit["pass_at_k"][m]))
            ax.annotate(f"k* = {res['k_star']}", (res["k_star"], y), textcoords="offset points",
                        xytext=(4, -12), fontsize=8, color=col[m])
    _log2_axis(ax, ks)
    ax.set_ylabel("pass@k (unbiased)")
    ax.set_title(f"pass@k on {audit['n_prompts']} problems")
    ax.grid(alpha=0.25)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def difference_curves(audit: dict):
    """D(k) = pass@k(checkpoint) - pass@k(base) with the simultaneous band, one panel each."""
    plt = _plt()
    others = list(audit["comparisons"])
    fig, axes = plt.subplots(len(others), 1, figsize=(6.4, 2.8 * len(others)), squeeze=False)
    col = colors(audit["models"], audit["base"])
    for ax, m in zip(axes[:, 0], others):
        res = audit["comparisons"][m]
        ks = np.asarray(res["ks"])
        d = np.asarray(res["diff"])
        if res.get("band"):
            lo, hi = np.asarray(res["band"]["lower"]), np.asarray(res["band"]["upper"])
            ax.fill_between(ks, lo, hi, color=col[m], alpha=0.2, lw=0,
                            label=f"{res['band']['level']:.0%} simultaneous band")
            gain, loss = lo > 0, hi < 0
            ax.scatter(ks[gain], d[gain], s=6, color="#009E73", zorder=3, label="supported gain")
            ax.scatter(ks[loss], d[loss], s=6, color="#D55E00", zorder=3, label="supported loss")
        ax.plot(ks, d, color=col[m], lw=1.6, label="D(k)")
        ax.axhline(0, color="black", lw=0.8)
        if res["k_star"] is not None:
            ax.axvline(res["k_star"], color="black", lw=0.8, ls=":")
        if res["price_k"] is not None:
            ax.annotate(f"price {res['price'] * 100:.2f} pts", (res["price_k"], -res["price"]),
                        textcoords="offset points", xytext=(-60, -14), fontsize=8)
        _log2_axis(ax, ks)
        ax.set_ylabel("D(k)")
        ax.set_title(f"{m} minus {audit['base']}", fontsize=9)
        ax.grid(alpha=0.25)
        ax.legend(frameon=False, fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def upset(audit: dict):
    """UpSet plot of the solved sets at K: bars are exact membership patterns."""
    plt = _plt()
    cov = audit["coverage"]
    models = audit["models"]
    rows = [r for r in cov["intersections"] if r["count"] > 0]
    rows.sort(key=lambda r: (-r["count"], len(r["models"])))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(5.5, 0.55 * len(rows) + 3.0),
                                                      2.6 + 0.3 * len(models)),
                                      gridspec_kw={"height_ratios": [3, max(1, len(models)) * 0.45]},
                                      sharex=True)
    x = np.arange(len(rows))
    top.bar(x, [r["count"] for r in rows], color="#444444")
    for xi, r in zip(x, rows):
        top.annotate(str(r["count"]), (xi, r["count"]), ha="center", va="bottom", fontsize=7)
    top.set_ylabel("problems")
    top.set_title(f"Solved at K = {cov['K']}: exact overlaps", fontsize=9)
    for yi, m in enumerate(models):
        inside = [m in r["models"] for r in rows]
        bottom.scatter(x, np.full(len(rows), yi), s=40,
                       c=["#222222" if v else "#dddddd" for v in inside], zorder=3)
    for xi, r in zip(x, rows):
        ys = [models.index(m) for m in r["models"]]
        if len(ys) > 1:
            bottom.plot([xi, xi], [min(ys), max(ys)], color="#222222", lw=1.5)
    bottom.set_yticks(range(len(models)))
    bottom.set_yticklabels([f"{m} ({cov['solved'][m]})" for m in models], fontsize=7)
    bottom.set_ylim(-0.6, len(models) - 0.4)
    bottom.set_xticks([])
    bottom.spines["bottom"].set_visible(False)
    fig.tight_layout()
    return fig


def accuracy_histograms(audit: dict):
    """Per-problem accuracy c/n, with the exact 0 and exact 1 bins apart."""
    plt = _plt()
    h = audit["coverage"]["histogram"]
    models = audit["models"]
    col = colors(models, audit["base"])
    labels = h["labels"]
    fig, ax = plt.subplots(figsize=(7.2, 3.2))
    x = np.arange(len(labels))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax.bar(x + (i - (len(models) - 1) / 2) * w, h["counts"][m], width=w, color=col[m], label=m)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
    ax.set_xlabel("accuracy c/n")
    ax.set_ylabel("problems")
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def evolution(audit: dict):
    """pass@1 and pass@K against training step."""
    plt = _plt()
    ev = audit["evolution"]
    steps = [r["step"] for r in ev["rows"]]
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    ax.plot(steps, [r["pass_at_1"] for r in ev["rows"]], "o-", color=PALETTE[0], label="pass@1")
    ax.plot(steps, [r["pass_at_K"] for r in ev["rows"]], "s-", color=PALETTE[1],
            label=f"pass@{ev['K']}")
    ax.set_xlabel("training step (base = first point)")
    ax.set_ylabel("pass@k")
    ax.grid(alpha=0.25)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def entropy_by_position(audit: dict):
    """Mean token entropy in relative-position bins, correct vs incorrect samples."""
    plt = _plt()
    bins = audit["tokens"]["entropy_by_position"]
    col = colors(audit["models"], audit["base"])
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    for m, d in bins.items():
        for name, ls in (("correct", "-"), ("incorrect", "--")):
            if name in d:
                y = np.array([np.nan if v is None else v for v in d[name]])
                ax.plot((np.arange(y.size) + 0.5) / y.size, y, ls, color=col.get(m, "#777"),
                        label=f"{m} ({name})")
    ax.set_xlabel("relative position in the completion")
    ax.set_ylabel("mean token entropy (nats)")
    ax.legend(frameon=False, fontsize=7)
    ax.grid(alpha=0.25)
    fig.tight_layout()
    return fig


def to_svg(fig) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog, no external refs)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def save(fig, folder: Path, name: str) -> list[str]:
    """Write ``name.png`` (200 dpi) and ``name.pdf``; return their file names."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    from rlvr_boundary.io.atomic import atomic_path

    for ext, kw in (("png", {"dpi": 200}), ("pdf", {"metadata": {"CreationDate": None}})):
        path = folder / f"{name}.{ext}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, **kw)
        files.append(path.name)
    return files


def close(fig) -> None:
    _plt().close(fig)
