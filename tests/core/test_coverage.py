"""Coverage sets, intersections, 2x2 table, histograms and ranked changes (numpy only)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core import coverage as cov


def brute_solved(n: int, c: int, k: int, tau: float) -> bool:
    """Fraction of k-subsets of n samples (c correct) that contain a correct one, >= tau."""
    samples = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(any(samples[i] for i in s) for s in subsets)
    return Fraction(hits, len(subsets)) >= Fraction(tau).limit_denominator(10**9)


@st.composite
def counts_mp(draw, max_models=4, max_prompts=25, max_n=9):
    M = draw(st.integers(1, max_models))
    P = draw(st.integers(1, max_prompts))
    n = draw(st.integers(1, max_n))
    c = draw(st.lists(st.lists(st.integers(0, n), min_size=P, max_size=P), min_size=M, max_size=M))
    return np.full((M, P), n), np.array(c)


# ---------------------------------------------------------------- solved_at_k

def test_k_none_is_found_at_least_once_even_with_unequal_n():
    n = np.array([[4, 8, 2, 3]])
    c = np.array([[0, 1, 2, 0]])
    assert cov.solved_at_k(n, c).tolist() == [[False, True, True, False]]


@pytest.mark.parametrize("tau", [1e-9, 0.3, 0.95, 1.0])
def test_k_equal_n_is_c_at_least_one_for_any_tau(tau):
    n = np.full((2, 6), 5)
    c = np.array([[0, 1, 2, 3, 4, 5], [5, 0, 0, 1, 0, 2]])
    assert np.array_equal(cov.solved_at_k(n, c, k=5, tau=tau), c >= 1)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), data=st.data())
def test_rule_matches_enumeration_of_k_subsets(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    tau = data.draw(st.sampled_from([0.05, 0.5, 0.8, 0.95, 1.0]))
    got = bool(cov.solved_at_k([n], [c], k=k, tau=tau)[0, 0])
    assert got == brute_solved(n, c, k, tau)


@pytest.mark.parametrize("n, c, k, tau", [
    (20, 1, 19, 0.95),   # pass@19 = 19/20 exactly
    (12, 1, 6, 0.5),     # 1/2 exactly, computed as 0.49999999999999994
    (15, 2, 8, 0.8),     # 4/5 exactly, computed an ulp below
    (30, 1, 24, 0.8),
])
def test_estimate_exactly_at_the_threshold_counts_as_solved(n, c, k, tau):
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert exact == Fraction(tau).limit_denominator(100)  # truly on the boundary
    assert cov.solved_at_k([n], [c], k=k, tau=tau)[0, 0]
    assert not cov.solved_at_k([n], [c], k=k - 1, tau=tau)[0, 0]


def test_refuses_k_beyond_n_and_bad_tau():
    with pytest.raises(ValueError, match="no unbiased"):
        cov.solved_at_k(np.full((1, 3), 4), np.zeros((1, 3), int), k=5)
    with pytest.raises(ValueError, match="tau"):
        cov.solved_at_k([4], [1], k=2, tau=0.0)
    with pytest.raises(ValueError):
        cov.solved_at_k([4, 4], [5, 1])


# ---------------------------------------------------------------- intersections / Venn

SOLVED = np.array([
    # p0     p1     p2     p3     p4     p5     p6
    [True, True, False, False, True, False, True],   # A
    [True, False, True, False, True, False, True],   # B
    [False, False, False, False, True, True, True],  # C
])


def test_intersections_hand_example_sorted_and_named():
    rows = cov.intersections(SOLVED, ["A", "B", "C"])
    # ABC: p4, p6 (2); A: p1; B: p2; C: p5; AB: p0; none: p3
    assert rows[0] == cov.Intersection(0b111, ("A", "B", "C"), 2)
    # the count-1 patterns: by degree, then mask
    assert [(r.models, r.count) for r in rows[1:]] == [
        ((), 1), (("A",), 1), (("B",), 1), (("C",), 1), (("A", "B"), 1)]
    assert sum(r.count for r in rows) == SOLVED.shape[1]
    no_empty = cov.intersections(SOLVED, ["A", "B", "C"], include_empty=False)
    assert all(r.models for r in no_empty) and len(no_empty) == len(rows) - 1


@settings(max_examples=80, deadline=None)
@given(solved=st.integers(1, 4).flatmap(lambda M: st.lists(
    st.lists(st.booleans(), min_size=M, max_size=M), min_size=1, max_size=30)))
def test_intersections_partition_prompts_and_rebuild_inclusive_sets(solved):
    S = np.array(solved).T  # (M, P)
    M, P = S.shape
    rows = cov.intersections(S)
    assert sum(r.count for r in rows) == P
    assert len({r.mask for r in rows}) == len(rows)
    keys = [(-r.count, len(r.models), r.mask) for r in rows]
    assert keys == sorted(keys)
    for subset in range(1 << M):  # inclusive intersection = sum of exact patterns containing it
        direct = int(np.sum(np.all(S[[m for m in range(M) if (subset >> m) & 1]], axis=0)))
        rebuilt = sum(r.count for r in rows if r.mask & subset == subset)
        assert direct == rebuilt


def test_venn_two_and_three_sets_include_zero_regions():
    v2 = cov.venn_counts(SOLVED[:2], ["A", "B"])
    assert v2 == {(): 2, ("A",): 1, ("B",): 1, ("A", "B"): 3}
    v3 = cov.venn_counts(SOLVED, ["A", "B", "C"])
    assert len(v3) == 8 and v3[("A", "C")] == 0 and v3[("A", "B", "C")] == 2
    assert sum(v3.values()) == 7
    with pytest.raises(ValueError, match="2 or 3"):
        cov.venn_counts(np.vstack([SOLVED, SOLVED[:1]]))
    with pytest.raises(ValueError, match="distinct"):
        cov.venn_counts(SOLVED[:2], ["A", "A"])


def test_table_2x2_matches_venn_and_hand_counts():
    t = cov.table_2x2(SOLVED[0], SOLVED[1])
    assert t.tolist() == [[2, 1], [1, 3]]  # [base no: (R no, R yes)], [base yes: ...]
    v = cov.venn_counts(SOLVED[:2], ["b", "r"])
    assert (t[0, 0], t[0, 1], t[1, 0], t[1, 1]) == (v[()], v[("r",)], v[("b",)], v[("b", "r")])


# ---------------------------------------------------------------- histogram

def test_histogram_bins_in_exact_arithmetic():
    # 29/100 * 100 is 28.999999999999996 in floats; it belongs to [0.29, 0.30).
    h = cov.accuracy_histogram([100, 100, 100, 100], [0, 29, 100, 1], bins=100)
    counts = h["counts"][0]
    assert counts[0] == 1 and counts[-1] == 1
    assert counts[1 + 29] == 1 and counts[1 + 1] == 1
    assert counts.sum() == 4 and h["edges"].shape == (101,)


@settings(max_examples=60, deadline=None)
@given(data=counts_mp(), bins=st.integers(1, 7))
def test_histogram_rows_sum_to_P_and_bins_contain_their_values(data, bins):
    n, c = data
    counts = cov.accuracy_histogram(n, c, bins=bins)["counts"]
    assert counts.shape == (n.shape[0], bins + 2)
    assert np.all(counts.sum(axis=1) == n.shape[1])
    for m in range(n.shape[0]):
        expect = np.zeros(bins + 2, int)
        for ni, ci in zip(n[m], c[m]):
            a = Fraction(int(ci), int(ni))
            if a == 0:
                expect[0] += 1
            elif a == 1:
                expect[-1] += 1
            else:
                j = next(j for j in range(bins) if Fraction(j, bins) <= a < Fraction(j + 1, bins))
                expect[1 + j] += 1
        assert counts[m].tolist() == expect.tolist()


# ---------------------------------------------------------------- ranked changes

def test_rank_changes_orders_and_breaks_ties_by_id():
    n = [10] * 5
    cb = [5, 8, 2, 9, 6]
    cr = [3, 6, 4, 9, 9]          # deltas: -.2, -.2, +.2, 0, +.3
    ids = ["q3", "q1", "q9", "q0", "q2"]
    out = cov.rank_changes(n, cb, n, cr, prompt_ids=ids)
    assert out["regressions"]["index"].tolist() == [1, 0]  # tie -0.2: "q1" < "q3"
    assert np.allclose(out["regressions"]["delta"], [-0.2, -0.2])
    assert out["gains"]["index"].tolist() == [4, 2]
    assert np.allclose(out["gains"]["base"], [0.6, 0.2]) and np.allclose(out["gains"]["r"], [0.9, 0.4])
    no_ids = cov.rank_changes(n, cb, n, cr, top=1)
    assert no_ids["regressions"]["index"].tolist() == [0]  # tie broken by index
    assert no_ids["gains"]["index"].tolist() == [4]


def test_rank_changes_by_passk_uses_the_unbiased_estimate():
    n = [4, 4, 4]
    cb, cr = [1, 2, 0], [0, 4, 1]
    out = cov.rank_changes(n, cb, n, cr, k=2)
    # pass@2 with n = 4: c=0 -> 0, c=1 -> 1/2, c=2 -> 5/6, c=4 -> 1
    assert out["regressions"]["index"].tolist() == [0]
    assert out["regressions"]["delta"][0] == pytest.approx(-0.5)
    assert out["gains"]["index"].tolist() == [2, 1]
    assert np.allclose(out["gains"]["delta"], [0.5, 1 / 6])
    with pytest.raises(ValueError):
        cov.rank_changes(n, cb, n, cr, k=5)
