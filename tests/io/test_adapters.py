"""Adapters read other tools' outputs; each fixture is written in the tool's real layout
(tests/io/fixtures/tool_formats.py, sources cited in docs/formats.md).

Expected values come from the verdict matrix a fixture was written from, never
from the adapter: counts are row sums, pass@k is the exact ``math.comb`` formula.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters import adapter, detect, read
from rlvr_boundary.io.adapters.vllm_jsonl import read_generations
from rlvr_boundary.io.formats import detect_format, load_counts
from tests.io.fixtures import tool_formats as tf


def verdicts(seed: int, P: int, n: int, p: float | np.ndarray) -> np.ndarray:
    """(P, n) bool verdicts; per-prompt rates ``p`` (scalar or (P,))."""
    rng = np.random.default_rng(seed)
    return rng.random((P, n)) < np.broadcast_to(np.asarray(p, float), (P,))[:, None]


def counts_of(path, fmt="auto", label=None) -> dict:
    (ct,) = load_counts(path, fmt=fmt, label=label)
    return {"model": ct.model, **{pid: (int(n), int(c)) for pid, n, c in
                                  zip(ct.prompt_ids, ct.n, ct.c)}}


def exact_pass_at_k(V: np.ndarray, k: int) -> float:
    P, n = V.shape
    return float(np.mean([1 - math.comb(n - int(c), k) / math.comb(n, k) for c in V.sum(axis=1)]))


# ----------------------------------------------------------------------------- lm-eval


def test_lm_eval_two_filters_reads_the_first_as_rollouts(tmp_path):
    V = verdicts(0, 9, 1, 0.5)
    d = tf.lm_eval_dir(tmp_path, "Qwen/Qwen2.5-Math-7B")
    f = tf.write_lm_eval_gsm8k(d, V)
    tf.write_lm_eval_results(d, "Qwen/Qwen2.5-Math-7B")
    assert detect(f) == "lm-eval" and detect_format(f) == "lm-eval"
    t = read("lm-eval", f)
    assert t.num_rows == 9  # one filter, not both
    assert t["prompt_id"].to_pylist() == [f"gsm8k/{i}" for i in range(9)]
    assert t["correct"].to_pylist() == V[:, 0].tolist()  # strict-match, not flexible (all 1)
    assert set(t["model"].to_pylist()) == {"Qwen/Qwen2.5-Math-7B"}  # from results_<stamp>.json
    assert t["gold"][3].as_py() == "3" and "Natalia sold 3" in t["prompt"][3].as_py()
    assert t["text"][3].as_py().startswith(" She sold 3 clips")
    flex = adapter("lm-eval").read(f, filter="flexible-extract")
    assert flex["correct"].to_pylist() == [True] * 9


def test_lm_eval_repeats_are_counts(tmp_path):
    V = verdicts(1, 6, 8, [0.0, 0.1, 0.4, 0.6, 0.9, 1.0])
    f = tf.write_lm_eval_repeats(tmp_path, V)
    got = counts_of(f, label="rl")
    assert got.pop("model") == "rl"
    assert got == {f"humaneval_8/{i}": (8, int(V[i].sum())) for i in range(6)}


def test_lm_eval_majority_filter_is_skipped_and_refused_alone(tmp_path):
    V = verdicts(2, 5, 8, 0.5)
    f = tf.write_lm_eval_self_consistency(tmp_path, V)
    t = read("lm-eval", f)
    assert t["correct"].to_pylist() == V[:, 0].tolist()  # score-first, one sample each
    g = tf.write_lm_eval_self_consistency(tmp_path / "maj", V, only_majority=True)
    with pytest.raises(InputError, match="majority-vote") as e:
        read("lm-eval", g)
    assert e.value.field == "filter" and e.value.path == str(g)


def test_lm_eval_multiple_choice_is_one_verdict_per_doc(tmp_path):
    ok = np.array([True, False, True, True, False])
    f = tf.write_lm_eval_multiple_choice(tmp_path, ok)
    t = read("lm-eval", f)
    assert t["correct"].to_pylist() == ok.tolist() and t["sample_idx"].to_pylist() == [0] * 5
    assert "text" not in t.column_names  # loglikelihoods are not completions


def test_lm_eval_errors_name_line_and_field(tmp_path):
    V = verdicts(3, 3, 3, 0.5)
    f = tf.write_lm_eval_repeats(tmp_path, V)
    lines = f.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["pass@1"] = 0.5  # not k/3
    f.write_text("\n".join([lines[0], json.dumps(rec), lines[2]]) + "\n")
    with pytest.raises(InputError, match="not a share of correct samples") as e:
        read("lm-eval", f)
    assert (e.value.line, e.value.field) == (2, "pass@1")
    f.write_text(lines[0] + "\n" + lines[1][:-5] + "\n")
    with pytest.raises(InputError, match="malformed JSON") as e:
        read("lm-eval", f)
    assert e.value.line == 2
    rec = json.loads(lines[0])
    del rec["filtered_resps"]
    f.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="missing field") as e:
        read("lm-eval", f)
    assert (e.value.line, e.value.field) == (2, "filtered_resps")


def test_lm_eval_directory_keeps_latest_run_of_each_task(tmp_path):
    d = tf.lm_eval_dir(tmp_path, "org/model")
    old = verdicts(4, 4, 1, 0.0)
    new = verdicts(5, 4, 1, 1.0)
    tf.write_lm_eval_gsm8k(d, old, stamp="2025-01-01T00-00-00.000001")
    tf.write_lm_eval_gsm8k(d, new, stamp="2025-02-01T00-00-00.000001")
    tf.write_lm_eval_multiple_choice(d, np.array([True, False]))
    assert detect(d) == "lm-eval" and detect_format(d) == "lm-eval"
    t = read("lm-eval", d)
    got = dict(zip(t["prompt_id"].to_pylist(), t["correct"].to_pylist()))
    assert got == {**{f"gsm8k/{i}": True for i in range(4)}, "arc_easy/0": True,
                   "arc_easy/1": False}
    assert set(t["model"].to_pylist()) == {"org__model"}  # the folder, no results file


# ----------------------------------------------------------------------------- lighteval


def test_lighteval_new_layout_counts_from_pass1_over_n(tmp_path):
    V = verdicts(6, 7, 4, [0, .2, .4, .5, .6, .8, 1])
    f = tf.lighteval_path(tmp_path, "Qwen/Qwen2.5-Math-7B", "lighteval|math_500|0")
    tf.write_lighteval_new(f, V)
    assert pq.read_schema(f).names == ["doc", "metric", "model_response"]
    assert detect(f) == "lighteval" and detect_format(f) == "lighteval"
    got = counts_of(f)
    assert got.pop("model") == "Qwen/Qwen2.5-Math-7B"  # from details/<model_name>/<stamp>/
    assert got == {f"lighteval|math_500|0/{i}": (4, int(V[i].sum())) for i in range(7)}


def test_lighteval_avg_at_n_and_single_sample_metric(tmp_path):
    V = verdicts(7, 5, 6, 0.5)
    f = tf.write_lighteval_new(tmp_path / f"details_aime24|0_{tf.STAMP}.parquet", V,
                               metrics=("avg@n:n={n}",))
    assert counts_of(f)["aime24|0/2"] == (6, int(V[2].sum()))
    g = tf.write_lighteval_new(tmp_path / f"details_gsm8k|0_{tf.STAMP}.parquet", V,
                               metrics=("extractive_match",))
    t = read("lighteval", g)  # scored on the first generation: one sample each
    assert t["correct"].to_pylist() == V[:, 0].tolist()
    assert t["gold"][2].as_py() == "6" and t["prompt"][2].as_py().startswith("Problem 2")


@pytest.mark.parametrize("as_json", [False, True])
def test_lighteval_old_layout(tmp_path, as_json):
    V = verdicts(8, 4, 4, 0.5)
    f = tf.lighteval_path(tmp_path, "m", "lighteval|math|0", stamp="2024-11-02T10-00-00.1")
    tf.write_lighteval_old(f, V, metrics_as_json=as_json)
    assert detect(f) == "lighteval"
    got = counts_of(f)
    assert got.pop("model") == "m"
    assert got == {f"lighteval|math|0/{i}": (4, int(V[i].sum())) for i in range(4)}


def test_lighteval_refuses_metrics_that_are_not_shares(tmp_path):
    V = verdicts(9, 3, 4, 0.5)
    f = tf.write_lighteval_new(tmp_path / "details_t_x.parquet", V, metrics=("maj@n:n={n}",))
    with pytest.raises(InputError, match="no metric that is a share") as e:
        read("lighteval", f)
    assert (e.value.line, e.value.field) == (1, "metric")


# ----------------------------------------------------------------------------- verl


def test_verl_directory_is_one_model_per_step(tmp_path):
    d = tmp_path / "val"
    truth = {}
    for step, p in ((0, 0.3), (50, 0.5), (100, 0.7)):
        V = verdicts(step, 5, 4, p)
        tf.write_verl_dump(d, step, V)
        truth[f"step-{step}"] = {tf.verl_prompt(i): (4, int(V[i].sum())) for i in range(5)}
    assert detect(d) == "verl" and detect_format(d) == "verl"
    counts = {c.model: c for c in load_counts(d)}
    assert set(counts) == set(truth)
    import hashlib

    for m, ct in counts.items():
        want = {hashlib.sha1(k.encode()).hexdigest()[:16]: v for k, v in truth[m].items()}
        assert dict(zip(ct.prompt_ids, zip(ct.n.tolist(), ct.c.tolist()))) == want


def test_verl_dapo_reward_uses_acc_and_pred(tmp_path):
    V = verdicts(11, 3, 4, 0.5)
    f = tf.write_verl_dump(tmp_path, 20, V, reward="dapo")
    t = read("verl", f)
    assert t["model"][0].as_py() == "step-20"
    assert t["correct"].to_pylist() == V.ravel().tolist()
    assert t["sample_idx"].to_pylist() == [0, 1, 2, 3] * 3
    assert t["answer"].to_pylist()[:4] == ["0" if ok else "7" for ok in V[0]]
    assert t["gold"][4].as_py() == "1" and t["prompt"][0].as_py() == tf.verl_prompt(0)


def test_verl_refuses_partial_rewards(tmp_path):
    f = tf.write_verl_dump(tmp_path, 5, verdicts(12, 2, 2, 0.5))
    lines = f.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["score"] = 0.1  # a format bonus: not a verdict
    lines[2] = json.dumps(rec)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="not a verdict") as e:
        read("verl", f)
    assert (e.value.line, e.value.field) == (3, "score")


# ----------------------------------------------------------------------------- limit-of-RLVR


def test_limit_of_rlvr_rollouts(tmp_path):
    V = verdicts(13, 4, 5, 0.5)
    f = tf.write_qwen_math_eval(tmp_path / "math500", V)
    assert detect(f) == "limit-of-rlvr" and detect_format(f) == "limit-of-rlvr"
    t = read("limit-of-rlvr", f, model="base")
    assert t.num_rows == 20 and t["correct"].to_pylist() == V.ravel().tolist()
    assert t["answer"].to_pylist()[:5] == ["0" if ok else "1" for ok in V[0]]
    assert t["truncated"].to_pylist()[:5] == [True, False, False, False, False]
    assert t["gold"][5].as_py() == "1" and t["prompt"][5].as_py() == "What is 1?"


def test_limit_of_rlvr_directory_pools_seeds(tmp_path):
    d = tmp_path / "aime24"
    V1, V2 = verdicts(14, 3, 4, 0.5), verdicts(15, 3, 4, 0.5)
    tf.write_qwen_math_eval(d, V1, seed=1)
    tf.write_qwen_math_eval(d, V2, seed=2)
    assert detect(d) == "limit-of-rlvr"
    got = counts_of(d)
    assert got.pop("model") == "aime24"
    assert got == {str(i): (8, int(V1[i].sum() + V2[i].sum())) for i in range(3)}
    t = read("limit-of-rlvr", d)
    assert sorted(t.filter(t["prompt_id"].to_numpy(zero_copy_only=False) == "0")
                  ["sample_idx"].to_pylist()) == list(range(8))


def test_limit_of_rlvr_errors(tmp_path):
    V = verdicts(16, 2, 2, 0.5)
    f = tf.write_qwen_math_eval(tmp_path, V)
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    rows[1]["pred"] = ["4"]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="pred must be a list as long as score") as e:
        read("limit-of-rlvr", f)
    assert (e.value.line, e.value.field) == (2, "pred")
    rows[1]["pred"] = ["4", "4"]
    rows[1]["score"] = [True, "yes"]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"score\[1\] must be a boolean") as e:
        read("limit-of-rlvr", f)
    rows[1] = dict(rows[0])
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="duplicate problem idx 0") as e:
        read("limit-of-rlvr", f)
    assert (e.value.line, e.value.field) == (2, "idx")


# ----------------------------------------------------------------------------- vLLM / OpenAI


def test_vllm_request_outputs_and_batch_output(tmp_path):
    V = verdicts(17, 3, 4, 0.5)
    f = tf.write_vllm_request_outputs(tmp_path / "gens.jsonl", V)
    assert detect(f) == "vllm-jsonl" and detect_format(f) == "vllm-jsonl"
    t = read("vllm-jsonl", f)
    assert t["correct"].to_pylist() == V.ravel().tolist()
    assert t["num_tokens"].to_pylist()[:4] == [3, 4, 5, 6]
    assert t["truncated"].to_pylist()[:2] == [True, False]
    g = tf.write_openai_batch_output(tmp_path / "batch_out.jsonl", V)
    assert detect(g) == "vllm-jsonl"
    got = counts_of(g)
    assert got.pop("model") == "batch_out"
    assert got == {f"request-{i}": (4, int(V[i].sum())) for i in range(3)}


def test_vllm_without_verdicts_points_to_verify(tmp_path):
    f = tf.write_vllm_request_outputs(tmp_path / "raw.jsonl", None)
    t = read_generations(f)
    assert "correct" not in t.column_names and t.num_rows == 12
    with pytest.raises(InputError, match="rlvr-boundary verify") as e:
        read("vllm-jsonl", f)
    assert e.value.field == "correct"


# ----------------------------------------------------------------------------- detection


def test_detect_leaves_other_files_alone(tmp_path):
    counts = tmp_path / "counts.jsonl"
    counts.write_text('{"id": "a", "n": 4, "c": 1}\n')
    other = tmp_path / "x.parquet"
    pq.write_table(tf.pa.table({"a": [1]}), other)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    for p in (counts, other, empty, bad, tmp_path / "missing.jsonl", tmp_path):
        assert detect(p) is None


# ----------------------------------------------------------------------------- end to end


def _writers(tmp_path):
    """adapter name -> function(V, label) -> path of one model's file in that format."""
    def lm(V, label):
        return tf.write_lm_eval_repeats(tf.lm_eval_dir(tmp_path / label, label), V)

    def le(V, label):
        return tf.write_lighteval_new(tf.lighteval_path(tmp_path / label, label, "math|0"), V)

    def vr(V, label):
        return tf.write_verl_dump(tmp_path / label, 100, V)

    def lr(V, label):
        return tf.write_qwen_math_eval(tmp_path / label / "math500", V)

    def vl(V, label):
        return tf.write_vllm_request_outputs(tmp_path / label / "gens.jsonl", V)

    return {"lm-eval": lm, "lighteval": le, "verl": vr, "limit-of-rlvr": lr, "vllm-jsonl": vl}


@pytest.mark.parametrize("fmt", ["lm-eval", "lighteval", "verl", "limit-of-rlvr", "vllm-jsonl"])
def test_compare_end_to_end(tmp_path, fmt):
    P, n = 40, 8
    rates = np.random.default_rng(18).beta(0.6, 0.6, P)
    base = verdicts(19, P, n, rates)
    rl = verdicts(20, P, n, np.where(rates > 0.3, np.minimum(rates + 0.3, 1), rates * 0.3))
    write = _writers(tmp_path)[fmt]
    b, r = write(base, "base"), write(rl, "rl")
    for how in (fmt, "auto"):
        out = tmp_path / f"{how}.json"
        assert main(["compare", "--base", str(b), "--rl", str(r), "--format", how,
                     "--bootstrap", "50", "--json", str(out)]) == 0
        res = json.loads(out.read_text())
        assert res["n_prompts"] == P and res["ks"][0] == 1 and res["ks"][-1] == n
        curves = list(res["pass_at_k"].values())
        assert len(curves) == 2
        (lb,), (lr_,) = ([m for m in res["pass_at_k"] if "base" in m],
                         [m for m in res["pass_at_k"] if "rl" in m])
        for k in (1, 2, n):
            i = res["ks"].index(k)
            assert res["pass_at_k"][lb][i] == pytest.approx(exact_pass_at_k(base, k), abs=1e-12)
            assert res["pass_at_k"][lr_][i] == pytest.approx(exact_pass_at_k(rl, k), abs=1e-12)


def test_compare_bad_adapter_input_writes_nothing(tmp_path):
    V = verdicts(21, 4, 4, 0.5)
    b = tf.write_qwen_math_eval(tmp_path / "b", V)
    r = tf.write_qwen_math_eval(tmp_path / "r", V)
    r.write_text(r.read_text().replace('"score": [', '"score": ["x", ', 1))
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--json", str(out)]) == 2
    assert not out.exists()


def test_report_from_verl_dumps_shows_evolution_and_texts(tmp_path):
    d = tmp_path / "val"
    for step in (0, 50, 100):
        tf.write_verl_dump(d, step, verdicts(step + 1, 6, 4, 0.3 + step / 250))
    out = tmp_path / "r.html"
    assert main(["report", str(d), "--base", "step-0", "--out", str(out), "--bootstrap", "100",
                 "--no-figures"]) == 0
    res = json.loads(out.with_suffix(".json").read_text())
    assert [r["step"] for r in res["evolution"]["rows"]] == [0, 50, 100]
    assert res["provenance"]["inputs"][0]["format"] == "verl"
    assert "\\boxed{" in out.read_text()  # completion texts reached the page


def test_verl_dumps_stream_in_batches(tmp_path, monkeypatch):
    """A streaming adapter hands batches to the reducer as it reads: no whole table is built."""
    from rlvr_boundary.io.adapters import _common
    from rlvr_boundary.io.inputs import load_inputs

    monkeypatch.setattr(_common, "BATCH_ROWS", 10)
    d = tmp_path / "val"
    d.mkdir()
    V = verdicts(3, 12, 4, 0.5)  # 48 rows: five batches of at most 10
    tf.write_verl_dump(d, 40, V)
    seen = []
    real = _common.TableBuilder._flush

    def spy(self):
        if self.pending:
            seen.append((self.pending, self.sink is not None))
        real(self)
        assert not self.batches  # streamed, never held

    monkeypatch.setattr(_common.TableBuilder, "_flush", spy)
    got = load_inputs([d], facts=True)
    assert [n for n, _ in seen] == [10, 10, 10, 10, 8] and all(s for _, s in seen)
    (ct,) = got.counts
    assert ct.model == "step-40"
    assert sorted(zip(ct.n.tolist(), ct.c.tolist())) == sorted((4, int(v)) for v in V.sum(axis=1))
    assert got.facts is not None and got.facts.texts  # texts kept from the same batches
