"""Math grading: the team's corpus, real MATH500 gold, pathological inputs, the timeout pool."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from rlvr_audit.examples import example_dir
from rlvr_audit.verify.math import MathOptions, grade_math
from rlvr_audit.verify.pool import TimeoutPool

CORPUS = [json.loads(x) for x in
          (Path(__file__).with_name("grading_corpus.jsonl")).read_text(encoding="utf-8").splitlines()]


def test_corpus_is_large_and_covers_every_category():
    assert len(CORPUS) >= 300
    cats = Counter(r["category"] for r in CORPUS)
    for c in ("integer", "fraction", "decimal", "percent", "degree", "units", "interval", "set",
              "tuple", "equation", "matrix", "multi_boxed", "no_answer", "after_box", "expression"):
        assert cats[c] >= 2, c
    assert 0.3 < sum(r["expected"] for r in CORPUS) / len(CORPUS) < 0.8


def _agreement(backend):
    wrong = [r for r in CORPUS
             if grade_math(r["gold"], r["completion"], MathOptions(backend=backend))["correct"]
             != r["expected"]]
    return wrong


def test_corpus_agreement_math_verify():
    pytest.importorskip("math_verify")
    wrong = _agreement("math-verify")
    # docs/verifiers.md: 325 / 325 with math-verify 0.9.0.
    assert not wrong, wrong[:3]


def test_corpus_agreement_canonical_fallback_never_false_accepts():
    wrong = _agreement("canonical")
    # The fallback is conservative: it may miss equal answers written differently
    # (docs/verifiers.md: 312 / 325), but it never accepts a wrong one.
    assert len(wrong) <= 13
    assert all(r["expected"] for r in wrong)


def _math500():
    return [json.loads(x) for x in (example_dir("math500") / "test.jsonl").read_text().splitlines()]


def test_math500_own_and_shifted_gold():
    """Each official solution verifies against its own gold answer, not the next problem's."""
    pytest.importorskip("math_verify")
    rows = _math500()
    own = sum(grade_math(r["answer"], r["solution"])["correct"] for r in rows)
    shifted = [i for i, r in enumerate(rows)
               if grade_math(rows[(i + 1) % 500]["answer"], r["solution"])["correct"]]
    assert own == 500
    # The three shifted "matches" are problems whose neighbour has an equal answer.
    assert [(rows[i]["answer"], rows[(i + 1) % 500]["answer"]) for i in shifted] == [
        ("5", "x=5"), ("7", "7"), ("3", "3")]


@pytest.mark.parametrize("text", [
    "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
    "\\boxed{" + "\\frac{" * 300 + "1" + "}{2}" * 300 + "}",
    "\\boxed{1" + "+1" * 20000 + "}",
    "x" * 2_000_000 + "\\boxed{3}",
    "\udcff\udcfe \\boxed{3}",
    b"\xff\xfe\xfa \\boxed{3}",
])
def test_pathological_inputs_get_a_status_without_raising(text):
    t0 = time.monotonic()
    res = grade_math("3", text, MathOptions(backend="canonical"))
    assert res["verify_status"] in ("ok", "parse_fail", "no_answer", "error")
    assert time.monotonic() - t0 < 5


def test_pool_kills_hung_items_and_finishes_the_batch():
    pytest.importorskip("math_verify")
    items = [("2", "\\boxed{2}", MathOptions()),
             ("2", "\\boxed{9^{9^{9^{9}}}}", MathOptions()),       # sympy would run away
             ("2", "\\boxed{" + "(" * 3000 + "2" + ")" * 3000 + "}", MathOptions()),
             ("1/2", "\\boxed{\\dfrac{1}{2}}", MathOptions()),
             ("7", "x" * 1_000_000 + "\\boxed{7}", MathOptions())]
    timeout = 2.0
    t0 = time.monotonic()
    with TimeoutPool(grade_math, workers=2, timeout=timeout,
                     preload=("rlvr_audit.verify.math", "math_verify")) as pool:
        got = dict(pool.map(items))
    elapsed = time.monotonic() - t0
    assert [got[i]["correct"] for i in (0, 3, 4)] == [True, True, True]
    assert got[1]["verify_status"] in ("timeout", "ok", "parse_fail")
    assert not got[1]["correct"] and not got[2]["correct"]
    # Two workers, each pathological item bounded by timeout + 1 s.
    assert elapsed < 2 * (timeout + 1) + 3


def test_pool_reports_crashed_worker_as_error():
    import os

    with TimeoutPool(os._exit, workers=1, timeout=2.0) as pool:
        got = dict(pool.map([(3,)]))
    assert got[0]["verify_status"] == "error"
