"""Support dynamics (Invisible Leash): SPEC vectors, the budget rule, both granularities."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from rlvr_boundary.examples import example_dir
from hypothesis import strategies as st

from rlvr_boundary.core import coverage as cov
from rlvr_boundary.core import support as sup

SPEC_VECTORS = [
    # (P, E, S, O) -> SRR, NDR, SDS, NSCR (SPEC section 2, to 3 decimals)
    ((15, 4, 4, 7), (0.789, 0.211, 0.332, 0.000)),
    ((17, 3, 2, 8), (0.895, 0.150, 0.257, 0.045)),
    ((138, 12, 34, 88), (0.802, 0.080, 0.145, -0.120)),
]


def counts_for_regions(P, E, S, O, n=8):
    """Per-prompt counts whose k = n regions are exactly P, E, S, O (shuffled)."""
    cb = [3] * P + [0] * E + [1] * S + [0] * O
    cr = [5] * P + [2] * E + [0] * S + [0] * O
    perm = np.random.default_rng(P + 7 * E).permutation(len(cb))
    return np.full(len(cb), n), np.array(cb)[perm], np.full(len(cb), n), np.array(cr)[perm]


@pytest.mark.parametrize("regions, expected", SPEC_VECTORS)
def test_spec_vectors_from_counts(regions, expected):
    m = sup.support_metrics(*regions)
    got = (m["SRR"], m["NDR"], m["SDS"], m["NSCR"])
    assert [round(x, 3) for x in got] == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.parametrize("regions, expected", SPEC_VECTORS)
def test_spec_vectors_end_to_end_from_per_prompt_counts(regions, expected):
    out = sup.problem_support(*counts_for_regions(*regions))
    assert (out["P"], out["E"], out["S"], out["O"]) == regions
    got = [round(out[key], 3) for key in ("SRR", "NDR", "SDS", "NSCR")]
    assert got == pytest.approx(list(expected), abs=1e-12)
    assert out["epsilon"] == pytest.approx(1 - 0.05 ** (1 / 8))
    assert sorted(out["region"].tolist()) == sorted("P" * regions[0] + "E" * regions[1]
                                                    + "S" * regions[2] + "O" * regions[3])


def test_zero_denominators_give_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        none = sup.support_metrics(0, 0, 0, 5)
        assert all(math.isnan(none[k]) for k in ("SRR", "NDR", "SDS", "NSCR"))
        only_r = sup.support_metrics(0, 3, 0, 1)   # base supports nothing
        assert math.isnan(only_r["SRR"]) and only_r["NDR"] == 1.0 and math.isnan(only_r["SDS"])
        assert only_r["NSCR"] == 1.0
        only_b = sup.support_metrics(0, 0, 2, 1)   # R supports nothing
        assert only_b["SRR"] == 0.0 and math.isnan(only_b["NDR"]) and only_b["NSCR"] == -1.0
        disjoint = sup.support_metrics(0, 2, 3, 0)  # SRR = 0, NDR = 1: harmonic mean 0
        assert disjoint["SDS"] == 0.0
    with pytest.raises(ValueError):
        sup.support_metrics(-1, 0, 0, 0)


def test_found_exactly_with_probability_one_minus_zeta_is_in_support():
    # n = 20, c = 1, k = 19: a random 19-subset misses the hit w.p. exactly 1/20.
    assert sup.in_empirical_support([20], [1], 19)[0]
    assert not sup.in_empirical_support([20], [1], 18)[0]


def test_epsilon_of_budget():
    assert sup.epsilon_for_budget(1) == pytest.approx(0.95)
    assert sup.epsilon_for_budget(64) == pytest.approx(1 - 0.05 ** (1 / 64), rel=1e-13)
    big = sup.epsilon_for_budget(10**9)
    assert big == pytest.approx(-math.log(0.05) / 1e9, rel=1e-8)  # no cancellation
    # calibration: an item at exactly epsilon is found in k draws with probability 1 - zeta
    for k in (1, 7, 256):
        eps = sup.epsilon_for_budget(k, zeta=0.1)
        assert 1 - (1 - eps) ** k == pytest.approx(0.9, rel=1e-12)
    with pytest.raises(ValueError):
        sup.epsilon_for_budget(4, zeta=1.0)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 8), data=st.data())
def test_membership_matches_enumerated_k_subsets(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    zeta = data.draw(st.sampled_from([Fraction(1, 20), Fraction(1, 5), Fraction(1, 2)]))
    samples = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    found = Fraction(sum(any(samples[i] for i in s) for s in subsets), len(subsets))
    got = bool(sup.in_empirical_support([n], [c], k, zeta=float(zeta))[0])
    assert got == (found >= 1 - zeta)
    if k == n:
        assert bool(sup.in_empirical_support([n], [c], k, zeta=zeta)[0]) == (c >= 1)


@st.composite
def paired_counts(draw):
    P = draw(st.integers(1, 30))
    n = draw(st.integers(1, 12))
    cb = draw(st.lists(st.integers(0, n), min_size=P, max_size=P))
    cr = draw(st.lists(st.integers(0, n), min_size=P, max_size=P))
    k = draw(st.one_of(st.none(), st.integers(1, n)))
    return np.full(P, n), np.array(cb), np.full(P, n), np.array(cr), k


@settings(max_examples=100, deadline=None)
@given(data=paired_counts(), zeta=st.sampled_from([0.05, 0.2]))
def test_coverage_and_support_agree_on_the_same_data(data, zeta):
    nb, cb, nr, cr, k = data
    out = sup.problem_support(nb, cb, nr, cr, k, zeta=zeta)
    solved = cov.solved_at_k(np.vstack([nb, nr]), np.vstack([cb, cr]), k, tau=1 - zeta)
    assert out["P"] + out["S"] == int(solved[0].sum())
    assert out["P"] + out["E"] == int(solved[1].sum())
    assert out["P"] + out["E"] + out["S"] + out["O"] == nb.size
    t = cov.table_2x2(solved[0], solved[1])
    assert (out["P"], out["E"], out["S"], out["O"]) == (t[1, 1], t[0, 1], t[1, 0], t[0, 0])


def test_unequal_n_with_k_none_has_no_single_epsilon():
    out = sup.problem_support([4, 8], [1, 0], [4, 8], [0, 3])
    assert out["epsilon"] is None and (out["P"], out["E"], out["S"], out["O"]) == (0, 1, 1, 0)
    with pytest.raises(ValueError, match="same prompts"):
        sup.problem_support([4], [1], [4, 4], [0, 0])


# ---------------------------------------------------------------- answer granularity

BASE = [{"a": 2, "b": 1}, {}]
RL = [{"a": 5}, {"c": 1}]


def test_answer_support_found_at_least_once():
    out = sup.answer_support(BASE, RL, [8, 8], [8, 8])
    assert list(zip(out["prompt"].tolist(), out["answer"], out["region"].tolist())) == [
        (0, "a", "P"), (0, "b", "S"), (1, "c", "E")]
    assert (out["P"], out["E"], out["S"], out["O"]) == (1, 1, 1, 0)
    assert out["SRR"] == 0.5 and out["NDR"] == 0.5 and out["NSCR"] == 0.0
    with_gold = sup.answer_support(BASE, RL, [8, 8], [8, 8], universe=[[], ["g"]])
    assert with_gold["O"] == 1 and with_gold["answer"] == ["a", "b", "c", "g"]


def test_answer_support_at_budget_below_n():
    # n = 8, k = 4: a class with m samples is found by a random 4-subset w.p.
    # 1 - C(8-m, 4)/70: m = 5 -> 1, m = 2 -> 0.786, m = 1 -> 0.5; threshold 0.95.
    out = sup.answer_support(BASE, RL, [8, 8], [8, 8], k=4)
    assert out["region"].tolist() == ["E", "O", "O"]
    assert (out["P"], out["E"], out["S"], out["O"]) == (0, 1, 0, 2)


def test_answer_support_accepts_multisets_and_refuses_bad_input():
    as_lists = sup.answer_support([["a", "b", "a"], []], [["a"] * 5, ["c"]], [8, 8], [8, 8])
    as_maps = sup.answer_support(BASE, RL, [8, 8], [8, 8])
    assert as_lists["region"].tolist() == as_maps["region"].tolist()
    with pytest.raises(ValueError, match="more correct answers"):
        sup.answer_support([["a"] * 5], [[]], [4], [4])
    with pytest.raises(ValueError, match="one entry per prompt"):
        sup.answer_support(BASE, RL[:1], [8, 8], [8, 8])
    with pytest.raises(TypeError, match="not a string"):
        sup.answer_support(["abc"], [[]], [4], [4])


def test_problem_and_answer_levels_agree_when_each_problem_has_one_correct_answer():
    nb, cb, nr, cr = counts_for_regions(17, 3, 2, 8)
    prob = sup.problem_support(nb, cb, nr, cr)
    ans = sup.answer_support([{"x": int(v)} for v in cb], [{"x": int(v)} for v in cr], nb, nr)
    # problems solved by neither have no observed class, so they drop out of O
    assert (ans["P"], ans["E"], ans["S"], ans["O"]) == (prob["P"], prob["E"], prob["S"], 0)
    assert ans["SRR"] == prob["SRR"] and ans["NSCR"] == prob["NSCR"]


# ---------------------------------------------------------------- expected regions

def test_expected_regions_match_enumeration_of_both_models_budgets():
    nb, cb = np.array([4, 4, 4]), np.array([1, 0, 3])
    nr, cr = np.array([4, 4, 4]), np.array([2, 1, 0])
    k = 2
    acc = np.zeros(4)  # P, E, S, O
    subs = list(itertools.combinations(range(4), k))
    for i in range(3):
        sb = [1] * cb[i] + [0] * (4 - cb[i])
        sr = [1] * cr[i] + [0] * (4 - cr[i])
        for a in subs:
            for b in subs:
                fb, fr = any(sb[j] for j in a), any(sr[j] for j in b)
                acc[[fb and fr, fr and not fb, fb and not fr, not fb and not fr].index(True)] += 1
    acc /= len(subs) ** 2
    out = sup.expected_support_regions(nb, cb, nr, cr, k)
    assert [out[x] for x in "PESO"] == pytest.approx(acc.tolist(), abs=1e-12)
    assert out["SRR"] == pytest.approx(acc[0] / (acc[0] + acc[2]))


@settings(max_examples=40, deadline=None)
@given(data=paired_counts())
def test_expected_regions_equal_the_rule_at_k_equal_n(data):
    nb, cb, nr, cr, _ = data
    n = int(nb[0])
    rule = sup.problem_support(nb, cb, nr, cr, n)
    expct = sup.expected_support_regions(nb, cb, nr, cr, n)
    assert [expct[x] for x in "PESO"] == [float(rule[x]) for x in "PESO"]
    assert sum(expct[x] for x in "PESO") == pytest.approx(nb.size)


# ---------------------------------------------------------------- real data

DEEPSCALER = example_dir("deepscaler32k")  # shipped in the package


def _load_counts(path: Path) -> dict[str, tuple[int, int]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["id"]: (r["n"], r["c"]) for r in rows}


def test_deepscaler_counts_reproduce_published_coverage():
    """Real counts (DeepScaleR-1.5B vs R1-Distill-1.5B, n = 128): the README of the data
    publishes pass@128 coverage 944/1060 (base) and 923/1060 (RL)."""
    b, r = _load_counts(DEEPSCALER / "base.jsonl"), _load_counts(DEEPSCALER / "rl.jsonl")
    ids = sorted(b)
    nb, cb = (np.array([b[i][j] for i in ids]) for j in (0, 1))
    nr, cr = (np.array([r[i][j] for i in ids]) for j in (0, 1))
    out = sup.problem_support(nb, cb, nr, cr)
    assert out["P"] + out["S"] == 944 and out["P"] + out["E"] == 923
    assert out["P"] + out["E"] + out["S"] + out["O"] == 1060
    assert out["NSCR"] < 0  # shrinkage outweighs expansion at the full budget
    # at k = 1 the empirical support needs pass@1 >= 0.95: every model "solves" only its easy set
    k1 = sup.problem_support(nb, cb, nr, cr, 1)
    assert k1["P"] + k1["S"] == int(np.sum(cb / nb >= 0.95 - 1e-12))
