"""pass@k, avg@n and maj@k against exact references (math.comb fractions, brute force)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core.passk import (
    avg_at_n,
    check_counts,
    maj_at_k,
    pass_at_k,
    pass_at_k_curve,
    pass_at_k_plugin,
    passk_within_prompt_variance,
)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_matches_math_comb_fractions_on_random_inputs():
    rng = np.random.default_rng(1234)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(1, 301))
        c = int(rng.integers(0, n + 1))
        ks = np.unique(rng.integers(1, n + 1, size=min(n, 12)))
        got = pass_at_k([n], [c], ks)[0]
        for k, g in zip(ks, got):
            worst = max(worst, abs(g - float(exact_pass_at_k(n, c, int(k)))))
    assert worst < 1e-12


def test_every_k_of_one_prompt_matches_exact():
    n, c = 300, 7
    curve = pass_at_k_curve(n, [c])[0]
    exact = np.array([float(exact_pass_at_k(n, c, k)) for k in range(1, n + 1)])
    np.testing.assert_allclose(curve, exact, rtol=0, atol=1e-13)
    assert curve[n - c] == 1.0  # k = n - c + 1 must contain a correct sample


def test_mixed_n_grouping_equals_per_prompt_calls():
    n = np.array([8, 16, 8, 32, 16])
    c = np.array([0, 3, 8, 1, 16])
    ks = [1, 2, 5, 8]
    got = pass_at_k(n, c, ks)
    for i in range(n.size):
        for j, k in enumerate(ks):
            assert got[i, j] == pytest.approx(float(exact_pass_at_k(n[i], c[i], k)), abs=1e-14)


def test_large_n_is_finite_and_exact():
    n, c = 100_000, np.array([0, 1, 2, 50, 99_999, 100_000])
    ks = np.array([1, 2, 10, 1000, 50_000, 100_000])
    got = pass_at_k(np.full(c.size, n), c, ks)
    assert np.all(np.isfinite(got)) and np.all((got >= 0) & (got <= 1))
    # c = 1: pass@k = k / n exactly; c = 0: 0; c = n: 1.
    np.testing.assert_allclose(got[1], ks / n, rtol=1e-12)
    assert np.all(got[0] == 0.0) and np.all(got[5] == 1.0)
    # c = 2 closed form 1 - (n-k)(n-k-1) / (n(n-1)).
    expect = [float(1 - Fraction((n - k) * (n - k - 1), n * (n - 1))) for k in ks]
    np.testing.assert_allclose(got[2], expect, rtol=1e-13)
    # c = 50 at k = 1000 against the exact fraction.
    assert got[3, 3] == pytest.approx(float(exact_pass_at_k(n, 50, 1000)), rel=1e-12)


def test_chunking_does_not_change_values():
    rng = np.random.default_rng(0)
    n = np.full(500, 64)
    c = rng.integers(0, 65, size=500)
    np.testing.assert_array_equal(pass_at_k(n, c, None), pass_at_k(n, c, None, chunk_elems=100))


@pytest.mark.parametrize("bad, msg", [
    (dict(n=[4], c=[5]), "c <= n"),
    (dict(n=[4], c=[-1]), "c <= n"),
    (dict(n=[0], c=[0]), "n must be >= 1"),
    (dict(n=[4.5], c=[1]), "integers"),
    (dict(n=[True], c=[False]), "booleans"),
])
def test_bad_counts_are_refused(bad, msg):
    with pytest.raises(ValueError, match=msg):
        check_counts(bad["n"], bad["c"])


def test_k_greater_than_n_is_refused():
    with pytest.raises(ValueError, match="exceeds the smallest number of samples n = 8"):
        pass_at_k([8, 16], [1, 2], [9])
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_at_k([8], [1], [0])


def test_avg_at_n_and_plugin():
    assert avg_at_n([4, 8], [1, 8]) == pytest.approx((0.25 + 1.0) / 2)
    # pass@1 is c/n exactly
    np.testing.assert_allclose(pass_at_k([7, 9], [3, 2], [1])[:, 0], [3 / 7, 2 / 9], rtol=1e-15)
    np.testing.assert_allclose(pass_at_k_plugin([0.1, 0.5], [1, 2, 10]),
                               [[0.1, 0.19, 1 - 0.9 ** 10], [0.5, 0.75, 1 - 0.5 ** 10]], rtol=1e-14)


def test_within_prompt_variance_matches_subset_enumeration():
    # Variance of the unbiased estimator under resampling n Bernoulli(c/n) samples is not what
    # we test; we test the U-statistic variance estimate against its definition: it must be an
    # unbiased estimate of Var = p_k(1 - p_k)-like quantity, here checked on the degenerate cases
    # and against a brute-force unbiased estimate of (pass@k)^2 for small n.
    n, k = 8, 2
    for c in range(0, n + 1):
        samples = [1] * c + [0] * (n - c)
        # Unbiased estimate of theta^2 where theta = pass@k: average over pairs of disjoint
        # k-subsets of the product of their "any correct" indicators.
        tot, cnt = 0, 0
        idx = range(n)
        for a in itertools.combinations(idx, k):
            rest = [i for i in idx if i not in a]
            for b in itertools.combinations(rest, k):
                tot += max(samples[i] for i in a) * max(samples[i] for i in b)
                cnt += 1
        theta = float(exact_pass_at_k(n, c, k))
        theta2 = tot / cnt
        expect = theta ** 2 - theta2  # unbiased estimate of Var(theta_hat) = E[theta_hat^2] - theta^2
        got = passk_within_prompt_variance([n], [c], k)[0]
        assert got == pytest.approx(expect, abs=1e-12), c


def brute_maj(labels: list, correct_labels: set, k: int) -> float:
    """Average over every k-subset of the (tie-split) majority vote; None never votes."""
    total = Fraction(0)
    subsets = 0
    for sub in itertools.combinations(range(len(labels)), k):
        votes = Counter(labels[i] for i in sub if labels[i] is not None)
        subsets += 1
        if not votes:
            continue
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        total += Fraction(sum(a in correct_labels for a in winners), len(winners))
    return float(total / subsets)


@pytest.mark.parametrize("sizes, correct, n_inc", [
    ([3, 2, 1], [True, False, False], 0),
    ([2, 2, 2], [False, True, False], 1),
    ([1, 1, 1, 1], [True, False, False, False], 2),
    ([4, 1], [False, True], 0),
    ([2, 3], [True, True], 1),
    ([1], [False], 3),
])
def test_maj_at_k_equals_brute_force(sizes, correct, n_inc):
    labels = [a for a, s in enumerate(sizes) for _ in range(s)] + [None] * n_inc
    good = {a for a, ok in enumerate(correct) if ok}
    n = len(labels)
    got = maj_at_k(sizes, correct, n_inc, range(1, n + 1))
    want = [brute_maj(labels, good, k) for k in range(1, n + 1)]
    np.testing.assert_allclose(got, want, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.integers(0, 2), st.data())
def test_maj_at_k_property_brute_force(sizes, n_inc, data):
    correct = data.draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    labels = [a for a, s in enumerate(sizes) for _ in range(s)] + [None] * n_inc
    good = {a for a, ok in enumerate(correct) if ok}
    k = data.draw(st.integers(1, len(labels)))
    assert maj_at_k(sizes, correct, n_inc, [k])[0] == pytest.approx(brute_maj(labels, good, k),
                                                                       abs=1e-12)


def test_maj_at_1_is_share_of_correct_complete_samples():
    assert maj_at_k([5, 3, 2], [False, True, False], 2, [1])[0] == pytest.approx(3 / 12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.data())
def test_curve_is_monotone_in_k(n, data):
    c = data.draw(st.integers(0, n))
    curve = pass_at_k_curve(n, [c])[0]
    assert np.all(np.diff(curve) >= -1e-15)
    assert curve[0] == pytest.approx(c / n, abs=1e-15)


def test_within_prompt_variance_vector_equals_scalar_calls():
    rng = np.random.default_rng(3)
    n = rng.integers(20, 40, 30)
    c = rng.integers(0, 20, 30)
    ks = [1, 3, 10]
    vec = passk_within_prompt_variance(n, c, ks)
    assert vec.shape == (30, 3)
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(vec[:, j], passk_within_prompt_variance(n, c, k))
    with pytest.raises(ValueError, match="n >= 2k"):
        passk_within_prompt_variance(n, c, [15])
