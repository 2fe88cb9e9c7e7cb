"""The verl validation hook: an unbiased best@n, and the monitor's metrics in verl's dict.

The estimator is checked against enumeration of subsets; the hook against the real
verl 0.9.1 package: its legacy trainer's own ``_validate`` runs on CPU in a
subprocess that loads the hook through ``VERL_USE_EXTERNAL_MODULES`` (the rollout
engine is a stand-in), and verl's own ``bootstrap_metric`` shows the bias replaced.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError
from rlvr_boundary.monitor.verl import best_of_n, correctness, prompt_ids, unbiased_best_metrics

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("seed", range(6))
def test_best_of_n_is_the_mean_over_subsets(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(1, 8))
    v = rng.choice([0.0, 0.5, 1.0, -1.0, 2.5], size=N)
    for n in range(1, N + 1):
        subsets = list(itertools.combinations(v.tolist(), n))
        assert len(subsets) == math.comb(N, n)
        assert best_of_n(v, n) == pytest.approx(np.mean([max(s) for s in subsets]), abs=1e-12)
        assert best_of_n(v, n, worst=True) == pytest.approx(np.mean([min(s) for s in subsets]),
                                                            abs=1e-12)
    c = int(rng.integers(0, N + 1))
    binary = np.r_[np.ones(c), np.zeros(N - c)]
    np.testing.assert_allclose([best_of_n(binary, n) for n in range(1, N + 1)],
                               pass_at_k(np.array([N]), np.array([c]))[0], atol=1e-12)
    with pytest.raises(ValueError):
        best_of_n(v, N + 1)


def test_metrics_dict_rewrite_and_verdicts():
    sources = ["a"] * 8
    uids = ["u1"] * 4 + ["u2"] * 4
    infos = {"reward": [1, 0, 0, 0, 1, 1, 0, None], "pred": ["x"] * 8}
    d = {"val-core/a/reward/best@4/mean": 0.5, "val-core/a/reward/best@4/std": 0.1,
         "val-aux/a/reward/best@2/mean": 0.4, "val-aux/a/reward/worst@2/mean": 0.1,
         "val-aux/a/reward/worst@2/std": 0.2, "val-core/a/reward/mean@4": 0.375,
         "val-aux/a/reward/maj@2/mean": 0.3}
    got = unbiased_best_metrics(d, sources, uids, infos)
    # u1: 1 of 4 -> best@4 = 1; u2 has 3 scored samples, too few for best@4 (skipped)
    assert got["val-core/a/reward/best@4/mean"] == 1.0
    assert got["val-aux/a/reward/best@2/mean"] == pytest.approx(np.mean([0.5, 1.0]))
    assert got["val-aux/a/reward/worst@2/mean"] == pytest.approx(np.mean([0.0, 1 / 3]))
    assert "val-core/a/reward/best@4/std" not in got and "val-aux/a/reward/worst@2/std" not in got
    assert got["val-core/a/reward/mean@4"] == 0.375 and got["val-aux/a/reward/maj@2/mean"] == 0.3
    assert correctness({"acc": [True, 0.0, 1]}) == [True, False, True]
    assert correctness({"reward": [0, 1.0]}) == [False, True]
    assert correctness({"reward": [-1, 0.5]}, threshold=0.5) == [False, True]
    with pytest.raises(InputError, match="correct_threshold"):
        correctness({"reward": [-1, 1]})
    ids = prompt_ids(["q", "q", "r", "q", "q"], ["u1", "u1", "u2", "u3", "u3"])
    assert ids[0] == ids[1] and ids[3] == ids[4] == ids[0] + "#2" and ids[2] != ids[0]


def test_verl_bootstrap_is_biased_low_and_ours_is_not():
    metric_utils = pytest.importorskip("verl.trainer.ppo.metric_utils")
    [(mean, _)] = metric_utils.bootstrap_metric([1, 0, 0, 0], 4, [np.max], n_bootstrap=4000)
    assert mean == pytest.approx(1 - 0.75 ** 4, abs=0.025)  # 0.684
    assert best_of_n([1, 0, 0, 0], 4) == 1.0


@pytest.mark.torch
def test_real_verl_validation_with_the_hook(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("verl.trainer.ppo.ray_trainer")
    from rlvr_boundary.cli import main
    from rlvr_boundary.io.rollouts import reduce_counts

    env = dict(os.environ, VERL_USE_EXTERNAL_MODULES="rlvr_boundary.monitor.verl",
               RLVR_BOUNDARY_MONITOR=json.dumps({"bootstrap": 400,
                                                 "rules": ["stop:loss>=2", "save:loss>=2"]}),
               PYTHONPATH=os.pathsep.join([str(HERE.parents[1] / "src"),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HERE / "verl_run.py"), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["patched"]
    roll = tmp_path / "boundary" / "rollouts"
    # step 0 is the base: no boundary metrics; best@n is the unbiased pass@n of its samples
    assert not any(k.startswith("boundary/") for k in got["steps"]["0"])
    for step, label in (("0", "base"), ("2", "step-2"), ("4", "step-4")):
        ct = reduce_counts(roll / f"part-{label}.parquet")[label]
        curve = pass_at_k(ct.n, ct.c, np.arange(1, 9)).mean(axis=0)  # (8,)
        ours, verls = got["steps"][step], got["verl_own"][step]
        for n in (2, 4, 8):
            key = f"val-{'core' if n == 8 else 'aux'}/toy/acc/best@{n}/mean"
            assert ours[key] == pytest.approx(curve[n - 1], abs=1e-12)
            assert verls[key] < ours[key]  # the bootstrap with replacement is biased low
            assert key.replace("/mean", "/std") in verls
            assert key.replace("/mean", "/std") not in ours
        assert ours["val-core/toy/acc/mean@8"] == verls["val-core/toy/acc/mean@8"]
    # steps 2 and 4: the monitor's metrics equal an offline compare of the saved samples
    for step in (2, 4):
        out = tmp_path / f"c{step}.json"
        assert main(["compare", "--base", str(roll / "part-base.parquet"), "--rl",
                     str(roll / f"part-step-{step}.parquet"), "--bootstrap", "400",
                     "--json", str(out)]) == 0
        ref = json.loads(out.read_text())
        m = got["steps"][str(step)]
        for k in (1, 2, 4, 8):
            j = ref["ks"].index(k)
            assert m[f"boundary/pass@k/{k}"] == pytest.approx(ref["pass_at_k"][f"step-{step}"][j])
            assert m[f"boundary/D/{k}"] == pytest.approx(ref["diff"][j])
            assert m[f"boundary/band_upper/{k}"] == pytest.approx(ref["band"]["upper"][j])
        assert m["boundary/price"] == pytest.approx(ref["price"])
    # step 2 equals the base (no alarm); step 4 collapsed: the stop rule makes step 5 the last
    assert got["steps"]["2"]["boundary/alarm"] == 0.0
    assert got["steps"]["4"]["boundary/alarm"] == 1.0
    assert got["total_training_steps"] == {"0": 6, "2": 6, "4": 5}
    assert got["saves"] == [4]
    look = json.loads((tmp_path / "boundary" / "steps" / "step-4.json").read_text())
    assert look["looks"] == 3 and look["alpha_look"] == pytest.approx(0.05 / 3)  # 6 // test_freq 2
    assert [r["rule"] for r in look["fired"]] == ["stop:loss>=2", "save:loss>=2"]
