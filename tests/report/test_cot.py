"""CoT-pass@k beside answer-only pass@k (issue 23; Wen et al., arXiv 2506.14245).

A tiny pair of rollout tables whose chain-of-thought verdicts differ from the
answer verdicts, so both kinds of curve are known by hand:

========  ==========================  ==========================
prompt    base (correct, cot_correct)  rl (correct, cot_correct)
========  ==========================  ==========================
p1        TT TF FF FT: c 2, c_cot 1    TT TT TF FF: c 3, c_cot 2
p2        TT TT FF FF: c 2, c_cot 2    TT TT TT FF: c 3, c_cot 3
p3        TF FF FF FF: c 1, c_cot 0    FT FF FF FF: c 0, c_cot 0
========  ==========================  ==========================

Answer-only, RL falls behind from k = 2 (k* = 2, price 33.33 points at k = 4):
the base's lead at large k is p3, whose only correct answer came with a flawed
chain. On CoT-pass@k the curves do not cross. FT rows (chain judged correct,
answer wrong) count as not CoT-correct: one per model.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.errors import InputError

ROWS = {
    "base": {"p1": ["TT", "TF", "FF", "FT"], "p2": ["TT", "TT", "FF", "FF"],
             "p3": ["TF", "FF", "FF", "FF"]},
    "rl": {"p1": ["TT", "TT", "TF", "FF"], "p2": ["TT", "TT", "TT", "FF"],
           "p3": ["FT", "FF", "FF", "FF"]},
}
#: The counts by hand, prompts p1, p2, p3; n = 4 everywhere.
C = {"base": [2, 2, 1], "rl": [3, 3, 0]}
C_COT = {"base": [1, 2, 0], "rl": [2, 3, 0]}
KS = [1, 2, 3, 4]


def brute_passk(counts: list[int], n: int = 4) -> list[float]:
    """Mean over prompts of 1 - C(n-c, k)/C(n, k), with math.comb."""
    return [sum(1 - math.comb(n - c, k) / math.comb(n, k) for c in counts) / len(counts)
            for k in KS]


def write_pair(tmp_path, *, cot: dict | None = None) -> tuple:
    """base.jsonl and rl.jsonl; ``cot={"rl": False}`` leaves rl's cot_correct out."""
    cot = {"base": True, "rl": True, **(cot or {})}
    paths = []
    for model, prompts in ROWS.items():
        lines = []
        for pid, samples in prompts.items():
            for i, s in enumerate(samples):
                row = {"prompt_id": pid, "model": model, "sample_idx": i, "correct": s[0] == "T"}
                if cot[model]:
                    row["cot_correct"] = s[1] == "T"
                lines.append(json.dumps(row))
        path = tmp_path / f"{model}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return tuple(paths)


def _compare(tmp_path, **kw) -> dict:
    from rlvr_boundary.pipelines.compare import CompareOptions, run

    b, r = write_pair(tmp_path, **kw)
    return run(b, r, CompareOptions(bootstrap=200), json_path=tmp_path / "c.json")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_cot_curves_match_math_comb_and_the_answer_engine(tmp_path):
    from rlvr_boundary.analysis.aligned import Aligned
    from rlvr_boundary.analysis.cot import cot_settings
    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.io.results import to_jsonable
    from rlvr_boundary.pipelines.compare import CompareOptions
    from tests.results.schema_check import assert_valid

    doc = _compare(tmp_path)
    assert_valid(tmp_path / "c.json")
    assert doc["ks"] == KS
    for m in ("base", "rl"):  # answer-only curves, as before
        assert doc["pass_at_k"][m] == pytest.approx(brute_passk(C[m]), abs=1e-12)
    cot = doc["cot"]
    assert cot["carried_by"] == ["base", "rl"] and cot["skipped"] is None
    assert cot["cot_without_answer"] == {"base": 1, "rl": 1}
    res = cot["comparison"]
    want = {m: brute_passk(C_COT[m]) for m in ("base", "rl")}
    for m in ("base", "rl"):
        assert res["pass_at_k"][m] == pytest.approx(want[m], abs=1e-12)
        assert cot["answer_minus_cot"][m] == pytest.approx(
            np.subtract(brute_passk(C[m]), want[m]), abs=1e-12)
    d_cot = np.subtract(want["rl"], want["base"])  # +1/6, +1/6, +1/12, 0
    assert res["diff"] == pytest.approx(d_cot, abs=1e-12)
    assert d_cot == pytest.approx([1 / 6, 1 / 6, 1 / 12, 0], abs=1e-12)
    assert res["k_star"] is None and res["price"] == 0  # no crossing on CoT-pass@k
    # ... while answer-only RL is behind from k = 2, by 1/3 at k = 4.
    assert doc["k_star"] == 2 and doc["price"] == pytest.approx(1 / 3) and doc["price_k"] == 4
    # The same engine on the CoT counts: identical numbers, band included.
    aligned = Aligned(["base", "rl"], np.array(["p1", "p2", "p3"], dtype=object),
                      np.full((2, 3), 4, np.int64), np.array([C_COT["base"], C_COT["rl"]]))
    direct = to_jsonable(compare_aligned(aligned, "base", "rl",
                                         cot_settings(CompareOptions(bootstrap=200))))
    assert res["band"]["lower"] == pytest.approx(direct["band"]["lower"], abs=1e-12)
    assert res["band"]["upper"] == pytest.approx(direct["band"]["upper"], abs=1e-12)
    assert res["verdict_per_k"] == direct["verdict_per_k"]
    assert "verifier_error" not in res and "extrapolation" not in res


def test_compare_cli_prints_the_cot_crossing_and_price(tmp_path, capsys):
    b, r = write_pair(tmp_path)
    out = tmp_path / "o"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "200",
                 "--out", str(out)]) == 0
    text = _flat(capsys.readouterr().out)
    assert "k* = 2; price 33.33 points (0.33333) at k = 4." in text  # answer only
    assert "CoT-pass@k: no k* on the grid; no price on the grid." in text
    assert ("Rows with cot_correct true but correct false: base 1 row; rl 1 row. They count as "
            "not CoT-correct") in text
    assert "Answers reached by a flawed chain of thought inflate answer-only pass@k" in text
    # rl's gap shrinks with k (p3 gives it no correct answer at all): no "most at large k".
    assert "most at large k" not in text
    assert "for base by 16.67 points at k = 1 and 33.33 at k = 4" in text
    assert ("The price of rl, its largest loss against base, is 33.33 points on answers and "
            "0.00 points on CoT-pass@k, so the base's lead at large k came from answers "
            "reached by a flawed chain.") in text
    doc = json.loads((out / "result.json").read_text())
    assert doc["cot"]["comparison"]["k_star"] is None
    assert (out / "cot.png").stat().st_size > 0


def test_only_one_table_carries_the_column(tmp_path, capsys):
    b, r = write_pair(tmp_path, cot={"rl": False})
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "200",
                 "--json", str(tmp_path / "c.json")]) == 0
    text = _flat(capsys.readouterr().out)
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["cot"]["carried_by"] == ["base"] and doc["cot"]["skipped"] == "not_both"
    assert "comparison" not in doc["cot"] and "answer_minus_cot" not in doc["cot"]
    assert doc["k_star"] == 2  # the answer-only comparison is untouched
    assert "Only base's rollouts carry a cot_correct column, rl's do not" in text
    assert "CoT-pass@k:" not in text


def test_no_column_no_block(tmp_path):
    doc = _compare(tmp_path, cot={"base": False, "rl": False})
    assert "cot" not in doc


#: Line 3 of base.jsonl (p1, sample 2) with a null cot_correct, and without the key.
NO_KEY_ROW = json.dumps({"prompt_id": "p1", "model": "base", "sample_idx": 2, "correct": False})
NULL_ROW = NO_KEY_ROW[:-1] + ', "cot_correct": null}'


@pytest.mark.parametrize("line", [NULL_ROW, NO_KEY_ROW], ids=["null", "missing-key"])
def test_a_null_cot_verdict_names_file_line_and_field(tmp_path, line):
    from rlvr_boundary.pipelines.compare import CompareOptions, run

    b, r = write_pair(tmp_path)
    lines = b.read_text().splitlines()
    lines[2] = line  # line 3: p1, sample 2
    b.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        run(b, r, CompareOptions(bootstrap=200), json_path=tmp_path / "c.json")
    e = exc.value
    assert (e.path, e.line, e.field) == (str(b), 3, "cot_correct")
    assert f"{b}:3, field 'cot_correct'" in str(e)
    assert not (tmp_path / "c.json").exists()


def test_a_null_cot_verdict_in_parquet_names_the_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlvr_boundary.io.cot import read_cot_counts

    t = pa.table({"prompt_id": ["p1", "p1", "p1"], "model": ["m"] * 3, "sample_idx": [0, 1, 2],
                  "correct": [True, False, True], "cot_correct": [True, None, False]})
    pq.write_table(t, tmp_path / "t.parquet")
    with pytest.raises(InputError) as exc:
        read_cot_counts(tmp_path / "t.parquet", ["p1"])
    assert (exc.value.line, exc.value.field) == (2, "cot_correct")


def test_report_section_present_with_the_column_and_absent_without(tmp_path):
    from rlvr_boundary.pipelines.audit import ReportOptions, run
    from rlvr_boundary.pipelines.compare import CompareOptions

    opts = ReportOptions(compare=CompareOptions(bootstrap=200), base="base", figures=False)
    (tmp_path / "with").mkdir()
    svgs: dict = {}
    doc, _ = run(list(write_pair(tmp_path / "with")), opts, tmp_path / "with" / "a.html",
                 svgs=svgs)
    page = (tmp_path / "with" / "a.html").read_text()
    cot = doc["comparisons"]["rl"]["cot"]
    for m in ("base", "rl"):
        assert cot["comparison"]["pass_at_k"][m] == pytest.approx(brute_passk(C_COT[m]),
                                                                  abs=1e-12)
    assert '<section id="cot"><h2>CoT-pass@k</h2>' in page and '<a href="#cot">' in page
    assert "cot" in svgs and svgs["cot"] in page
    flat = _flat(page)
    assert "CoT-pass@k: no k* on the grid; no price on the grid." in flat
    assert "Rows with cot_correct true but correct false: base 1 row; rl 1 row." in flat
    assert "its calibration is the band&#x27;s" in flat
    assert "is 33.33 points on answers and 0.00 points on CoT-pass@k" in flat

    (tmp_path / "without").mkdir()
    doc, _ = run(list(write_pair(tmp_path / "without", cot={"base": False, "rl": False})),
                 opts, tmp_path / "without" / "a.html")
    page = (tmp_path / "without" / "a.html").read_text()
    assert "cot" not in doc["comparisons"]["rl"]
    assert 'id="cot"' not in page and "CoT-pass@k:" not in page
    assert "cot_correct true but correct false" not in page

    (tmp_path / "one").mkdir()
    doc, _ = run(list(write_pair(tmp_path / "one", cot={"base": False})), opts,
                 tmp_path / "one" / "a.html")
    page = _flat((tmp_path / "one" / "a.html").read_text())
    assert doc["comparisons"]["rl"]["cot"]["skipped"] == "not_both"
    assert "Only rl&#x27;s rollouts carry a cot_correct column, base&#x27;s do not" in page
