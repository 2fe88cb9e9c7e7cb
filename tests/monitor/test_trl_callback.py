"""The TRL callback on a real GRPO run on CPU: metrics reach TensorBoard, W&B and trackio,
equal an offline ``compare`` of the saved samples, and the stop rule ends the run.

Each run is a subprocess (tests/monitor/trl_run.py) with its own W&B (offline) and
trackio (local) folders. What is read back is read with each tool's own reader:
TensorBoard's ``EventAccumulator``, trackio's ``SQLiteStorage``, and for W&B the
protobuf records of its ``.wandb`` file (the record framing is read here; wandb
0.31 ships no Python reader for it).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("tensorboard")

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent
STEPS = [2, 4, 6]


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "TRACKIO_"))}
    (tmp / "home").mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(tmp / "home"), TENSORBOARD_LOGGING_DIR=str(tmp / "tb"),
               WANDB_MODE="offline", WANDB_DIR=str(tmp), WANDB_SILENT="true",
               TRACKIO_DIR=str(tmp / "trackio"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(HERE.parents[1] / "src"),
                                           env.get("PYTHONPATH", "")]))
    return env


def _run(tmp: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, str(HERE / "trl_run.py"), str(tmp / "run"), *args],
                          capture_output=True, text=True, env=_env(tmp), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _tensorboard(folder: Path) -> dict[str, dict[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    ea.Reload()
    return {t: {e.step: e.value for e in ea.Scalars(t)} for t in ea.Tags()["scalars"]}


def _wandb_records(path: str):
    """Payloads of a .wandb file: a 7-byte header, then LevelDB-log framed records
    (32 KiB blocks; each chunk: crc32c, 2-byte length, type full/first/middle/last)."""
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B"
    pos, block, buf = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        length, typ = int.from_bytes(data[pos + 4:pos + 6], "little"), data[pos + 6]
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if typ == 1:
            yield chunk
        elif typ == 2:
            buf = chunk
        elif typ == 3:
            buf += chunk
        elif typ == 4:
            yield buf + chunk
        elif typ == 0:  # zero padding to the end of a block
            pos += (block - pos % block) % block


def _wandb(tmp: Path) -> dict[str, dict[int, float]]:
    from wandb.proto import wandb_internal_pb2 as pb

    files = glob.glob(str(tmp / "wandb" / "offline-run-*" / "run-*.wandb"))
    assert len(files) == 1, files
    out: dict[str, dict[int, float]] = {}
    for data in _wandb_records(files[0]):
        rec = pb.Record()
        rec.ParseFromString(data)
        if rec.WhichOneof("record_type") != "history":
            continue
        row = {(it.key or "/".join(it.nested_key)): json.loads(it.value_json)
               for it in rec.history.item}
        step = row.get("train/global_step")
        for k, v in row.items():
            if "boundary/" in k:
                out.setdefault(k, {})[int(step)] = v
    return out


def _trackio(tmp: Path) -> dict[str, dict[int, float]]:
    code = ("import json; from trackio.sqlite_storage import SQLiteStorage as S; "
            "print(json.dumps(S.get_logs('rlvr-monitor-test', 'monitor-test')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(tmp), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out: dict[str, dict[int, float]] = {}
    for row in json.loads(proc.stdout.strip().splitlines()[-1]):
        for k, v in row.items():
            if "boundary/" in k:
                out.setdefault(k, {})[int(row["train/global_step"])] = v
    return out


def _offline_compare(tmp: Path, step: int) -> dict:
    from rlvr_boundary.cli import main

    roll = tmp / "run" / "monitor" / "rollouts"
    out = tmp / f"compare-{step}.json"
    code = main(["compare", "--base", str(roll / "part-base.parquet"), "--rl",
                 str(roll / f"part-step-{step}.parquet"), "--bootstrap", "500", "--json", str(out)])
    assert code == 0
    return json.loads(out.read_text())


def test_grpo_run_logs_boundary_metrics_equal_to_offline_compare(tmp_path):
    pytest.importorskip("wandb")
    pytest.importorskip("trackio")
    got = _run(tmp_path, "--report", "tensorboard,wandb,trackio")
    assert got["global_step"] == 6 and got["looks"] == STEPS and got["alarms"] == []
    tb = _tensorboard(tmp_path / "tb")
    names = sorted(t for t in tb if t.startswith("train/boundary/"))
    assert "train/boundary/pass@k/1" in names and "train/boundary/price" in names
    # the scheduled steps, and only those, carry boundary metrics
    for t in names:
        assert set(tb[t]) <= set(STEPS), (t, tb[t])
    for t in ("train/boundary/pass@k/1", "train/boundary/D/8", "train/boundary/price",
              "train/boundary/band_upper/8", "train/boundary/SRR"):
        assert sorted(tb[t]) == STEPS, t
    checked = 0
    for step in STEPS:
        doc = json.loads((tmp_path / "run" / "monitor" / "steps" / f"step-{step}.json").read_text())
        ref = _offline_compare(tmp_path, step)
        base, rl = ref["models"]["base"], ref["models"]["rl"]
        assert (base, rl) == ("base", f"step-{step}")
        ks = ref["ks"]
        for k in (1, 2, 4, 8):
            j = ks.index(k)
            pairs = {"pass@k": ref["pass_at_k"][rl][j], "base_pass@k": ref["pass_at_k"][base][j],
                     "D": ref["diff"][j], "band_lower": ref["band"]["lower"][j],
                     "band_upper": ref["band"]["upper"][j]}
            for name, want in pairs.items():
                assert tb[f"train/boundary/{name}/{k}"][step] == pytest.approx(want, abs=1e-6)
                checked += 1
        assert tb["train/boundary/price"][step] == pytest.approx(ref["price"], abs=1e-6)
        assert tb["train/boundary/gain_budgets"][step] == len(ref["gain_budgets"])
        assert tb["train/boundary/loss_budgets"][step] == len(ref["loss_budgets"])
        if ref["k_star"] is None:
            assert step not in tb.get("train/boundary/k_star", {})
        else:
            assert tb["train/boundary/k_star"][step] == ref["k_star"]
        # the look's result holds compare's payload itself (same code, same seed: equal floats)
        for key in ("pass_at_k", "diff", "band", "k_star", "price", "price_k", "gain_budgets",
                    "loss_budgets", "verdict_per_k", "bootstrap_ci", "within_prompt_se"):
            assert doc["comparison"][key] == ref[key], key
    assert checked == 3 * 4 * 5
    # W&B (offline) and trackio (local) received the same numbers at the same steps
    wb, tr = _wandb(tmp_path), _trackio(tmp_path)
    for source in (wb, tr):
        assert set(source) == set(names)
        for t in names:
            assert set(source[t]) == set(tb[t]), t
            for step, v in tb[t].items():
                assert source[t][step] == pytest.approx(v, rel=1e-6, abs=1e-7), (t, step)


def test_stop_rule_ends_the_run_at_the_first_supported_loss(tmp_path):
    # The base solves every prompt at every budget; the tiny untrained policy does not, so
    # the band must support a loss at k >= 2 at the first look, and training stops there.
    got = _run(tmp_path, "--report", "tensorboard", "--base-all-correct",
               "--rule", "stop:loss>=2", "--rule", "save:loss>=2", "--max-steps", "8")
    assert got["looks"] == [2]
    assert got["global_step"] == 2  # not 8
    assert [(a["step"], a["rule"], a["action"]) for a in got["alarms"]] == \
        [(2, "stop:loss>=2", "stop"), (2, "save:loss>=2", "save")]
    # the save rule made the trainer write a checkpoint at that step (its own save is off)
    assert (tmp_path / "run" / "trainer" / "checkpoint-2" / "trainer_state.json").is_file()
    doc = json.loads((tmp_path / "run" / "monitor" / "steps" / "step-2.json").read_text())
    band = doc["rule_band"]
    assert band["alpha"] == pytest.approx(0.05 / 4)  # Bonferroni over max_steps // every looks
    ks = doc["comparison"]["ks"]
    assert any(k >= 2 and band["upper"][ks.index(k)] < 0 for k in ks)
    summary = json.loads((tmp_path / "run" / "monitor" / "monitor.json").read_text())
    assert summary["kind"] == "monitor-run"
    assert summary["first_alarm"]["step"] == 2 and summary["first_alarm"]["action"] == "stop"
    tb = _tensorboard(tmp_path / "tb")
    assert tb["train/boundary/alarm"] == {2: 1.0}
