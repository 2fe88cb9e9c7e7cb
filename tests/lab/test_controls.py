"""The controls (random template, temperature matching) and the cue view, against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.lab import controls as C
from rlvr_boundary.lab import task as T
from rlvr_boundary.lab.strategy import cue_view


def test_random_template_rows_are_faithful_and_uniform():
    problems = T.make_problems(200, np.random.default_rng(3), cued=True)
    rows = C.random_template_rows(problems, 30, seed=1)
    assert len(rows) == 200 * 30
    names = list(T.STRATEGIES)
    for r in rows[::7]:
        p = T.problem_of_id(r["prompt_id"])
        assert r["text"] == T.trace(p, r["strategy"])  # a faithful trace of its strategy
        assert r["correct"] == bool(T.fitness(p)[names.index(r["strategy"])])
    share = {s: np.mean([r["strategy"] == s for r in rows]) for s in names}
    assert all(abs(v - 1 / 3) < 0.02 for v in share.values())  # 6,000 draws: sd 0.006
    # its pass@1 estimates the exact value mean_x (1/3) sum_s F[s, x]
    exact = C.random_template_pass1(problems)
    assert exact == pytest.approx(np.mean([T.fitness(p).mean() for p in problems]))
    assert np.mean([r["correct"] for r in rows]) == pytest.approx(exact, abs=0.02)
    # seeded per (problem index, sample): the same rows again, other rows for another seed
    a = C.random_template_rows(problems[:20], 8, seed=1)
    assert a == C.random_template_rows(problems[:20], 8, seed=1)
    assert a != C.random_template_rows(problems[:20], 8, seed=2)


@settings(max_examples=60, deadline=None)
@given(target=st.floats(0.0, 1.0), slope=st.floats(0.2, 3.0))
def test_match_temperature_finds_the_crossing_of_a_decreasing_curve(target, slope):
    def f(t):  # decreasing in t on [0.1, 1]
        return 1.0 / (1.0 + slope * t)

    got = C.match_temperature(f, target, iterations=12)
    lo, hi = C.TEMPERATURE_RANGE
    assert [x["temperature"] for x in got["trace"]][:1] == [hi]
    if f(hi) >= target:
        assert got["temperature"] == hi and got["reached"]
    elif f(lo) < target:
        assert got["temperature"] == lo and not got["reached"]
    else:
        assert got["reached"] and got["pass_at_1"] >= target
        exact = (1 / target - 1) / slope  # f(exact) = target
        assert got["temperature"] <= exact + 1e-12
        assert exact - got["temperature"] <= (hi - lo) / 2 ** 12 + 1e-12
    assert got["pass_at_1"] == f(got["temperature"])


def _mi_loops(cues, strategies) -> float:
    """I(cue; strategy) in nats by plain counting over samples."""
    n = len(cues)
    joint, a, b = {}, {}, {}
    for c, s in zip(cues, strategies):
        joint[(c, s)] = joint.get((c, s), 0) + 1
        a[c] = a.get(c, 0) + 1
        b[s] = b.get(s, 0) + 1
    return sum(v / n * math.log(v * n / (a[c] * b[s])) for (c, s), v in joint.items())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2)), min_size=1, max_size=200),
       st.lists(st.integers(0, 2), min_size=6, max_size=6))
def test_cue_view_matches_sample_loops(samples, cue_of_prompt):
    """Samples (prompt, strategy index); prompts 0..5 with a cue each."""
    counts = np.zeros((6, 3))
    for x, s in samples:
        counts[x, s] += 1
    v = cue_view(cue_of_prompt, counts)
    cues = [cue_of_prompt[x] for x, _ in samples]
    strat = [s for _, s in samples]
    assert v["following"] == pytest.approx(np.mean([c == s for c, s in zip(cues, strat)]))
    assert v["mutual_information"] == pytest.approx(_mi_loops(cues, strat), abs=1e-12)
    pi = np.bincount(strat, minlength=3) / len(strat)
    assert v["blind"] == pytest.approx(np.mean([pi[c] for c in cues]))
    names = list(T.STRATEGIES)
    for c, mix in v["by_cue"].items():
        sel = [s for cc, s in zip(cues, strat) if names[cc] == c]
        assert mix == pytest.approx({names[s]: sel.count(s) / len(sel) for s in range(3)})


def test_cue_view_extremes():
    cue = [0, 1, 2, 0]
    blind = np.tile([5.0, 3.0, 2.0], (4, 1))  # the same mixture whatever the cue
    v = cue_view(cue, blind)
    assert v["mutual_information"] == pytest.approx(0.0, abs=1e-12)
    assert v["following"] == pytest.approx(v["blind"])
    follow = np.eye(3)[cue] * 10  # always the cued strategy
    v = cue_view(cue, follow)
    assert v["following"] == 1.0
    p = np.array([0.5, 0.25, 0.25])
    assert v["mutual_information"] == pytest.approx(float(-(p * np.log(p)).sum()))
    assert cue_view(cue, np.zeros((4, 3)))["following"] is None
