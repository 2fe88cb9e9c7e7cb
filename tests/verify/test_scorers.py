"""Scorer sensitivity (analysis/scorers.py): per-scorer conclusions against brute force."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest

from rlvr_boundary.analysis.scorers import ScorerOptions, disagreement_by_type, scorer_sensitivity


def _passk_ref(n, c, k):
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def _case(seed=0, P=150, n=16):
    """Base solves many prompts rarely; RL solves fewer prompts often. The lenient scorer
    accepts one more completion on some prompts (a scorer that is right more often)."""
    rng = np.random.default_rng(seed)
    nn = np.full(P, n)
    cb = rng.binomial(n, 0.15, P)
    cr = np.where(rng.random(P) < 0.6, rng.binomial(n, 0.8, P), 0)
    bump = rng.random(P) < 0.3
    return {"strict": {"base": (nn, cb), "rl": (nn, cr)},
            "lenient": {"base": (nn, np.minimum(cb + bump, n)), "rl": (nn, np.minimum(cr + bump, n))}}


def test_per_scorer_curves_match_brute_force_and_robust_sets_are_intersections():
    counts = _case()
    res = scorer_sensitivity(counts, "base", "rl", ScorerOptions(bootstrap=500))
    ks = res["ks"]
    assert list(ks) == list(range(1, 17)) and res["n_prompts"] == 150
    for s, per_model in counts.items():
        for m, (n, c) in per_model.items():
            want = [np.mean([_passk_ref(int(a), int(b), int(k)) for a, b in zip(n, c)]) for k in ks]
            np.testing.assert_allclose(res["per_scorer"][s]["pass_at_k"][m], want, rtol=1e-12)
        d = res["per_scorer"][s]["pass_at_k"]["rl"] - res["per_scorer"][s]["pass_at_k"]["base"]
        np.testing.assert_allclose(res["per_scorer"][s]["diff"], d, atol=1e-12)
        neg = [int(k) for k, v in zip(ks, d) if v < 0]
        assert res["per_scorer"][s]["k_star"] == (neg[0] if neg else None)
        assert res["per_scorer"][s]["price"] == pytest.approx(max(0.0, -d.min()))
    both = [set(res["per_scorer"][s]["loss_budgets"]) for s in counts]
    assert res["robust"]["loss_budgets"] == sorted(both[0] & both[1])
    assert res["robust"]["loss_any"] == sorted(both[0] | both[1])
    assert res["robust"]["loss_depends_on_scorer"] == sorted((both[0] | both[1]) - (both[0] & both[1]))
    spread = np.abs(res["per_scorer"]["strict"]["pass_at_k"]["base"]
                    - res["per_scorer"]["lenient"]["pass_at_k"]["base"])
    np.testing.assert_allclose(res["pass_at_k_spread"]["base"], spread, atol=1e-12)
    # This case has a real loss at large k under both scorers: it survives either scorer.
    assert res["robust"]["first_loss_all"] is not None
    json.dumps(res, default=lambda a: a.tolist())  # JSON-ready (arrays as lists)


def test_identical_scorers_agree_on_everything():
    c = _case(1)["strict"]
    res = scorer_sensitivity({"a": c, "b": c}, "base", "rl", ScorerOptions(bootstrap=300))
    assert res["robust"]["k_star_agree"] and res["robust"]["loss_depends_on_scorer"] == []
    assert res["robust"]["loss_budgets"] == res["per_scorer"]["a"]["loss_budgets"]
    assert res["robust"]["price_range"][0] == res["robust"]["price_range"][1]
    assert float(np.max(res["pass_at_k_spread"]["rl"])) == 0.0


def test_a_loss_that_depends_on_the_scorer_is_reported_as_such():
    # Under 'strict' RL loses on every prompt at large k; 'lenient' accepts the base's near
    # misses as wrong too, so the RL loss vanishes there.
    P, n = 30, 8
    nn = np.full(P, n)
    strict = {"base": (nn, np.full(P, 2)), "rl": (nn, np.r_[np.full(20, 8), np.zeros(10, int)])}
    lenient = {"base": (nn, np.r_[np.full(20, 2), np.zeros(10, int)]),
               "rl": (nn, np.r_[np.full(20, 8), np.zeros(10, int)])}
    res = scorer_sensitivity({"strict": strict, "lenient": lenient}, "base", "rl",
                             ScorerOptions(bootstrap=400))
    assert res["per_scorer"]["strict"]["k_star"] is not None
    assert res["per_scorer"]["lenient"]["k_star"] is None
    assert not res["robust"]["k_star_agree"]
    assert res["robust"]["loss_budgets"] == []
    assert res["robust"]["loss_depends_on_scorer"] == res["per_scorer"]["strict"]["loss_budgets"]


def test_bad_inputs_are_refused():
    c = _case()
    with pytest.raises(ValueError, match="no counts"):
        scorer_sensitivity({"s": {"base": c["strict"]["base"]}}, "base", "rl")
    other = {"base": (np.full(150, 17), np.zeros(150, int)), "rl": c["strict"]["rl"]}
    with pytest.raises(ValueError, match="differ between scorers"):
        scorer_sensitivity({"a": c["strict"], "b": other}, "base", "rl")
    with pytest.raises(ValueError, match="budgets"):
        scorer_sensitivity(c, "base", "rl", ScorerOptions(ks=[1, 99]))
    with pytest.raises(ValueError, match="c <= n"):
        scorer_sensitivity({"a": {"base": ([2], [3]), "rl": ([2], [1])}}, "base", "rl")


def test_disagreement_by_type_counts_match_a_loop():
    rng = np.random.default_rng(3)
    N = 200
    types = rng.choice(["integer", "fraction", "pi"], N)
    a = rng.random(N) < 0.5
    b = np.where(rng.random(N) < 0.2, ~a, a)
    ex = [{"row": i} for i in range(N)]
    res = disagreement_by_type(types, {"mv": a, "canon": b}, reference="mv", examples=ex)
    assert res["overall"]["canon"]["disagree"] == int(np.sum(a != b))
    for ty in ("integer", "fraction", "pi"):
        m = types == ty
        st = res["by_type"][ty]["canon"]
        assert st["rows"] == int(m.sum()) and st["disagree"] == int(np.sum(a[m] != b[m]))
        assert st["only_reference"] == int(np.sum(a[m] & ~b[m]))
        assert st["only_other"] == int(np.sum(~a[m] & b[m]))
        assert st["rate"] == pytest.approx(st["disagree"] / st["rows"])
        for e in res["examples"][ty]["canon"]:
            assert types[e["row"]] == ty and e["mv"] != e["canon"]
        assert len(res["examples"][ty]["canon"]) == min(3, st["disagree"])
    with pytest.raises(ValueError, match="reference"):
        disagreement_by_type(types, {"a": a}, reference="mv")


# ----------------------------------------------------------------------------- verify, several backends

PAIRS = [  # gold, completion, math-verify, canonical
    ("x^2-1", "so \\boxed{(x-1)(x+1)}", True, False),
    ("2+3i", "so \\boxed{3i+2}", True, False),
    ("5", "so \\boxed{5}", True, True),
    ("\\frac{1}{3}", "so \\boxed{0.33}", False, False),
    ("1\\frac{4}{5}", "The final answer is $1.8$. I hope it is correct.", True, True),
    ("1\\frac{4}{5}", "so \\boxed{\\frac{4}{5}}", False, False),
]


def test_verify_grades_with_two_backends_in_one_pass_and_a_rerun_grades_nothing(tmp_path, capsys):
    pytest.importorskip("math_verify")
    from rlvr_boundary.cli import main
    from rlvr_boundary.io.rollouts import read_manifest, read_rollouts

    src = tmp_path / "raw.jsonl"
    src.write_text("".join(json.dumps({"prompt_id": f"p{i}", "model": "m", "sample_idx": 0,
                                       "text": t}) + "\n" for i, (_, t, _, _) in enumerate(PAIRS)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{i}", "answer": g}) + "\n"
                            for i, (g, _, _, _) in enumerate(PAIRS)))
    res = tmp_path / "summary.json"
    assert main(["verify", str(src), "--gold", str(gold), "--backend", "math-verify,canonical",
                 "--json", str(res)]) == 0
    out = tmp_path / "raw.verified.parquet"  # one file beside the input, no --out needed
    assert out.is_file() and not (tmp_path / ".raw.verified.parquet.parts").exists()
    printed = capsys.readouterr().out
    assert "disagreement with math-verify by answer type" in printed
    assert "known limits of canonical" in printed
    t = read_rollouts(out).sort_by("prompt_id")
    assert t["correct__math_verify"].to_pylist() == [p[2] for p in PAIRS]
    assert t["correct__canonical"].to_pylist() == [p[3] for p in PAIRS]
    assert t["correct"].to_pylist() == [p[2] for p in PAIRS]  # the first backend
    assert t["answer"].to_pylist()[4] == "9/5"  # the canonical string, whichever backend
    # The gold and its answer type ride along, for the disagreement table of compare/report.
    assert t["gold"].to_pylist() == [p[0] for p in PAIRS]
    assert t["answer_type"].to_pylist() == ["expression", "complex", "integer", "fraction",
                                            "mixed_number", "mixed_number"]
    doc = json.loads(res.read_text())
    dis = doc["disagreement"]
    assert dis["overall"]["canonical"]["disagree"] == 2
    assert dis["by_type"]["expression"]["canonical"]["only_reference"] == 1
    assert dis["by_type"]["complex"]["canonical"]["only_reference"] == 1
    assert dis["by_type"]["mixed_number"]["canonical"]["disagree"] == 0
    assert doc["backends"]["canonical"]["correct"] == 2
    manifest = read_manifest(out)
    assert manifest["verifier"]["also"] == ["canonical (rlvr-boundary)"]
    assert set(manifest["verifier"]["known_limits"]) == {"math-verify", "canonical"}
    # A rerun of the finished job says so and grades nothing.
    before = out.stat().st_mtime_ns
    assert main(["verify", str(src), "--gold", str(gold), "--backend", "math-verify,canonical"]) == 0
    assert "already complete" in capsys.readouterr().out
    assert out.stat().st_mtime_ns == before
    # The same output with another verifier is another job: refused, not silently kept.
    assert main(["verify", str(src), "--gold", str(gold), "--backend", "canonical"]) == 2
    assert main(["verify", str(src), "--gold", str(gold), "--backend", "sympy"]) == 2
    assert "unknown" in capsys.readouterr().err


def test_rerun_of_a_finished_shard_directory_grades_nothing(tmp_path):
    from rlvr_boundary.verify.math import MathOptions
    from rlvr_boundary.pipelines.verify import VerifyOptions, verify_table

    src = tmp_path / "raw.jsonl"
    src.write_text("".join(json.dumps({"prompt_id": "p", "model": "m", "sample_idx": i,
                                       "text": f"\\boxed{{{i}}}"}) + "\n" for i in range(4)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "p", "answer": "1"}) + "\n")
    opts = VerifyOptions(workers=1, math=MathOptions(backend="canonical"))
    first = verify_table(src, gold, tmp_path / "out", opts)
    assert first["correct"] == 1 and "already_complete" not in first
    again = verify_table(src, gold, tmp_path / "out", opts)
    assert again["already_complete"] and again["rows"] == 4 and again["correct"] == 1


def test_the_math500_sensitivity_case_rewrites_are_what_they_claim():
    """Equal forms are accepted by math-verify, near misses rejected by both backends, and the
    canonical backend never accepts a completion that is wrong by construction."""
    pytest.importorskip("math_verify")
    import sys
    from pathlib import Path

    from rlvr_boundary.examples import example_dir
    from rlvr_boundary.verify.math import MathOptions, grade_math

    sys.path.insert(0, str(Path(__file__).parent))
    from sensitivity_case import WRAPS, build, equal_forms, near_misses

    rows = [json.loads(x) for x in (example_dir("math500") / "test.jsonl").read_text().splitlines()]
    mv, cn = MathOptions(), MathOptions(backend="canonical")
    sample = rows[::10]
    for i, r in enumerate(sample):
        g = r["answer"]
        for a in equal_forms(g)[1:]:
            assert grade_math(g, WRAPS["sign_off"](a), mv)["correct"], (g, a)
        for a in near_misses(g, sample[(i + 1) % len(sample)]["answer"]):
            t = WRAPS["boxed"](a)
            assert not grade_math(g, t, mv)["correct"] and not grade_math(g, t, cn)["correct"], (g, a)
    rollouts, gold = build(sample, n=4)
    golds = {x["id"]: x["answer"] for x in gold}
    assert len(rollouts) == 2 * 4 * len(sample)
    for x in rollouts:
        if not x["truth"]:
            assert not grade_math(golds[x["prompt_id"]], x["text"], cn)["correct"], x


def test_the_example_in_docs_verifiers_runs(capsys):
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "verifiers.md").read_text(encoding="utf-8")
    block = doc.split("### Scorer sensitivity", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "docs/verifiers.md", "exec"), {})  # our own documentation, not user input
    out = capsys.readouterr().out
    assert out.count("pass@1 base/rl") == 2 and "k* agrees:" in out
