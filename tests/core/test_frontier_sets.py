"""The hard frontier's shares and their Wilson intervals against scipy's reference."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from rlvr_boundary.core.frontier_sets import frontier_shares, wilson_interval


@pytest.mark.parametrize("x, n", [(0, 1), (0, 120), (27, 120), (120, 120), (3, 7), (50, 51)])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_wilson_matches_scipy(x, n, alpha):
    ref = binomtest(x, n).proportion_ci(confidence_level=1 - alpha, method="wilson")
    lo, hi = wilson_interval(x, n, alpha)
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


def test_shares_and_bad_input():
    got = frontier_shares(120, {"gained": 0, "lost": 27, "unsolved": 0})
    assert got["lost"]["share"] == pytest.approx(27 / 120) and got["gained"]["ci"][0] == 0.0
    lo, hi = got["lost"]["ci"]
    assert lo < 27 / 120 < hi
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        wilson_interval(1, 4, alpha=0)
