"""The torch mirrors equal the NumPy references (float64), including ragged flat batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

torch = pytest.importorskip("torch")

from rlvr_boundary.shaping import ShapingConfig
from rlvr_boundary.shaping import estimators as E
from rlvr_boundary.shaping import shapings as S
from rlvr_boundary.shaping import torch_ops as T
from rlvr_boundary.shaping.pipeline import token_advantages as np_token_advantages

pytestmark = pytest.mark.torch


def t(x):
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


rewards_pg = hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 8)),
                        elements=st.floats(-4, 4, allow_nan=False, width=32))
binary_pg = hnp.arrays(np.int64, st.tuples(st.integers(1, 5), st.integers(1, 10)),
                       elements=st.integers(0, 1))


@settings(max_examples=80, deadline=None)
@given(rewards_pg, st.data())
def test_estimators_torch_equals_numpy(r, data):
    tc = data.draw(hnp.arrays(np.int64, r.shape, elements=st.integers(1, 20)))
    for std in ("sample", "population"):
        np.testing.assert_allclose(T.grpo_advantages(t(r), std=std).numpy(),
                                   E.grpo_advantages(r, std=std), rtol=1e-10, atol=1e-10)
    for name in ("dr_grpo_advantages", "rloo_advantages"):
        np.testing.assert_allclose(getattr(T, name)(t(r)).numpy(), getattr(E, name)(r),
                                   rtol=1e-10, atol=1e-12)
    if np.ptp(r) > 1e-3:  # whitening a near-constant batch divides by ~sqrt(1e-8)
        for name in ("reinforce_pp_advantages", "reinforce_pp_baseline_advantages"):
            np.testing.assert_allclose(getattr(T, name)(t(r), token_counts=t(tc)).numpy(),
                                       getattr(E, name)(r, token_counts=tc), rtol=1e-9,
                                       atol=1e-9)
    b = r[:, 0] * 0.5
    np.testing.assert_allclose(T.remax_advantages(t(r), t(b)).numpy(), E.remax_advantages(r, b))


@settings(max_examples=80, deadline=None)
@given(binary_pg, st.data())
def test_passk_torch_equals_numpy(r, data):
    k = data.draw(st.integers(1, r.shape[1]))
    np.testing.assert_allclose(T.passk_advantages(t(r), k).numpy(), E.passk_advantages(r, k),
                               rtol=1e-12, atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 9)),
                  elements=st.floats(-2, 3, allow_nan=False)),
       st.booleans(), st.floats(0.0, 2.0))
def test_perplexity_torch_equals_numpy(x, iqr, alpha):
    for clamp in (None, (0.8, 1.2)):
        kw = dict(alpha=alpha, iqr_exclude=iqr, clamp=clamp)
        np.testing.assert_allclose(T.perplexity_multipliers(t(x), **kw).numpy(),
                                   S.perplexity_multipliers(x, **kw), rtol=1e-10, atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=6), st.data())
def test_position_and_logppl_torch_equal_numpy(lengths, data):
    lengths = np.array(lengths)
    mask = (np.arange(12)[None, :] < lengths[:, None]).astype(int)
    a = data.draw(hnp.arrays(np.float64, (len(lengths),), elements=st.floats(-2, 2)))
    tok = S.broadcast_to_tokens(a, mask)
    np.testing.assert_allclose(T.broadcast_to_tokens(t(a), t(mask)).numpy(), tok)
    np.testing.assert_allclose(T.relative_positions(t(mask)).numpy(), S.relative_positions(mask))
    kw = dict(window=None, gamma=data.draw(st.floats(0, 1)), m=data.draw(st.floats(1, 30)),
              n=data.draw(st.floats(-1, 0)), d=data.draw(st.sampled_from([1.0, -1.0])))
    np.testing.assert_allclose(T.apply_position_shaping(t(tok), t(mask), **kw).numpy(),
                               S.apply_position_shaping(tok, mask, **kw), rtol=1e-12, atol=1e-15)
    if lengths.min() > 0:
        lp = data.draw(hnp.arrays(np.float64, mask.shape, elements=st.floats(-9, 0)))
        np.testing.assert_allclose(T.log_perplexity(t(lp), t(mask)).numpy(),
                                   S.log_perplexity(lp, mask), rtol=1e-12)


@pytest.mark.parametrize("estimator", ["grpo", "dr_grpo", "rloo", "reinforce_pp",
                                       "reinforce_pp_baseline", "passk", "remax"])
def test_flat_pipeline_equals_numpy_pipeline(estimator):
    rng = np.random.default_rng(5)
    P, G, L = 4, 6, 9
    r = (rng.random((P, G)) < 0.4).astype(float)
    r[0] = [1, 0, 0, 0, 0, 0]
    lengths = rng.integers(1, L + 1, size=P * G)
    mask = (np.arange(L)[None, :] < lengths[:, None]).astype(int)
    log_ppl = rng.normal(0.6, 0.3, size=(P, G))
    greedy = rng.integers(0, 2, size=P).astype(float)
    cfg = ShapingConfig(estimator=estimator, k=3 if estimator == "passk" else None,
                        perplexity=True, position=True)
    ref = np_token_advantages(cfg, r, mask, log_ppl=log_ppl, greedy_rewards=greedy, step=201)
    # flat batch, rows shuffled: the group ids carry the structure
    perm = rng.permutation(P * G)
    index = np.repeat([f"uid-{p}" for p in range(P)], G)[perm]
    got = T.token_advantages(cfg, t(r.reshape(-1)[perm]), t(mask[perm]), index,
                             log_ppl=t(log_ppl.reshape(-1)[perm]),
                             greedy_rewards=t(np.repeat(greedy, G)[perm]), step=201)
    np.testing.assert_allclose(got.numpy(), ref[perm], rtol=1e-10, atol=1e-12)


def test_flat_pipeline_ragged_groups_bucket_by_size():
    rng = np.random.default_rng(6)
    sizes = [3, 5, 3, 4, 5]
    rewards = [rng.integers(0, 2, size=s).astype(float) for s in sizes]
    index = np.concatenate([[p] * s for p, s in enumerate(sizes)])
    flat = np.concatenate(rewards)
    got = T.sequence_advantages_flat(ShapingConfig(estimator="grpo"), t(flat), index).numpy()
    ref = np.concatenate([E.grpo_advantages(g[None, :])[0] for g in rewards])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert [len(b) for b in T.group_buckets(index)] == [2, 1, 2]
