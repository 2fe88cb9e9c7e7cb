"""Token statistics: exact entropy, top-K bounds, RBF, perplexity, bins, summaries."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core import tokens as tk


def entropy_ref(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


def topk_of(p: np.ndarray, K: int) -> np.ndarray:
    """Top-K logprobs of a distribution, in a scrambled order (order must not matter)."""
    top = np.sort(p)[::-1][:K]
    with np.errstate(divide="ignore"):
        return np.log(top[::-1])


@st.composite
def distributions(draw):
    V = draw(st.integers(2, 300))
    K = draw(st.integers(1, V))
    alpha = draw(st.sampled_from([0.01, 0.1, 1.0, 10.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(V, alpha))
    if draw(st.booleans()):  # some exact zeros
        p[rng.random(V) < 0.3] = 0.0
        if p.sum() == 0:
            p[0] = 1.0
        p /= p.sum()
    return p, V, K


# ---------------------------------------------------------------- entropy

def test_entropy_from_logits_matches_reference_and_handles_masks(monkeypatch):
    rng = np.random.default_rng(1)
    z = rng.normal(size=(7, 50)) * 4
    z[2, :45] = -np.inf  # only 5 live tokens
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ref = np.array([entropy_ref(row) for row in p])
    assert np.allclose(tk.entropy_from_logits(z), ref, atol=1e-12)
    assert np.allclose(tk.entropy_from_logits(z.astype(np.float32)), ref, atol=1e-5)
    monkeypatch.setattr(tk, "_CHUNK_ELEMS", 60)  # force row chunks
    assert np.allclose(tk.entropy_from_logits(z), ref, atol=1e-12)
    assert tk.entropy_from_logits(np.zeros((1, 8)))[0] == pytest.approx(math.log(8))
    with pytest.raises(ValueError):
        tk.entropy_from_logits(np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="every entry"):
        tk.entropy_from_logits(np.full((1, 3), -np.inf))


@settings(max_examples=300, deadline=None)
@given(dist=distributions())
def test_topk_interval_always_contains_the_exact_entropy(dist):
    p, V, K = dist
    if np.sum(p > 0) < K:  # a top-K holds only tokens with positive probability here
        K = int(np.sum(p > 0))
    lo, hi = tk.entropy_bounds_topk(topk_of(p, K)[None, :], V)
    H = entropy_ref(p)
    assert lo[0] <= H + 1e-10 and H <= hi[0] + 1e-10
    if K == V or np.sort(p)[::-1][K:].sum() == 0:
        assert lo[0] == pytest.approx(H, abs=1e-10) and hi[0] == pytest.approx(H, abs=1e-10)


def test_both_ends_of_the_interval_are_attained():
    V, K = 100, 4
    top = np.array([0.4, 0.2, 0.1, 0.05])
    r = 1 - top.sum()                                   # 0.25
    uniform_tail = np.concatenate([top, np.full(V - K, r / (V - K))])
    lo, hi = tk.entropy_bounds_topk(np.log(top)[None, :], V)
    assert hi[0] == pytest.approx(entropy_ref(uniform_tail), abs=1e-12)
    # tail made of tokens at exactly p_K = 0.05 (r / p_K = 5 tokens): the lower end
    spiky_tail = np.concatenate([top, np.full(5, 0.05), np.zeros(V - K - 5)])
    assert lo[0] == pytest.approx(entropy_ref(spiky_tail), abs=1e-12)


def test_interval_refuses_an_impossible_tail():
    # top-2 of V = 3 with tail mass 0.5 but p_K = 0.1: the single tail token would exceed p_K
    with pytest.raises(ValueError, match="cannot fit"):
        tk.entropy_bounds_topk(np.log([[0.4, 0.1]]), 3)
    with pytest.raises(ValueError, match="more than 1"):
        tk.entropy_bounds_topk(np.log([[0.9, 0.9]]), 10)


@settings(max_examples=200, deadline=None)
@given(dist=distributions())
def test_inverse_simpson_interval_contains_truth(dist):
    p, V, K = dist
    K = min(K, int(np.sum(p > 0)))
    lo, hi = tk.inverse_simpson_bounds_topk(topk_of(p, K)[None, :], V)
    D2 = 1.0 / np.sum(p**2)
    assert lo[0] <= D2 * (1 + 1e-10) and D2 <= hi[0] * (1 + 1e-10)
    with np.errstate(divide="ignore"):
        assert tk.inverse_simpson_from_logits(np.log(p)[None, :])[0] == pytest.approx(D2)


# ---------------------------------------------------------------- RBF

def rbf_ref(p: np.ndarray, mass: float = 0.95) -> int:
    """Smallest m whose m largest probabilities reach ``mass``, in exact rationals."""
    fr = sorted((Fraction(x).limit_denominator(10**12) for x in p), reverse=True)
    tot, target = Fraction(0), Fraction(mass).limit_denominator(100)
    for m, x in enumerate(fr, start=1):
        tot += x
        if tot >= target:
            return m
    return len(fr)


def test_rbf_uniform_boundary_and_fallback_beyond_64():
    # uniform over 20: 19 tokens hold exactly 0.95
    assert tk.rbf_from_logits(np.zeros((1, 20)))[0] == 19
    # uniform over 1000: 950 tokens (needs the full-sort fallback)
    assert tk.rbf_from_logits(np.zeros((1, 1000)))[0] == 950
    assert tk.rbf_from_logits(np.array([[0.0, -np.inf, -np.inf]]))[0] == 1


@settings(max_examples=150, deadline=None)
@given(dist=distributions())
def test_rbf_exact_from_logits_and_lower_bound_from_topk(dist):
    p, V, K = dist
    with np.errstate(divide="ignore"):
        z = np.log(p)[None, :]
    true = tk.rbf_from_logits(z)[0]
    assert true == rbf_ref(p / p.sum())
    K = min(K, int(np.sum(p > 0)))
    got, flagged = tk.rbf_from_topk(topk_of(p, K)[None, :], V)
    if np.sort(p)[::-1][:K].sum() >= 0.95:
        assert not flagged[0] and got[0] == true
    else:
        assert flagged[0] and K < got[0] <= true


# ---------------------------------------------------------------- perplexity and bins

def test_log_perplexity_hand_values():
    lp = np.log([0.5, 0.25])
    assert tk.log_perplexity(lp) == pytest.approx(1.5 * math.log(2))
    assert math.exp(tk.log_perplexity(lp)) == pytest.approx(2**1.5)
    assert tk.log_perplexity(lp, mask=[True, False]) == pytest.approx(math.log(2))
    assert math.isnan(tk.log_perplexity([]))
    with pytest.raises(ValueError):
        tk.log_perplexity([0.3])


def test_position_bins_integer_edges_and_empty_bins():
    v = np.arange(10, dtype=float)  # T = 10, B = 4: bins (t*4)//10 = 0,0,0,1,1,2,2,2,3,3
    assert tk.position_bin_means(v, 4).tolist() == [1.0, 3.5, 6.0, 8.5]
    short = tk.position_bin_means([1.0, 3.0], 4)  # t=0 -> bin 0, t=1 -> bin 2
    assert short[0] == 1.0 and short[2] == 3.0 and np.isnan(short[1]) and np.isnan(short[3])


# ---------------------------------------------------------------- the summarizer

def test_summary_keys_are_schema_columns():
    from rlvr_boundary.io.schema import ROLLOUT_BY_NAME
    assert set(tk.SUMMARY_KEYS) <= set(ROLLOUT_BY_NAME)
    out = tk.summarize_logits(np.zeros((3, 4)), [0, 1, 2], bins=10)
    assert tuple(out) == tk.SUMMARY_KEYS


def test_streaming_equals_one_shot_and_reference_values(monkeypatch):
    rng = np.random.default_rng(3)
    T, V = 23, 40
    z = rng.normal(size=(T, V)) * 3
    ids = rng.integers(0, V, size=T)
    one = tk.summarize_logits(z, ids, bins=5)
    s = tk.TokenSummarizer(bins=5)
    for a, b in [(0, 1), (1, 9), (9, 23)]:
        s.add_logits(z[a:b], ids[a:b])
    assert s.result() == one
    monkeypatch.setattr(tk, "_CHUNK_ELEMS", 3 * V)  # row chunks inside each call
    chunked = tk.summarize_logits(z, ids, bins=5)
    for key in ("entropy_mean", "rbf_mean", "log_ppl"):
        assert chunked[key] == pytest.approx(one[key], abs=1e-12)
    lsm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    H = -(np.exp(lsm) * lsm).sum(axis=1)
    assert one["entropy_kind"] == "exact" and one["rbf_lower_bound"] is False
    assert one["entropy_mean"] == pytest.approx(H.mean())
    assert one["entropy_mean_lo"] == one["entropy_mean_hi"] == one["entropy_mean"]
    assert one["log_ppl"] == pytest.approx(-lsm[np.arange(T), ids].mean())
    idx = (np.arange(T) * 5) // T
    assert one["entropy_bins"] == pytest.approx([H[idx == b].mean() for b in range(5)])
    assert one["rbf_mean"] == pytest.approx(np.mean([rbf_ref(np.exp(row)) for row in lsm]))


def test_topk_summary_brackets_the_exact_one():
    rng = np.random.default_rng(4)
    T, V, K = 30, 200, 8
    z = rng.normal(size=(T, V)) * 2
    lsm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    top = np.sort(lsm, axis=1)[:, ::-1][:, :K]
    exact = tk.summarize_logits(z, bins=4)
    bounded = tk.summarize_topk(top, V, token_logprobs=lsm[:, 0], bins=4)
    assert bounded["entropy_kind"] == "topk_bounds"
    assert bounded["entropy_mean_lo"] <= exact["entropy_mean"] <= bounded["entropy_mean_hi"]
    assert bounded["entropy_mean"] == pytest.approx(
        0.5 * (bounded["entropy_mean_lo"] + bounded["entropy_mean_hi"]))
    assert bounded["rbf_lower_bound"] is True and bounded["rbf_mean"] <= exact["rbf_mean"]
    assert bounded["log_ppl"] == pytest.approx(-lsm[:, 0].mean())
    assert exact["log_ppl"] is None


def test_summarizer_edge_cases():
    s = tk.TokenSummarizer(bins=3, vocab_size=4)
    empty = s.result()
    assert empty["entropy_mean"] is None and empty["entropy_bins"] == [None, None, None]
    s.add_logits(np.zeros((1, 4)))
    with pytest.raises(ValueError, match="mix"):
        s.add_topk(np.log([[0.5]]))
    with pytest.raises(ValueError, match="vocab_size"):
        tk.TokenSummarizer().add_topk(np.log([[0.5]]))
    short = tk.summarize_logits(np.zeros((2, 4)), bins=4)
    assert short["entropy_bins"][1] is None and short["entropy_bins"][0] == pytest.approx(math.log(4))
    with pytest.raises(ValueError, match="token_ids"):
        tk.summarize_logits(np.zeros((2, 4)), [0, 4])


# ---------------------------------------------------------------- group summaries

def test_describe_and_positive_vs_negative_groups():
    d = tk.describe([1.0, 2.0, None, 4.0, float("nan")])
    assert (d["n"], d["missing"]) == (3, 2)
    assert d["mean"] == pytest.approx(7 / 3) and d["q"][0.5] == 2.0
    assert d["std"] == pytest.approx(np.std([1, 2, 4]))
    empty = tk.describe([None, None])
    assert empty["n"] == 0 and math.isnan(empty["mean"])
    bins = tk.describe([[1.0, None], [3.0, 5.0]])
    assert bins["mean"].tolist() == [2.0, 5.0] and bins["n"].tolist() == [2, 1]

    values = [0.5, 0.7, 1.5, 1.1, 0.9]
    model = ["base", "base", "rl", "rl", "rl"]
    correct = [True, False, True, True, False]
    rows = tk.group_summaries(values, model, correct)
    assert [k for k, _ in rows] == [("base", False), ("base", True), ("rl", False), ("rl", True)]
    assert rows[3][1]["mean"] == pytest.approx(1.3) and rows[3][1]["n"] == 2
    with pytest.raises(ValueError):
        tk.group_summaries(values, model[:2])


def test_core_modules_need_only_numpy_and_scipy():
    code = textwrap.dedent("""
        import sys
        BLOCKED = ("torch", "pyarrow", "pandas", "rich", "matplotlib")

        class Block:  # a finder that refuses these packages (sys.modules[name] = None
            def find_spec(self, name, path=None, target=None):  # would confuse scipy)
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{name} is blocked in this test")
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        from rlvr_boundary.core import coverage, support, diversity, tokens
        assert support.problem_support([4, 4], [1, 0], [4, 4], [0, 2])["NSCR"] == 0.0
        assert coverage.solved_at_k([[4, 4]], [[1, 0]]).tolist() == [[True, False]]
        assert diversity.answer_diversity([2, 2], 4)["distinct"] == 2.0
        assert tokens.summarize_logits(np.zeros((2, 3)))["entropy_kind"] == "exact"
        allowed = ("rlvr_boundary.core", "rlvr_boundary._version")
        ours = [m for m in sys.modules if m.startswith("rlvr_boundary")]
        assert all(m == "rlvr_boundary" or m.startswith(allowed) for m in ours), ours
        assert not any(m.split(".")[0] in BLOCKED for m in sys.modules)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
