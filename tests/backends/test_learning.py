"""Where learning landed (pure numpy, against loops) and entropy-matched temperature."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.analysis.learning import learning_landed, match_temperature, token_category


def test_token_categories():
    assert [token_category(t) for t in [" 12", "3.5", " +", "=", "\\frac", " Therefore", "Wait",
                                        "\\boxed", " ", "\n\n", "<|im_end|>", "{", " cat"]] == [
        "digits", "digits", "operators", "operators", "operators", "reasoning", "reasoning",
        "format", "format", "format", "format", "format", "other"]


def _random_texts(seed=0, n=30):
    rng = np.random.default_rng(seed)
    vocab = [" 1", " 2", " +", " =", " so", " Wait", "\\boxed", " x", " cat", "\n"]
    texts, la, lb, ha, hb = [], [], [], [], []
    for _ in range(n):
        T = int(rng.integers(1, 25))
        texts.append([vocab[i] for i in rng.integers(0, len(vocab), T)])
        a = -rng.exponential(1.0, T)
        b = np.minimum(a + rng.normal(0, 0.3, T) * (rng.random(T) < 0.3), 0.0)
        la.append(a), lb.append(b)
        ha.append(rng.uniform(0, 3, T)), hb.append(rng.uniform(0, 3, T))
    return texts, la, lb, ha, hb


def test_learning_landed_matches_loops():
    texts, la, lb, ha, hb = _random_texts()
    res = learning_landed(texts, la, lb, ha, hb, labels=("base", "rl"), eps=0.05, position_bins=4,
                          ppl_groups=3, min_count=2)
    json.dumps(res)  # JSON-ready
    rows = [(t, a, b, x, y, i, k, len(tt)) for i, (tt, A, B, X, Y) in enumerate(zip(texts, la, lb, ha, hb))
            for k, (t, a, b, x, y) in enumerate(zip(tt, A, B, X, Y))]
    N = len(rows)
    assert res["tokens"] == N
    moved = [abs(np.exp(b) - np.exp(a)) <= 0.05 for _, a, b, *_ in rows]
    assert res["barely_moved"]["0.05"] == pytest.approx(sum(moved) / N)
    for c in ("digits", "operators", "reasoning", "format", "other"):
        sel = [(b - a, y - x) for t, a, b, x, y, *_ in rows if token_category(t) == c]
        st = res["by_category"][c]
        assert st["tokens"] == len(sel)
        if sel:
            assert st["mean_dlogp"] == pytest.approx(np.mean([s[0] for s in sel]))
            assert st["mean_dentropy"] == pytest.approx(np.mean([s[1] for s in sel]))
    for b_ in range(4):
        sel = [b - a for _, a, b, _x, _y, _i, k, T in rows if (k * 4) // T == b_]
        assert res["by_position"][b_]["tokens"] == len(sel)
    assert sum(g["texts"] for g in res["by_ppl_group"]) == len(texts)
    assert sum(g["tokens"] for g in res["by_ppl_group"]) == N
    hi = [g["log_ppl_range"] for g in res["by_ppl_group"]]
    assert all(hi[i][1] <= hi[i + 1][0] for i in range(len(hi) - 1))
    # tokens whose entropy fell most: loop reference
    agg = {}
    for t, a, b, x, y, *_ in rows:
        agg.setdefault(t, []).append(y - x)
    ref = sorted((np.mean(v), t) for t, v in agg.items() if len(v) >= 2)
    assert [e["token"] for e in res["entropy_fell_most"]] == [t for _, t in ref][:15]
    assert res["labels"] == {"before": "base", "after": "rl"}


def test_learning_landed_identical_models_nothing_moves():
    texts, la, _, ha, _ = _random_texts(1)
    res = learning_landed(texts, la, la, ha, ha)
    assert res["barely_moved"]["0.01"] == 1.0 and res["overall"]["mean_dlogp"] == 0.0


def test_match_temperature_bisection():
    f = lambda t: 2.0 * np.tanh(t)  # noqa: E731  monotone
    res = match_temperature(f, 1.2, lo=0.05, hi=2.0, tol=1e-3)
    assert res["converged"] and res["temperature"] == pytest.approx(np.arctanh(0.6), abs=2e-3)
    with pytest.raises(ValueError, match="outside"):
        match_temperature(f, 5.0)


def test_learning_and_entropy_match_on_tiny_models(tiny_model, tiny_qwen, tmp_path):
    from rlvr_boundary.backends import SamplingParams, get_backend
    from rlvr_boundary.pipelines.sample import entropy_matched_temperature
    from rlvr_boundary.pipelines.score import learning_run

    a = get_backend("transformers", model=str(tiny_model), num_threads=1)
    prompts = [{"prompt_id": "a", "prompt": "What is 12 + 7?"}, {"prompt_id": "b", "prompt": "Let x + 2 = 5."}]
    rows = list(a.generate(prompts, 3, SamplingParams(max_new_tokens=16, seed=1)))
    comps = [{"prompt_id": r["prompt_id"], "text": r["text"]} for r in rows]
    # the same checkpoint twice: nothing moves
    same = learning_run(a, a, prompts, comps, labels=("x", "x"))
    assert same["barely_moved"]["0.01"] == 1.0
    # a checkpoint trained further (same tokenizer): things move, and the result is self-describing
    from tests.backends.tiny_model import build_tiny_model

    b_path = build_tiny_model(tmp_path / "more", train_steps=60)
    b = get_backend("transformers", model=str(b_path), num_threads=1)
    res = learning_run(a, b, prompts, comps, labels=("base", "more"))
    assert res["analysis"] == "learning_landed" and res["tokens"] == sum(
        len(x["token_ids"]) for x in a.score(prompts, comps, token_arrays=True))
    assert res["barely_moved"]["0.01"] < 1.0 and res["models"]["after"]["model_hash"]
    json.dumps(res)
    # entropy matching: find the temperature where A's entropy equals its own entropy at T = 0.7
    p = SamplingParams(max_new_tokens=8, seed=3)
    target = np.mean([r["entropy_mean"] for r in a.generate(prompts, 4, SamplingParams(
        max_new_tokens=8, seed=3, temperature=0.7, logprobs_mode="processed"))])
    m = entropy_matched_temperature(a, prompts, float(target), p, n=4, lo=0.2, hi=1.5, tol=1e-9,
                                    max_iter=8)
    assert abs(m["temperature"] - 0.7) < 0.1
