"""Perplexity and position shaping: the report's test vectors, schedule, cap, signs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlvr_boundary.shaping import ShapingConfig
from rlvr_boundary.shaping import shapings as S
from rlvr_boundary.shaping.estimators import grpo_advantages, passk_advantages
from rlvr_boundary.shaping.pipeline import token_advantages

PPLS = np.array([[1.2, 1.5, 1.8, 2.1, 2.4]])


def test_perplexity_vectors_of_the_report():
    x = np.log(PPLS)
    # mu as printed by the report; the population std is 0.2449 (the report prints 0.2525)
    assert x.mean() == pytest.approx(0.5586, abs=5e-5)
    assert x.std() == pytest.approx(0.2449, abs=5e-5)
    f = S.perplexity_multipliers(x, alpha=0.01)
    assert f[0, 0] == pytest.approx(1.015, abs=5e-4)  # low PPL: larger advantage
    assert f[0, -1] == pytest.approx(0.987, abs=5e-4)  # high PPL: smaller advantage
    assert np.all(np.diff(f[0]) < 0)
    f1 = S.perplexity_multipliers(x, alpha=1.0)
    # the report's 2.49 / -0.26 come from its sigma 0.2525; with the population std:
    assert f1[0, 0] == pytest.approx(2.536, abs=5e-4)
    assert f1[0, -1] == pytest.approx(-0.294, abs=5e-4)
    # and they are 1 - alpha * z with the population z-scores
    z = (x - x.mean()) / x.std()
    np.testing.assert_allclose(f1, 1 - z, rtol=1e-12)
    # The report's own numbers are this formula with its sigma 0.2525 (w = -1.490, +1.255;
    # alpha = 1: 2.49 and -0.255, which it rounds from w = 1.255 to -0.26): the only
    # disagreement is sigma, which matches neither the population (0.2449) nor the sample
    # std (0.2738) of these five log-PPLs.
    w_report = (x[0, [0, -1]] - 0.5586) / 0.2525
    np.testing.assert_allclose(w_report, [-1.490, 1.255], atol=5e-4)
    np.testing.assert_allclose(1 - w_report, [2.49, -0.26], atol=6e-3)
    assert abs(x.std(ddof=1) - 0.2525) > 0.02 and abs(x.std() - 0.2525) > 0.007


def test_perplexity_shaping_scales_advantages_per_group():
    x = np.log(np.vstack([PPLS, PPLS[:, ::-1]]))  # (2, 5)
    a = np.array([[1.0, -1.0, 1.0, -1.0, 1.0], [2.0, 2.0, -2.0, -2.0, 0.0]])
    out = S.apply_perplexity_shaping(a, x, alpha=0.01)
    np.testing.assert_allclose(out, a * S.perplexity_multipliers(x, alpha=0.01))
    np.testing.assert_allclose(out[1, :2], a[1, :2] * [0.987, 0.9925], atol=5e-4)
    clamped = S.perplexity_multipliers(x, alpha=1.0, clamp=(0.8, 1.2))
    assert clamped.min() == 0.8 and clamped.max() == 1.2


def test_perplexity_constant_group_and_iqr_outliers():
    np.testing.assert_array_equal(S.perplexity_zscores([[0.3, 0.3, 0.3]]), 0.0)
    x = np.array([[0.50, 0.52, 0.54, 0.56, 0.58, 0.60, 5.0]])  # one wild outlier
    w_all = S.perplexity_zscores(x)
    w_iqr = S.perplexity_zscores(x, iqr_exclude=True)
    assert w_iqr[0, -1] == 0.0  # outlier left unshaped
    inl = x[0, :-1]
    np.testing.assert_allclose(w_iqr[0, :-1], (inl - inl.mean()) / inl.std(), rtol=1e-12)
    # without exclusion the outlier squashes everyone else's z-score
    assert np.abs(w_all[0, :-1]).max() < 0.5 < np.abs(w_iqr[0, :-1]).max()


def test_log_perplexity_from_token_logprobs():
    lp = np.log(np.array([[0.5, 0.25, 0.9], [0.1, 0.3, 0.3]]))
    mask = np.array([[1, 1, 0], [1, 1, 1]])
    got = S.log_perplexity(lp, mask)
    np.testing.assert_allclose(got, [-(np.log(0.5) + np.log(0.25)) / 2,
                                     -(np.log(0.1) + 2 * np.log(0.3)) / 3])
    with pytest.raises(ValueError, match="no response tokens"):
        S.log_perplexity(lp, [[1, 1, 0], [0, 0, 0]])


def test_position_bias_vectors_follow_the_papers_code():
    # sigmoid(15 * (l - 0.5)): 0.0025, 0.5, 0.9975 times gamma at l = 0.1, 0.5, 0.9
    b = S.position_bias([0.1, 0.5, 0.9], gamma=1.0)
    np.testing.assert_allclose(b, [0.0025, 0.5, 0.9975], atol=5e-5)
    np.testing.assert_allclose(S.position_bias([0.1, 0.5, 0.9]), 0.1 * b)
    # the seed report's substitution sigmoid(15 (l + 0.5)) would be saturated (>= 0.9999)
    assert S.position_bias([0.1], n=+0.5, gamma=1.0)[0] > 0.9998


def test_relative_positions_count_response_tokens_only():
    mask = np.array([[1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]])
    l = S.relative_positions(mask)
    np.testing.assert_allclose(l[0], np.arange(10) / 10)
    np.testing.assert_allclose(l[1], [0, 0, 0, 0.25, 0.5, 0.75, 0, 0, 0, 0])


def test_position_shaping_window_sign_and_cap():
    mask = np.ones((3, 10))
    a = np.array([[1.0] * 10, [-1.0] * 10, [0.01] * 10])
    l = np.arange(10) / 10
    out = S.apply_position_shaping(a, mask, step=250)
    bias = 0.1 / (1 + np.exp(-15 * (l - 0.5)))
    np.testing.assert_allclose(out[0], 1.0 + bias)  # positive A: pushed up
    np.testing.assert_allclose(out[1], -1.0 - bias)  # negative A: pushed down
    np.testing.assert_allclose(out[2], 0.01 + np.minimum(bias, 0.005))  # capped at |A|/2
    assert out[2, -1] == pytest.approx(0.015)
    for step in (0, 200, 300, 1000):  # open window 200 < step < 300
        np.testing.assert_array_equal(S.apply_position_shaping(a, mask, step=step), a)
    np.testing.assert_allclose(S.apply_position_shaping(a, mask, window=None), out)
    np.testing.assert_allclose(S.apply_position_shaping(a, mask, step=5, window=(None, 10)), out)
    with pytest.raises(ValueError, match="step"):
        S.apply_position_shaping(a, mask)
    # zero advantages and padding stay zero
    z = S.apply_position_shaping(np.zeros((1, 4)), [[1, 1, 0, 0]], window=None)
    np.testing.assert_array_equal(z, 0.0)


def test_pipeline_order_estimator_perplexity_broadcast_position():
    rng = np.random.default_rng(3)
    r = (rng.random((3, 4)) < 0.5).astype(float)
    r[0] = [1, 0, 0, 0]
    lengths = rng.integers(2, 9, size=12)
    mask = (np.arange(10)[None, :] < lengths[:, None]).astype(int)  # (12, 10)
    log_ppl = rng.normal(0.5, 0.2, size=(3, 4))
    cfg = ShapingConfig(estimator="passk", k=2, perplexity=True, position=True)
    got = token_advantages(cfg, r, mask, log_ppl=log_ppl, step=250)
    seq = passk_advantages(r, 2) * (1 - 0.01 * S.perplexity_zscores(log_ppl))
    tok = seq.reshape(-1)[:, None] * mask
    ref = S.apply_position_shaping(tok, mask, step=250)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    cfg = ShapingConfig.from_mapping({"estimator": "grpo", "pos_window": [1, 2]})
    assert cfg.pos_window == (1, 2)
    with pytest.raises(ValueError, match="unknown shaping options"):
        ShapingConfig.from_mapping({"alpha": 0.1})
    with pytest.raises(ValueError, match="needs k"):
        ShapingConfig(estimator="passk")
    for bad, match in [({"k": 0}, "positive integer"), ({"k": 2.5}, "positive integer"),
                       ({"grpo_std": "pop"}, "grpo_std"), ({"ppl_alpha": -0.1}, "ppl_alpha"),
                       ({"pos_cap": float("nan")}, "pos_cap"), ({"ppl_clamp": (1.2, 0.8)}, "low"),
                       ({"pos_window": (1, 2, 3)}, "pair")]:
        with pytest.raises(ValueError, match=match):
            ShapingConfig(**bad)


small_groups = hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 16)),
                          elements=st.floats(-3, 3, allow_nan=False, width=32))


@settings(max_examples=200, deadline=None)
@given(small_groups, st.data())
def test_shaping_never_flips_the_sign_at_default_strengths(r, data):
    a = grpo_advantages(r)  # (P, G)
    log_ppl = data.draw(hnp.arrays(np.float64, r.shape,
                                   elements=st.floats(0.0, 5.0, allow_nan=False)))
    iqr = data.draw(st.booleans())
    shaped = S.apply_perplexity_shaping(a, log_ppl, alpha=0.01, iqr_exclude=iqr)
    assert np.all(np.sign(shaped) == np.sign(a))
    lengths = data.draw(hnp.arrays(np.int64, (a.size,), elements=st.integers(1, 30)))
    mask = (np.arange(30)[None, :] < lengths[:, None]).astype(int)
    tok = S.broadcast_to_tokens(shaped, mask)
    out = S.apply_position_shaping(tok, mask, window=None)
    assert np.all(np.sign(out) == np.sign(tok))
    assert np.all(np.abs(out) >= np.abs(tok))
    assert np.all(np.abs(out - tok) <= 0.5 * np.abs(tok) + 1e-15)
