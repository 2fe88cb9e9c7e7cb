"""Experiment 4 (entropy and support per checkpoint) and the lever options of ``lab run``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_boundary.lab.entropy import entropy_table, markdown, mixture_entropy, position_entropy


def test_mixture_entropy_closed_forms():
    assert mixture_entropy({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, ["a", "b", "c"]) == \
        pytest.approx(math.log(3))
    assert mixture_entropy({"a": 1.0, "b": 0.0}, ["a", "b"]) == 0.0
    # renormalised over the named strategies; missing shares count as 0
    assert mixture_entropy({"a": 0.25, "b": 0.25, "(none)": 0.5}, ["a", "b"]) == \
        pytest.approx(math.log(2))
    assert mixture_entropy({}, ["a"]) is None


def test_position_entropy_weights_correct_and_incorrect_by_count():
    tokens = {"entropy_by_position": {"m": {"correct": [1.0, None], "incorrect": [0.0, 2.0]}},
              "entropy_mean": {"m": {"correct": {"count": 3}, "incorrect": {"count": 1}}}}
    assert position_entropy(tokens, "m") == [pytest.approx(0.75), pytest.approx(2.0)]
    assert position_entropy(None, "m") is None


def _audit():
    sup = {"P": 5, "E": 1, "S": 2, "O": 0, "SRR": 5 / 7, "NDR": 1 / 6}
    return {"base": "base", "checkpoints": ["step-20", "step-10"], "ks": [1, 2, 4],
            "pass_at_k": {"base": [0.3, 0.5, 0.7], "step-10": [0.4, 0.5, 0.6],
                          "step-20": [0.5, 0.55, 0.6]},
            "tokens": None, "diversity": {"k": 4, "models": {m: {"entropy": e, "distinct": 2.0}
                                                              for m, e in (("base", 1.0),
                                                                           ("step-10", 0.5),
                                                                           ("step-20", 0.25))}},
            "support": {"problem": {"step-10": sup, "step-20": sup}, "answer": None},
            "strategies": {"strategies": ["x", "y", "(none)"], "models": {
                "base": {"shares": {"x": 0.5, "y": 0.5, "(none)": 0.0}},
                "step-10": {"shares": {"x": 1.0, "y": 0.0, "(none)": 0.0}},
                "step-20": {"shares": {"x": 0.75, "y": 0.25, "(none)": 0.0}}}}}


def test_entropy_table_orders_by_step_and_reads_each_section():
    t = entropy_table(_audit(), [{"step": 1, "reward": 0.5, "entropy": 0.2, "kl": 0.0}])
    assert [r["model"] for r in t["rows"]] == ["base", "step-10", "step-20"]
    assert [r["step"] for r in t["rows"]] == [0, 10, 20]
    assert [r["pass_at_K"] for r in t["rows"]] == [0.7, 0.6, 0.6]
    assert t["rows"][0]["problem"] is None and t["rows"][1]["problem"]["S"] == 2
    assert t["rows"][0]["strategy_entropy"] == pytest.approx(math.log(2))
    assert t["rows"][1]["strategy_entropy"] == 0.0
    assert t["rows"][2]["answer_entropy"] == 0.25 and t["rows"][0]["token_entropy"] is None
    assert t["training"] == [{"step": 1, "reward": 0.5, "entropy": 0.2}] and t["K"] == 4
    md = markdown(t)
    assert "| step-10 | 0.400 | 0.600 |" in md and "5 / 1 / 2 / 0" in md


@pytest.mark.slow
def test_entropy_table_of_the_shipped_example(tmp_path):
    """Real values of the shipped lab rollouts (seed 0), checked against the rollouts."""
    import pyarrow as pa

    from rlvr_boundary.cli import main
    from rlvr_boundary.examples import example_dir
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    out = tmp_path / "lab.html"
    assert main(["report", "--example", "lab", "--out", str(out), "--bootstrap", "200",
                 "--no-figures"]) == 0
    assert main(["lab", "entropy", str(out.with_suffix(".json")), "--out",
                 str(tmp_path / "e")]) == 0
    t = json.loads((tmp_path / "e" / "entropy.json").read_text())
    assert (tmp_path / "e" / "entropy.png").stat().st_size > 10_000
    rows = {r["model"]: r for r in t["rows"]}
    assert [r["model"] for r in t["rows"]] == ["base", "step-10", "step-20", "step-30", "step-40"]
    # strategy entropy from the rollouts by hand (add / mul / sub only)
    tab = pa.concat_tables(list(iter_rollout_batches(example_dir("lab")))).to_pandas()
    for m, r in rows.items():
        s = tab[(tab.model == m) & tab.strategy.isin(["add", "mul", "sub"])].strategy
        p = s.value_counts(normalize=True).to_numpy()
        assert r["strategy_entropy"] == pytest.approx(float(-(p * np.log(p)).sum()), abs=1e-12)
        ent = tab[tab.model == m].entropy_mean
        assert r["token_entropy"] == pytest.approx(float(ent.mean()), rel=1e-9)
    # measured: the strategy mixture collapses far more than the mean token entropy falls
    assert rows["base"]["strategy_entropy"] == pytest.approx(1.076, abs=1e-3)
    assert rows["step-40"]["strategy_entropy"] == pytest.approx(0.020, abs=1e-3)
    assert rows["base"]["token_entropy"] == pytest.approx(0.182, abs=1e-3)
    assert rows["step-40"]["token_entropy"] == pytest.approx(0.154, abs=1e-3)
    assert rows["step-40"]["entropy_by_position"][0] < 0.1 * rows["base"]["entropy_by_position"][0]
    assert [rows[m]["problem"]["S"] for m in ("step-10", "step-20", "step-30", "step-40")] == \
        [1, 23, 37, 40]
    assert all(rows[m]["problem"]["E"] == 0 for m in ("step-10", "step-20", "step-30", "step-40"))


def test_lever_options_reach_the_config():
    from rlvr_boundary.lab.config import LabConfig

    cfg = LabConfig.from_preset("full", rl_seed=3, group_size=16, sample="last")
    assert (cfg.seed, cfg.pretrain.seed, cfg.grpo.seed) == (0, 0, 3)
    assert cfg.grpo.group_size == 16 and cfg.sample == "last"
    default = LabConfig.from_preset("full", seed=2)
    assert (default.grpo.seed, default.grpo.group_size, default.sample) == (2, 8, "all")
    with pytest.raises(ValueError):
        LabConfig.from_preset("full", sample="some")


def test_copy_base_refuses_other_pretraining(tmp_path):
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.results import to_jsonable
    from rlvr_boundary.lab.model import COMPLETE
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.stages import copy_base

    import dataclasses

    src = tmp_path / "src"
    (src / "base").mkdir(parents=True)
    (src / "base" / COMPLETE).write_text("")
    (src / "base" / "model.safetensors").write_bytes(b"weights")
    cfg = LabConfig.from_preset("quick")
    (src / "lab_config.json").write_text(json.dumps(to_jsonable(dataclasses.asdict(cfg))))
    # another RL seed, estimator or sample mode: the same base, copied
    other_rl = LabConfig.from_preset("quick", rl_seed=5, sample="last", kl_coef=0.1)
    out = tmp_path / "out"
    out.mkdir()
    assert copy_base(other_rl, src, out / "base") is True
    assert (out / "base" / "model.safetensors").read_bytes() == b"weights"
    assert not (out / "base.tmp").exists()
    # another seed or pretraining: refused, nothing copied
    for bad in (LabConfig.from_preset("quick", seed=1), LabConfig.from_preset("full")):
        dest = tmp_path / f"bad{bad.seed}{bad.preset}"
        dest.mkdir()
        with pytest.raises(InputError, match="other options"):
            copy_base(bad, src, dest / "base")
        assert not (dest / "base").exists()
    with pytest.raises(InputError, match="finished base"):
        copy_base(cfg, tmp_path / "nowhere", tmp_path / "x" / "base")


@pytest.mark.parametrize("name", ["_manifest.json", "manifest.json"])
def test_copy_base_rollouts_reads_either_manifest_name(tmp_path, name):
    """A run folder's rollouts/_manifest.json, or rollouts/manifest.json in a folder of
    rlvr-boundary 0.1, says whether its base rollouts may be reused."""
    from rlvr_boundary.io.rollouts import sha256_of
    from rlvr_boundary.lab import versions as V
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.stages import copy_base_rollouts, options_json

    cfg = LabConfig.from_preset("quick")
    src, base = tmp_path / "src", tmp_path / "base"
    (src / "rollouts").mkdir(parents=True)
    base.mkdir()
    (base / "model.safetensors").write_bytes(b"weights")
    (src / "lab_config.json").write_text(json.dumps(options_json(cfg)))
    (src / "rollouts" / "part-base.parquet").write_bytes(b"a shard")
    (src / "rollouts" / name).write_text(json.dumps({
        "versions": V.installed(),
        "models": {"base": {"model_hash": sha256_of(base / "model.safetensors")}}}))
    rollouts = tmp_path / "out" / "rollouts"
    assert copy_base_rollouts(cfg, src, rollouts, base) is True
    assert (rollouts / "part-base.parquet").read_bytes() == b"a shard"
    (src / "rollouts" / name).unlink()  # no manifest: nothing to vouch for the shard
    assert copy_base_rollouts(cfg, src, tmp_path / "again" / "rollouts", base) is False


@pytest.mark.slow
@pytest.mark.torch
def test_lever_run_reuses_the_base_and_samples_only_the_last_checkpoint(tmp_path):
    """Two quick runs: the second copies the first's base and base rollouts (byte for byte),
    trains with another RL seed and samples the base and its last checkpoint only."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import pyarrow.parquet as pq

    from rlvr_boundary.cli import main

    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["lab", "run", "--preset", "quick", "--out", str(first)]) == 0
    assert main(["lab", "run", "--preset", "quick", "--out", str(second), "--base-from",
                 str(first), "--rl-seed", "1", "--sample", "last"]) == 0
    assert (second / "base" / "model.safetensors").read_bytes() == \
        (first / "base" / "model.safetensors").read_bytes()
    assert (second / "rollouts" / "part-base.parquet").read_bytes() == \
        (first / "rollouts" / "part-base.parquet").read_bytes()
    assert sorted(p.name for p in (second / "rollouts").glob("part-*.parquet")) == \
        ["part-base.parquet", "part-step-6.parquet"]
    assert json.loads((second / "timings.json").read_text())["pretrain"]["cpu_s"] < 5
    a = pq.read_table(first / "rollouts" / "part-step-6.parquet").column("text").to_pylist()
    b = pq.read_table(second / "rollouts" / "part-step-6.parquet").column("text").to_pylist()
    assert a != b  # another RL seed trained another policy
    doc = json.loads((second / "lab_result.json").read_text())
    assert doc["options"]["grpo"]["seed"] == 1 and doc["options"]["sample"] == "last"
    assert set(doc["pass_at_1_by_checkpoint"]) == {"base", "step-6"}
