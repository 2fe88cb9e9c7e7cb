"""The page a researcher reads first: a plain paragraph per checkpoint, the glossary (hover
and one table), the sampling-efficiency gap never read as a gain, one crossing sentence."""

from __future__ import annotations

import html as H
import json
import re

import pytest
import numpy as np

from rlvr_boundary.cli import main
from rlvr_boundary.report import words as W


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    d = tmp_path_factory.mktemp("lab")
    out = d / "report.html"
    assert main(["report", "--example", "lab", "--out", str(out), "--bootstrap", "300"]) == 0
    return {"html": out.read_text(encoding="utf-8"), "dir": d,
            "json": json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))}


def section(page: str, sid: str) -> str:
    start = page.index(f'<section id="{sid}">')
    return page[start:page.index("</section>", start)]


def test_a_plain_paragraph_per_checkpoint_comes_before_the_evidence(lab):
    page, doc = lab["html"], lab["json"]
    summary = section(page, "summary")
    for m, res in doc["comparisons"].items():
        plain = W.plain_summary(doc, m)
        p_rl, p_base = res["pass_at_k"][m][0], res["pass_at_k"][doc["base"]][0]
        assert plain.startswith(f"What RL bought: with one attempt per problem, {m} solves "
                                f"{p_rl:.1%} of the problems against {p_base:.1%} for base")
        for part in ("What it cost:", "How sure:", "What to do:"):
            assert part in plain
        t = doc["coverage"]["table_2x2"][m]
        assert (f"At K = {doc['K']} attempts it solves {t['rl_only']} problems base cannot and "
                f"misses {t['base_only']} that base solves.") in plain
        assert (f"from k = {res['loss_budgets'][0]} attempts on it solves fewer problems" in plain)
        escaped = H.escape(plain, quote=True)
        assert escaped in summary
        assert summary.index(escaped) < summary.index(f"The evidence: {m} against base")


@pytest.mark.parametrize("gains, losses, says", [
    ([1], [], "What to do: keep rl: it gains with no supported cost up to k = 8."),
    ([], [2, 4], "What to do: prefer base for this task"),
    ([], [], "plan a larger study with rlvr-boundary plan"),
])
def test_the_advice_follows_the_verdicts(gains, losses, says):
    res = {"models": {"base": "base", "rl": "rl"}, "ks": [1, 2, 4, 8], "n_prompts": 30,
           "pass_at_k": {"base": [0.4, 0.5, 0.6, 0.7], "rl": [0.45, 0.5, 0.55, 0.6]},
           "diff": [0.05, 0.0, -0.05, -0.1], "gain_budgets": gains, "loss_budgets": losses,
           "band": {"level": 0.95}, "price": 0.0 if not losses else 0.1, "price_k": 8,
           "k_star": None}
    audit = {"comparisons": {"rl": res}, "K": 8}
    text = W.plain_summary(audit, "rl")
    assert says in text
    if not losses:
        assert "(supported)" not in text


def test_the_glossary_is_one_table_and_hover_titles(lab):
    page = lab["html"]
    glossary = section(page, "glossary")
    assert glossary.count("<table>") == 1
    for t, d in W.GLOSSARY.items():
        assert f">{H.escape(t)}</dfn>" in glossary and H.escape(d, quote=True) in glossary
    diff = section(page, "difference")
    for t in ("k*", "price", "Delta_SE", "crossings", "first-loss set"):
        assert f'<abbr title="{H.escape(W.GLOSSARY[t], quote=True)}">' in diff
    support = section(page, "support")
    for t in ("SRR", "NDR", "SDS", "NSCR", "support epsilon"):
        assert f'<abbr title="{H.escape(W.GLOSSARY[t], quote=True)}">' in support
    assert "<script" not in page.lower() and "javascript:" not in page.lower()


def test_the_sampling_efficiency_gap_never_reads_as_a_gain(lab):
    doc = lab["json"]
    diff = section(lab["html"], "difference")
    # step-10 solves nearly what the base solves at K (pass@64 0.992 against 1.000) and
    # the gap is large: every checkpoint's gap is shown as a gap, never with a plus sign
    r = doc["comparisons"]["step-10"]
    assert r["pass_at_k"]["step-10"][-1] >= r["pass_at_k"]["base"][-1] - 0.01
    for r in doc["comparisons"].values():
        assert r["delta_se"] > 0
        assert f"{r['delta_se'] * 100:.2f}: base pass@64 − RL pass@1" in diff
        assert f"+{r['delta_se'] * 100:.2f}" not in diff
    assert "sampling-efficiency gap (points, not a gain)" in diff
    assert "not a gain" in W.GLOSSARY["Delta_SE"]


def test_one_sentence_for_the_crossings_and_their_bound(lab):
    page, doc = lab["html"], lab["json"]
    diff = section(page, "difference")
    # the sentence, the hover title of the "crossings" heading, and the glossary table
    assert page.count("Descartes") == 3
    table = diff.split("<table>")[1].split("</table>")[0]
    assert "crossings, bound" not in page and not re.search(r"\d, at most \d", table)
    sentence = H.escape(W.crossings_overview(doc["comparisons"]), quote=True)
    assert sentence in diff
    for m, r in doc["comparisons"].items():
        assert f"{m} {r['n_crossings']} time" in sentence
        assert re.search(rf"{m} [^;]*at most {r['crossing_bound']}(;|\.)", sentence)


def test_empty_sections_collapse_into_one_list_with_commands(lab):
    page = lab["html"]
    from rlvr_boundary.report.html import SECTIONS, UNFILLED_TITLE

    unfilled = section(page, "unfilled")
    assert f"<h2>{UNFILLED_TITLE}</h2>" in unfilled
    listed = re.findall(r'<li id="([a-z]+)"><b>([^<]+)</b>', unfilled)
    assert [sid for sid, _ in listed] == ["scorers", "learning"]
    assert "rlvr-boundary verify ROLLOUTS --gold GOLD --backend" in unfilled
    assert "rlvr-boundary score ROLLOUTS --model AFTER --before BEFORE" in unfilled
    for sid, _ in listed:
        assert f'<section id="{sid}">' not in page and f'href="#{sid}"' not in page
    # every other section has something to show: no placeholder-only section is left
    for sid, _ in SECTIONS:
        if f'<section id="{sid}">' in page:
            body = section(page, sid).split("</h2>", 1)[1]
            assert not (body.startswith('<p class="missing">') and body.count("<p") == 1), sid
    assert page.index('<section id="unfilled">') < page.index('<section id="glossary">')


def test_the_quality_table_shows_only_flags_that_fire_with_their_meaning(lab):
    quality = section(lab["html"], "quality")
    table = quality.split("<table>")[1].split("</table>")[0]
    assert "q_redundancy3" in table
    for flag in ("q_no_boxed", "q_multi_boxed", "q_text_after_answer", "q_cjk_share",
                 "q_language_mix"):
        assert flag not in table
    assert H.escape(W.QUALITY_FLAGS["q_redundancy3"]) in quality
    assert ("flags that fire on every sample of every model, so they describe the task rather "
            "than a model") in quality and "q_no_boxed." in quality
    assert "never fire on these samples: q_multi_boxed, q_text_after_answer, q_cjk_share, " \
           "q_language_mix" in quality


def _kstar_boxes(fig):
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    ax = fig.axes[0]
    return [(t.get_text(), t.get_window_extent(r)) for t in ax.texts
            if t.get_text().startswith("k* = ")]


def test_kstar_labels_are_merged_and_never_overlap_on_the_lab_figure(lab):
    from rlvr_boundary.report import figures as F

    doc = lab["json"]
    fig = F.passk_curves(doc)
    boxes = _kstar_boxes(fig)
    # checkpoints that share a k* get one label naming all of them (in the shipped example
    # all four cross at k* = 2: one label, where there were four on top of each other)
    by_k: dict = {}
    for m, r in doc["comparisons"].items():
        if r["k_star"] is not None:
            by_k.setdefault(r["k_star"], []).append(m)
    want = [f"k* = {k}: {', '.join(ms)}" for k, ms in sorted(by_k.items())]
    assert [t for t, _ in boxes] == want and len(want) < len(doc["comparisons"])
    for i, (_, a) in enumerate(boxes):
        for _, b in boxes[i + 1:]:
            assert not a.overlaps(b)
    svg = F.to_svg(fig)
    assert len(re.findall(r"<!-- k\* = ", svg)) == len(want)  # what the page draws


@pytest.mark.parametrize("k_stars", [[2, 2, 2, 3, 3, 4, None], [5, 6, 7, 8, 9, 10], [1] * 9])
def test_kstar_labels_never_overlap_however_many(k_stars):
    from rlvr_boundary.report import figures as F

    ks = list(range(1, 65))
    models = ["base"] + [f"step-{i}" for i in range(len(k_stars))]
    curve = [1 - 0.5 ** k for k in ks]
    audit = {"ks": ks, "models": models, "base": "base", "n_prompts": 10,
             "pass_at_k": {m: curve for m in models},
             "comparisons": {m: {"k_star": k} for m, k in zip(models[1:], k_stars)}}
    boxes = _kstar_boxes(F.passk_curves(audit))
    assert len(boxes) == len({k for k in k_stars if k is not None})
    for i, (_, a) in enumerate(boxes):
        for _, b in boxes[i + 1:]:
            assert not a.overlaps(b)


def _brute_maj(answers: list, good: set, k: int) -> float:
    """Mean over every k-subset of the vote's credit (ties split, None never wins)."""
    from collections import Counter
    from itertools import combinations

    total, count = 0.0, 0
    for sub in combinations(range(len(answers)), k):
        votes = Counter(answers[i] for i in sub if answers[i] is not None)
        count += 1
        if not votes:
            continue
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        total += sum(a in good for a in winners) / len(winners)
    return total / count


def test_maj_at_k_beside_pass_at_k_matches_brute_force(tmp_path):
    import pyarrow as pa

    from rlvr_boundary.io.rollouts import write_rollouts

    table = {  # model -> prompt -> answers of its 8 samples; the gold answer is "1"
        "base": {"a": ["1", "2", "2", "3", None, "1", "2", "4"],
                 "b": ["5", "5", "1", None, None, "1", "6", "7"]},
        "rl": {"a": ["1", "1", "2", "1", "1", "3", "2", "1"],
               "b": ["5", "5", "5", "1", "1", "5", None, "5"]},
    }
    rows = [{"model": m, "prompt_id": p, "sample_idx": i, "answer": a, "correct": a == "1",
             "text": f"so the answer is \\boxed{{{a}}}"}
            for m, per in table.items() for p, ans in per.items() for i, a in enumerate(ans)]
    src = tmp_path / "r.parquet"
    write_rollouts(pa.Table.from_pylist(rows), src)
    out = tmp_path / "r.html"
    assert main(["report", str(src), "--out", str(out), "--bootstrap", "50"]) == 0
    doc = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    maj = doc["maj_at_k"]
    assert maj["ks"] == [1, 2, 4, 8]
    for m, per in table.items():
        want = [sum(_brute_maj(a, {"1"}, k) for a in per.values()) / 2 for k in maj["ks"]]
        assert maj["models"][m] == pytest.approx(want, abs=1e-12)
    assert maj["models"]["base"][0] == pytest.approx(doc["pass_at_k"]["base"][0])  # maj@1
    page = out.read_text(encoding="utf-8")
    passk = section(page, "passk")
    j = doc["ks"].index(4)
    assert (f"{doc['pass_at_k']['rl'][j]:.4f} / {maj['models']['rl'][2]:.4f}") in passk
    assert "maj@k</abbr>" in passk


def test_compare_shows_maj_at_k_beside_pass_at_k(tmp_path, capsys):
    import pyarrow as pa

    from rlvr_boundary.io.rollouts import write_rollouts

    answers = {"base": {"a": ["1", "2", "2", "3", None, "1"], "b": ["5", "1", "1", None, "6", "7"]},
               "rl": {"a": ["1", "1", "2", "1", "1", "3"], "b": ["5", "5", "5", "1", "1", "5"]}}
    files = {}
    for m, per in answers.items():
        rows = [{"model": m, "prompt_id": p, "sample_idx": i, "answer": a, "correct": a == "1"}
                for p, ans in per.items() for i, a in enumerate(ans)]
        files[m] = tmp_path / f"{m}.parquet"
        write_rollouts(pa.Table.from_pylist(rows), files[m])
    out = tmp_path / "c.json"
    capsys.readouterr()
    assert main(["compare", "--base", str(files["base"]), "--rl", str(files["rl"]),
                 "--json", str(out), "--bootstrap", "50"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    maj = json.loads(out.read_text())["maj_at_k"]
    assert maj["ks"] == [1, 2, 4]
    for m, per in answers.items():
        want = [sum(_brute_maj(a, {"1"}, k) for a in per.values()) / 2 for k in maj["ks"]]
        assert maj["models"][m] == pytest.approx(want, abs=1e-12)
    assert W.majority_sentence(maj, ["base", "rl"]) in printed
    # counts-only inputs carry no answers: no maj@k, no sentence
    assert main(["compare", "--example", "--json", str(tmp_path / "e.json"),
                 "--bootstrap", "50"]) == 0
    assert "maj_at_k" not in json.loads((tmp_path / "e.json").read_text())


def test_the_hard_frontier_with_its_measured_interval(lab):
    from scipy.stats import binomtest

    doc = lab["json"]
    fr, cov = doc["frontier"], doc["coverage"]
    assert fr["K"] == doc["K"] and fr["calibrated"] is True
    assert fr["unsolved"]["count"] == doc["n_prompts"] - cov["union"]
    for m, t in fr["transitions"].items():
        assert t["gained"]["count"] == cov["table_2x2"][m]["rl_only"]
        assert t["lost"]["count"] == cov["table_2x2"][m]["base_only"]
        ref = binomtest(t["lost"]["count"], doc["n_prompts"]).proportion_ci(method="wilson")
        assert t["lost"]["ci"] == pytest.approx([ref.low, ref.high], abs=1e-12)
    lost = fr["transitions"]["step-40"]["lost"]["count"]
    assert lost == 40  # the shipped example: pass@64 of step-40 is 0.667, 40 of 120 lost
    page = section(lab["html"], "frontier")
    assert "interval (Wilson)" in page and "covered 94% to 98% of the time" in page
    assert f"1 → 0: solved by the base, not by step-40</td><td class=\"\">{lost}</td>" in page


def test_cover_at_tau_curves_with_their_band_on_the_page(lab):
    from rlvr_boundary.core.cover import dkw_halfwidth

    doc = lab["json"]
    page = section(lab["html"], "cover")
    first = next(iter(doc["comparisons"].values()))["cover"]
    assert first["halfwidth"] == pytest.approx(dkw_halfwidth(doc["n_prompts"]))
    assert first["calibrated"] is True and first["no_band"] is None
    assert "<svg" in page and "Dvoretzky-Kiefer-Wolfowitz" in page
    assert f"±{first['halfwidth'] * 100:.1f} points with {doc['n_prompts']} problems" in page
    for m, res in doc["comparisons"].items():
        cv = res["cover"]
        sentence = W.cover_verdict_sentence(m, doc["base"], cv)
        assert H.escape(sentence, quote=True) in page
        # the lab's RL narrows: fewer problems solved at all (small tau), more solved reliably
        v = cv["diff"]["verdict"]
        assert "loss" in v and "gain" in v and v.index("loss") < v.index("gain")
        diff = np.subtract(cv["models"][m]["cover"], cv["models"][doc["base"]]["cover"])
        assert np.allclose(diff, cv["diff"]["diff"])
    # the table's base row is the plug-in of the base's own curve
    base_cv = first["models"][doc["base"]]
    j = first["taus"].index(0.5)
    assert f"{base_cv['cover'][j]:.1%} ({base_cv['lower'][j]:.1%}–{base_cv['upper'][j]:.1%})" \
        in page



def test_cover_has_no_band_when_prompts_are_clustered():
    from rlvr_boundary.analysis.pairwise import cover_curve_block

    n = np.full(30, 8)
    c = np.arange(30) % 9
    blk = cover_curve_block(n, c, n, 8 - c, "b", "r", 0.05, clustered=True)
    assert blk["calibrated"] is False and "--cluster-by" in blk["no_band"]
    assert blk["models"]["b"]["lower"] is None and blk["diff"]["verdict"] is None
    assert "no band" in W.cover_verdict_sentence("r", "b", blk)
