"""Typed result kinds: every file the commands write validates against its kind's JSON Schema,
the declarations refuse a wrong payload, and docs/results/ is generated from them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.examples import example_files
from rlvr_boundary.kinds import KINDS, KindError, check, json_schema, upgrade
from tests.results.docs import DOCS, GLOSSARY_PAGE, glossary_page, pages
from tests.results.schema_check import assert_valid

pytest.importorskip("jsonschema")

#: Kinds whose writer needs a model (sample, entropy-match, learning_landed: validated in
#: tests/backends) or the lab's training (lab-run, lab-entropy: checked by the envelope when
#: written).
ELSEWHERE = {"sample", "entropy-match", "learning_landed", "lab-run", "lab-entropy",
             "monitor-step", "monitor-run"}  # tests/monitor reads them back by kind


def _valid(path) -> dict:
    return assert_valid(path)


def test_docs_results_are_generated_from_the_registry():
    want = pages()
    have = {p.name for p in DOCS.glob("*.md")}
    assert have == set(want), "run: python tests/results/docs.py --write"
    for name, text in want.items():
        assert (DOCS / name).read_text(encoding="utf-8") == text, name


def test_the_glossary_defines_every_term_once_and_docs_show_it():
    from rlvr_boundary.report.words import GLOSSARY

    wanted = {"pass@k", "D(k)", "k*", "price", "Delta_SE", "band", "supported gain",
              "supported loss", "first-loss set", "SRR", "NDR", "SDS", "NSCR",
              "support epsilon", "coverage", "cover@tau", "maj@k", "RBF", "entropy"}
    assert wanted <= set(GLOSSARY) and all(len(v) > 40 for v in GLOSSARY.values())
    assert GLOSSARY_PAGE.read_text(encoding="utf-8") == glossary_page()


def test_every_schema_is_a_valid_draft_2020_12_schema():
    import jsonschema

    for name in KINDS:
        jsonschema.Draft202012Validator.check_schema(json_schema(name))


def test_compare_with_every_block(tmp_path):
    ex = example_files("deepscaler32k")
    assert main(["compare", "--base", str(ex["base"]), "--rl", str(ex["rl"]), "--bootstrap",
                 "200", "--ks", "1-64", "--extrapolate", "256", "--verifier-error", "0.02,0.05",
                 "--cluster-by", "id-prefix:-", "--out", str(tmp_path / "o")]) == 0
    doc = _valid(tmp_path / "o" / "result.json")
    assert doc["verifier_error"] and doc["extrapolation"] and doc["band"]["n_clusters"]
    assert set(doc["versions"]) >= {"numpy", "scipy"}


def test_report_and_its_redraw(tmp_path):
    from tests.report.fixtures import synthetic_rollouts
    from rlvr_boundary.io.rollouts import write_rollouts

    write_rollouts(synthetic_rollouts(prompts=12, n=8), tmp_path / "r.parquet")
    assert main(["report", str(tmp_path / "r.parquet"), "--base", "base", "--bootstrap", "100",
                 "--out", str(tmp_path / "a.html"), "--no-figures"]) == 0
    doc = _valid(tmp_path / "a.json")
    assert doc["quality"] and doc["tokens"] and doc["samples_shown"]


@pytest.mark.parametrize("table", ["k,base,rl\n1,.1,.25\n4,.22,.37\n64,.58,.61\n256,.69,.68\n",
                                   "0.1,0.3\n0.5,0.4\n0.0,0.2\n1.0,0.9\n"])
def test_price(tmp_path, table):
    (tmp_path / "t.csv").write_text(table)
    assert main(["price", str(tmp_path / "t.csv"), "--json", str(tmp_path / "p.json")]) == 0
    _valid(tmp_path / "p.json")


def test_theory_diagnose_frontier_and_verify(tmp_path):
    for args in (["diagnose", "--example", "--json", str(tmp_path / "d.json")],
                 ["frontier", "--example", "--taus", "5", "--json", str(tmp_path / "f.json"),
                  "--out", str(tmp_path / "f.png")]):
        assert main(["theory", *args]) == 0
    no_lunch = tmp_path / "m.csv"
    no_lunch.write_text("strategy,pi0,a,b\ns1,0.5,1,0\ns2,0.5,0,1\n")
    assert main(["theory", "diagnose", str(no_lunch), "--json", str(tmp_path / "e.json")]) == 0
    for name in ("d", "f", "e"):
        _valid(tmp_path / f"{name}.json")


@pytest.mark.slow
def test_theory_verify(tmp_path):
    assert main(["theory", "verify", "--quick", "--json", str(tmp_path / "v.json")]) == 0
    _valid(tmp_path / "v.json")


def test_plan(tmp_path):
    rng = np.random.default_rng(0)
    for name, a in (("b", 0.6), ("r", 1.4)):
        c = rng.binomial(8, rng.beta(a, 1.0, 40))
        (tmp_path / f"{name}.jsonl").write_text("".join(
            json.dumps({"id": f"q{i}", "n": 8, "c": int(x)}) + "\n" for i, x in enumerate(c)))
    assert main(["plan", "--base", str(tmp_path / "b.jsonl"), "--rl", str(tmp_path / "r.jsonl"),
                 "--gain-at", "1", "--budgets", "8,16", "--sims", "10",
                 "--json", str(tmp_path / "plan.json")]) == 0
    _valid(tmp_path / "plan.json")


def test_verify_with_two_backends_compare_with_scorers_and_rft_select(tmp_path):
    pytest.importorskip("math_verify")
    rows = [{"prompt_id": f"p{i}", "model": f"m{m}", "sample_idx": j,
             "text": f"so the answer is \\boxed{{{i + (j + m) % 2}}} and 3 more words here"
             if (i + j) % 4 else f"so the answer is \\boxed{{{i}.0}} here", "rbf_mean": 1.0 + j}
            for m in range(2) for i in range(6) for j in range(4)]
    src = tmp_path / "raw.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{i}", "answer": str(i)}) + "\n"
                            for i in range(6)))
    graded = tmp_path / "g.parquet"
    assert main(["verify", str(src), "--gold", str(gold), "--backend", "canonical,math-verify",
                 "--workers", "1", "--out", str(graded), "--json", str(tmp_path / "v.json")]) == 0
    assert _valid(tmp_path / "v.json")["disagreement"]
    assert main(["compare", "--base", str(graded), "--rl", str(graded), "--base-model", "m0",
                 "--rl-model", "m1", "--bootstrap", "50", "--json", str(tmp_path / "c.json")]) == 0
    assert _valid(tmp_path / "c.json")["scorers"]["scorers"] == ["canonical", "math_verify"]
    assert main(["rft-select", str(graded), "--budget", "4",
                 "--summary", str(tmp_path / "s.json")]) == 0
    _valid(tmp_path / "s.json")


def test_every_kind_is_validated_somewhere():
    """The tests above (and the model tests for the rest) cover every registered kind."""
    covered = {"compare", "report", "price", "theory-diagnose", "theory-frontier",
               "theory-verify", "plan", "verify", "rft-select"}
    assert covered | ELSEWHERE == set(KINDS)


def test_a_payload_that_breaks_its_declaration_is_refused():
    from rlvr_boundary.io.results import envelope

    good = {"input_kind": "curve", "ks": [1, 4], "pass_at_k": {"base": [0.1, 0.2],
                                                              "rl": [0.3, 0.1]},
            "diff": [0.2, -0.1], "crossings": [], "n_crossings": 0, "k_star": 4,
            "price": 0.1, "price_k": 4, "columns": None, "input": "t",
            "labels": {"base": "base", "rl": "RL"}}
    envelope("price", {}, good)  # accepted
    for bad, where in (({**good, "price": "0.1"}, "price.price"),
                       ({k: v for k, v in good.items() if k != "diff"}, "price.diff: missing"),
                       ({**good, "surprise": 1}, "undeclared keys ['surprise']"),
                       ({**good, "input_kind": "table"}, "price.input_kind"),
                       ({**good, "ks": [1, "4"]}, "price.ks[1]")):
        with pytest.raises(KindError, match=where.replace("[", r"\[").replace("]", r"\]")):
            envelope("price", {}, bad)
    with pytest.raises(KindError, match="unknown result kind"):
        check({"kind": "nope"})
    # A null where a number is undefined is a number of JSON, not a break.
    envelope("price", {}, {**good, "price": None})


def test_a_schema_1_0_comparison_is_upgraded_with_what_the_words_read():
    doc = {"schema_version": "1.0", "kind": "compare", "ks": [1, 2, 3, 4],
           "gain_budgets": [1, 2, 4], "band": {}}
    assert upgrade(doc)["gain_run_end"] == 2
    new = {"schema_version": "1.1", "kind": "compare", "ks": [1], "gain_budgets": [1],
           "band": {}}
    assert "gain_run_end" not in upgrade(new)  # a 1.1 document carries its own
