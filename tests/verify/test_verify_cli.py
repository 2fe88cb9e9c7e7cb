"""``rlvr-audit verify`` end to end: grading, resume, code task, errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from rlvr_audit.cli import main
from rlvr_audit.io.rollouts import read_rollouts, reduce_counts, write_rollouts
from rlvr_audit.verify.run import VerifyOptions, verify_table

RAW = ("prompt_id", "model", "sample_idx")


def raw_table(n_prompts=6, n=4):
    rows = {"prompt_id": [], "model": [], "sample_idx": [], "text": []}
    for p in range(n_prompts):
        for i in range(n):
            rows["prompt_id"].append(f"p{p}")
            rows["model"].append("m")
            rows["sample_idx"].append(i)
            # sample i of prompt p answers p + (i % 2): half right
            rows["text"].append(f"Work... so \\boxed{{{p + (i % 2)}}}")
    return pa.table(rows)


def test_math_verify_grades_and_resumes(tmp_path, capsys):
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(), src, required=RAW)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{p}", "answer": str(p)}) + "\n" for p in range(6)))
    out = tmp_path / "graded"
    opts = VerifyOptions(batch_rows=5, workers=2)
    summary = verify_table(src, gold, out, opts)
    assert summary["statuses"] == {"ok": 24}
    counts = reduce_counts(out)["m"]
    assert list(counts.c) == [2] * 6 and list(counts.n) == [4] * 6
    t = read_rollouts(out)
    assert set(t.column_names) >= {"answer", "verify_status", "q_no_boxed", "q_redundancy3"}
    # Interrupt: lose two shards and the completion mark; the rerun redoes only those.
    shards = sorted(out.glob("part-*.parquet"))
    assert len(shards) == 5
    for f in shards[1:3]:
        f.unlink()
    (out / "_COMPLETE").unlink()
    # Resuming with another batching would pair shards with the wrong rows: refused.
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out)]) == 2
    assert "cannot resume" in capsys.readouterr().err
    summary2 = verify_table(src, gold, out, opts)
    assert summary2["statuses"] == {"ok": 24}
    assert read_rollouts(out).num_rows == 24
    assert list(reduce_counts(out)["m"].c) == [2] * 6


def test_resume_with_another_verifier_is_refused(tmp_path):
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(2, 2), src, required=RAW)
    gold = tmp_path / "gold.csv"
    gold.write_text("id,answer\np0,0\np1,1\n")
    out = tmp_path / "g"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out),
                 "--backend", "canonical"]) == 0
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out),
                 "--backend", "math-verify"]) in (2, 3)


def test_missing_gold_and_missing_text_are_errors(tmp_path, capsys):
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(3, 1), src, required=RAW)
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "p0", "answer": "0"}\n')
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(tmp_path / "o")]) == 2
    assert "2 prompt id(s) have no gold entry, e.g. p1, p2" in capsys.readouterr().err
    notext = tmp_path / "nt.parquet"
    write_rollouts(pa.table({"prompt_id": ["a"], "model": ["m"], "sample_idx": [0],
                             "correct": [True]}), notext)
    assert main(["verify", str(notext), "--gold", str(gold)]) == 2
    assert "no 'text' column" in capsys.readouterr().err


def test_code_task_in_the_sandbox(tmp_path):
    src = tmp_path / "code.parquet"
    write_rollouts(pa.table({
        "prompt_id": ["add", "add", "add"], "model": ["m"] * 3, "sample_idx": [0, 1, 2],
        "text": ["def add(a, b):\n    return a + b", "def add(a, b):\n    return a * b",
                 "def add(a, b):\n    while True:\n        pass"]}), src, required=RAW)
    gold = tmp_path / "tests.jsonl"
    gold.write_text(json.dumps({"task_id": "add", "test": "assert add(2, 3) == 5"}) + "\n")
    out = tmp_path / "graded"
    assert main(["verify", str(src), "--task", "code", "--gold", str(gold), "--out", str(out),
                 "--timeout", "2"]) == 0
    t = read_rollouts(out).sort_by("sample_idx")
    assert t["correct"].to_pylist() == [True, False, False]
    assert t["verify_status"].to_pylist() == ["ok", "ok", "timeout"]


def test_verified_table_feeds_compare(tmp_path):
    src = tmp_path / "raw.parquet"
    t = raw_table()
    t2 = t.set_column(1, "model", pa.array(["rl"] * t.num_rows))
    write_rollouts(pa.concat_tables([t, t2]), src, required=RAW)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{p}", "answer": str(p)}) + "\n" for p in range(6)))
    out = tmp_path / "graded"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out)]) == 0
    assert main(["compare", "--base", str(out), "--base-model", "m", "--rl", str(out),
                 "--rl-model", "rl", "--bootstrap", "50"]) == 0
