"""The report's strategy section: brute-force references, the shipped lab example, the page."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.analysis.strategies import (
    OTHER,
    UNLABELLED,
    strategy_codes,
    strategy_counts,
    strategy_section,
)


def _brute(models, base, pids, names, samples):
    """The section's numbers by loops over individual samples (model, x, name, ok)."""
    out = {}
    for m in models:
        mine = [s for s in samples if s[0] == m]
        out[m] = {"shares": {}, "accuracy": {}}
        for s in names:
            of_s = [r for r in mine if r[2] == s]
            out[m]["shares"][s] = len(of_s) / len(mine) if mine else None
            out[m]["accuracy"][s] = (sum(r[3] for r in of_s) / len(of_s)) if of_s else None
    real = [s for s in names if s not in (UNLABELLED, OTHER)]
    solves = {x: {s for (_, xx, s, ok) in samples if xx == x and ok and s in real}
              for x in range(len(pids))}
    only = {s: [x for x in solves if solves[x] == {s}] for s in real}
    reached_only = {s: {m: sum(any(r[0] == m and r[1] == x and r[2] == s and r[3]
                                   for r in samples) for x in only[s]) for m in models}
                    for s in real}
    base_counts = {s: sum(1 for r in samples if r[0] == base and r[2] == s) for s in real}
    majority = max(real, key=lambda s: (base_counts[s], -real.index(s))) if real else None
    if majority is not None and base_counts[majority] == 0:
        majority = None
    mino = [x for x in solves if solves[x] and majority not in solves[x]]
    reach = {m: sum(any(r[0] == m and r[1] == x and r[3] for r in samples) for x in mino)
             for m in models}
    return out, solves, only, reached_only, majority, mino, reach


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4),
                          st.sampled_from(["a", "b", "c", None]), st.booleans()),
                min_size=1, max_size=120))
def test_section_matches_loops(raw):
    models, pids = ["base", "s1", "s2"], [f"p{i}" for i in range(5)]
    codes, names = strategy_codes([r[2] for r in raw])
    samples = [(models[m], x, names[k], ok) for (m, x, _, ok), k in zip(raw, codes)]
    n = np.zeros((3, 5, len(names)), np.int64)
    c = np.zeros_like(n)
    for i in range(3):
        sel = [j for j, r in enumerate(raw) if r[0] == i]
        n[i], c[i] = strategy_counts([raw[j][1] for j in sel], codes[sel] if sel else [],
                                     [raw[j][3] for j in sel], 5, len(names))
    got = strategy_section(models, "base", pids, names, n, c)
    per, solves, only, reached_only, majority, mino, reach = _brute(models, "base", pids,
                                                                    names, samples)
    for m in models:
        for s in names:
            for key in ("shares", "accuracy"):
                want, have = per[m][key][s], got["models"][m][key][s]
                assert (want is None) == (have is None)
                if want is not None:
                    assert have == pytest.approx(want)
    for s, d in got["only"].items():
        assert d["problems"] == len(only[s])
        assert d["reached"] == reached_only[s]
        assert got["solves"][s] == sum(s in v for v in solves.values())
    assert got["majority"] == majority
    if majority is not None:
        assert got["minority_only"]["problems"] == len(mino)
        assert got["minority_only"]["reached"] == reach
        assert {r["prompt_id"] for r in got["minority_only"]["rows"]} == {pids[x] for x in mino}


def test_codes_order_merge_and_unlabelled():
    labels = ["b", "a", "b", None, "c", "", "b", "a", "d"]
    codes, names = strategy_codes(labels, max_strategies=2)
    assert names == ["b", "a", OTHER, UNLABELLED]
    assert [names[k] for k in codes] == ["b", "a", "b", UNLABELLED, OTHER, UNLABELLED, "b",
                                         "a", OTHER]


def test_section_refuses_bad_counts():
    n = np.ones((2, 1, 1), np.int64)
    with pytest.raises(ValueError):
        strategy_section(["base", "x"], "base", ["p"], ["a"], n, n + 1)
    with pytest.raises(ValueError):
        strategy_section(["base"], "base", ["p"], ["a"], n, n)


# --------------------------------------------------------------------- the shipped example


@pytest.fixture(scope="module")
def lab_report(tmp_path_factory):
    from rlvr_boundary.cli import main

    out = tmp_path_factory.mktemp("strat") / "lab.html"
    assert main(["report", "--example", "lab", "--out", str(out), "--bootstrap", "200"]) == 0
    return out


@pytest.mark.slow
def test_example_strategy_numbers(lab_report):
    """Real values of the shipped lab rollouts, and the ground truth of the task."""
    import pyarrow as pa

    from rlvr_boundary.examples import example_dir
    from rlvr_boundary.io.rollouts import iter_rollout_batches
    from rlvr_boundary.lab import task as T

    doc = json.loads(lab_report.with_suffix(".json").read_text(encoding="utf-8"))
    s = doc["strategies"]
    assert s["strategies"][:3] == ["add", "mul", "sub"] and s["majority"] == "add"
    ex = example_dir("lab")
    expected = json.loads((ex / "expected.json").read_text(encoding="utf-8"))
    shares = expected["strategy"]["shares"]
    for m, sh in shares.items():
        for name, v in sh.items():
            key = UNLABELLED if name == "none" else name
            assert s["models"][m]["shares"][key] == pytest.approx(v, abs=1e-12)
    # Which strategy solves which problem, seen in the samples, is the task's fitness matrix.
    F = T.fitness_matrix([T.problem_of_id(p) for p in doc["prompt_ids"]])  # (S, X)
    for j, name in enumerate(T.STRATEGIES):
        assert s["solves"][name] == int(F[j].sum())
    # The measured values (seed 0): RL leaves the mul-only and sub-only problems behind.
    assert (s["solves"]["add"], s["solves"]["mul"], s["solves"]["sub"]) == (75, 44, 34)
    assert s["only"]["mul"]["reached"] == {"base": 26, "step-10": 25, "step-20": 13,
                                           "step-30": 5, "step-40": 4}
    assert s["only"]["sub"]["reached"] == {"base": 16, "step-10": 16, "step-20": 6,
                                           "step-30": 2, "step-40": 1}
    mo = s["minority_only"]
    assert mo["problems"] == 45
    assert mo["reached"] == {"base": 45, "step-10": 44, "step-20": 22, "step-30": 8,
                             "step-40": 5}
    # cross-check one row against the rollouts
    t = pa.concat_tables(list(iter_rollout_batches(ex))).to_pandas()
    r = mo["rows"][0]
    for m, (c, n) in r["correct"].items():
        sel = t[(t.model == m) & (t.prompt_id == r["prompt_id"])]
        assert (int(sel.correct.sum()), len(sel)) == (c, n)


@pytest.mark.slow
def test_example_page_has_the_section_and_redraws_byte_for_byte(lab_report, tmp_path):
    from rlvr_boundary.cli import main

    html = lab_report.read_text(encoding="utf-8")
    assert 'href="#strategies"' in html and 'id="strategies"' in html
    assert "Strategy mixture of each model" in html  # the figure's title
    assert "step-40 moved its strategy mixture most towards add" in html
    assert "45 problems are solved only by strategies other than add: step-40 reaches 5" in html
    again = tmp_path / lab_report.name
    assert main(["report", "--from", str(lab_report.with_suffix(".json")), "--out",
                 str(again)]) == 0
    assert again.read_bytes() == lab_report.read_bytes()


def test_page_leaves_the_section_out_without_a_strategy_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlvr_boundary.cli import main

    rng = np.random.default_rng(0)
    rows = [{"prompt_id": f"p{x}", "model": m, "sample_idx": i,
             "correct": bool(rng.random() < (0.3 if m == "base" else 0.5))}
            for m in ("base", "rl") for x in range(12) for i in range(8)]
    src = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "r.html"
    assert main(["report", str(src), "--out", str(out), "--bootstrap", "100"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "needs a &#x27;strategy&#x27; column" in html
    assert "strategies" not in json.loads(out.with_suffix(".json").read_text())
    # the same table with a strategy column gets the section, escaped
    for r in rows:
        r["strategy"] = "<b>x</b>" if r["sample_idx"] % 2 else "y"
    pq.write_table(pa.Table.from_pylist(rows), src)
    assert main(["report", str(src), "--out", str(out), "--bootstrap", "100"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "moved its strategy mixture" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
