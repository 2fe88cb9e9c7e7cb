"""The paired bootstrap by count matrices against a resample-by-resample reference.

The fast path turns each resample's indices into prompt counts and takes one
matrix product per block; the reference below gathers every resampled table
and averages it, using the same random stream (documented in the docstring of
:func:`rlvr_boundary.core.compare.paired_bootstrap`). Both must give the same
resampled statistics, hence the same intervals.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k_plugin


def reference_bootstrap(pb, pr, ks, *, K_se, n_boot, alpha, seed, groups=None):
    """Resample by resample: draw indices, gather the rows, average, loop over budgets."""
    rng = np.random.default_rng(seed)
    P = pb.shape[0]
    ks = list(ks)
    j_se = ks.index(K_se) if K_se is not None else None
    if groups is not None:
        labels = sorted(set(groups.tolist()))
        members = [np.flatnonzero(groups == lab) for lab in labels]
    k_star, price_v, price_k, dse = [], [], [], []
    for _ in range(n_boot):
        if groups is None:
            rows = rng.integers(0, P, size=P)
        else:
            picked = rng.integers(0, len(labels), size=len(labels))
            rows = np.concatenate([members[g] for g in picked])
        D = [float(np.mean(pr[rows, j] - pb[rows, j])) for j in range(len(ks))]
        neg = [k for k, v in zip(ks, D) if v < 0]
        k_star.append(neg[0] if neg else np.inf)
        losses = [max(0.0, -v) for v in D]
        worst = max(losses)
        price_v.append(worst)
        price_k.append(ks[losses.index(worst)] if worst > 0 else np.inf)
        if j_se is not None:
            dse.append(float(np.mean(pb[rows, j_se]) - np.mean(pr[rows, 0])))
    ci = cc._percentile_ci
    out = {"k_star": {"ci": ci(np.array(k_star), alpha),
                      "undefined_frac": float(np.mean(~np.isfinite(k_star)))},
           "price": {"ci": ci(np.array(price_v), alpha), "k_ci": ci(np.array(price_k), alpha)}}
    if j_se is not None:
        out["delta_se"] = {"K": K_se, "ci": ci(np.array(dse), alpha)}
    return out


def _curves(seed: int, P: int, ks):
    # Plug-in curves of continuous rates: no two resampled means tie by accident, so
    # the sign of D(k) does not hang on the order of a floating-point sum.
    rng = np.random.default_rng(seed)
    rate_b = rng.beta(0.5, 0.7, P)
    rate_r = np.clip(rate_b + rng.normal(0.08, 0.15, P), 0, 1)
    return pass_at_k_plugin(rate_b, ks), pass_at_k_plugin(rate_r, ks)


def _same(fast: dict, ref: dict) -> None:
    assert fast["k_star"]["ci"] == ref["k_star"]["ci"]
    assert fast["k_star"]["undefined_frac"] == ref["k_star"]["undefined_frac"]
    assert fast["price"]["k_ci"] == ref["price"]["k_ci"]
    np.testing.assert_allclose(fast["price"]["ci"], ref["price"]["ci"], rtol=0, atol=1e-12)
    if "delta_se" in ref:
        assert fast["delta_se"]["K"] == ref["delta_se"]["K"]
        np.testing.assert_allclose(fast["delta_se"]["ci"], ref["delta_se"]["ci"], rtol=0,
                                   atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_bootstrap_equals_resample_by_resample_reference(seed):
    ks = np.arange(1, 33)
    pb, pr = _curves(seed, 150, ks)
    fast = cc.paired_bootstrap(pb, pr, ks, K_se=32, n_boot=300, seed=seed)
    ref = reference_bootstrap(pb, pr, ks, K_se=32, n_boot=300, alpha=0.05, seed=seed)
    _same(fast, ref)
    assert fast["resampled"] == "prompts" and fast["n_boot"] == 300


def test_fast_cluster_bootstrap_equals_reference():
    ks = np.array([1, 2, 4, 8, 16])
    pb, pr = _curves(5, 90, ks)
    groups = np.random.default_rng(5).integers(0, 12, 90)  # uneven cluster sizes
    fast = cc.paired_bootstrap(pb, pr, ks, K_se=16, n_boot=250, seed=3, groups=groups)
    ref = reference_bootstrap(pb, pr, ks, K_se=16, n_boot=250, alpha=0.05, seed=3,
                              groups=groups)
    _same(fast, ref)
    assert fast["resampled"] == "clusters"


def test_draws_do_not_depend_on_the_block_size(monkeypatch):
    # Blocks of whole rows take the same stream: a block of 7 rows gives the same answer.
    ks = np.arange(1, 9)
    pb, pr = _curves(9, 40, ks)
    whole = cc.paired_bootstrap(pb, pr, ks, K_se=8, n_boot=100, seed=4)
    import rlvr_boundary.core.compare as mod

    real = mod.np.random.default_rng

    class Small:  # forwards to the real generator; the bootstrap sees 7-row blocks
        def __init__(self, seed):
            self.g = real(seed)

        def integers(self, lo, hi, size):
            rows = [self.g.integers(lo, hi, size=(min(7, size[0] - s), size[1]))
                    for s in range(0, size[0], 7)]
            return np.concatenate(rows)

    monkeypatch.setattr(mod.np.random, "default_rng", Small)
    blocked = cc.paired_bootstrap(pb, pr, ks, K_se=8, n_boot=100, seed=4)
    monkeypatch.undo()
    _same(blocked, whole)


@settings(max_examples=25, deadline=None)
@given(P=st.integers(2, 30), n_boot=st.integers(1, 60), seed=st.integers(0, 2**16))
def test_fast_bootstrap_matches_reference_property(P, n_boot, seed):
    ks = np.array([1, 2, 3, 4])
    pb, pr = _curves(seed, P, ks)
    fast = cc.paired_bootstrap(pb, pr, ks, K_se=4, n_boot=n_boot, seed=seed)
    ref = reference_bootstrap(pb, pr, ks, K_se=4, n_boot=n_boot, alpha=0.1, seed=seed)
    ref_alpha = cc.paired_bootstrap(pb, pr, ks, K_se=4, n_boot=n_boot, seed=seed, alpha=0.1)
    _same(ref_alpha, ref)
    assert fast["price"]["ci"][0] >= 0


def test_identical_models_give_no_k_star():
    # D is exactly 0 in every resample: k* never defined, no price.
    ks = np.array([1, 2, 4])
    pb, _ = _curves(3, 20, ks)
    out = cc.paired_bootstrap(pb, pb.copy(), ks, K_se=4, n_boot=50)
    assert out["k_star"] == {"ci": [None, None], "undefined_frac": 1.0}
    assert out["price"]["ci"] == [0.0, 0.0] and out["price"]["k_ci"] == [None, None]


def test_bootstrap_refuses_bad_input():
    ks = np.array([1, 2])
    pb = np.zeros((5, 2))
    with pytest.raises(ValueError, match="n_boot"):
        cc.paired_bootstrap(pb, pb, ks, n_boot=0)
    with pytest.raises(ValueError, match="K_se"):
        cc.paired_bootstrap(pb, pb, ks, K_se=3)
    with pytest.raises(ValueError, match="start at k = 1"):
        cc.paired_bootstrap(pb, pb, np.array([2, 4]))
