"""``rlvr-boundary verify`` end to end: grading, resume, code task, errors."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import read_rollouts, reduce_counts, write_rollouts
from rlvr_boundary.verify.math import MathOptions
from rlvr_boundary.pipelines.verify import VerifyOptions, verify_table

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


def _graded_folder(tmp_path):
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(), src, required=RAW)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{p}", "answer": str(p)}) + "\n" for p in range(6)))
    opts = VerifyOptions(batch_rows=5, workers=1, math=MathOptions(backend="canonical"))
    out = tmp_path / "graded"
    assert verify_table(src, gold, out, opts)["statuses"] == {"ok": 24}
    return src, gold, out, opts


def test_a_graded_folder_reads_as_one_parquet_dataset(tmp_path):
    """pandas and pyarrow read a verify output folder: the manifest and the completion mark
    are not taken for shards."""
    pd = pytest.importorskip("pandas")
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    _, _, out, _ = _graded_folder(tmp_path)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("part-")) == [
        "_COMPLETE", "_manifest.json"]
    df = pd.read_parquet(out)
    assert len(df) == 24 and int(df.correct.sum()) == 12
    assert sorted(zip(df.prompt_id, df.sample_idx)) == sorted(
        (f"p{p}", i) for p in range(6) for i in range(4))
    assert ds.dataset(out, format="parquet").to_table().num_rows == 24
    assert pq.read_table(out).num_rows == 24


def test_a_graded_folder_with_the_old_manifest_name_is_resumed(tmp_path):
    from rlvr_boundary.errors import InputError

    src, gold, out, opts = _graded_folder(tmp_path)
    (out / "_manifest.json").rename(out / "manifest.json")  # as rlvr-boundary 0.1 wrote it
    # finished: the stored summary, nothing graded again, nothing renamed
    again = verify_table(src, gold, out, opts)
    assert again["already_complete"] and again["statuses"] == {"ok": 24}
    # unfinished: the old manifest is checked, then replaced by _manifest.json
    sorted(out.glob("part-*.parquet"))[1].unlink()
    (out / "_COMPLETE").unlink()
    other = VerifyOptions(batch_rows=4, workers=1, math=MathOptions(backend="canonical"))
    with pytest.raises(InputError, match="cannot resume"):
        verify_table(src, gold, out, other)
    assert (out / "manifest.json").is_file() and not (out / "_manifest.json").exists()
    assert verify_table(src, gold, out, opts)["statuses"] == {"ok": 24}
    assert (out / "_manifest.json").is_file() and not (out / "manifest.json").exists()
    assert read_rollouts(out).num_rows == 24
    assert list(reduce_counts(out)["m"].c) == [2] * 6


def test_resume_with_another_verifier_is_refused(tmp_path, capsys):
    pytest.importorskip("math_verify")  # without it the second run fails for another reason
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(2, 2), src, required=RAW)
    gold = tmp_path / "gold.csv"
    gold.write_text("id,answer\np0,0\np1,1\n")
    out = tmp_path / "g"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out),
                 "--backend", "canonical"]) == 0
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out),
                 "--backend", "math-verify"]) == 2
    assert "cannot resume" in capsys.readouterr().err


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
    err = " ".join(capsys.readouterr().err.split())
    assert "no completion text column (tried ['text', 'completion'])" in err


def test_code_task_in_the_sandbox(tmp_path):
    src = tmp_path / "code.parquet"
    write_rollouts(pa.table({
        "prompt_id": ["add", "add", "add"], "model": ["m"] * 3, "sample_idx": [0, 1, 2],
        "text": ["def add(a, b):\n    return a + b", "def add(a, b):\n    return a * b",
                 "def add(a, b):\n    while True:\n        pass"]}), src, required=RAW)
    gold = tmp_path / "tests.jsonl"
    gold.write_text(json.dumps({"task_id": "add", "test": "assert add(2, 3) == 5"}) + "\n")
    assert main(["verify", str(src), "--task", "code", "--gold", str(gold), "--out",
                 str(tmp_path / "x"), "--timeout", "0"]) == 2
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


def _math500():
    from rlvr_boundary.examples import example_dir

    return [json.loads(x) for x in (example_dir("math500") / "test.jsonl").read_text().splitlines()]


def test_math500_solutions_end_to_end_into_one_parquet_file(tmp_path, capsys):
    """Real data (MATH500, MIT licence, see examples/data/math500/README.md): the official
    solutions as completions of model 'ref', each problem's gold answer; and the same
    solutions shifted by one problem as model 'shifted'."""
    rows = _math500()
    n = len(rows)
    src = tmp_path / "math500.jsonl"
    with open(src, "w", encoding="utf-8") as fh:
        for i, r in enumerate(rows):
            fh.write(json.dumps({"prompt_id": r["unique_id"], "model": "ref", "sample_idx": 0,
                                 "completion": r["solution"], "prompt": r["problem"]}) + "\n")
            fh.write(json.dumps({"prompt_id": r["unique_id"], "model": "shifted", "sample_idx": 0,
                                 "completion": rows[(i + 1) % n]["solution"]}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"unique_id": r["unique_id"], "answer": r["answer"]}) + "\n"
                            for r in rows))
    out = tmp_path / "graded.parquet"
    res = tmp_path / "summary.json"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out),
                 "--backend", "canonical", "--workers", "2", "--json", str(res)]) == 0
    assert "1000 samples" in capsys.readouterr().out
    assert not (tmp_path / ".graded.parquet.parts").exists()
    counts = reduce_counts(out)
    assert int(counts["ref"].c.sum()) == n
    assert int(counts["shifted"].c.sum()) == 3       # neighbours with equal answers (5 / x=5, 7, 3)
    t = read_rollouts(out)
    assert set(t["verify_status"].to_pylist()) == {"ok"}
    assert t.filter(pa.compute.equal(t["model"], "ref"))["q_no_boxed"].to_pylist() == [False] * n
    manifest = json.loads((tmp_path / "graded.manifest.json").read_text())
    assert manifest["verifier"]["name"] == "canonical (rlvr-boundary)"
    assert manifest["text_field"] == "completion"
    doc = json.loads(res.read_text())
    assert doc["kind"] == "verify" and doc["rows"] == 2 * n and doc["correct"] == n + 3


def test_missing_and_hostile_texts_get_statuses_not_errors(tmp_path):
    src = tmp_path / "raw.jsonl"
    texts = [None, "", "\ufffd\ufffd \\boxed{3}", "\\boxed{" * 50_000, "x" * 1_000_000 + "\\boxed{3}"]
    src.write_text("".join(json.dumps({"prompt_id": "p", "model": "m", "sample_idx": i, "text": t})
                           + "\n" for i, t in enumerate(texts)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "p", "answer": "3"}) + "\n")
    out = tmp_path / "o.jsonl"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(out), "--timeout", "3",
                 "--backend", "canonical", "--extract", "boxed"]) == 0
    t = read_rollouts(out).sort_by("sample_idx")
    assert t["verify_status"].to_pylist() == ["no_answer", "no_answer", "ok", "no_answer", "ok"]
    assert t["correct"].to_pylist() == [False, False, True, False, True]
    assert t["q_no_boxed"].to_pylist() == [None, True, False, True, False]


def test_stdio_code_task_through_the_cli(tmp_path):
    src = tmp_path / "code.jsonl"
    good = "```python\nprint(sum(map(int, input().split())))\n```"
    bad = "```python\nprint(0)\n```"
    src.write_text("".join(json.dumps({"prompt_id": "sum", "model": "m", "sample_idx": i,
                                       "completion": t}) + "\n" for i, t in enumerate([good, bad])))
    gold = tmp_path / "tests.jsonl"
    gold.write_text(json.dumps({"id": "sum", "test_cases": [{"input": "1 2", "output": "3"},
                                                            {"input": "4 5 6", "output": "15"}]}))
    out = tmp_path / "graded"
    assert main(["verify", str(src), "--task", "code", "--gold", str(gold), "--out", str(out)]) == 0
    t = read_rollouts(out).sort_by("sample_idx")
    assert t["correct"].to_pylist() == [True, False]
    assert json.loads((out / "_manifest.json").read_text())["verifier"]["isolation"] in (
        "bwrap", "none")


def test_lone_surrogates_in_a_jsonl_table(tmp_path):
    src = tmp_path / "raw.jsonl"
    src.write_text(json.dumps({"prompt_id": "p", "model": "m", "sample_idx": 0,
                               "text": "\udcff \\boxed{3}"}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "p", "answer": "3"}) + "\n")
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(tmp_path / "o"),
                 "--backend", "canonical"]) == 0


def test_single_file_output_resumes_from_its_parts(tmp_path):
    src = tmp_path / "raw.parquet"
    write_rollouts(raw_table(), src, required=RAW)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{p}", "answer": str(p)}) + "\n" for p in range(6)))
    opts = VerifyOptions(batch_rows=5, workers=1, math=MathOptions(backend="canonical"))
    parts = tmp_path / ".g.parquet.parts"
    verify_table(src, gold, parts, opts)  # as if a single-file run had been killed at the end
    (parts / "part-000002.parquet").unlink()
    (parts / "_COMPLETE").unlink()
    out = tmp_path / "g.parquet"
    summary = verify_table(src, gold, out, opts)
    assert summary["rows"] == 24 and summary["correct"] == 12
    assert out.is_file() and not parts.exists()
    t = read_rollouts(out)
    assert t.num_rows == 24 and sorted(zip(t["prompt_id"].to_pylist(),
                                           t["sample_idx"].to_pylist())) == sorted(
        (f"p{p}", i) for p in range(6) for i in range(4))
