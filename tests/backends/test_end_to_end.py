"""End to end on the tiny model: sample -> verify -> report fills the token-statistics section;
score --before writes where-learning-landed; sample --match-entropy-of records the temperature."""

from __future__ import annotations

import json

import pytest

from rlvr_boundary.cli import main
from tests.results.schema_check import assert_valid

pytest.importorskip("math_verify")

QUESTIONS = ["What is 12 + 7?", "Let x + 2 = 5.", "Compute 3 * 4 - 5.", "Find the sum of 1, 2, 3 and 4."]
ANSWERS = ["19", "3", "7", "10"]


@pytest.mark.slow
def test_sample_verify_report(tiny_model, tiny_qwen, tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": f"q{i}", "problem": q, "answer": a}) + "\n"
                               for i, (q, a) in enumerate(zip(QUESTIONS, ANSWERS))), encoding="utf-8")
    common = ["--model", str(tiny_model), "--prompts", str(prompts), "--n", "6", "--max-new-tokens", "28",
              "--threads", "1"]
    assert main(["sample", *common, "--out", str(tmp_path / "base"), "--label", "base"]) == 0
    # "RL" stand-in: the same checkpoint at the temperature matching a lower-entropy target
    assert main(["sample", *common, "--out", str(tmp_path / "rl"), "--label", "rl",
                 "--temperature", "0.6"]) == 0
    assert main(["sample", *common, "--out", str(tmp_path / "matched"), "--label", "matched",
                 "--match-entropy-of", str(tmp_path / "rl"), "--match-n", "2"]) == 0
    m = assert_valid(tmp_path / "matched" / "entropy_match.json")
    assert m["kind"] == "entropy-match" and 0.05 <= m["temperature"] <= 2.0 and m["trace"]
    man = json.loads((tmp_path / "matched" / "_manifest.json").read_text())
    assert man["sampling"]["temperature"] == round(m["temperature"], 4)
    for name in ("base", "rl"):
        assert main(["verify", str(tmp_path / name), "--gold", str(prompts), "--workers", "1"]) == 0
    out = tmp_path / "report.html"
    # verify writes one file beside its input without --out
    assert main(["report", str(tmp_path / "base.verified.parquet"),
                 str(tmp_path / "rl.verified.parquet"),
                 "--out", str(out), "--bootstrap", "200"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "Token statistics need" not in html  # the section is filled, not the placeholder
    res = json.loads(out.with_suffix(".json").read_text())
    tokens = res.get("tokens") or res.get("audit", {}).get("tokens") or next(
        v["tokens"] for v in res.values() if isinstance(v, dict) and "tokens" in v)
    for col in ("entropy_mean", "rbf_mean", "log_ppl", "num_tokens"):
        assert tokens[col]["base"]["all"]["count"] == 24 and tokens[col]["rl"]["all"]["count"] == 24
    assert tokens["entropy_mean"]["rl"]["all"]["mean"] < tokens["entropy_mean"]["base"]["all"]["mean"]
    assert tokens.get("entropy_by_position")
    # where learning landed: RL-stand-in texts under a further-trained checkpoint vs the base
    learn = tmp_path / "learn.json"
    assert main(["score", str(tmp_path / "rl"), "--model", str(tiny_model), "--before", str(tiny_model),
                 "--out", str(tmp_path / "scored"), "--learning", str(learn), "--threads", "1"]) == 0
    doc = assert_valid(learn)
    assert doc["kind"] == "learning_landed" and doc["schema_version"]
    assert doc["barely_moved"]["0.01"] == 1.0  # the same checkpoint on both sides: nothing moved
