"""Advantage estimators against brute-force references and their invariants (numpy only)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlvr_boundary.shaping import estimators as E


def brute_force_passk_advantage(group, k):
    """Enumerate every k-subset: subset reward = max; advantage of a sample = mean
    normalized advantage (R_S - rho)/sigma over the subsets S containing it, with
    rho and sigma the mean and population std of R_S over all subsets."""
    n = len(group)
    subsets = list(itertools.combinations(range(n), k))
    R = np.array([max(group[i] for i in s) for s in subsets], dtype=float)
    rho, sigma = R.mean(), R.std()
    out = np.zeros(n)
    if sigma == 0:
        return out
    for i in range(n):
        out[i] = np.mean([(R[j] - rho) / sigma for j, s in enumerate(subsets) if i in s])
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_passk_advantage_equals_subset_enumeration(n):
    for c in range(n + 1):
        group = [1] * c + [0] * (n - c)
        for k in range(1, n + 1):
            got = E.passk_advantages(np.array([group]), k)[0]
            np.testing.assert_allclose(got, brute_force_passk_advantage(group, k), atol=1e-12,
                                       err_msg=f"n={n} c={c} k={k}")


def test_passk_advantage_paper_closed_form_and_shuffled_groups():
    rng = np.random.default_rng(0)
    from math import comb

    r = (rng.random((40, 9)) < 0.4).astype(int)  # (P, G), correct samples anywhere in the group
    for k in (1, 2, 4, 9):
        got = E.passk_advantages(r, k)
        for p in range(r.shape[0]):
            n, c = r.shape[1], int(r[p].sum())
            rho = 1 - comb(n - c, k) / comb(n, k)
            if rho in (0.0, 1.0):
                np.testing.assert_array_equal(got[p], 0.0)
                continue
            sigma = np.sqrt(rho * (1 - rho))
            a_pos = (1 - rho) / sigma
            a_neg = (1 - rho - comb(n - c - 1, k - 1) / comb(n - 1, k - 1)) / sigma
            np.testing.assert_allclose(got[p], np.where(r[p] == 1, a_pos, a_neg), rtol=1e-10,
                                       atol=1e-12)


def test_passk_k1_is_grpo_with_population_std():
    r = np.array([[1, 0, 0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0]])
    np.testing.assert_allclose(E.passk_advantages(r, 1),
                               E.grpo_advantages(r, std="population", eps=0.0), rtol=1e-12)


def test_passk_rho_matches_core_pass_at_k():
    from rlvr_boundary.core.passk import pass_at_k

    n = 64
    c = np.array([0, 1, 2, 10, 32, 63, 64])
    for k in (1, 5, 16, 64):
        rho = -np.expm1(E.log_all_fail(n, c, k))
        np.testing.assert_allclose(rho, pass_at_k(np.full(c.size, n), c, [k])[:, 0], rtol=1e-13,
                                   atol=1e-15)


def test_passk_stays_finite_and_relatively_exact_for_huge_groups():
    # n = 4000, c = 2000, k = 1000: the failure probability is ~1e-300, far below
    # what 1 - pass@k can resolve; A+ = sqrt(q / rho) must still be exact.
    n, c, k = 4000, 2000, 1000
    r = np.zeros((1, n))
    r[0, :c] = 1
    a = E.passk_advantages(r, k)[0]
    from scipy.special import gammaln

    logq = (gammaln(n - c + 1) - gammaln(n - c - k + 1)) - (gammaln(n + 1) - gammaln(n - k + 1))
    assert np.all(np.isfinite(a))
    np.testing.assert_allclose(a[0], np.exp(0.5 * logq), rtol=1e-8)
    np.testing.assert_allclose(a[-1], -a[0], rtol=1e-12)  # c = n - c


def test_passk_refuses_non_binary_and_bad_k():
    with pytest.raises(ValueError, match="binary"):
        E.passk_advantages([[0.5, 1.0]], 1)
    with pytest.raises(ValueError, match="k must be"):
        E.passk_advantages([[0, 1]], 3)
    with pytest.raises(ValueError, match="k must be"):
        E.passk_advantages([[0, 1]], 0)


def test_grpo_known_values():
    # rewards 1, 0, 0, 0: mean .25, sample std .5 -> (.75/.5, -.25/.5)
    a = E.grpo_advantages([[1, 0, 0, 0]], eps=0.0)
    np.testing.assert_allclose(a, [[1.5, -0.5, -0.5, -0.5]])
    # population std sqrt(.1875)
    a = E.grpo_advantages([[1, 0, 0, 0]], std="population", eps=0.0)
    np.testing.assert_allclose(a[0, 0], 0.75 / np.sqrt(0.1875))
    np.testing.assert_array_equal(E.grpo_advantages([[1, 1, 1]]), 0.0)


def test_rloo_is_leave_one_out():
    rng = np.random.default_rng(1)
    r = rng.normal(size=(5, 6))
    ref = np.array([[r[p, i] - np.delete(r[p], i).mean() for i in range(6)] for p in range(5)])
    np.testing.assert_allclose(E.rloo_advantages(r), ref, rtol=1e-12)


def test_dr_grpo_and_remax():
    r = np.array([[1.0, 0.0, 0.5], [0.2, 0.4, 0.0]])
    np.testing.assert_allclose(E.dr_grpo_advantages(r), r - r.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(E.remax_advantages(r, [1.0, 0.0]), [[0, -1, -0.5], [0.2, 0.4, 0]])
    with pytest.raises(ValueError, match="greedy_rewards"):
        E.remax_advantages(r, [1.0])


def test_reinforce_pp_whitens_per_token_like_verl():
    rng = np.random.default_rng(2)
    r = rng.integers(0, 2, size=(3, 4)).astype(float)
    lengths = rng.integers(1, 7, size=(3, 4))
    # Reference: expand every sequence into its tokens, whiten the token list (Bessel).
    tokens = np.repeat(r.reshape(-1), lengths.reshape(-1))
    mean, var = tokens.mean(), tokens.var(ddof=1)
    ref = (r - mean) / np.sqrt(var + 1e-8)
    np.testing.assert_allclose(E.reinforce_pp_advantages(r, token_counts=lengths), ref, rtol=1e-12)
    centered = r - r.mean(axis=1, keepdims=True)
    tokens = np.repeat(centered.reshape(-1), lengths.reshape(-1))
    ref = (centered - tokens.mean()) / np.sqrt(tokens.var(ddof=1) + 1e-8)
    np.testing.assert_allclose(E.reinforce_pp_baseline_advantages(r, token_counts=lengths), ref,
                               rtol=1e-12)


def test_group_estimators_refuse_groups_of_one_and_bad_input():
    for fn in (E.grpo_advantages, E.dr_grpo_advantages, E.rloo_advantages,
               E.reinforce_pp_baseline_advantages):
        with pytest.raises(ValueError, match="at least 2"):
            fn([[1.0], [0.0]])
    with pytest.raises(ValueError, match="finite"):
        E.grpo_advantages([[1.0, np.nan]])
    with pytest.raises(ValueError, match="shape"):
        E.grpo_advantages([1.0, 0.0])
    with pytest.raises(ValueError, match="unknown estimator"):
        E.compute_advantages("ppo", [[1.0, 0.0]])


rewards_pg = hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 9)),
                        elements=st.floats(-5, 5, allow_nan=False, width=32))
binary_pg = hnp.arrays(np.int64, st.tuples(st.integers(1, 6), st.integers(2, 12)),
                       elements=st.integers(0, 1))


@settings(max_examples=150, deadline=None)
@given(rewards_pg, st.sampled_from(["sample", "population"]))
def test_grpo_group_advantages_sum_to_zero(r, std):
    a = E.grpo_advantages(r, std=std)
    scale = np.abs(r).max() + 1.0
    # rounding of the centered sum (~1e-16 * scale * G) divided by at least eps = 1e-6
    np.testing.assert_allclose(a.sum(axis=1), 0.0, atol=1e-9 * scale * r.shape[1])
    # a z-score with the sample std is at most (G - 1)/sqrt(G) in size (Samuelson)
    g = r.shape[1]
    bound = (g - 1) / np.sqrt(g) if std == "sample" else np.sqrt(g - 1)
    assert np.all(np.abs(a) <= bound + 1e-9)


@settings(max_examples=150, deadline=None)
@given(rewards_pg)
def test_centered_estimators_sum_to_zero(r):
    for fn in (E.dr_grpo_advantages, E.rloo_advantages):
        np.testing.assert_allclose(fn(r).sum(axis=1), 0.0, atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(binary_pg, st.data())
def test_passk_group_advantages_sum_to_zero_and_signs(r, data):
    k = data.draw(st.integers(1, r.shape[1]))
    a = E.passk_advantages(r, k)
    np.testing.assert_allclose(a.sum(axis=1), 0.0, atol=1e-9)
    assert np.all(a[r == 1] >= 0) and np.all(a[r == 0] <= 0)
