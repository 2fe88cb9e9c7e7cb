"""GRPO on the strategy model: the exact identity with the tilt, the sampler's expectation, support."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.theory import generators as G
from rlvr_boundary.theory.grpo import (
    GRPOSettings,
    _expected_step,
    _sampled_step,
    matched_tilt,
    simulate_grpo,
    tv_to_tilt,
)
from rlvr_boundary.theory.model import entropy, tilt, tv


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.01, 2.0), st.integers(1, 60))
def test_expected_natural_dr_grpo_is_the_tilt(seed, lr, steps):
    rng = np.random.default_rng(seed)
    F, pi0 = G.uniform(rng, S=int(rng.integers(2, 6)), X=int(rng.integers(1, 10)))
    st_ = GRPOSettings(lr=lr, steps=steps, expected=True, natural=True, std_norm=False)
    path = simulate_grpo(F, pi0, st_)
    for t in (1, steps):
        assert tv(path[t], tilt(pi0, F, lr * t)) < 1e-12


def test_each_departure_from_the_tilt_moves_away_from_it():
    """pi_s factor (softmax PG) and std normalization each break the identity on this instance."""
    rng = np.random.default_rng(7)
    F, pi0 = G.uniform(rng, S=4, X=12)
    for kw in ({"natural": False, "std_norm": False}, {"natural": True, "std_norm": True}):
        pi = simulate_grpo(F, pi0, GRPOSettings(lr=0.5, steps=100, expected=True, **kw))[-1]
        assert tv_to_tilt(F, pi0, pi)["tv"] > 1e-3


@pytest.mark.parametrize("natural", [False, True])
def test_sampled_step_is_unbiased_for_the_finite_group_expectation(natural):
    """Dr. GRPO (no std): E[A_i | s_i = s] = (G-1)/G (F[s,x] - p_x), so the mean sampled step is
    (G-1)/G times the infinite-group expected step. Checked to 5 standard errors."""
    rng = np.random.default_rng(11)
    F, pi = rng.uniform(size=(3, 5)), np.array([0.5, 0.3, 0.2])
    Gs = 4
    st_ = GRPOSettings(group=Gs, batch=400, std_norm=False, natural=natural)
    draws = np.array([_sampled_step(F, pi, st_, rng) for _ in range(500)])  # (N, S)
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    target = (Gs - 1) / Gs * _expected_step(F, pi, st_)
    assert np.all(np.abs(mean - target) < 5 * se + 1e-12)


def test_two_strategies_any_path_matches_the_tilt():
    """On a 2-point simplex entropy fixes the mixture up to a mirror image: TV 0 when both
    move towards the better strategy."""
    F = np.array([[0.9, 0.6, 0.2], [0.3, 0.4, 0.5]])
    pi0 = np.array([0.5, 0.5])
    pi = simulate_grpo(F, pi0, GRPOSettings(lr=0.2, steps=50, expected=True))[-1]
    assert pi[0] > 0.5
    assert tv_to_tilt(F, pi0, pi)["tv"] < 1e-9


def test_matched_tilt_hits_the_target_and_handles_non_monotone_entropy():
    # pi0 favours the weak strategy: along the tilt, entropy first rises then falls
    F = np.array([[1.0, 1.0], [0.2, 0.2]])
    pi0 = np.array([0.1, 0.9])
    betas = np.linspace(0, 10, 200)
    H = [entropy(tilt(pi0, F, b)) for b in betas]
    assert max(H) > H[0] + 0.1  # non-monotone indeed
    target = tilt(pi0, F, 6.0)
    t, beta = matched_tilt(F, pi0, entropy(target), pi=target)
    assert beta == pytest.approx(6.0, rel=1e-8) and tv(t, target) < 1e-10
    t0, b0 = matched_tilt(F, pi0, entropy(pi0))
    assert b0 == 0.0 and tv(t0, pi0) < 1e-15


def test_sampled_grpo_keeps_support_and_raises_pass1():
    rng = np.random.default_rng(2)
    F, _ = G.uniform(rng, S=4, X=8)
    pi0 = np.array([0.5, 0.0, 0.5, 0.0])
    for natural in (False, True):
        path = simulate_grpo(F, pi0, GRPOSettings(steps=80, natural=natural), rng)
        assert np.all(path[:, [1, 3]] == 0)
        np.testing.assert_allclose(path.sum(axis=1), 1.0)
    best = int(np.argmax(np.where(pi0 > 0, F.mean(axis=1), -1)))
    assert path[-1, best] > 0.5
