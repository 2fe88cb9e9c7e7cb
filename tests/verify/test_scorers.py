"""Scorer sensitivity (analysis/scorers.py): per-scorer conclusions against brute force."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest

from rlvr_boundary.analysis.scorers import ScorerOptions, disagreement_by_type, scorer_sensitivity


def _passk_ref(n, c, k):
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def _case(seed=0, P=150, n=16):
    """Base solves many prompts rarely; RL solves fewer prompts often. The lenient scorer
    accepts one more completion on some prompts (a scorer that is right more often)."""
    rng = np.random.default_rng(seed)
    nn = np.full(P, n)
    cb = rng.binomial(n, 0.15, P)
    cr = np.where(rng.random(P) < 0.6, rng.binomial(n, 0.8, P), 0)
    bump = rng.random(P) < 0.3
    return {"strict": {"base": (nn, cb), "rl": (nn, cr)},
            "lenient": {"base": (nn, np.minimum(cb + bump, n)), "rl": (nn, np.minimum(cr + bump, n))}}


def test_per_scorer_curves_match_brute_force_and_robust_sets_are_intersections():
    counts = _case()
    res = scorer_sensitivity(counts, "base", "rl", ScorerOptions(bootstrap=500))
    ks = res["ks"]
    assert list(ks) == list(range(1, 17)) and res["n_prompts"] == 150
    for s, per_model in counts.items():
        for m, (n, c) in per_model.items():
            want = [np.mean([_passk_ref(int(a), int(b), int(k)) for a, b in zip(n, c)]) for k in ks]
            np.testing.assert_allclose(res["per_scorer"][s]["pass_at_k"][m], want, rtol=1e-12)
        d = res["per_scorer"][s]["pass_at_k"]["rl"] - res["per_scorer"][s]["pass_at_k"]["base"]
        np.testing.assert_allclose(res["per_scorer"][s]["diff"], d, atol=1e-12)
        neg = [int(k) for k, v in zip(ks, d) if v < 0]
        assert res["per_scorer"][s]["k_star"] == (neg[0] if neg else None)
        assert res["per_scorer"][s]["price"] == pytest.approx(max(0.0, -d.min()))
    both = [set(res["per_scorer"][s]["loss_budgets"]) for s in counts]
    assert res["robust"]["loss_budgets"] == sorted(both[0] & both[1])
    assert res["robust"]["loss_any"] == sorted(both[0] | both[1])
    assert res["robust"]["loss_depends_on_scorer"] == sorted((both[0] | both[1]) - (both[0] & both[1]))
    spread = np.abs(res["per_scorer"]["strict"]["pass_at_k"]["base"]
                    - res["per_scorer"]["lenient"]["pass_at_k"]["base"])
    np.testing.assert_allclose(res["pass_at_k_spread"]["base"], spread, atol=1e-12)
    # This case has a real loss at large k under both scorers: it survives either scorer.
    assert res["robust"]["first_loss_all"] is not None
    json.dumps(res, default=lambda a: a.tolist())  # JSON-ready (arrays as lists)


def test_identical_scorers_agree_on_everything():
    c = _case(1)["strict"]
    res = scorer_sensitivity({"a": c, "b": c}, "base", "rl", ScorerOptions(bootstrap=300))
    assert res["robust"]["k_star_agree"] and res["robust"]["loss_depends_on_scorer"] == []
    assert res["robust"]["loss_budgets"] == res["per_scorer"]["a"]["loss_budgets"]
    assert res["robust"]["price_range"][0] == res["robust"]["price_range"][1]
    assert float(np.max(res["pass_at_k_spread"]["rl"])) == 0.0


def test_a_loss_that_depends_on_the_scorer_is_reported_as_such():
    # Under 'strict' RL loses on every prompt at large k; 'lenient' accepts the base's near
    # misses as wrong too, so the RL loss vanishes there.
    P, n = 30, 8
    nn = np.full(P, n)
    strict = {"base": (nn, np.full(P, 2)), "rl": (nn, np.r_[np.full(20, 8), np.zeros(10, int)])}
    lenient = {"base": (nn, np.r_[np.full(20, 2), np.zeros(10, int)]),
               "rl": (nn, np.r_[np.full(20, 8), np.zeros(10, int)])}
    res = scorer_sensitivity({"strict": strict, "lenient": lenient}, "base", "rl",
                             ScorerOptions(bootstrap=400))
    assert res["per_scorer"]["strict"]["k_star"] is not None
    assert res["per_scorer"]["lenient"]["k_star"] is None
    assert not res["robust"]["k_star_agree"]
    assert res["robust"]["loss_budgets"] == []
    assert res["robust"]["loss_depends_on_scorer"] == res["per_scorer"]["strict"]["loss_budgets"]


def test_bad_inputs_are_refused():
    c = _case()
    with pytest.raises(ValueError, match="no counts"):
        scorer_sensitivity({"s": {"base": c["strict"]["base"]}}, "base", "rl")
    other = {"base": (np.full(150, 17), np.zeros(150, int)), "rl": c["strict"]["rl"]}
    with pytest.raises(ValueError, match="differ between scorers"):
        scorer_sensitivity({"a": c["strict"], "b": other}, "base", "rl")
    with pytest.raises(ValueError, match="budgets"):
        scorer_sensitivity(c, "base", "rl", ScorerOptions(ks=[1, 99]))
    with pytest.raises(ValueError, match="c <= n"):
        scorer_sensitivity({"a": {"base": ([2], [3]), "rl": ([2], [1])}}, "base", "rl")


def test_disagreement_by_type_counts_match_a_loop():
    rng = np.random.default_rng(3)
    N = 200
    types = rng.choice(["integer", "fraction", "pi"], N)
    a = rng.random(N) < 0.5
    b = np.where(rng.random(N) < 0.2, ~a, a)
    ex = [{"row": i} for i in range(N)]
    res = disagreement_by_type(types, {"mv": a, "canon": b}, reference="mv", examples=ex)
    assert res["overall"]["canon"]["disagree"] == int(np.sum(a != b))
    for ty in ("integer", "fraction", "pi"):
        m = types == ty
        st = res["by_type"][ty]["canon"]
        assert st["rows"] == int(m.sum()) and st["disagree"] == int(np.sum(a[m] != b[m]))
        assert st["only_reference"] == int(np.sum(a[m] & ~b[m]))
        assert st["only_other"] == int(np.sum(~a[m] & b[m]))
        assert st["rate"] == pytest.approx(st["disagree"] / st["rows"])
        for e in res["examples"][ty]["canon"]:
            assert types[e["row"]] == ty and e["mv"] != e["canon"]
        assert len(res["examples"][ty]["canon"]) == min(3, st["disagree"])
    with pytest.raises(ValueError, match="reference"):
        disagreement_by_type(types, {"a": a}, reference="mv")
