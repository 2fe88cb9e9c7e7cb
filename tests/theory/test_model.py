"""The strategy model: tilt, mirror descent (independent prox steps), pass@k, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rlvr_boundary.theory.model import (
    check_model,
    entropy,
    fbar,
    mirror_descent,
    mirror_step_numeric,
    pass1,
    pass1_gradient_fd,
    passk_curve,
    success,
    tilt,
)

matrices = st.integers(2, 5).flatmap(lambda S: st.integers(1, 7).flatmap(
    lambda X: arrays(np.float64, (S, X), elements=st.floats(0, 1))))


def test_hand_example():
    F = np.array([[1.0, 0.0], [0.5, 0.5]])
    pi = np.array([0.5, 0.5])
    np.testing.assert_allclose(success(F, pi), [0.75, 0.25])
    assert pass1(F, pi) == 0.5
    # pass@2 = mean(1 - 0.25^2, 1 - 0.75^2) = (0.9375 + 0.4375) / 2
    assert passk_curve(F, pi, [2.0])[0] == pytest.approx(0.6875, abs=1e-15)
    # tilt: fbar = (0.5, 0.5) -> no change at any beta
    np.testing.assert_allclose(tilt(pi, F, 30.0), pi)
    # fbar = (0.5, 0.25): beta = ln 2 / 0.25 doubles the odds of strategy 0
    G = np.array([[1.0, 0.0], [0.5, 0.0]])
    np.testing.assert_allclose(tilt(pi, G, np.log(2) / 0.25), [2 / 3, 1 / 3], atol=1e-15)
    assert entropy([0.5, 0.5]) == pytest.approx(np.log(2))


@settings(max_examples=40, deadline=None)
@given(matrices, st.floats(0.05, 2.0), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_tilt_equals_mirror_descent_steps(F, eta, steps, seed):
    """t numerically solved KL-prox steps on a finite-difference gradient = the tilt at eta * t."""
    pi0 = np.random.default_rng(seed).dirichlet(np.ones(F.shape[0]))
    pi = pi0
    for _ in range(steps):
        pi = mirror_step_numeric(pi, pass1_gradient_fd(F, pi), eta)
    np.testing.assert_allclose(pi, tilt(pi0, F, eta * steps), atol=1e-6)
    np.testing.assert_allclose(mirror_descent(pi0, F, eta, steps)[-1], tilt(pi0, F, eta * steps),
                               atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(matrices, st.integers(0, 2**32 - 1))
def test_finite_difference_gradient_is_fbar(F, seed):
    pi = np.random.default_rng(seed).dirichlet(np.ones(F.shape[0]))
    np.testing.assert_allclose(pass1_gradient_fd(F, pi), fbar(F), atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(matrices, st.floats(-50, 1e6))
def test_tilt_keeps_zero_mass_and_stays_finite(F, beta):
    pi0 = np.zeros(F.shape[0])
    pi0[0] = 0.3
    pi0[-1] = 0.7
    t = tilt(pi0, F, beta)
    assert np.all(np.isfinite(t)) and t.sum() == pytest.approx(1.0)
    assert np.all(t[1:-1] == 0)


def test_passk_curve_matches_direct_formula():
    rng = np.random.default_rng(0)
    F, pi = rng.uniform(size=(3, 7)), rng.dirichlet(np.ones(3))
    ks = np.array([1.0, 2.5, 17.0, 300.0])
    p = pi @ F
    direct = np.array([np.mean(1 - (1 - p) ** k) for k in ks])
    np.testing.assert_allclose(passk_curve(F, pi, ks), direct, rtol=1e-13)


@pytest.mark.parametrize("F, pi, msg", [
    (np.zeros((0, 3)), None, "non-empty"),
    (np.array([[1.2, 0.0]]), None, r"\[0, 1\]"),
    (np.array([[np.nan, 0.0]]), None, r"\[0, 1\]"),
    (np.ones((2, 2)), np.array([0.5, 0.6]), "probability"),
    (np.ones((2, 2)), np.array([1.0]), "one weight per strategy"),
    (np.ones((2, 2)), np.array([1.5, -0.5]), "probability"),
])
def test_refuses_undefined_inputs(F, pi, msg):
    with pytest.raises(ValueError, match=msg):
        check_model(F, pi)
