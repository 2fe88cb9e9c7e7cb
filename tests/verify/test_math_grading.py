"""Math grading: the team's corpus, real MATH500 gold, pathological inputs, the timeout pool."""

from __future__ import annotations

import json
import time
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from rlvr_boundary.examples import example_dir
from rlvr_boundary.verify.canonical import ANSWER_TYPES, answer_type
from rlvr_boundary.verify.math import MathOptions, grade_math, grade_math_job, options_to_json
from rlvr_boundary.verify.pool import TimeoutPool

CORPUS = [json.loads(x) for x in
          (Path(__file__).with_name("grading_corpus.jsonl")).read_text(encoding="utf-8").splitlines()]


def test_corpus_is_large_and_covers_every_category():
    assert len(CORPUS) >= 500
    cats = Counter(r["category"] for r in CORPUS)
    for c in ("integer", "fraction", "decimal", "percent", "degree", "units", "interval", "set",
              "tuple", "equation", "matrix", "multi_boxed", "no_answer", "after_box", "expression",
              "surd_power", "sign_complex_text", "misc", "fallback", "sign_off",
              "known_false_positive"):
        assert cats[c] >= 2, c
    assert 0.3 < sum(r["expected"] for r in CORPUS) / len(CORPUS) < 0.8


def test_corpus_covers_every_math500_answer_type_with_an_equal_form_and_a_near_miss():
    types = {answer_type(r["answer"]) for r in _math500()}
    assert types <= set(ANSWER_TYPES)
    for ty in ANSWER_TYPES:
        rows = [r for r in CORPUS if r["category"] == f"math500_{ty}"]
        assert {r["expected"] for r in rows} == {True, False}, ty
        assert all(answer_type(r["gold"]) == ty for r in rows), ty
    assert types >= set(ANSWER_TYPES) - {"percent"}  # MATH500 has every type but percentages


@lru_cache(maxsize=None)
def _verdicts(backend: str, guards: bool = True) -> tuple:
    opts = MathOptions(backend=backend, guards=guards)
    return tuple(grade_math(r["gold"], r["completion"], opts)["correct"] for r in CORPUS)


def _wrong(backend, guards=True):
    return [r for r, v in zip(CORPUS, _verdicts(backend, guards)) if v != r["expected"]]


def test_corpus_agreement_math_verify():
    pytest.importorskip("math_verify")
    wrong = _wrong("math-verify")
    # docs/verifiers.md: 525 / 525 with math-verify 0.9.0 and our guards.
    assert not wrong, [(r["gold"], r["completion"][-40:]) for r in wrong]


def test_math_verify_false_accepts_without_the_guards_are_the_documented_ones():
    """Known limit of math-verify 0.9.0 alone: these accepts are wrong; the guards reject them."""
    pytest.importorskip("math_verify")
    opts = MathOptions(guards=False)
    rows = [r for r in CORPUS if r["category"] == "known_false_positive"]
    wrong = [r for r in rows if grade_math(r["gold"], r["completion"], opts)["correct"]]
    assert not any(r["expected"] for r in rows)
    assert sorted((r["gold"], r["completion"].split("boxed{")[-1][:-2]) for r in wrong) == sorted([
        ("\\frac{1}{2004!}", "\\frac{1}{2006!}"), ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}"),
        ("\\frac{2^{2005}+1}{3 \\cdot 2^{2006}}", "\\frac{1}{3 \\cdot 2^{2006}}"),
        ("x+y=5", "5"), ("5", "2x=5"), ("5", "x+y=5"), ("204_5", "204_6")])


def test_corpus_agreement_canonical_never_false_accepts():
    wrong = _wrong("canonical")
    # The canonical backend is conservative: it misses equal answers written differently
    # (docs/verifiers.md: 506 / 525), but it never accepts a wrong one.
    assert all(r["expected"] for r in wrong), [r for r in wrong if not r["expected"]]
    assert len(wrong) == 19, [(r["gold"], r["completion"][-30:]) for r in wrong]


def agreement_table() -> str:
    """The per-answer-type agreement table of docs/verifiers.md (MATH500 types)."""
    backends = ["math-verify", "canonical"]
    lines = ["| answer type | pairs | " + " | ".join(backends) + " |",
             "|---|---|" + "---|" * len(backends)]
    for ty in ANSWER_TYPES:
        idx = [i for i, r in enumerate(CORPUS) if r["category"] == f"math500_{ty}"]
        cells = []
        for b in backends:
            v = _verdicts(b)
            cells.append(f"{sum(v[i] == CORPUS[i]['expected'] for i in idx)} / {len(idx)}")
        lines.append(f"| {ty} | {len(idx)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_docs_agreement_table_is_current():
    pytest.importorskip("math_verify")
    doc = (Path(__file__).parents[2] / "docs" / "verifiers.md").read_text(encoding="utf-8")
    assert agreement_table() in doc, "regenerate: python tests/verify/test_math_grading.py"


def test_math500_with_the_canonical_fallback():
    rows = _math500()
    opts = MathOptions(backend="canonical")
    assert sum(grade_math(r["answer"], r["solution"], opts)["correct"] for r in rows) == 500
    shifted = [i for i, r in enumerate(rows)
               if grade_math(rows[(i + 1) % 500]["answer"], r["solution"], opts)["correct"]]
    assert [(rows[i]["answer"], rows[(i + 1) % 500]["answer"]) for i in shifted] == [
        ("5", "x=5"), ("7", "7"), ("3", "3")]


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


PATHOLOGICAL = [
    "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",           # deeply nested braces
    "\\boxed{" + "\\frac{" * 300 + "1" + "}{2}" * 300 + "}",   # deeply nested LaTeX
    "\\boxed{" + "(" * 3000 + "2" + ")" * 3000 + "}",
    "\\boxed{9^{9^{9^{9}}}}",                                   # huge exponent
    "\\boxed{2^{2^{2^{2^{2^{2}}}}}}",
    "\\boxed{1" + "+1" * 20000 + "}",
    "x" * 2_000_000 + "\\boxed{3}",                             # 2 MB completion
    "\\boxed{" * 100_000 + "3",                                 # 700 kB of unclosed boxes
    "\udcff\udcfe \\boxed{3}",                                 # lone surrogates
    b"\xff\xfe\xfa \\boxed{3}",                               # invalid UTF-8 bytes
]


@pytest.mark.parametrize("text", PATHOLOGICAL)
def test_pathological_inputs_get_a_status_in_process_with_the_fallback(text):
    t0 = time.monotonic()
    res = grade_math("3", text, MathOptions(backend="canonical"))
    assert res["verify_status"] in ("ok", "parse_fail", "no_answer", "error")
    assert time.monotonic() - t0 < 3


def test_invalid_utf8_is_replaced_not_refused():
    res = grade_math("3", b"\xff\xfe \\boxed{3}", MathOptions(backend="canonical"))
    assert res["correct"] and res["answer"] == "3"


@pytest.mark.parametrize("inner", [2, None])
def test_pathological_inputs_through_the_pool_end_within_timeout_plus_one(inner):
    """Each item ends with a status within timeout + 1 s, and the batch finishes.

    inner=2: math-verify's own alarm answers first (status timeout, no respawn);
    inner=None: only the pool's hard kill stops sympy.
    """
    pytest.importorskip("math_verify")
    timeout = 3.0
    opts = options_to_json(MathOptions(inner_timeout=inner))
    items = [("3", t.decode("utf-8", "replace") if isinstance(t, bytes) else t, opts)
             for t in PATHOLOGICAL] + [("1/2", "\\boxed{\\dfrac{1}{2}}", opts)]
    t0 = time.monotonic()
    with TimeoutPool(grade_math_job, workers=2, timeout=timeout,
                     preload=("rlvr_boundary.verify.math", "math_verify", "sympy")) as pool:
        got = dict(pool.map(items))
    assert sorted(got) == list(range(len(items)))
    for i, r in got.items():
        assert r["seconds"] <= timeout + 1, (i, r)
        assert r["verify_status"] in ("ok", "parse_fail", "no_answer", "timeout", "error")
    assert got[len(items) - 1]["correct"]                       # the batch went on
    assert got[6]["correct"] and got[8]["correct"] and got[9]["correct"]  # 2 MB, surrogates, bytes
    assert not got[3]["correct"] and got[3]["verify_status"] == "timeout"   # 9^{9^{9^9}}
    assert time.monotonic() - t0 < len(items) / 2 * (timeout + 1) + 5


def test_pool_kills_a_hung_item_and_replaces_the_worker():
    with TimeoutPool(time.sleep, workers=1, timeout=0.5) as pool:
        got = dict(pool.map([(30,), (0,)]))
        assert pool.n_killed == 1
    assert got[0]["verify_status"] == "timeout" and got[0]["seconds"] < 1.5
    assert got[1]["verify_status"] == "error"  # sleep returns None, not a result dict


def test_pool_reports_crashed_worker_as_error():
    import os

    with TimeoutPool(os._exit, workers=1, timeout=2.0) as pool:
        got = dict(pool.map([(3,), (4,)]))
    assert got[0]["verify_status"] == "error" and got[0]["detail"] == "worker died"
    assert got[1]["verify_status"] == "error"  # the replacement worker ran the next item


def test_pool_memory_limit_turns_a_hog_into_an_error():
    t0 = time.monotonic()
    with TimeoutPool(bytearray, workers=1, timeout=10, memory_mb=256) as pool:
        got = dict(pool.map([(16 * 1024 ** 3,)]))
    assert got[0]["verify_status"] == "error" and "MemoryError" in got[0]["detail"]
    assert time.monotonic() - t0 < 5


def test_pool_speaks_json_only():
    # A result that is not JSON is refused in the worker: nothing but JSON crosses the pipe.
    with TimeoutPool(bytearray, workers=1, timeout=5) as pool:
        got = dict(pool.map([(3,)]))
    assert got[0]["verify_status"] == "error" and "not JSON serializable" in got[0]["detail"]
    with pytest.raises(TypeError):
        with TimeoutPool(len, workers=1, timeout=5) as pool:
            list(pool.map([(object(),)]))


def test_math_verify_inner_timeout_is_a_timeout_status_not_a_wrong_answer():
    pytest.importorskip("math_verify")
    res = grade_math("2", "\\boxed{9^{9^{9^{9}}}}", MathOptions(inner_timeout=1))
    assert res["verify_status"] == "timeout" and not res["correct"]



def test_math_verify_is_a_core_dependency_and_the_default_backend():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    from rlvr_boundary.verify.math import MATH_VERIFY_VERSION

    doc = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    deps = doc["project"]["dependencies"]
    assert f"math-verify=={MATH_VERIFY_VERSION}" in deps  # a plain install grades with it
    assert not any("antlr4_13_2" in d for e in doc["project"]["optional-dependencies"].values()
                   for d in e)  # pip: "does not provide the extra"
    assert MathOptions().backend == "math-verify"
    with pytest.raises(ValueError, match="choose one explicitly"):
        MathOptions(backend="auto")  # no silent fallback any more


def test_every_result_names_its_backend_and_the_answer_column_is_backend_independent():
    pytest.importorskip("math_verify")
    text = "Final Answer: The final answer is $1\\frac{4}{5}$. I hope it is correct."
    both = grade_math("1.8", text, MathOptions(also=("canonical",)))
    assert both["correct"] and both["detail"] == "math-verify"
    assert both["also"]["canonical"]["correct"] and both["answer"] == "9/5"
    assert grade_math("1.8", text, MathOptions(backend="canonical"))["answer"] == "9/5"
    guarded = grade_math("\\frac{1}{2004!}", "\\boxed{\\frac{1}{2006!}}")
    assert not guarded["correct"] and "different exact values" in guarded["detail"]

if __name__ == "__main__":
    print(agreement_table())
