"""Adapters read other tools' outputs; each fixture is written here in the tool's layout."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr_audit.cli import main
from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters import detect, read
from rlvr_audit.io.formats import detect_format, load_counts


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def lm_eval_rows(correct_by_doc, repeats_kept=False):
    rows = []
    for doc_id, verdicts in enumerate(correct_by_doc):
        n = len(verdicts)
        gens = [f"answer {j}" for j in range(n)]
        rows.append({
            "doc_id": doc_id, "doc": {"question": f"q{doc_id}", "answer": "4"}, "target": "4",
            "arguments": {"gen_args_0": {"arg_0": "Q: ...", "arg_1": {"until": ["Q:"]}}},
            "resps": [gens], "filtered_resps": [gens] if repeats_kept else [gens[0]],
            "filter": "take_all" if repeats_kept else "take_first",
            "metrics": ["exact_match"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t",
            "exact_match": float(np.mean(verdicts)) if repeats_kept else float(verdicts[0]),
        })
    return rows


def test_lm_eval_single_and_repeats(tmp_path):
    f = write_jsonl(tmp_path / "samples_gsm8k_2024-06-01T12-30-00.123456.jsonl",
                    lm_eval_rows([[1], [0], [1]]))
    assert detect(f) == "lm-eval" and detect_format(f) == "lm-eval"
    t = read("lm-eval", f, model="m")
    assert t["prompt_id"].to_pylist() == ["gsm8k/0", "gsm8k/1", "gsm8k/2"]
    assert t["n"].to_pylist() == [1, 1, 1] and t["c"].to_pylist() == [1, 0, 1]
    g = write_jsonl(tmp_path / "samples_math_2024-06-01T12-30-00.jsonl",
                    lm_eval_rows([[1, 0, 1, 1], [0, 0, 0, 0]], repeats_kept=True))
    (ct,) = load_counts(g, label="rl")
    assert ct.model == "rl"
    assert list(ct.n) == [4, 4] and list(ct.c) == [3, 0]


def test_lm_eval_refuses_a_metric_that_is_not_a_share(tmp_path):
    rows = lm_eval_rows([[1, 0, 1]], repeats_kept=True)
    rows[0]["exact_match"] = 0.5  # not k/3
    f = write_jsonl(tmp_path / "samples_x_2024-01-01T00-00-00.jsonl", rows)
    with pytest.raises(InputError, match="not a share of correct samples") as e:
        read("lm-eval", f)
    assert e.value.line == 1 and e.value.field == "exact_match"


def lighteval_table(new_layout: bool, verdicts):
    rows = []
    for i, v in enumerate(verdicts):
        gens = [f"g{j}" for j in range(len(v))]
        score = {"math_pass@1:4_samples": float(np.mean(v))}
        if new_layout:
            rows.append({"doc": {"query": f"q{i}", "gold_index": 0, "id": f"d{i}"},
                         "model_response": {"text": gens}, "metric": score})
        else:
            rows.append({"example": f"q{i}", "predictions": gens, "gold": ["4"],
                         "metrics": json.dumps(score)})
    return pa.Table.from_pylist(rows)


@pytest.mark.parametrize("new_layout", [True, False])
def test_lighteval_both_layouts(tmp_path, new_layout):
    f = tmp_path / "details_lighteval|aime24|0_2025-02-01T10-00-00.parquet"
    pq.write_table(lighteval_table(new_layout, [[1, 1, 0, 0], [0, 0, 0, 1]]), f)
    assert detect(f) == "lighteval"
    t = read("lighteval", f)
    assert t["n"].to_pylist() == [4, 4] and t["c"].to_pylist() == [2, 1]
    ids = t["prompt_id"].to_pylist()
    assert ids == (["lighteval|aime24|0/d0", "lighteval|aime24|0/d1"] if new_layout
                   else ["lighteval|aime24|0/0", "lighteval|aime24|0/1"])


def verl_rows(step, prompts, rng):
    rows = []
    for p in range(prompts):
        for _ in range(4):
            ok = bool(rng.random() < 0.5)
            rows.append({"input": f"<|user|>problem {p}", "output": f"... \\boxed{{{int(ok)}}}",
                         "gts": "1", "score": 1.0 if ok else 0.0, "step": step})
    return rows


def test_verl_directory_is_one_model_per_step(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / "val"
    d.mkdir()
    truth = {}
    for step in (0, 50, 100):
        rows = verl_rows(step, 5, rng)
        write_jsonl(d / f"{step}.jsonl", rows)
        truth[f"step-{step}"] = sum(r["score"] > 0 for r in rows)
    assert detect(d) == "verl" and detect_format(d) == "verl"
    counts = {c.model: c for c in load_counts(d)}
    assert set(counts) == {"step-0", "step-50", "step-100"}
    for m, ct in counts.items():
        assert list(ct.n) == [4] * 5 and int(ct.c.sum()) == truth[m]


def test_verl_acc_key_wins_over_score(tmp_path):
    f = write_jsonl(tmp_path / "20.jsonl", [
        {"input": "p", "output": "a", "score": -1.0, "acc": True, "step": 20},
        {"input": "p", "output": "b", "score": 1.0, "acc": False, "step": 20}])
    t = read("verl", f)
    assert t["model"].to_pylist() == ["step-20", "step-20"]
    assert t["correct"].to_pylist() == [True, False] and t["sample_idx"].to_pylist() == [0, 1]


def test_limit_of_rlvr_rollouts_and_errors(tmp_path):
    rows = [{"idx": 0, "question": "1+1", "gt": "2", "code": ["so \\boxed{2}", "so \\boxed{3}"],
             "pred": ["2", "3"], "report": [None, None], "score": [True, False]},
            {"idx": 1, "question": "2+2", "gt": "4", "code": ["\\boxed{4}", "\\boxed{4}"],
             "pred": ["4", "4"], "report": [None, None], "score": [True, True]}]
    f = write_jsonl(tmp_path / "math500_base.jsonl", rows)
    assert detect(f) == "limit-of-rlvr"
    t = read("limit-of-rlvr", f, model="base")
    assert t.num_rows == 4 and t["answer"].to_pylist() == ["2", "3", "4", "4"]
    (ct,) = load_counts(f, label="base")
    assert list(ct.c) == [1, 2]
    rows[1]["pred"] = ["4"]
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError, match="pred must be a list as long as score") as e:
        read("limit-of-rlvr", bad)
    assert e.value.line == 2


def test_compare_end_to_end_with_auto_detection(tmp_path):
    rng = np.random.default_rng(1)
    mk = lambda p: [{"idx": i, "code": ["x"] * 8, "pred": ["1"] * 8,  # noqa: E731
                     "score": [bool(v) for v in rng.random(8) < p]} for i in range(30)]
    b = write_jsonl(tmp_path / "base.jsonl", mk(0.3))
    r = write_jsonl(tmp_path / "rl.jsonl", mk(0.6))
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "100",
                 "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["n_prompts"] == 30 and res["ks"][-1] == 8
    assert main(["compare", "--base", str(b), "--rl", str(r), "--format", "limit-of-rlvr",
                 "--bootstrap", "100"]) == 0


def test_report_from_verl_dumps_shows_evolution_and_texts(tmp_path):
    rng = np.random.default_rng(2)
    d = tmp_path / "val"
    d.mkdir()
    for step in (0, 50, 100):
        write_jsonl(d / f"{step}.jsonl", verl_rows(step, 6, rng))
    out = tmp_path / "r.html"
    assert main(["report", str(d), "--base", "step-0", "--out", str(out), "--bootstrap", "100",
                 "--no-figures"]) == 0
    res = json.loads(out.with_suffix(".json").read_text())
    assert [r["step"] for r in res["evolution"]["rows"]] == [0, 50, 100]
    assert res["provenance"]["inputs"][0]["format"] == "verl"
    assert "\\boxed{" in out.read_text()  # completion texts reached the page
