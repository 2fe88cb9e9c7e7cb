"""vLLM backend. The engine itself needs a GPU and a CUDA wheel: skipped here (see docs/backends.md).
The conversion of vLLM's per-step logprob dicts is checked on values shaped like vLLM's
``Logprob(logprob, rank, decoded_token)``."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace as Logprob

import numpy as np
import pytest

from rlvr_boundary.backends.vllm import topk_from_vllm
from rlvr_boundary.core.tokens import entropy_bounds_topk, entropy_from_logits


def test_topk_from_vllm_keeps_rank_order_and_sampled_token():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(6, 40)) * 2
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    K = 5
    sampled = [int(np.argsort(-logp[t])[7 if t % 2 else 0]) for t in range(6)]  # some below top-K
    steps = []
    for t in range(6):
        order = np.argsort(-logp[t])
        d = {int(i): Logprob(logprob=float(logp[t, i]), rank=r + 1, decoded_token="x")
             for r, i in enumerate(order[:K])}
        d.setdefault(sampled[t], Logprob(logprob=float(logp[t, sampled[t]]),
                                         rank=int(np.flatnonzero(order == sampled[t])[0]) + 1,
                                         decoded_token="y"))
        steps.append(d)
    top, tok_lp, ids = topk_from_vllm(steps, sampled, K)
    np.testing.assert_allclose(tok_lp, logp[np.arange(6), sampled])
    np.testing.assert_allclose(top, -np.sort(-logp, axis=1)[:, :K])
    assert np.all(ids == np.argsort(-logp, axis=1)[:, :K])
    lo, hi = entropy_bounds_topk(top, 40)
    H = entropy_from_logits(z)
    assert np.all(lo <= H + 1e-9) and np.all(H <= hi + 1e-9)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason=(
    "vLLM is not installed: its PyPI wheel is a CUDA build, this machine has no GPU, and "
    "installing it would replace transformers and numpy in the shared environment"))
def test_vllm_engine(tiny_model):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("vLLM's offline engine needs a GPU")
    from rlvr_boundary.backends import SamplingParams, get_backend

    b = get_backend("vllm", model=str(tiny_model), dtype="float32", enforce_eager=True)
    rows = list(b.generate([{"prompt_id": "a", "prompt": "1+1="}], 4, SamplingParams(max_new_tokens=8)))
    assert len(rows) == 4 and rows[0]["entropy_kind"] == "topk_bounds"
