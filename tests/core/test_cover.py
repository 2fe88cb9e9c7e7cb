"""cover@tau with its DKW band: against loops over the problems, the closed-form half-width,
the band's invariants (hypothesis), and its coverage in a small simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core.cover import TAU_GRID, cover_band, cover_difference_band, dkw_halfwidth


def _brute_cover(n, c, tau):
    # c / n >= tau in exact rational arithmetic, one problem at a time
    from fractions import Fraction

    t = Fraction(str(tau))
    return sum(Fraction(int(ci), int(ni)) >= t for ni, ci in zip(n, c)) / len(n)


def test_halfwidth_is_massarts_closed_form():
    assert dkw_halfwidth(500) == pytest.approx(math.sqrt(math.log(40) / 1000), rel=1e-15)
    assert dkw_halfwidth(1, 0.1) == pytest.approx(math.sqrt(math.log(20) / 2), rel=1e-15)
    for bad in ((0, 0.05), (10, 0.0), (10, 1.0), (2.5, 0.05)):
        with pytest.raises(ValueError):
            dkw_halfwidth(*bad)


def test_curve_matches_exact_fractions_on_a_mixed_n_example():
    n = np.array([10, 10, 3, 7, 128, 1])
    c = np.array([3, 10, 1, 0, 64, 1])
    got = cover_band(n, c, TAU_GRID)
    for j, tau in enumerate(TAU_GRID):
        assert got["cover"][j] == pytest.approx(float(_brute_cover(n, c, tau)), abs=1e-15)
    # 3/10 >= 0.3 and 1/3 >= 0.33 are counted (no rounding of c / n); 0/7 never is
    j30, j33 = TAU_GRID.index(0.3), TAU_GRID.index(0.33)
    assert got["cover"][j30] == pytest.approx(5 / 6) and got["cover"][j33] == pytest.approx(4 / 6)
    eps = dkw_halfwidth(6)
    assert got["halfwidth"] == eps and got["level"] == pytest.approx(0.95)
    for j in range(len(TAU_GRID)):
        assert got["lower"][j] == pytest.approx(max(0.0, got["cover"][j] - eps))
        assert got["upper"][j] == pytest.approx(min(1.0, got["cover"][j] + eps))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.floats(0, 1)), min_size=1, max_size=60),
       st.lists(st.floats(0, 1), min_size=1, max_size=60),
       st.sampled_from([0.01, 0.05, 0.2]))
def test_band_invariants(pairs, rl_share, alpha):
    n = np.array([p[0] for p in pairs])
    c = np.array([int(round(p[0] * p[1])) for p in pairs])
    cr = np.array([int(round(ni * rl_share[i % len(rl_share)])) for i, ni in enumerate(n)])
    b = cover_band(n, c, TAU_GRID, alpha)
    g, lo, hi = map(np.asarray, (b["cover"], b["lower"], b["upper"]))
    assert np.all(np.diff(g) <= 1e-15)  # cover falls as tau rises
    assert np.all((0 <= lo) & (lo <= g) & (g <= hi) & (hi <= 1))
    d = cover_difference_band(n, c, n, cr, TAU_GRID, alpha)
    dd, dlo, dhi = map(np.asarray, (d["diff"], d["lower"], d["upper"]))
    assert np.all((dlo <= dd + 1e-15) & (dd <= dhi + 1e-15))
    for v, l_, h_ in zip(d["verdict"], dlo, dhi):
        assert v == ("gain" if l_ > 0 else "loss" if h_ < 0 else "unclear")
    # the union bound: each model's band at alpha / 2
    br, bb = cover_band(n, cr, TAU_GRID, alpha / 2), cover_band(n, c, TAU_GRID, alpha / 2)
    assert np.allclose(dlo, np.clip(np.subtract(br["lower"], bb["upper"]), -1, 1))


def test_refuses_bad_input():
    with pytest.raises(ValueError):
        cover_band([4, 4], [5, 1])  # c > n
    with pytest.raises(ValueError):
        cover_band([4, 4], [1, 1], [1.5])
    with pytest.raises(ValueError):
        cover_difference_band([4, 4], [1, 1], [4], [1])


def test_band_holds_its_level_in_a_small_simulation():
    """Beta(0.5, 0.7) rates, n = 8, 200 problems, 400 studies: the band covers the cover
    measured with n samples (computed exactly from the binomial) at every tau at once in
    at least 95% of studies (DKW is conservative for these discrete rates)."""
    from scipy.stats import binom

    rng = np.random.default_rng(20261204)
    pop = rng.beta(0.5, 0.7, 20000)
    n, P, reps = 8, 200, 400
    need = np.ceil(np.asarray(TAU_GRID) * n - 1e-9)
    truth = binom.sf(need[None, :] - 1, n, pop[:, None]).mean(axis=0)  # (T,) G_n
    hits = 0
    for _ in range(reps):
        c = rng.binomial(n, pop[rng.integers(0, pop.size, P)])
        b = cover_band(np.full(P, n), c)
        hits += bool(np.all((np.asarray(b["lower"]) <= truth) & (truth <= np.asarray(b["upper"]))))
    assert hits / reps >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / reps)
