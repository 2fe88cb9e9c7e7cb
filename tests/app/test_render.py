"""Pages are built from escaped values: a hostile label, id or message is text, never markup."""

from __future__ import annotations

import re

import pytest

from rlvr_boundary.app import compute as C
from rlvr_boundary.app import render

EVIL = "<img src=x onerror=alert(1)>\"'&"


def _no_raw(html: str) -> None:
    assert "<img src=x" not in html and "onerror=alert(1)>" not in html
    # Our figures are inline SVG drawn by matplotlib: no <img>, no script, no external refs.
    assert not re.findall(r"<img", html) and "<script" not in html.lower()
    assert "xlink:href=\"http" not in html and "href=\"http" not in html


def test_error_box_escapes():
    html = render.error(f"bad.jsonl:2: expected numbers, found ['{EVIL}']")
    _no_raw(html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and 'role="alert"' in html


def test_price_page_escapes_labels_and_shows_fields(tmp_path):
    res = C.paste_job(C.OMNI_MATH_CURVE, "auto", (EVIL, "RL " + EVIL), {"bootstrap": 10},
                      str(tmp_path))
    html = render.result(res)
    _no_raw(html)
    assert '<span data-field="crossing_intervals">(64, 256]</span>' in html
    assert '<span data-field="price_k">256</span>' in html


def test_audit_page_escapes_model_labels_and_prompt_ids(tmp_path):
    table = tmp_path / "evil.csv"
    rows = ["prompt_id,model,n,c"]
    for j in range(8):
        rows += [f"p{j},base,8,{j % 4}", f"p{j},{EVIL.replace(chr(34), '')},8,{(j + 3) % 9}"]
    table.write_text("\n".join(rows) + "\n")
    res = C.files_job([(str(table), "evil.csv")], {"bootstrap": 50}, (10**6, 1000),
                      str(tmp_path))
    html = render.result(res)
    _no_raw(html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count('data-field="k_star"') == 1


def test_shaping_page_has_one_field_per_value():
    res = C.shaping_explore(dict(ppl="1 2 3", rewards="1 0 1", alpha=0.5, gamma=0.1, m=15,
                                 n=-0.5, d=1, cap=0.5, length=5, step=None, window=None,
                                 passk_rewards="1 0 0 0", k=2))
    html = render.shaping(res)
    for i, v in enumerate(res["perplexity"]["multiplier"]):
        assert f'<span data-field="multiplier-{i}">{v:.4f}</span>' in html
    assert 'data-field="position_active">active<' in html


def test_audit_sentences_are_the_reports(tmp_path):
    """The app's verdict, band and coverage sentences are the report page's, word for word."""
    from html import escape

    from rlvr_boundary.report import words as W

    text = "".join(f"{(3 * j) % 9}/8 {(5 * j + 2) % 9}/8\n" for j in range(12))
    res = C.paste_job(text, "counts", ("base", "RL"), {"bootstrap": 50}, str(tmp_path))
    a, html = res["audit"], render.result(res)
    c = a["comparisons"]["RL"]
    lines = W.summary_lines(a)
    assert lines[0].startswith("RL: ")
    for sentence in [*lines, W.band_sentence(c), W.crossings_sentence(c),
                     W.coverage_rule(a["coverage"])]:
        assert escape(sentence) in html
    fl = c["first_loss_set"]
    want = "none" if not fl else escape(
        f"k = {fl[0]} to {'beyond the grid' if fl[1] is None else fl[1]}")
    assert f'<span data-field="first_loss_set">{want}</span>' in html


def test_mc_sentence_compares_the_band_edges_error_with_the_printed_digits():
    # 1.8 / sqrt(4000) = 0.0285; times se 0.0063 -> 0.018 points < 0.05.
    s = render.mc_sentence(2.55, 0.0063, 4000)
    assert "about 0.028," in s and "0.018 points" in s and "below half the 0.1 points" in s
    s = render.mc_sentence(2.55, 0.03, 4000)
    assert "0.085 points" in s and "not below half" in s and "+/-0.17" in s


@pytest.mark.slow
def test_mc_constant_matches_the_critical_values_spread_on_deepscaler():
    """The constant behind the page's Monte Carlo sentence, measured again (20 seeds, B = 500)."""
    import numpy as np

    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.examples import example_files
    from rlvr_boundary.io.formats import load_model_counts
    from rlvr_boundary.pipelines.compare import CompareOptions

    ex = example_files("deepscaler32k")
    a = align([load_model_counts(ex["base"], label="base"),
               load_model_counts(ex["rl"], label="rl")])
    cs = [compare_aligned(a, "base", "rl", CompareOptions(bootstrap=500, seed=s))["band"]
          ["critical_value"] for s in range(20)]
    sd = float(np.std(cs, ddof=1))
    # The sd of a 20-draw sd is about 16%: a factor 1.5 either way is a failure of the constant.
    assert render.MC_SD_SQRT_B / 1.5 < sd * 500 ** 0.5 < render.MC_SD_SQRT_B * 1.5
