"""``plan``: allocation arithmetic, the two-stage estimate's unbiasedness, and its own claim."""

from __future__ import annotations

import json

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


@pytest.mark.slow
def test_plan_claim_is_reached_when_its_design_is_simulated_again():
    rng = np.random.default_rng(3)
    pb, pr = _truth(300, seed=3)
    nb = np.full(300, 16)
    cb, cr = rng.binomial(16, pb), rng.binomial(16, pr)
    opts = pl.PlanOptions(gain_at=1, power=0.8, budgets=(1, 2, 4, 8), sims=200, seed=0)
    res = pl.plan_design(nb, cb, nb, cr, opts)
    rec = res["recommended"]
    assert rec is not None and rec["power"] >= 0.8
    powers = [r["uniform"]["power"] for r in res["designs"]]
    assert powers[-1] >= powers[0]
    # Simulate the recommended design afresh (other seed) from the same fitted rates.
    sb, sr = pl.posterior_sampler(nb, cb), pl.posterior_sampler(nb, cr)
    again = pl.simulate_power(sb, sr, rec["n"], opts, seed=12345, prompts=300)
    assert abs(again["power"] - rec["power"]) < 3 * np.hypot(again["mc_se"], rec["mc_se"]) + 0.02
    # And from the true rates (each prompt's posterior a point mass at its true rate):
    # the claim holds up to Monte Carlo error and the pilot's fit error.
    eye = np.eye(300)
    truth = pl.simulate_power((pb, eye), (pr, eye), rec["n"], opts, seed=999, prompts=300)
    assert truth["power"] >= rec["power"] - 3 * np.hypot(truth["mc_se"], rec["mc_se"]) - 0.05


def test_plan_options_refuse_bad_input():
    with pytest.raises(InputError, match="name a claim"):
        pl.PlanOptions()
    with pytest.raises(InputError, match="largest named budget"):
        pl.PlanOptions(loss_at=16, budgets=(8,))
    assert pl.PlanOptions(loss_at=16).budgets == (16, 32, 64, 128)


def test_plan_cli(tmp_path):
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
