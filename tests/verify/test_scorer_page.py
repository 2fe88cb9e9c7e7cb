"""Scorer sensitivity in compare and report: per-scorer counts read in one pass, the result
block, the page section drawn from it, and the realistic MATH500 case end to end."""

from __future__ import annotations

import html as _html
import json
import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr_boundary.analysis.scorers import (
    disagreement_by_type,
    disagreement_from_tally,
    merge_tallies,
)
from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import reduce_counts
from rlvr_boundary.io.verdicts import VerdictTally

TYPES = ["integer", "fraction", "expression"]


def _rows(seed: int = 0, P: int = 60, n: int = 16) -> list[dict]:
    """Base solves many prompts rarely, RL fewer prompts often; 'canonical' rejects some of
    the base's correct answers to expression problems (a reordered sum, say)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, (solve, acc) in {"base": (0.9, 0.3), "rl": (0.6, 0.8)}.items():
        for i in range(P):
            sol = rng.random() < solve
            for j in range(n):
                right = bool(sol and rng.random() < acc)
                ty = TYPES[i % 3]
                cn = right and not (ty == "expression" and m == "base" and rng.random() < 0.5)
                rows.append({"prompt_id": f"p{i:03d}", "model": m, "sample_idx": j,
                             "text": f"so \\boxed{{{i if right else -i}}} <b>{m}</b>",
                             "answer": f"{i if right else -i}<script>x()</script>",
                             "correct": right,
                             "correct__math_verify": right, "correct__canonical": bool(cn),
                             "answer_type": ty, "gold": f"<i>{i}</i>"})
    return rows


def _write(rows, path: Path) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


# ----------------------------------------------------------------------------- reading


def test_reducer_counts_each_scorer_per_prompt_like_a_loop(tmp_path):
    rows = _rows(1, P=30, n=8)
    rng = np.random.default_rng(5)
    rng.shuffle(rows)
    path = _write(rows, tmp_path / "r.parquet")
    got = reduce_counts(path, batch_rows=37)  # many batches: partial sums merged
    for m, ct in got.items():
        for s in ("math_verify", "canonical"):
            want = {p: sum(r[f"correct__{s}"] for r in rows if r["model"] == m
                           and r["prompt_id"] == p) for p in ct.prompt_ids}
            assert ct.scorers[s].tolist() == [want[p] for p in ct.prompt_ids]
        assert ct.c.tolist() == ct.scorers["math_verify"].tolist()
        assert ct.tally["off_main"] == {"math_verify": 0, "canonical": int(
            sum(r["correct"] != r["correct__canonical"] for r in rows if r["model"] == m))}
    # One verdict column besides 'correct': read exactly as before.
    single = [{k: v for k, v in r.items() if k != "correct__canonical"} for r in rows]
    plain = reduce_counts(_write(single, tmp_path / "one.parquet"))
    for m, ct in plain.items():
        assert ct.scorers == {} and ct.tally is None
        assert ct.c.tolist() == got[m].c.tolist()


def test_tally_gives_the_disagreement_table_of_the_per_row_reference():
    rng = np.random.default_rng(3)
    N = 3000
    types = rng.choice(TYPES + ["pi"], N)
    models = rng.choice(["base", "rl"], N)
    a = rng.random(N) < 0.5
    b = np.where(rng.random(N) < 0.1, ~a, a)
    c = np.where(rng.random(N) < 0.05, ~a, a)
    table = pa.table({"prompt_id": [f"p{i}" for i in range(N)], "model": models,
                      "sample_idx": np.zeros(N, int), "correct": a, "correct__mv": a,
                      "correct__canon": b, "correct__exact": c, "answer_type": types,
                      "gold": ["g"] * N, "answer": [str(i) for i in range(N)]})
    tally = VerdictTally(["correct__mv", "correct__canon", "correct__exact"])
    for start in range(0, N, 700):  # several batches
        tally.add(table.slice(start, 700))
    merged = merge_tallies([tally.of_model("base"), tally.of_model("rl")])
    ex = [{"row": i + 1} for i in range(N)]
    for ref in ("mv", "canon"):
        want = disagreement_by_type(types, {"mv": a, "canon": b, "exact": c}, reference=ref,
                                    examples=ex)
        got = disagreement_from_tally(merged, reference=ref)
        assert got["overall"] == want["overall"] and got["by_type"] == want["by_type"]
        for ty, per in want["examples"].items():
            for s, rows in per.items():
                assert [e["row"] for e in got["examples"][ty][s]] == [e["row"] for e in rows]
                assert all(e[ref] != e[s] for e in got["examples"][ty][s])


# ----------------------------------------------------------------------------- compare and report


def _section(page: str) -> str:
    """The scorer section, or its line in the "what would fill" list when it is empty."""
    if '<section id="scorers">' in page:
        return page.split('<section id="scorers">', 1)[1].split("</section>", 1)[0]
    return page.split('<li id="scorers">', 1)[1].split("</li>", 1)[0]


def _cells(table_html: str) -> list[list[str]]:
    body = table_html.split("<tbody>", 1)[1]
    return [[_html.unescape(re.sub(r"<[^>]+>", "", c))
             for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def check_page_matches_json(page: str, doc: dict) -> None:
    """Every per-scorer number and every disagreement count on the page equals the JSON."""
    from rlvr_boundary.report import words as W

    block = doc["scorers"]
    sec = _section(page)
    assert "<figure>" in sec and "<svg" in sec
    assert _html.escape(W.scorer_primary_sentence(block), quote=True) in sec
    tables = re.findall(r"<table>.*?</table>", sec, re.S)
    assert len(tables) == len(block["comparisons"]) + (1 if block["disagreement"] else 0)
    for table, (m, sens) in zip(tables, block["comparisons"].items()):
        base = sens["models"]["base"]
        rows = _cells(table)
        assert [r[0].removesuffix(" (main)") for r in rows] == list(sens["per_scorer"])
        for row, (s, per) in zip(rows, sens["per_scorer"].items()):
            pk = per["pass_at_k"]
            assert [float(x) for x in row[1:5]] == pytest.approx(
                [pk[base][0], pk[m][0], pk[base][-1], pk[m][-1]], abs=5e-5)
            assert row[5] == (str(per["k_star"]) if per["k_star"] is not None
                              else "none on the grid")
            if per["price"] > 0:
                assert row[6] == f"{per['price'] * 100:.2f} at k = {per['price_k']}"
            assert row[8] == W.ranges(per["loss_budgets"], dash="–")
            assert row[7] == W.ranges(per["gain_budgets"], dash="–")
        assert _html.escape(W.scorer_robust_sentence(sens), quote=True) in sec
    dis = block["disagreement"]
    if dis:
        rows = _cells(tables[-1])
        others = list(dis["overall"])
        by_label = {r[0]: r for r in rows}
        for ty, st in [*dis["by_type"].items(), ("all", dis["overall"])]:
            row = by_label[ty]
            assert row[1] == f"{st[others[0]]['rows']:,}"
            for j, s in enumerate(others):
                x = st[s]
                assert row[2 + 3 * j:5 + 3 * j] == [f"{x['disagree']:,} ({x['rate']:.1%})",
                                                     f"{x['only_reference']:,}",
                                                     f"{x['only_other']:,}"]
        for per in dis["examples"].values():
            for exs in per.values():
                for e in exs:  # model output on the page is escaped
                    assert f"answer <code>{_html.escape(str(e['answer']), quote=True)}</code>" in sec
                    assert f"gold <code>{_html.escape(str(e['gold']), quote=True)}</code>" in sec


def test_compare_writes_the_scorer_block_and_prints_it(tmp_path, capsys):
    path = _write(_rows(0, P=40, n=12), tmp_path / "r.parquet")
    out = tmp_path / "c.json"
    assert main(["compare", "--base", str(path), "--base-model", "base", "--rl", str(path),
                 "--rl-model", "rl", "--bootstrap", "200", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    block = doc["scorers"]
    from rlvr_boundary.kinds._types import fields
    from rlvr_boundary.kinds.counts import Scorers

    assert set(block) == {key for key, *_ in fields(Scorers)}
    assert block["primary"] == "math_verify" and block["scorers"] == ["math_verify", "canonical"]
    sens = block["comparisons"]["rl"]
    # The main numbers are the primary scorer's.
    np.testing.assert_allclose(sens["per_scorer"]["math_verify"]["pass_at_k"]["rl"],
                               doc["pass_at_k"]["rl"], atol=1e-12)
    assert sens["per_scorer"]["math_verify"]["k_star"] == doc["k_star"]
    # canonical rejects some of the base's right answers: base lower, RL unchanged.
    pk = sens["per_scorer"]["canonical"]["pass_at_k"]
    assert pk["base"][0] < doc["pass_at_k"]["base"][0] and pk["rl"][0] == doc["pass_at_k"]["rl"][0]
    dis = block["disagreement"]
    assert dis["reference"] == "math_verify"
    assert dis["overall"]["canonical"]["only_other"] == 0
    assert dis["by_type"]["integer"]["canonical"]["disagree"] == 0
    assert dis["by_type"]["expression"]["canonical"]["only_reference"] > 0
    from rlvr_boundary.report import words as W

    for line in W.scorer_lines(block):
        assert line.strip() in " ".join(printed.split())  # rich wraps long lines
    from rlvr_boundary.report import figures as F

    fig = F.scorer_curves({"models": ["base", "rl"], "base": "base", "scorers": block})
    top, bottom = fig.axes
    assert len(top.get_lines()) == 4  # 2 models x 2 scorers
    curves = [ln for ln in bottom.get_lines() if len(ln.get_ydata()) == len(sens["ks"])]
    assert len(curves) == 2
    for line, s in zip(curves, block["scorers"]):  # D(k) per scorer, as in the JSON
        np.testing.assert_allclose(line.get_ydata(), sens["per_scorer"][s]["diff"])
    F.close(fig)
    # --scorer canonical: the main numbers become canonical's, and the result says so.
    out2 = tmp_path / "c2.json"
    assert main(["compare", "--base", str(path), "--base-model", "base", "--rl", str(path),
                 "--rl-model", "rl", "--bootstrap", "200", "--json", str(out2),
                 "--scorer", "canonical"]) == 0
    doc2 = json.loads(out2.read_text())
    assert doc2["scorers"]["primary"] == "canonical" and doc2["options"]["scorer"] == "canonical"
    np.testing.assert_allclose(doc2["pass_at_k"]["base"], pk["base"], atol=1e-12)
    assert doc2["scorers"]["scorers"] == ["canonical", "math_verify"]
    assert main(["compare", "--base", str(path), "--base-model", "base", "--rl", str(path),
                 "--rl-model", "rl", "--scorer", "sympy"]) == 2
    assert "no verdict column 'correct__sympy'" in capsys.readouterr().err


def test_report_page_shows_the_scorer_block_equal_to_the_json_and_redraws_byte_for_byte(
        tmp_path, capsys):
    path = _write(_rows(2, P=36, n=8), tmp_path / "r.parquet")
    out = tmp_path / "rep.html"
    assert main(["report", str(path), "--bootstrap", "400", "--out", str(out),
                 "--no-figures"]) == 0  # the page keeps its inline SVG
    printed = " ".join(capsys.readouterr().out.split())
    doc = json.loads(out.with_suffix(".json").read_text())
    page = out.read_text()
    check_page_matches_json(page, doc)
    # Model output and gold strings are escaped: no tag of theirs reaches the page.
    assert "&lt;i&gt;" in _section(page) and "<i>" not in _section(page)
    assert "&lt;script&gt;" in _section(page) and "<script" not in page
    assert "survives either scorer" in page or "depends on the scorer" in page \
        or "supports a loss at any budget" in page
    assert "canonical disagrees with math_verify" in printed
    again = tmp_path / "again"  # the same page name, so the figure folder's name matches
    again.mkdir()
    assert main(["report", "--from", str(out.with_suffix(".json")), "--out",
                 str(again / "rep.html"), "--no-figures"]) == 0
    assert (again / "rep.html").read_bytes() == out.read_bytes()


def test_inputs_with_one_verdict_column_have_no_scorer_block(tmp_path, capsys):
    rows = [{k: v for k, v in r.items() if k != "correct__canonical"} for r in _rows(3, P=12, n=4)]
    path = _write(rows, tmp_path / "r.parquet")
    out = tmp_path / "rep.html"
    assert main(["report", str(path), "--bootstrap", "200", "--out", str(out),
                 "--no-figures"]) == 0
    doc = json.loads(out.with_suffix(".json").read_text())
    assert "scorers" not in doc
    assert "needs rollout tables graded by several backends" in _section(out.read_text())
    assert main(["report", str(path), "--bootstrap", "200", "--out", str(out),
                 "--scorer", "canonical"]) == 2
    assert "no per-scorer verdict columns" in capsys.readouterr().err


def test_scorer_block_keys_are_documented():
    """Every key of the scorers block is declared, with its meaning, on the compare page."""
    from rlvr_boundary.kinds._types import fields
    from rlvr_boundary.kinds.counts import Scorers

    doc = (Path(__file__).parents[2] / "docs" / "results" / "compare.md").read_text(
        encoding="utf-8")
    rows = dict(re.findall(r"^\| `scorers\.([a-z_]+)` \| [^|]+ \| [a-z]+ \| (.*) \|$", doc,
                           re.M))
    assert rows == {key: d for key, _, d, _ in fields(Scorers)}


# ----------------------------------------------------------------------------- MATH500 case


@pytest.mark.slow
def test_math500_case_graded_by_verify_then_reported(tmp_path, capsys):
    """The realistic case end to end, small: MATH500 gold answers rewritten, graded with both
    backends by the real verify, then report; the page's block equals the JSON, and no
    scorer accepts an answer that is wrong by construction."""
    pytest.importorskip("math_verify")
    sys.path.insert(0, str(Path(__file__).parent))
    from sensitivity_case import write_case

    from rlvr_boundary.io.rollouts import read_rollouts

    write_case(tmp_path, 24, 6)
    assert main(["verify", str(tmp_path / "rollouts.jsonl"), "--gold",
                 str(tmp_path / "gold.jsonl"), "--backend", "math-verify,canonical",
                 "--workers", "2"]) == 0
    graded = tmp_path / "rollouts.verified.parquet"
    out = tmp_path / "report.html"
    assert main(["report", str(graded), "--bootstrap", "300", "--out", str(out)]) == 0
    doc = json.loads(out.with_suffix(".json").read_text())
    block = doc["scorers"]
    assert block["primary"] == "math_verify"
    assert set(block["scorers"]) == {"math_verify", "canonical", "exact_match"}
    check_page_matches_json(out.read_text(), doc)
    t = read_rollouts(graded)
    truth = np.array(t["truth"].to_pylist())
    for s in block["scorers"]:
        v = np.array(t[f"correct__{s}"].to_pylist())
        assert not np.any(v & ~truth), s  # no scorer accepts a wrong-by-construction answer
    # The disagreement counts are those of the graded table.
    mv = np.array(t["correct__math_verify"].to_pylist())
    cn = np.array(t["correct__canonical"].to_pylist())
    assert block["disagreement"]["overall"]["canonical"]["disagree"] == int(np.sum(mv != cn))
    assert block["disagreement"]["rows"] == t.num_rows
    # compare on the same table: the same block (one checkpoint), and the figure in --out.
    assert main(["compare", "--base", str(graded), "--base-model", "base", "--rl", str(graded),
                 "--rl-model", "rl", "--bootstrap", "300", "--out", str(tmp_path / "cmp")]) == 0
    cmp = json.loads((tmp_path / "cmp" / "result.json").read_text())["scorers"]
    assert cmp["comparisons"]["rl"]["per_scorer"] == block["comparisons"]["rl"]["per_scorer"]
    assert cmp["disagreement"] == block["disagreement"]
    assert (tmp_path / "cmp" / "scorers.png").is_file()


def test_math500_case_extraction_returns_each_rewritten_answer_from_the_solution():
    """Every equal form and near miss of every MATH500 answer, in each wrap of the official
    solution, is extracted exactly (so the truth by construction is what a scorer sees)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from sensitivity_case import WRAPS, equal_forms, in_solution, math500_rows, near_misses

    from rlvr_boundary.verify.extract import extract_answer

    rows = math500_rows(500)
    total = 0
    for i, r in enumerate(rows):
        g = r["answer"]
        for a in equal_forms(g) + near_misses(g, rows[(i + 1) % len(rows)]["answer"]):
            for w in WRAPS:
                got = extract_answer(in_solution(r["solution"], a, w))[0]
                assert got is not None and got.replace(" ", "") == a.replace(" ", ""), (
                    r["unique_id"], a, w, got)
                total += 1
    assert total == 5829  # docs/verifiers.md
