"""``rlvr-boundary watch``: checkpoint discovery, a live page that grows, a real restart."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.monitor.watch import Checkpoint, find_checkpoints, is_ready

ROOT = Path(__file__).resolve().parents[2]


def _hf(folder: Path, weights: str = "model.safetensors") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / weights).write_bytes(b"x")
    return folder


def test_checkpoint_names_layouts_and_readiness(tmp_path):
    run = tmp_path / "run"
    _hf(run / "checkpoint-20")
    _hf(run / "step-5")
    (run / "step-5" / "LAB_COMPLETE").write_text("ok\n")
    _hf(run / "global_step_10" / "actor" / "huggingface", "pytorch_model.bin")
    (run / "global_step_15" / "actor").mkdir(parents=True)  # FSDP shards only
    (run / "global_step_15" / "actor" / "model_world_size_1_rank_0.pt").write_bytes(b"x")
    _hf(run / "step-30.tmp")  # being written
    (run / "notes").mkdir()
    got = find_checkpoints(run)
    assert [(c.step, c.folder.name) for c in got] == [
        (5, "step-5"), (10, "global_step_10"), (15, "global_step_15"), (20, "checkpoint-20")]
    assert got[1].model == (run / "global_step_10" / "actor" / "huggingface").resolve()
    assert got[2].model is None and not is_ready(got[2], 0)
    assert is_ready(got[0], 1e9)  # the lab's completion marker
    now = time.time()
    assert not is_ready(got[3], 30, now=now)  # just written, no marker
    assert is_ready(got[3], 30, now=now + 31)
    (run / "checkpoint-20" / "trainer_state.json").write_text("{}")
    assert is_ready(Checkpoint(20, run / "checkpoint-20", run / "checkpoint-20"), 30, now=now)
    _hf(run / "step-20")
    with pytest.raises(InputError, match="several checkpoints of step 20"):
        find_checkpoints(run)
    with pytest.raises(InputError, match="not a folder"):
        find_checkpoints(tmp_path / "missing")


def _example():
    spec = importlib.util.spec_from_file_location("ex", ROOT / "examples/trl_shaped_grpo.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    return ex


def _wait_for(path: Path, ok, proc, timeout: float = 300.0) -> dict:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"watch exited with {proc.returncode}: "
                                 f"{proc.stderr.read()[-3000:]}")
        html = path.with_suffix(".html")
        if path.exists() and html.exists():  # the JSON is written first, then the page
            doc = json.loads(path.read_text())
            if ok(doc) and all(m in html.read_text() for m in doc["models"]):
                return doc
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {path}")


@pytest.mark.torch
def test_watch_grows_the_page_and_resumes_after_a_kill(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch

    from tests.monitor.watch_helpers import write_checkpoint

    ex = _example()
    tok = ex.build_tokenizer()
    base = ex.build_model(tok, seed=0)
    write_checkpoint(base, tok, tmp_path / "base", 0, marker=False)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": f"{a}+{b}", "prompt": f"{a} + {b} =",
                                           "answer": str(a + b)}) + "\n"
                               for a in range(4) for b in range(4)))
    run, out = tmp_path / "run", tmp_path / "watch"
    run.mkdir()

    def checkpoint(step):  # the base with its weights moved a little more at every step
        model = ex.build_model(tok, seed=0)
        with torch.no_grad():
            gen = torch.Generator().manual_seed(step)
            for p in model.parameters():
                p.add_(0.05 * step * torch.randn(p.shape, generator=gen))
        write_checkpoint(model, tok, run / f"checkpoint-{step}", step)

    cmd = [sys.executable, "-m", "rlvr_boundary.cli", "watch", str(run), "--base",
           str(tmp_path / "base"), "--prompts", str(prompts), "--verifier",
           "tests.monitor.watch_helpers:contains_gold", "--n", "4", "--max-new-tokens", "5",
           "--bootstrap", "200", "--out", str(out), "--settle", "1"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(cmd + ["--interval", "0.5"], env=env, cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        checkpoint(2)
        page = out / "report.json"
        doc = _wait_for(page, lambda d: "step-2" in d["models"], proc)
        assert doc["models"] == ["base", "step-2"]
        html1 = (out / "report.html").read_text()
        checkpoint(4)
        doc = _wait_for(page, lambda d: "step-4" in d["models"], proc)
        assert doc["models"] == ["base", "step-2", "step-4"]
        assert [r["step"] for r in doc["evolution"]["rows"]] == [0, 2, 4]  # the page grew
        html2 = (out / "report.html").read_text()
        assert "step-4" in html2 and "step-4" not in html1
    finally:
        proc.send_signal(signal.SIGKILL)  # a crash, not a clean exit
        proc.wait(timeout=60)
    stored = {f.name: f.stat().st_mtime_ns for f in (out / "rollouts").glob("part-*.parquet")}
    stored.update({f.name: f.stat().st_mtime_ns for f in (out / "steps").glob("*.json")})
    assert set(stored) == {"part-base.parquet", "part-step-2.parquet", "part-step-4.parquet",
                           "step-2.json", "step-4.json"}
    checkpoint(6)
    again = subprocess.run(cmd + ["--once"], env=env, cwd=ROOT, text=True, capture_output=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed: 2 checkpoint(s) already audited (steps 2, 4)" in again.stdout
    assert "sampling the base" not in again.stdout
    assert again.stdout.count("step 6: pass@1") == 1 and "step 2: pass@1" not in again.stdout
    for name, mtime in stored.items():  # nothing audited before the kill was redone
        path = out / ("steps" if name.endswith(".json") else "rollouts") / name
        assert path.stat().st_mtime_ns == mtime, name
    doc = json.loads(page.read_text())
    assert doc["models"] == ["base", "step-2", "step-4", "step-6"]
    look6 = json.loads((out / "steps" / "step-6.json").read_text())
    assert look6["look"] == 3 and look6["alpha_look"] == pytest.approx(0.05 / 12)  # open
    assert look6["comparison"]["diff"] == doc["comparisons"]["step-6"]["diff"]
