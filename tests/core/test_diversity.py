"""Answer-level diversity at a fixed k: exact expectations against brute force."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.core import diversity as dv


def brute(labels: list, k: int) -> tuple[float, float, float]:
    """Mean over every k-subset of: #distinct, plug-in entropy, collision probability."""
    d = h = s = 0.0
    subsets = list(itertools.combinations(range(len(labels)), k))
    for sub in subsets:
        cnt = Counter(labels[i] for i in sub)
        d += len(cnt)
        h += -sum((m / k) * math.log(m / k) for m in cnt.values())
        s += sum((m / k) ** 2 for m in cnt.values())
    z = len(subsets)
    return d / z, h / z, s / z


def test_hand_example_three_classes():
    # sizes 3, 2, 1; k = 3: each class present w.p. 1 - C(6-m,3)/C(6,3) = .95, .8, .5
    assert dv.expected_distinct([3, 2, 1], 3) == pytest.approx(2.25)
    d, h, s = brute(list("aaabbc"), 3)
    out = dv.answer_diversity([3, 2, 1], 3)
    assert out["distinct"] == pytest.approx(d) and out["entropy"] == pytest.approx(h)
    assert out["inverse_simpson"] == pytest.approx(1 / s)
    assert out["exp_entropy"] == pytest.approx(math.exp(h))


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_exact_expectations_match_enumeration_of_k_subsets(sizes, data):
    labels = [a for a, m in enumerate(sizes) for _ in range(m)]
    n = len(labels)
    k = data.draw(st.integers(1, n))
    d, h, s = brute(labels, k)
    assert dv.expected_distinct(sizes, k) == pytest.approx(d, abs=1e-12)
    assert dv.expected_entropy(sizes, k) == pytest.approx(h, abs=1e-12)
    assert dv.expected_collision(sizes, k) == pytest.approx(s, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 30), min_size=1, max_size=6))
def test_k_equal_n_is_the_plug_in_and_k_one_is_trivial(sizes):
    m = np.array(sizes, dtype=float)
    p = m / m.sum()
    full = dv.answer_diversity(sizes)
    assert full["k"] == full["n"] == int(m.sum())
    assert full["distinct"] == pytest.approx(len(sizes))
    assert full["entropy"] == pytest.approx(float(-np.sum(p * np.log(p))), abs=1e-12)
    assert full["inverse_simpson"] == pytest.approx(float(1 / np.sum(p**2)))
    one = dv.answer_diversity(sizes, 1)
    assert one["distinct"] == pytest.approx(1.0) and one["entropy"] == pytest.approx(0.0, abs=1e-15)
    assert one["inverse_simpson"] == pytest.approx(1.0)


def test_unbiased_for_k_fresh_samples():
    """Averaged over every multinomial sample of size n, the k-subset statistics equal
    their values over k i.i.d. draws: sum_a 1 - (1 - p_a)^k, and 1/k + (1 - 1/k) sum p^2."""
    p = np.array([0.5, 0.3, 0.2])
    n, k = 5, 3
    e_distinct = e_coll = 0.0
    for m in itertools.product(range(n + 1), repeat=3):
        if sum(m) != n:
            continue
        prob = math.factorial(n) / math.prod(math.factorial(x) for x in m) * math.prod(
            pa**x for pa, x in zip(p, m))
        e_distinct += prob * dv.expected_distinct(list(m), k)
        e_coll += prob * dv.expected_collision(list(m), k)
    assert e_distinct == pytest.approx(float(np.sum(1 - (1 - p) ** k)), abs=1e-12)
    assert e_coll == pytest.approx(1 / k + (1 - 1 / k) * float(np.sum(p**2)), abs=1e-12)


def test_na_class_and_grouping():
    labels, counts = dv.answer_class_counts(["3", None, "3", "x", None, None])
    assert labels == [dv.NA, "3", "x"] and counts.tolist() == [3, 2, 1]
    many = dv.answer_diversity_many([counts, [4]], k=2)
    assert many["distinct"][1] == 1.0 and many["entropy"][1] == 0.0
    assert many["distinct"][0] == pytest.approx(dv.expected_distinct([3, 2, 1], 2))


def test_refusals():
    with pytest.raises(ValueError, match="1..n"):
        dv.expected_entropy([2, 1], 4)
    with pytest.raises(ValueError):
        dv.answer_diversity([0, 0])
    with pytest.raises(ValueError, match="integers"):
        dv.expected_distinct([1.5, 2])


def test_large_n_is_finite_and_within_bounds():
    rng = np.random.default_rng(0)
    sizes = rng.multinomial(100_000, rng.dirichlet(np.full(300, 0.3)))
    sizes = sizes[sizes > 0]
    for k in (1, 10, 5_000, 100_000):
        out = dv.answer_diversity(sizes, k)
        assert 1.0 - 1e-9 <= out["distinct"] <= min(sizes.size, k) + 1e-9
        assert 0.0 <= out["entropy"] <= math.log(min(sizes.size, k)) + 1e-9
        assert 1.0 - 1e-9 <= out["inverse_simpson"] <= min(sizes.size, k) + 1e-6
    # monotone in k: more draws, more distinct answers and more entropy
    ks = [2, 8, 32, 128]
    d = [dv.expected_distinct(sizes, k) for k in ks]
    h = [dv.expected_entropy(sizes, k) for k in ks]
    assert d == sorted(d) and h == sorted(h)
