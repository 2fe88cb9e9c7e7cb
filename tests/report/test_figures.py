"""The report's figures: column width, one y-scale, marker colours, titles, fonts, ties.

The audits come from real ``rlvr-boundary report`` runs (the result JSON is what
the figures are drawn from); expected values are recomputed here with
``math.comb`` and loops, never read back from the figure code.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import write_rollouts
from rlvr_boundary.report import figures as F
from rlvr_boundary.report import html as H
from tests.report.fixtures import synthetic_rollouts

DRAW = {"passk": F.passk_curves, "difference": F.difference_curves, "upset": F.upset,
        "histogram": F.accuracy_histograms, "evolution": F.evolution,
        "entropy_position": F.entropy_by_position, "cover": F.cover_curves}


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    """Three models (base, step-100, step-200) with every optional column."""
    d = tmp_path_factory.mktemp("figs")
    path = d / "r.parquet"
    write_rollouts(synthetic_rollouts(prompts=24, n=8), path)
    out = d / "a.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "200",
                 "--no-figures"]) == 0
    return json.loads(out.with_suffix(".json").read_text())


def _counts_file(path, rows):
    path.write_text("".join(json.dumps({"id": pid, "n": n, "c": c}) + "\n" for pid, n, c in rows))


@pytest.fixture(scope="module")
def tie_audit(tmp_path_factory):
    """Every problem is solved at least once by both models in n = 4 samples, so at
    k = 4 each problem's pass@k is 1 for both: D(4) has no variance across problems."""
    d = tmp_path_factory.mktemp("ties")
    rng = np.random.default_rng(3)
    cb, cr = rng.integers(1, 5, 30), rng.integers(1, 5, 30)  # c in 1..4 of n = 4
    cr[:3] = 4  # and a few problems the checkpoint always solves
    b, r = d / "base.jsonl", d / "rl.jsonl"
    _counts_file(b, [(f"p{i}", 4, int(c)) for i, c in enumerate(cb)])
    _counts_file(r, [(f"p{i}", 4, int(c)) for i, c in enumerate(cr)])
    out = d / "t.html"
    assert main(["report", str(b), str(r), "--label", f"{b}=base", "--label", f"{r}=rl",
                 "--out", str(out), "--bootstrap", "200", "--no-figures"]) == 0
    return {"audit": json.loads(out.with_suffix(".json").read_text()), "cb": cb, "cr": cr}


def _svg_width_px(svg: str) -> float:
    m = re.match(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    assert m, svg[:200]
    return float(m.group(1)) * F.PX_PER_INCH / 72  # SVG points are 1/72 inch


def test_column_width_is_the_pages(audit):
    # The page's body is COLUMN_PX wide; every figure is drawn exactly that wide.
    assert re.search(r"body\{[^}]*max-width:(\d+)px", H.CSS).group(1) == str(F.COLUMN_PX)
    assert set(DRAW) >= {"passk", "difference", "upset", "histogram"}
    for name, fn in DRAW.items():
        fig = fn(audit)
        assert fig.get_size_inches()[0] == pytest.approx(F.COLUMN_PX / 96), name
        assert _svg_width_px(F.to_svg(fig)) == pytest.approx(F.COLUMN_PX, abs=0.5), name
        F.close(fig)


def test_every_figure_is_titled_and_the_svg_carries_the_title(audit):
    for name, fn in DRAW.items():
        fig = fn(audit)
        title = F.title_of(fig)
        assert len(title) > 10, name
        svg = F.to_svg(fig)
        got = re.search(r"<svg[^>]*>\s*<title>(.*?)</title>", svg, re.S)
        assert got and got.group(1) == title.replace("&", "&amp;").replace("<", "&lt;") \
            .replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;"), name
        F.close(fig)
    # A hostile label lands in the title escaped, not as markup.
    evil = dict(audit, base='<b onmouseover="x">')
    fig = F.difference_curves(evil)
    svg = F.to_svg(fig)
    F.close(fig)
    assert "<b onmouseover" not in svg and "&lt;b onmouseover=&quot;x&quot;&gt;" in svg


def test_difference_panels_share_one_y_scale(audit):
    assert len(audit["comparisons"]) == 2
    fig = F.difference_curves(audit)
    lims = {ax.get_ylim() for ax in fig.axes}
    assert len(lims) == 1
    lo, hi = lims.pop()
    # The shared scale holds every checkpoint's band, not just the first one's.
    for res in audit["comparisons"].values():
        assert lo <= min(res["band"]["lower"]) and max(res["band"]["upper"]) <= hi
    assert F.title_of(fig).startswith("D(k) = pass@k(checkpoint) − pass@k(base) for each")
    F.close(fig)


def _lab(hex_colour: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour, from the published formulas."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ lin / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_gain_and_loss_markers_differ_from_every_model_colour(audit):
    models = ["base"] + [f"ckpt{i}" for i in range(12)]
    cols = set(F.colors(models, "base").values())
    for marker in (F.LOSS_COLOR, F.GAIN_COLOR):
        assert marker not in cols
        # CIE76 distance: about 2.3 is just noticeable; 50 is a different hue family
        # (orange against vermillion is 33, too close for a small marker on a line).
        dist = min(np.linalg.norm(_lab(marker) - _lab(c)) for c in cols)
        assert dist > 50, (marker, dist)
    # And the drawn markers use them, with distinct shapes.
    fig = F.difference_curves(audit)
    from matplotlib.colors import to_hex

    seen = {}
    for ax in fig.axes:
        for coll in ax.collections:
            if coll.get_label() in ("supported gain", "supported loss") and len(coll.get_offsets()):
                seen[coll.get_label()] = {to_hex(c) for c in coll.get_facecolors()}
    F.close(fig)
    assert seen.get("supported loss") == {F.LOSS_COLOR.lower()}
    line_colours = {F.colors(audit["models"], audit["base"])[m].lower() for m in audit["models"]}
    assert not (seen["supported loss"] & line_colours)


def test_pdf_fonts_are_embedded_truetype_not_type3(audit, tmp_path):
    fig = F.passk_curves(audit)
    files = F.save(fig, tmp_path, "passk")
    assert files == ["passk.png", "passk.pdf"]
    data = (tmp_path / "passk.pdf").read_bytes()
    assert data.startswith(b"%PDF") and b"/Type3" not in data
    assert b"/FontFile2" in data  # an embedded TrueType font program
    # The check can fail: matplotlib's default (Type 3) shows up in the same bytes.
    with F.pyplot().rc_context({"pdf.fonttype": 3}):
        fig.savefig(tmp_path / "t3.pdf")
    assert b"/Type3" in (tmp_path / "t3.pdf").read_bytes()
    F.close(fig)


def _passk(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_budgets_without_variance_are_marked_not_banded(tie_audit):
    a, cb, cr = tie_audit["audit"], tie_audit["cb"], tie_audit["cr"]
    res = a["comparisons"]["rl"]
    ks = res["ks"]
    # Brute force: a budget is degenerate when every problem's difference is the same.
    expect = [k for k in ks if len({_passk(4, int(r), k) - _passk(4, int(b), k)
                                    for b, r in zip(cb, cr)}) == 1]
    assert expect == [4]
    flags = F.degenerate_budgets(res)
    assert [k for k, f in zip(ks, flags) if f] == expect
    assert F.degenerate_budgets(dict(res, degenerate=[False] * len(ks))).sum() == 0

    fig = F.difference_curves(a)
    (ax,) = fig.axes
    assert F.title_of(fig) == "rl minus base"  # one checkpoint: the panel title is the title
    assert "<title>rl minus base</title>" in F.to_svg(fig)
    band = [c for c in ax.collections if "simultaneous band" in c.get_label()]
    ties = [c for c in ax.collections if c.get_label().startswith("no variance")]
    assert len(band) == 1 and len(ties) == 1
    assert np.asarray(ties[0].get_offsets()).tolist() == [[4.0, 0.0]]
    # The band polygon does not reach the a-priori [-1, 1]: nothing is drawn at k = 4.
    ys = np.concatenate([p.vertices[:, 1] for p in band[0].get_paths()])
    xs = np.concatenate([p.vertices[:, 0] for p in band[0].get_paths()])
    assert np.nanmax(np.abs(ys)) < 0.99 and 4.0 not in xs
    lo, hi = ax.get_ylim()
    assert -0.99 < lo and hi < 0.99
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "no variance across problems: no band" in legend
    F.close(fig)


def test_no_tie_marker_when_every_budget_varies(audit):
    fig = F.difference_curves(audit)
    assert not [c for ax in fig.axes for c in ax.collections
                if c.get_label().startswith("no variance")]
    F.close(fig)


# --- the theory lab's frontier figure -------------------------------------------------

FREE_LUNCH = ("strategy,pi0,x1,x2,x3\nspec1,0.4,1.0,0.0,0.6\nspec2,0.4,0.0,1.0,0.6\n"
              "general,0.2,0.6,0.6,0.7\n")
# Two strategies: the tilt and the LP move along the same segment of the simplex, so a
# tilt point can only beat the drawn line between two grid floors.
TWO_BY_TWO = "strategy,pi0,a,b\ns1,0.45,0.88,0.06\ns2,0.55,0.34,0.15\n"
# Found by a random search: the tilt's worst loss is smaller than the LP's at its floor.
FLOOR_NOT_PRICE = ("strategy,pi0,a,b,c,d,e\ns1,0.01,0.25,0.14,0.67,0.71,0.17\n"
                   "s2,0.49,0.4,0.91,0.56,0.58,0.19\ns3,0.5,0.53,0.52,0.09,0.98,0.57\n")
KS = 2.0 ** np.arange(11)


def _matrix(text):
    rows = [r.split(",") for r in text.strip().splitlines()[1:]]
    return (np.array([[float(x) for x in r[2:]] for r in rows]),
            np.array([float(r[1]) for r in rows]))


def _frontier_parts(text, taus=21):
    from rlvr_boundary.theory.frontier import above_frontier, price_frontier, tilt_path

    F_, pi0 = _matrix(text)
    front = price_frontier(F_, pi0, np.linspace(0, 1, taus), KS)
    path = tilt_path(F_, pi0, ks=KS)
    return F_, pi0, front, path, above_frontier(F_, pi0, front, path, KS)


def test_tilt_above_the_line_between_grid_floors():
    from rlvr_boundary.theory.frontier import best_at_floor_brute

    F_, pi0, front, path, above = _frontier_parts(TWO_BY_TWO)
    # Independent "above the drawn line": here the price falls as the floor rises, so the
    # drawn line is a function of price and np.interp reads it.
    fp = np.array([r["price"] for r in front])
    fg = np.array([r["gain"] for r in front])
    assert np.all(np.diff(fp) <= 1e-12)
    expect = [i for i, t in enumerate(path)
              if t["gain"] > np.interp(t["price"], fp[::-1], fg[::-1]) + 1e-7]
    assert [a["index"] for a in above] == expect and len(expect) > 5
    assert {a["reason"] for a in above} == {"floor grid"}
    for a in above:  # at its own floor the exact LP (vertex enumeration) does at least as well
        base = float(np.mean(pi0 @ F_))
        assert best_at_floor_brute(F_, pi0, a["floor"]) - base >= path[a["index"]]["gain"] - 1e-9
        assert a["lp_price"] <= path[a["index"]]["price"] + 1e-7


def test_tilt_above_the_line_because_the_frontier_is_not_a_price_frontier():
    from rlvr_boundary.theory.frontier import best_at_floor_brute
    from rlvr_boundary.theory.model import pass1

    F_, pi0, front, path, above = _frontier_parts(FLOOR_NOT_PRICE)
    odd = [a for a in above if a["reason"] == "floor, not price"]
    assert odd
    for a in odd:
        t = path[a["index"]]
        # The theorem holds at equal floor, the LP just pays a higher worst-case price there.
        assert best_at_floor_brute(F_, pi0, a["floor"]) - pass1(F_, pi0) >= t["gain"] - 1e-9
        assert a["lp_price"] > t["price"] + 1e-7


def test_frontier_figure_explains_and_never_shows_a_negative_loss(tmp_path, capsys):
    from rlvr_boundary.report.theory_figures import frontier_figure
    from rlvr_boundary.report.words import frontier_notes
    from rlvr_boundary.theory.frontier import price_frontier

    for text, reasons in ((TWO_BY_TWO, {"floor grid"}),
                          (FLOOR_NOT_PRICE, {"floor grid", "floor, not price"})):
        F_, pi0, front, path, above = _frontier_parts(text)
        assert {a["reason"] for a in above} == reasons
        floors = sorted({r["tau"] for r in front} | {t["floor"] for t in path})
        doc = {"frontier": front, "tilt_path": path, "tilt_above_frontier": above,
               "frontier_at_floors": price_frontier(F_, pi0, floors, KS),
               "options": {"kmax": 1024}, "strategies": ["s"] * F_.shape[0],
               "prompts": ["x"] * F_.shape[1]}
        fig = frontier_figure(doc)
        shown = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        for note in frontier_notes(above, len(front)):
            assert " ".join(note.split()) in " ".join(shown.split())
        assert ("21 floors" in shown) == ("floor grid" in reasons)
        assert ("not under a price" in " ".join(shown.split())) == ("floor, not price" in reasons)
        price_ax = fig.axes[0]
        assert price_ax.get_xlim()[0] == 0 and "loss" in price_ax.get_xlabel()
        assert F.title_of(fig).startswith("Price frontier and exponential tilt path")
        F.close(fig)


def test_frontier_without_any_loss_says_so(tmp_path, capsys):
    m = tmp_path / "m.csv"
    m.write_text(FREE_LUNCH)
    out = tmp_path / "f.pdf"
    assert main(["theory", "frontier", str(m), "--out", str(out), "--json",
                 str(tmp_path / "f.json")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "no pass@k loss at any budget k <= 1024" in printed
    assert "0.0000" not in printed and "loss 0.00" not in printed
    assert "lie above the frontier" not in printed  # nothing to explain here
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and b"/Type3" not in data and b"/FontFile2" in data
    res = json.loads((tmp_path / "f.json").read_text())
    assert res["tilt_above_frontier"] == []
    assert all(r["price"] <= 1e-8 for r in res["frontier"])


def test_frontier_cli_prints_the_reason(tmp_path, capsys):
    m = tmp_path / "m.csv"
    m.write_text(FLOOR_NOT_PRICE)
    assert main(["theory", "frontier", str(m), "--out", str(tmp_path / "f.png"), "--json",
                 str(tmp_path / "f.json")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "not under a price" in printed and "points at k =" in printed
    res = json.loads((tmp_path / "f.json").read_text())
    assert {a["reason"] for a in res["tilt_above_frontier"]} == {"floor grid", "floor, not price"}
