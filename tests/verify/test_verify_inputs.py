"""``verify`` on bad inputs: a clear error (exit 2), nothing overwritten, no blocked rerun.

Plus the resume property under real SIGKILLs (slow): a run killed again and
again finishes with every row graded once, equal to an uninterrupted run.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import read_rollouts


def _inputs(tmp_path: Path, n_prompts: int = 3, n: int = 2) -> tuple[Path, Path]:
    src = tmp_path / "raw.jsonl"
    src.write_text("".join(json.dumps({"prompt_id": f"p{p}", "model": "m", "sample_idx": i,
                                       "text": f"so \\boxed{{{p + i}}}"}) + "\n"
                           for p in range(n_prompts) for i in range(n)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"p{p}", "answer": str(p)}) + "\n"
                            for p in range(n_prompts)))
    return src, gold


def _run(args, capsys) -> tuple[int, str]:
    code = main(["verify", *map(str, args), "--backend", "canonical", "--workers", "1"])
    return code, " ".join(capsys.readouterr().err.split())


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_gold_path_that_is_a_directory(tmp_path, capsys):
    src, _ = _inputs(tmp_path)
    code, err = _run([src, "--gold", tmp_path, "--out", tmp_path / "o"], capsys)
    assert code == 2 and "is a directory; expected a gold file" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_gold_path_that_is_a_socket(tmp_path, capsys, suffix):
    src, _ = _inputs(tmp_path)
    sock_path = tmp_path / f"gold-socket{suffix}"
    with socket.socket(socket.AF_UNIX) as s:  # exists, is not a directory, cannot be opened
        s.bind(str(sock_path))
        code, err = _run([src, "--gold", sock_path, "--out", tmp_path / "o"], capsys)
    # Refused before it is opened: a socket cannot be read more than once.
    assert code == 2 and "is a socket, not a regular file" in err and str(sock_path) in err, err
    assert not (tmp_path / "o").exists()
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_gold_file_without_read_permission(tmp_path, capsys):
    src, gold = _inputs(tmp_path)
    gold.chmod(0)
    code, err = _run([src, "--gold", gold, "--out", tmp_path / "o"], capsys)
    assert code == 2 and "cannot read" in err and "Permission denied" in err


@pytest.mark.parametrize("which", ["input file", "gold file", "input directory", "inside input"])
def test_an_output_over_an_input_is_refused(tmp_path, capsys, which):
    src, gold = _inputs(tmp_path)
    if which == "input directory":
        shards = tmp_path / "graded"
        assert _run([src, "--gold", gold, "--out", shards], capsys)[0] == 0
        src, out = shards, shards
    elif which == "inside input":
        shards = tmp_path / "graded"
        assert _run([src, "--gold", gold, "--out", shards], capsys)[0] == 0
        src, out = shards, shards / "again"
    else:
        out = src if which == "input file" else gold.with_suffix(".jsonl")
    before = {p: _sha(p) for p in [src, gold] if p.is_file()} | {
        p: _sha(p) for p in (src.glob("*") if src.is_dir() else [])}
    code, err = _run([src, "--gold", gold, "--out", out], capsys)
    assert code == 2 and any(w in err for w in ("would overwrite the input", "is an input",
                                                "inside the input folder")), err
    assert before == {p: _sha(p) for p in before}


def test_a_run_that_failed_on_its_input_does_not_block_the_fixed_rerun(tmp_path, capsys):
    src, gold = _inputs(tmp_path)
    good = gold.read_text()
    gold.write_text(good.splitlines()[0] + "\n")  # p1 and p2 have no gold answer
    out = tmp_path / "graded"
    code, err = _run([src, "--gold", gold, "--out", out], capsys)
    assert code == 2 and "2 prompt id(s) have no gold entry" in err
    assert not out.exists()  # nothing graded: nothing left that looks like a resumable run
    gold.write_text(good)
    code, err = _run([src, "--gold", gold, "--out", out], capsys)
    assert code == 0, err
    assert read_rollouts(out).num_rows == 6
    # And into an existing empty directory: it stays, without a stale manifest.
    out2 = tmp_path / "given"
    out2.mkdir()
    gold.write_text(good.splitlines()[0] + "\n")
    assert _run([src, "--gold", gold, "--out", out2], capsys)[0] == 2
    assert out2.is_dir() and not (out2 / "_manifest.json").exists()
    gold.write_text(good)
    assert _run([src, "--gold", gold, "--out", out2], capsys)[0] == 0


def _shards(out: Path) -> int:
    return len(list(out.glob("part-*.parquet")))


def _kill_after_a_shard_lands(proc, out: Path, delay_fraction: float, hang_guard: float = 300):
    """SIGKILL ``proc`` while it grades a shard; False when it finished first.

    Keyed on progress, not on a clock: wait until a shard of this run lands (the
    directory holds one more ``part-*.parquet``), then wait ``delay_fraction`` of the
    time this run took to get there (start-up included), so the kill lands inside a
    later shard however fast or loaded the machine is. Nothing is killed once the run
    has finished.
    """
    t0, start = time.monotonic(), _shards(out)
    while _shards(out) == start:
        if proc.poll() is not None or time.monotonic() - t0 > hang_guard:
            return False
        time.sleep(0.005)
    if (out / "_COMPLETE").exists():
        return False
    time.sleep(delay_fraction * (time.monotonic() - t0))
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    return True


@pytest.mark.slow
def test_sigkill_resume_grades_every_row_once(tmp_path):
    """Kill verify with SIGKILL mid-shard, again and again; the rerun finishes with every row once."""
    import random

    n_prompts, n = 2500, 8  # 20,000 rows: five shards of 4096
    src, gold = _inputs(tmp_path, n_prompts, n)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    cmd = [sys.executable, "-m", "rlvr_boundary.cli", "verify", str(src), "--gold", str(gold),
           "--backend", "canonical", "--workers", "2"]
    ref = tmp_path / "ref"
    subprocess.run(cmd + ["--out", str(ref)], env=env, check=True, capture_output=True,
                   timeout=300)
    out = tmp_path / "killed"
    rng = random.Random(0)
    kills = 0
    # Each run is killed inside the shard after the first one it writes: the first right as
    # that shard starts, the others a random way into it. Three kills leave two shards.
    for fraction in (0.0, rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5)):
        proc = subprocess.Popen(cmd + ["--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            kills += _kill_after_a_shard_lands(proc, out, fraction)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(60)
    subprocess.run(cmd + ["--out", str(out)], env=env, check=True, capture_output=True,
                   timeout=300)
    assert kills >= 1
    got, want = read_rollouts(out), read_rollouts(ref)
    key = lambda t: sorted(zip(t["prompt_id"].to_pylist(), t["sample_idx"].to_pylist(),  # noqa: E731
                               t["correct"].to_pylist(), t["answer"].to_pylist()))
    assert got.num_rows == n_prompts * n
    assert key(got) == key(want)
