"""Figures the report does not draw: the price diagnostic's curves and the price frontier.

Drawn with matplotlib's object API (``matplotlib.figure.Figure``), never
``pyplot``, so no figure registry is shared between requests. Each figure is
written as PNG (for the page), PDF and SVG (for papers), atomically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

BASE_COLOR = "#333333"
RL_COLOR = "#0072B2"
LOSS_COLOR = "#D55E00"


def _figure(size=(6.4, 4.0)):
    import matplotlib

    matplotlib.rcParams["svg.fonttype"] = "path"  # no font files needed offline
    from matplotlib.figure import Figure

    return Figure(figsize=size, dpi=100)


def _save(fig, folder: Path, name: str) -> dict[str, str]:
    from rlvr_boundary.app.compute import atomic_path

    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for ext, kw in (("png", {"dpi": 150}), ("pdf", {"metadata": {"CreationDate": None}}),
                    ("svg", {"metadata": {"Date": None}})):
        path = folder / f"{name}.{ext}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, **kw)
        out[ext] = str(path)
    return out


def price_figures(res: dict, folder: Path) -> dict[str, str]:
    """pass@k of both models (crossings marked) and their difference D(k); returns PNG paths."""
    ks = np.asarray(res["ks"], float)
    base, rl = res["pass_at_k"]["base"], res["pass_at_k"]["rl"]
    labels = res.get("labels") or {"base": "base", "rl": "RL"}
    diff = np.asarray(res["diff"], float)
    fig = _figure((6.4, 6.2))
    ax1, ax2 = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    marker = "o" if res["input_kind"] == "curve" else None
    ax1.plot(ks, base, color=BASE_COLOR, ls="--", lw=2, marker=marker, label=labels["base"])
    ax1.plot(ks, rl, color=RL_COLOR, lw=1.8, marker=marker, label=labels["rl"])
    for c in res["crossings"]:
        for ax in (ax1, ax2):
            ax.axvline(c["k_continuous"], color=LOSS_COLOR, lw=0.8, ls=":")
    ax1.set_ylabel("pass@k" + (" (rate curve 1-(1-p)^k)" if res["input_kind"] == "rates"
                               else " (as printed)"))
    ax1.legend(frameon=False, fontsize=8, loc="lower right")
    ax1.grid(alpha=0.25)
    ax2.axhline(0, color="#999999", lw=0.8)
    ax2.plot(ks, diff, color=RL_COLOR, lw=1.6, marker=marker)
    ax2.fill_between(ks, diff, 0, where=diff < 0, color=LOSS_COLOR, alpha=0.25,
                     label="loss (the price)")
    if res.get("price_k") is not None and res["price"] > 0:
        ax2.annotate(f"price {res['price']:.4f} at k = {res['price_k']:g}",
                     (res["price_k"], -res["price"]), textcoords="offset points", xytext=(-120, -4),
                     fontsize=8, color=LOSS_COLOR)
    ax2.set_ylabel("D(k) = RL - base")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("k (samples per problem)")
    ax2.grid(alpha=0.25)
    fig.tight_layout()
    paths = _save(fig, folder, "price")
    return {"price": paths["png"]}


def frontier_figure(res: dict, folder: Path) -> dict[str, str]:
    """The price frontier (LP over floors) against the exponential-tilt path."""
    front, path = res["frontier"], res["tilt_path"]
    fig = _figure((5.6, 4.0))
    ax = fig.subplots()
    ax.plot([r["price"] for r in front], [r["gain"] for r in front], "o-", color=RL_COLOR,
            label="price frontier (LP over floors tau)")
    ax.plot([r["price"] for r in path], [r["gain"] for r in path], "--", color=LOSS_COLOR,
            label="exponential tilt path")
    ax.set_xlabel("worst pass@k loss (price)")
    ax.set_ylabel("pass@1 gain")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return _save(fig, folder, "frontier")
