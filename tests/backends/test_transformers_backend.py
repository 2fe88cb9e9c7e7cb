"""The transformers backend on tiny local checkpoints: seeds, exact statistics, scoring."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlvr_boundary.backends import SamplingParams, get_backend, sample_seed
from rlvr_boundary.core.tokens import summarize_topk

torch = pytest.importorskip("torch")

PROMPTS = [{"prompt_id": "a", "prompt": "What is 12 + 7?"},
           {"prompt_id": "b", "prompt": "Let x + 2 = 5. Then"},
           {"prompt_id": "c", "prompt": "Compute"}]


@pytest.fixture(scope="module")
def backend(tiny_model):
    return get_backend("transformers", model=str(tiny_model), batch_size=4, num_threads=1)


def _full_logits(backend, prompt_ids, comp_ids):
    """(T, V) float64 logits predicting each completion token, one plain forward, no cache."""
    ids = torch.tensor([prompt_ids + comp_ids])
    with torch.no_grad():
        z = backend.model(input_ids=ids).logits[0].to(torch.float64)
    return z[len(prompt_ids) - 1:len(prompt_ids) + len(comp_ids) - 1].numpy()


def test_sample_seed_is_stable_and_distinct():
    s = sample_seed(0, "a", 0)
    assert s == sample_seed(0, "a", 0) and 0 <= s < 2**63
    seeds = {sample_seed(r, p, i) for r in (0, 1) for p in ("a", "b") for i in range(50)}
    assert len(seeds) == 200


def test_sampling_is_reproducible_and_independent_of_batching(backend):
    params = SamplingParams(max_new_tokens=12, seed=3, token_arrays=True)
    rows = list(backend.generate(PROMPTS, 3, params))
    assert [(r["prompt_id"], r["sample_idx"]) for r in rows] == [
        (p["prompt_id"], s) for p in PROMPTS for s in range(3)]
    again = list(backend.generate(PROMPTS, 3, params))
    assert [r["token_ids"] for r in rows] == [r["token_ids"] for r in again]
    # batch size 1 and a different order of work items draw the same samples
    one = get_backend("transformers", model=backend.model_path, batch_size=1)
    items = [{**p, "prompt_id": p["prompt_id"], "sample_idx": s, "seed": sample_seed(3, p["prompt_id"], s)}
             for p in reversed(PROMPTS) for s in range(3)]
    alone = {(r["prompt_id"], r["sample_idx"]): r["token_ids"] for r in one.generate_items(items, params)}
    assert all(alone[(r["prompt_id"], r["sample_idx"])] == r["token_ids"] for r in rows)
    other = list(backend.generate(PROMPTS, 3, SamplingParams(max_new_tokens=12, seed=4, token_arrays=True)))
    assert sum(a["token_ids"] != b["token_ids"] for a, b in zip(rows, other)) >= 7
    # samples of one prompt are not copies of each other
    assert len({tuple(r["token_ids"]) for r in rows if r["prompt_id"] == "a"}) == 3


def test_greedy_matches_plain_forward_argmax(backend):
    """Temperature 0 through the batched, left-padded KV-cache loop = argmax of uncached forwards."""
    rows = list(backend.generate(PROMPTS, 1, SamplingParams(temperature=0, max_new_tokens=8,
                                                            token_arrays=True)))
    for p, r in zip(PROMPTS, rows):
        ids = backend.encode_prompt(p)
        for _ in range(r["num_tokens"]):
            with torch.no_grad():
                nxt = int(backend.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            ids.append(nxt)
        assert ids[-r["num_tokens"]:] == r["token_ids"]


def test_summaries_equal_brute_force_softmax_and_counts(backend):
    rows = list(backend.generate(PROMPTS, 2, SamplingParams(max_new_tokens=10, seed=1,
                                                            token_arrays=True, logprobs=5)))
    V = backend.vocab_size
    for r in rows:
        p_ids = backend.encode_prompt(next(p for p in PROMPTS if p["prompt_id"] == r["prompt_id"]))
        z = _full_logits(backend, p_ids, r["token_ids"])
        H, rbf, lps, simp = [], [], [], []
        for t, row in enumerate(z):
            m = max(row)
            e = [math.exp(x - m) for x in row]
            tot = sum(e)
            p = [x / tot for x in e]
            H.append(-sum(q * math.log(q) for q in p if q > 0))
            simp.append(1 / sum(q * q for q in p))
            lps.append(math.log(p[r["token_ids"][t]]))
            acc, k = 0.0, 0
            for q in sorted(p, reverse=True):  # smallest m with mass >= 0.95
                acc += q
                k += 1
                if acc >= 0.95 - 1e-9:
                    break
            rbf.append(k)
        assert r["entropy_kind"] == "exact"
        assert r["entropy_mean"] == pytest.approx(np.mean(H), abs=1e-5)
        assert r["inv_simpson_mean"] == pytest.approx(np.mean(simp), rel=1e-5)
        assert r["log_ppl"] == pytest.approx(-np.mean(lps), abs=1e-5)
        assert r["rbf_mean"] == pytest.approx(np.mean(rbf))
        np.testing.assert_allclose(r["token_logprobs"], lps, atol=1e-5)
        # top-K intervals from the recorded top-5 contain the exact entropy
        tk = summarize_topk(np.array(r["top_logprobs"]), V)
        assert tk["entropy_mean_lo"] - 1e-6 <= r["entropy_mean"] <= tk["entropy_mean_hi"] + 1e-6
        assert tk["entropy_mean_lo"] < tk["entropy_mean_hi"]


def test_scoring_reproduces_sampling_logprobs(backend):
    params = SamplingParams(max_new_tokens=16, seed=7, token_arrays=True)
    rows = list(backend.generate(PROMPTS, 2, params))
    by_ids = backend.score(PROMPTS, [{"prompt_id": r["prompt_id"], "token_ids": r["token_ids"]}
                                     for r in rows], token_arrays=True)
    n_text = 0
    for r, s in zip(rows, by_ids):
        np.testing.assert_allclose(s["token_logprobs"], r["token_logprobs"], atol=2e-5)
        assert s["log_ppl"] == pytest.approx(r["log_ppl"], abs=2e-5)
        assert s["entropy_mean"] == pytest.approx(r["entropy_mean"], abs=2e-5)
        assert s["rbf_mean"] == pytest.approx(r["rbf_mean"], abs=0.2)
    by_text = backend.score(PROMPTS, [{"prompt_id": r["prompt_id"], "text": r["text"]} for r in rows],
                            token_arrays=True)
    for r, s in zip(rows, by_text):
        if s["token_ids"] == r["token_ids"]:  # the text re-tokenizes to the sampled tokens
            n_text += 1
            assert s["log_ppl"] == pytest.approx(r["log_ppl"], abs=2e-5)
    assert n_text >= 1


def test_first_token_frequencies_follow_the_processed_distribution(backend):
    """Inverse-CDF draws with per-sample seeds follow p after temperature, top-k and top-p."""
    from rlvr_boundary.backends.transformers import processed_logprobs

    params = SamplingParams(temperature=0.7, top_k=20, top_p=0.9, max_new_tokens=1,
                            seed=11, token_arrays=True)
    n = 3000
    big = get_backend("transformers", model=backend.model_path, batch_size=1000)
    rows = list(big.generate(PROMPTS[:1], n, params))
    ids = backend.encode_prompt(PROMPTS[0])
    with torch.no_grad():
        z = backend.model(input_ids=torch.tensor([ids])).logits[0, -1:].to(torch.float64)
    p = torch.exp(processed_logprobs(z, params))[0].numpy()
    kept = np.flatnonzero(p > 0)
    assert 1 <= kept.size <= 20
    counts = np.bincount([r["token_ids"][0] for r in rows], minlength=p.size)
    assert counts[p == 0].sum() == 0  # nothing outside the nucleus
    chi2 = float(np.sum((counts[kept] - n * p[kept]) ** 2 / (n * p[kept])))
    # chi-square with kept.size - 1 degrees of freedom: far below the 99.9% quantile
    from scipy.stats import chi2 as chi2_dist

    assert chi2 < chi2_dist.ppf(0.999, max(kept.size - 1, 1))


def test_processed_logprobs_top_k_top_p_brute_force():
    from rlvr_boundary.backends.transformers import processed_logprobs

    rng = np.random.default_rng(0)
    z = torch.tensor(rng.normal(size=(5, 30)) * 2)
    for T, k, top_p in [(1.0, 0, 1.0), (0.5, 7, 1.0), (1.3, 0, 0.8), (0.9, 10, 0.6)]:
        got = torch.exp(processed_logprobs(z, SamplingParams(temperature=T, top_k=k, top_p=top_p))).numpy()
        for b in range(5):
            x = z[b].numpy() / T
            order = sorted(range(30), key=lambda v: -x[v])
            keep = order[:k] if k else order
            p = np.exp(x[keep] - max(x[keep]))
            p /= p.sum()
            nucleus, acc = [], 0.0
            for v, q in zip(keep, p):
                if acc >= top_p:
                    break
                nucleus.append(v)
                acc += q
            ref = np.zeros(30)
            ref[nucleus] = np.exp(x[nucleus] - max(x[nucleus]))
            ref /= ref.sum()
            np.testing.assert_allclose(got[b], ref, atol=1e-12)


def test_stop_strings_eos_and_length(backend):
    free = list(backend.generate(PROMPTS, 4, SamplingParams(max_new_tokens=20, seed=2, token_arrays=True)))
    assert {r["finish_reason"] for r in free} <= {"stop", "length"}
    for r in free:
        ended = r["token_ids"][-1] in backend.eos_ids
        assert (r["finish_reason"] == "stop") == ended
        assert r["truncated"] == (r["finish_reason"] == "length")
        assert r["num_tokens"] == len(r["token_ids"]) <= 20
    # pick a piece of text the free run produced, and stop on it
    stop = " is"
    assert any(stop in r["text"] for r in free)
    rows = list(backend.generate(PROMPTS, 4, SamplingParams(max_new_tokens=20, seed=2, stop=(stop,),
                                                            token_arrays=True)))
    for f, r in zip(free, rows):
        if stop in f["text"]:
            assert r["finish_reason"] == "stop" and not r["truncated"]
            assert r["text"] == f["text"][:f["text"].index(stop)]
            assert f["token_ids"][:r["num_tokens"]] == r["token_ids"]
        else:
            assert r["token_ids"] == f["token_ids"] and r["finish_reason"] == f["finish_reason"]


def test_qwen2_and_chat_template(tiny_qwen):
    b = get_backend("transformers", model=str(tiny_qwen), batch_size=2, num_threads=1)
    rows = list(b.generate([{"prompt_id": "q", "messages": [{"role": "user", "content": "1+1?"}]}], 2,
                           SamplingParams(max_new_tokens=5)))
    assert len(rows) == 2 and all(r["num_tokens"] >= 1 for r in rows)
    ids = b.encode_prompt({"messages": [{"role": "user", "content": "1+1?"}]})
    assert b.tok.decode(ids).endswith("<|im_start|>assistant\n")


def test_bad_options_refused():
    from rlvr_boundary.errors import InputError

    for kw in ({"temperature": -1}, {"top_p": 0}, {"top_k": -2}, {"max_new_tokens": 0},
               {"logprobs_mode": "cooked"}, {"stop": ("",)}):
        with pytest.raises(InputError):
            SamplingParams(**kw)
    with pytest.raises(InputError, match="unknown backend"):
        get_backend("nope")
