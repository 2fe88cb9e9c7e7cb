"""``plan``: allocation arithmetic, the two-stage estimate's unbiasedness, the search, its
bounds, and its own claim."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from rlvr_boundary.analysis import plan as pl
from rlvr_boundary.cli import main
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError


def _truth(P=300, seed=0):
    rng = np.random.default_rng(seed)
    pb = rng.beta(0.6, 0.9, P)
    pr = np.clip(pb + 0.12, 0, 1)  # a clear gain at k = 1
    return pb, pr


def test_allocation_keeps_total_and_floor():
    pb, pr = _truth(50)
    n = pl.allocation(pb, pr, [1, 4], total=50 * 16, k_max=4)
    assert n.sum() == 50 * 16 and n.min() >= 4
    # Prompts with rates near 0 or 1 carry little variance and get the floor.
    m = pl.allocation(np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.5, 1.0]), [1], 30, 1)
    assert m[1] == 28 and m[0] == m[2] == 1


def test_two_stage_estimate_is_unbiased():
    """Pilot allocates, stage two estimates: the mean of D-hat over repeats is the truth."""
    pb, pr = _truth(60, seed=1)
    ks = np.array([1, 4])
    truth = ((1 - (1 - pr[:, None]) ** ks) - (1 - (1 - pb[:, None]) ** ks)).mean(axis=0)
    rng = np.random.default_rng(2)
    est = []
    for _ in range(1500):
        cb0, cr0 = rng.binomial(8, pb), rng.binomial(8, pr)  # pilot
        n = pl.allocation(cb0 / 8, cr0 / 8, ks, total=60 * 8, k_max=4)  # pilot only allocates
        cb, cr = rng.binomial(n, pb), rng.binomial(n, pr)  # stage two
        est.append((pass_at_k(n, cr, ks) - pass_at_k(n, cb, ks)).mean(axis=0))
    est = np.array(est)
    se = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * se)


def test_pilot_model_keeps_the_pairing_and_draws_from_posteriors():
    """A pilot where the trained model never solves the prompts the base solves rarely: the
    simulated truths keep those pairs (base rate > 0, trained rate 0) together."""
    rng = np.random.default_rng(5)
    P = 400
    pb = np.where(np.arange(P) < 100, 0.1, 0.6)
    pr = np.where(np.arange(P) < 100, 0.0, 0.8)
    nn = np.full(P, 32)
    cb, cr = rng.binomial(nn, pb), rng.binomial(nn, pr)
    model = pl.pilot_model(nn, cb, nn, cr, draws=4, seed=0)
    assert model["weights"].shape == (41, 41) and model["draws"].shape == (4, 41, 41)
    assert model["weights"].sum() == pytest.approx(1.0)
    lost = []
    for _, idx, b, r in pl._truths(model, 8, P, seed=1):
        hard = idx < 100
        lost.append(np.mean(r[hard] < 0.005))
        assert np.mean(b[hard]) == pytest.approx(0.1, abs=0.03)
        assert np.mean(r[~hard]) == pytest.approx(0.8, abs=0.03)
    assert np.mean(lost) > 0.9
    # The same seed gives the same truths (every design is simulated on the same truths).
    a = [t[2] for t in pl._truths(model, 3, P, seed=2)]
    b = [t[2] for t in pl._truths(model, 3, P, seed=2)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_plan_options_refuse_bad_input():
    with pytest.raises(InputError, match="name a claim"):
        pl.PlanOptions()
    with pytest.raises(InputError, match="largest named budget"):
        pl.PlanOptions(loss_at=16, budgets=(8,))
    assert pl.PlanOptions(loss_at=16).budgets == ()
    with pytest.raises(InputError, match="between 1 and 4,096"):
        pl.PlanOptions(loss_at=1_000_000_000)
    with pytest.raises(InputError, match="--prompts must be between"):
        pl.PlanOptions(gain_at=1, prompts=1_000_000_000)
    with pytest.raises(InputError, match="--sims must be between"):
        pl.PlanOptions(gain_at=1, sims=1_000_000_000)
    with pytest.raises(InputError, match="above 65,536"):
        pl.PlanOptions(gain_at=1, budgets=(1, 1 << 20))


def test_plan_refuses_before_working_when_too_costly():
    """Memory and time are estimated before anything is fitted or simulated."""
    nb = np.full(50, 8)
    cb = np.arange(50) % 9
    t = time.perf_counter()
    with pytest.raises(InputError, match="pass@k values") as e:
        pl.plan_design(nb, cb, nb, cb, pl.PlanOptions(loss_at=4096, prompts=100_000))
    assert "MB" in str(e.value)
    with pytest.raises(InputError, match="would take about") as e:
        pl.plan_design(nb, cb, nb, cb, pl.PlanOptions(gain_at=1, prompts=100_000, sims=20_000))
    assert time.perf_counter() - t < 5
    cost = pl.estimate_cost(pl.PlanOptions(gain_at=1, sims=400), 300)
    assert cost["seconds"] < pl.MAX_SECONDS and cost["cells"] == 300


def test_allocated_design_is_offered_only_when_not_worse():
    rng = np.random.default_rng(6)
    pb, pr = _truth(200, seed=6)
    nb = np.full(200, 8)
    res = pl.plan_design(nb, rng.binomial(8, pb), nb, rng.binomial(8, pr),
                         pl.PlanOptions(gain_at=1, loss_at=4, budgets=(4, 8), sims=40))
    for row in res["designs"]:
        if row["allocated_offered"]:
            assert row["allocated"]["power"] >= row["uniform"]["power"]
    rec = res["recommended"]
    if rec is not None and rec["design"] == "allocated":
        row = next(r for r in res["designs"] if r["n"] == rec["n"])
        assert row["allocated_offered"]


def test_not_reachable_when_even_exact_curves_fall_short():
    """No difference at all: even unlimited samples certify nothing, and plan says so."""
    rng = np.random.default_rng(7)
    p = rng.beta(0.6, 0.9, 100)
    nb = np.full(100, 8)
    res = pl.plan_design(nb, rng.binomial(8, p), nb, rng.binomial(8, p),
                         pl.PlanOptions(gain_at=1, sims=30))
    assert res["reachable"] is False and res["recommended"] is None and res["designs"] == []
    assert res["unlimited"]["power"] < 0.8


@pytest.mark.slow
def test_plan_claim_is_reached_when_its_design_is_simulated_again():
    rng = np.random.default_rng(3)
    pb, pr = _truth(300, seed=3)
    nb = np.full(300, 16)
    cb, cr = rng.binomial(16, pb), rng.binomial(16, pr)
    opts = pl.PlanOptions(gain_at=1, power=0.8, sims=200, seed=0)
    res = pl.plan_design(nb, cb, nb, cr, opts)
    rec = res["recommended"]
    assert rec is not None and rec["power"] >= 0.8 - 3 * rec["mc_se"]
    # The truth: each prompt's posterior a point mass at its true rates.
    truth = {"grid": np.concatenate([pb, pr]), "lik_base": np.eye(600)[:300],
             "lik_rl": np.eye(600)[300:], "obs": np.arange(300), "draws": np.ones((1, 600, 600))}
    real = pl.simulate_power(truth, rec["n"], opts, seed=999, prompts=300)
    assert abs(real["power"] - rec["power"]) < 3 * np.hypot(real["mc_se"], rec["mc_se"]) + 0.05


def test_plan_cli(tmp_path, capsys):
    rng = np.random.default_rng(4)
    pb, pr = _truth(200, seed=4)
    for name, p in (("b", pb), ("r", pr)):
        c = rng.binomial(8, p)
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"id": f"q{i}", "n": 8, "c": int(ci)}) + "\n"
                    for i, ci in enumerate(c)))
    out = tmp_path / "plan.json"
    assert main(["plan", "--base", str(tmp_path / "b.jsonl"), "--rl", str(tmp_path / "r.jsonl"),
                 "--gain-at", "1", "--budgets", "1,4", "--sims", "30", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["kind"] == "plan" and r["options"]["gain_at"] == 1
    assert [d["n"] for d in r["designs"]] == [1, 4]
    text = " ".join(capsys.readouterr().out.split())
    assert "n = 1 per prompt: power" in text and "allocated: the same design here" in text
    assert "Recommended: uniform n = 4 samples per prompt" in text


def test_the_command_bounds_equal_the_simulation_bounds():
    """The flags of plan (declared without importing the simulation) refuse what it refuses."""
    from rlvr_boundary.analysis import plan as AP
    from rlvr_boundary.pipelines import plan as PP

    assert (PP.MAX_SIMS, PP.MAX_CLAIM_K, PP.MAX_PLANNED_PROMPTS) == (
        AP.MAX_SIMS, AP.MAX_BUDGET, AP.MAX_PROMPTS)
    assert PP.PlanOptions(gain_at=1).simulation().sims == AP.PlanOptions(gain_at=1).sims


def test_an_allocated_design_below_uniform_is_explained_not_offered():
    """The console never shows an allocated design with lower power as an option: it says
    it is not offered and why."""
    from rlvr_boundary.report.words import plan_design_line

    row = {"n": 16, "uniform": {"power": 0.62, "mc_se": 0.02},
           "allocated": {"power": 0.55, "mc_se": 0.02}, "allocated_n_range": [4, 40],
           "allocated_offered": False}
    line = plan_design_line(row)
    assert line == ("  n =    16 per prompt: power 0.62 +- 0.02 uniform; allocated (4-40 per "
                    "prompt) not offered, its power 0.55 is not above uniform")
    offered = plan_design_line({**row, "allocated": {"power": 0.7, "mc_se": 0.02},
                                "allocated_offered": True})
    assert offered.endswith(", 0.70 +- 0.02 allocated (4-40 per prompt)")
