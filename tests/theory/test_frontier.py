"""The price frontier LP against exact vertex enumeration and a grid search."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.theory import generators as G
from rlvr_boundary.theory.frontier import (
    achieved_floor,
    best_at_floor,
    best_at_floor_brute,
    price_frontier,
    tilt_path,
)
from rlvr_boundary.theory.model import pass1, success, tilt
from rlvr_boundary.theory.specialization import three_by_three


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 5),
       st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]))
def test_frontier_lp_equals_vertex_enumeration(seed, S, X, tau):
    rng = np.random.default_rng(seed)
    F = np.round(rng.uniform(size=(S, X)), 2)
    pi0 = rng.dirichlet(np.ones(S))
    pi = best_at_floor(F, pi0, tau)
    assert np.all(success(F, pi) >= tau * success(F, pi0) - 1e-9)  # feasible
    assert pass1(F, pi) == pytest.approx(best_at_floor_brute(F, pi0, tau), abs=1e-8)


@pytest.mark.parametrize("seed", range(5))
def test_vertex_enumeration_equals_a_fine_grid_for_two_strategies(seed):
    """The brute force itself, checked by exhaustive search on the 1-D simplex."""
    rng = np.random.default_rng(seed)
    F, pi0 = rng.uniform(size=(2, 4)), rng.dirichlet(np.ones(2))
    a = np.linspace(0, 1, 200_001)
    pis = np.stack([a, 1 - a], axis=1)  # (N, 2)
    p = pis @ F  # (N, X)
    for tau in (0.0, 0.5, 0.8):
        ok = np.all(p >= tau * success(F, pi0) - 1e-12, axis=1)
        grid_best = p[ok].mean(axis=1).max()
        assert best_at_floor_brute(F, pi0, tau) == pytest.approx(grid_best, abs=1e-5)


def test_three_by_three_frontier_by_hand():
    """Uniform pi0 on the 3x3 matrix: p0 = (8/15, 8/15, 19/30), pass@1 = 0.5667.

    At tau = 1 the best is all mass on the generalist, p = (.6, .6, .7): the free lunch.
    """
    F, pi0 = three_by_three(), np.full(3, 1 / 3)
    np.testing.assert_allclose(success(F, pi0), [8 / 15, 8 / 15, 19 / 30])
    pi = best_at_floor(F, pi0, 1.0)
    np.testing.assert_allclose(pi, [0, 0, 1], atol=1e-9)
    assert pass1(F, pi) - pass1(F, pi0) == pytest.approx(19 / 30 - 17 / 30)


def test_strict_floor_gives_zero_gain_under_specialization_and_no_crossing():
    rng = np.random.default_rng(3)
    for _ in range(20):
        F, pi0 = G.exclusive_blocks(rng)
        front = price_frontier(F, pi0, taus=[0.0, 0.5, 1.0])
        assert abs(front[-1]["gain"]) < 1e-9 and front[-1]["price"] < 1e-9
        gains = [r["gain"] for r in front]
        assert gains[0] >= gains[1] >= gains[2] - 1e-12
        assert gains[0] > 1e-6  # without a floor RL gains


def test_tilt_is_feasible_at_its_floor_and_never_beats_the_frontier():
    rng = np.random.default_rng(4)
    for _ in range(20):
        F, pi0 = G.uniform(rng, S=4, X=10)
        for r in tilt_path(F, pi0, betas=[0.5, 5.0, 50.0]):
            pb = tilt(pi0, F, r["beta"])
            tau = achieved_floor(F, pi0, pb)
            assert tau == pytest.approx(r["floor"])
            assert np.all(success(F, pb) >= tau * success(F, pi0) - 1e-12)
            assert r["gain"] <= pass1(F, best_at_floor(F, pi0, tau)) - pass1(F, pi0) + 1e-9


def test_refuses_a_floor_outside_unit_interval():
    with pytest.raises(ValueError, match="tau"):
        best_at_floor(np.eye(2), [0.5, 0.5], 1.5)
