"""Theory lab: hand examples, property tests, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rlvr_audit.cli import main
from rlvr_audit.theory import crossings as X
from rlvr_audit.theory import generators as G
from rlvr_audit.theory.frontier import best_at_floor, brute_force_best
from rlvr_audit.theory.grpo import GRPOSettings, matched_tilt, simulate_grpo, tv_to_tilt
from rlvr_audit.theory.model import entropy, mirror_descent, pass1, success, tilt
from rlvr_audit.theory.specialization import (
    dominance_margin,
    equalizing_weights_from_blocks,
    is_exclusive,
    three_by_three,
)
from rlvr_audit.theory.stiemke import alternative, check_direction, check_weights

matrices = st.integers(2, 4).flatmap(lambda S: st.integers(2, 6).flatmap(
    lambda Xn: arrays(np.float64, (S, Xn), elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.8, 1.0]))))


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_stiemke_exactly_one_side_with_verified_certificate(F):
    res = alternative(F)
    assert res["exactly_one"]
    if res["free_lunch"]:
        d = res["direction"]
        g = F.T @ d
        assert abs(d.sum()) < 1e-7 and g.min() > -1e-7 and g.max() > 1e-7
    else:
        w = res["weights"]
        assert w.min() > 0 and np.ptp(F @ w) < 1e-7


@settings(max_examples=60, deadline=None)
@given(matrices, st.floats(0.05, 3.0), st.integers(1, 30))
def test_tilt_equals_mirror_descent(F, eta, steps):
    pi0 = np.full(F.shape[0], 1 / F.shape[0])
    np.testing.assert_allclose(mirror_descent(pi0, F, eta, steps)[-1], tilt(pi0, F, eta * steps),
                               atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.0, 0.5, 0.9, 1.0]))
def test_frontier_lp_equals_brute_force(seed, tau):
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 4))
    F = np.round(rng.uniform(size=(S, 4)), 2)
    pi0 = rng.dirichlet(np.ones(S))
    lp = pass1(F, best_at_floor(F, pi0, tau))
    brute = brute_force_best(F, pi0, tau, grid=120 if S == 3 else 2000)
    assert lp >= brute - 1e-9  # the LP is the optimum
    assert lp - brute < 0.01  # and the grid gets close to it


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000))
def test_observed_crossings_never_exceed_the_bound(seed):
    rng = np.random.default_rng(seed)
    F, pi0 = list(G.GENERATORS.values())[seed % 6](rng)
    pi1 = tilt(pi0, F, float(rng.uniform(0.1, 80)))
    pb, pr = success(F, pi0), success(F, pi1)
    assert X.count_crossings(pb, pr) <= X.bound(pb, pr)


@pytest.mark.parametrize("m", range(1, 7))
def test_constructed_instances_cross_exactly_m_times(m):
    pb, pr = X.constructed(m, prompts=50_000)
    assert X.count_crossings(pb, pr) == m == X.bound(pb, pr)


def test_three_by_three_counterexample():
    F = three_by_three()
    for s in range(3):  # each strategy ranks first on some prompt
        assert np.any(F[s] > np.delete(F, s, axis=0).max(axis=0))
    assert check_direction(F, [-0.5, -0.5, 1.0])
    np.testing.assert_allclose(F.T @ np.array([-0.5, -0.5, 1.0]), [0.1, 0.1, 0.1])
    assert alternative(F)["free_lunch"]


def test_exclusive_and_dominant_have_no_free_lunch():
    rng = np.random.default_rng(0)
    for _ in range(30):
        F, _ = G.exclusive_blocks(rng)
        assert is_exclusive(F) and not alternative(F)["free_lunch"]
        Fd, _, blocks = G.dominant(rng, delta=0.1)
        assert dominance_margin(Fd, blocks) >= 0.1 - 1e-12
        assert check_weights(Fd, equalizing_weights_from_blocks(Fd, blocks))
        assert not alternative(Fd)["free_lunch"]


def test_strict_floor_gives_no_gain_under_specialization():
    rng = np.random.default_rng(1)
    F, pi0 = G.exclusive_blocks(rng)
    pi = best_at_floor(F, pi0, 1.0)
    assert abs(pass1(F, pi) - pass1(F, pi0)) < 1e-9
    assert pass1(F, best_at_floor(F, pi0, 0.0)) >= pass1(F, pi0)


def test_tilt_support_and_grpo_support():
    rng = np.random.default_rng(2)
    F, _ = G.uniform(rng, S=4, X=8)
    pi0 = np.array([0.5, 0.0, 0.5, 0.0])
    assert np.all(tilt(pi0, F, 100.0)[[1, 3]] == 0)
    pi = simulate_grpo(F, pi0, GRPOSettings(steps=30), rng)
    assert np.all(pi[[1, 3]] == 0) and abs(pi.sum() - 1) < 1e-12


def test_matched_tilt_has_the_target_entropy():
    rng = np.random.default_rng(3)
    F, pi0 = G.uniform(rng)
    target = entropy(pi0) * 0.6
    t, beta = matched_tilt(F, pi0, target)
    assert beta > 0 and entropy(t) == pytest.approx(target, abs=1e-8)
    # TV of the tilt to itself is 0.
    assert tv_to_tilt(F, pi0, t)["tv"] < 1e-6


def test_cli_verify_quick_and_diagnose(tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["theory", "verify", "--quick", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["failed"] == 0 and len(res["claims"]) == 11
    assert {c["status"] for c in res["claims"] if c["kind"] == "theorem"} == {"PASS"}
    m = tmp_path / "m.csv"
    m.write_text("strategy,pi0,x1,x2,x3\nspec1,0.4,1.0,0.0,0.6\nspec2,0.4,0.0,1.0,0.6\n"
                 "general,0.2,0.6,0.6,0.7\n")
    assert main(["theory", "diagnose", str(m), "--json", str(tmp_path / "d.json")]) == 0
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["free_lunch"] and check_direction(three_by_three(), d["direction"])
    assert main(["theory", "frontier", str(m), "--out", str(tmp_path / "f.png"),
                 "--json", str(tmp_path / "f.json")]) == 0
    f = json.loads((tmp_path / "f.json").read_text())
    assert f["frontier"][-1]["tau"] == 1.0 and (tmp_path / "f.png").stat().st_size > 1000
    bad = tmp_path / "bad.csv"
    bad.write_text("strategy,pi0,x1\na,0.5,1.2\nb,0.5,0.1\n")
    assert main(["theory", "diagnose", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err.replace("\n", "")
