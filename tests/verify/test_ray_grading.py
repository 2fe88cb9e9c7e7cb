"""Grading on a local Ray instance (2 CPUs, started and stopped here): the local pool's verdicts.

Math (right, wrong, no answer, parse failures, items killed at the hard timeout) and
code (passing, failing, a syntax error, an endless loop) are graded once by the
local pool and once on Ray; every verdict column must be equal and equal to the
statuses known for each row. A grading actor SIGKILLed mid-run (on progress, found
by its process title) still ends with every item in the output exactly once.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pyarrow as pa
import pytest

from rlvr_boundary.io.rollouts import read_rollouts, write_rollouts
from rlvr_boundary.pipelines.verify import VerifyOptions, verify_table
from rlvr_boundary.verify.math import MathOptions

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
psutil = pytest.importorskip("psutil")

RAW = ("prompt_id", "model", "sample_idx")
VERDICTS = ("correct", "verify_status", "answer")

# (gold, completion, correct, status): timeouts are the pool's hard kill (no inner timeout)
MATH = [
    ("3", "so \\boxed{3}", True, "ok"),
    ("3", "so \\boxed{4}", False, "ok"),
    ("1/2", "we get \\boxed{\\dfrac{1}{2}}", True, "ok"),
    ("1/2", "I cannot say.", False, "no_answer"),
    ("3", "Therefore \\boxed{", False, "no_answer"),
    ("3", "\\boxed{\\text{}}", False, "parse_fail"),
    ("3", "so \\boxed{$}", False, "parse_fail"),
    ("\\text{}", "so \\boxed{3}", False, "parse_fail"),
    ("3", "\\boxed{9^{9^{9^{9}}}}", False, "timeout"),
    # (3,000 nested braces was here: 18 s to parse on this machine, under 30 s on a faster
    # one, so its status hung on the machine; a tower of powers never finishes anywhere)
    ("3", "\\boxed{7^{7^{7^{7}}}}", False, "timeout"),
    ("3", "\udcff\udcfe \\boxed{3}", True, "ok"),
    ("10", "The answer is 10", True, "ok"),
]

CODE = [  # (completion, correct, status)
    ("def add(a, b):\n    return a + b", True, "ok"),
    ("def add(a, b):\n    return a * b", False, "ok"),
    ("def add(a, b) return", False, "ok"),
    ("def add(a, b):\n    while True:\n        pass", False, "timeout"),
    ("```python\ndef add(a, b):\n    return b + a\n```", True, "ok"),
]


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance with two worker CPUs, workers importing this source tree."""
    src = str(Path(__import__("rlvr_boundary").__file__).resolve().parents[1])
    pypath = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": pypath}})
    try:
        yield
    finally:
        ray.shutdown()


def _table(path: Path, gold_ids: list, texts: list) -> None:
    write_rollouts(pa.table({"prompt_id": gold_ids, "model": ["m"] * len(texts),
                             "sample_idx": list(range(len(texts))), "text": texts}),
                   path, required=RAW)


def _math_inputs(tmp_path: Path, repeat: int = 1):
    rows = MATH * repeat
    golds = sorted({g for g, *_ in MATH})
    ids = {g: f"g{i}" for i, g in enumerate(golds)}
    (tmp_path / "gold.jsonl").write_text("".join(
        json.dumps({"id": ids[g], "answer": g}) + "\n" for g in golds))
    src = tmp_path / "math.jsonl"  # JSONL keeps the lone surrogates
    src.write_text("".join(json.dumps({"prompt_id": ids[g], "model": "m", "sample_idx": i,
                                       "text": t}) + "\n" for i, (g, t, *_) in enumerate(rows)))
    return src, tmp_path / "gold.jsonl", rows


def _verdicts(path: Path) -> dict:
    t = read_rollouts(path)
    cols = [c for c in VERDICTS if c in t.column_names]
    keys = list(zip(*(t.column(c).to_pylist() for c in RAW)))
    assert len(keys) == len(set(keys)), "an item was written twice"
    return dict(zip(keys, zip(*(t.column(c).to_pylist() for c in cols))))


@pytest.mark.slow  # two Ray instances and 30 s hard timeouts
def test_math_on_ray_gives_the_local_verdicts(local_ray, tmp_path):
    src, gold, rows = _math_inputs(tmp_path)
    math = MathOptions(inner_timeout=None)  # only the hard kill stops sympy
    # The hard timeout leaves room for a loaded machine (6 s was reached by good items
    # beside a parallel test run at load 10): the two hung items time out whatever it is,
    # the others must not.
    local = VerifyOptions(timeout=30, batch_rows=5, math=math)
    on_ray = VerifyOptions(timeout=30, batch_rows=5, math=math, runner="ray", ray_block_rows=3)
    verify_table(src, gold, tmp_path / "local", local)
    summary = verify_table(src, gold, tmp_path / "ray", on_ray)
    a, b = _verdicts(tmp_path / "local"), _verdicts(tmp_path / "ray")
    assert a == b and len(b) == len(rows)
    ids = {g: f"g{i}" for i, g in enumerate(sorted({g for g, *_ in MATH}))}
    got = [b[(ids[g], "m", i)][:2] for i, (g, *_) in enumerate(rows)]
    assert got == [(c, s) for _, _, c, s in rows]
    assert summary["statuses"] == {"ok": 5, "no_answer": 2, "parse_fail": 3, "timeout": 2}
    assert summary["ray"]["runner"] == "ray" and summary["ray"]["duplicates_ignored"] == 0
    assert len(list((tmp_path / "ray").glob("part-*.parquet"))) == 3  # the local shards
    # a finished output is not graded again, by either runner
    assert verify_table(src, gold, tmp_path / "ray", local)["already_complete"]


@pytest.mark.slow  # two Ray instances and 30 s hard timeouts
def test_ray_resumes_a_local_run(local_ray, tmp_path):
    """Shards written by an interrupted local run are kept; Ray grades only the rest."""
    src, gold, rows = _math_inputs(tmp_path)
    math = MathOptions(backend="canonical")
    seen = []

    def stop_after_first_shard(k):  # the first shard is written before the second starts
        seen.append(k)
        if sum(seen) > 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        verify_table(src, gold, tmp_path / "out", VerifyOptions(timeout=30, batch_rows=5, math=math),
                     progress=stop_after_first_shard)
    assert len(list((tmp_path / "out").glob("part-*.parquet"))) == 1
    graded = []
    summary = verify_table(src, gold, tmp_path / "out",
                           VerifyOptions(timeout=30, batch_rows=5, math=math, runner="ray"),
                           progress=graded.append)
    verify_table(src, gold, tmp_path / "ref", VerifyOptions(timeout=30, batch_rows=5, math=math))
    assert _verdicts(tmp_path / "out") == _verdicts(tmp_path / "ref")
    assert summary["rows"] == len(rows) and sum(graded) == len(rows)  # 5 skipped + 7 graded
    assert graded[0] == 5  # the finished shard, counted without grading


def test_code_on_ray_gives_the_local_verdicts(local_ray, tmp_path):
    from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status

    if not isolation_status(SandboxOptions())["usable"]:
        pytest.skip("no sandbox that holds on this machine (bubblewrap and a cgroup)")
    src = tmp_path / "code.parquet"
    _table(src, ["add"] * len(CODE), [c for c, *_ in CODE])
    gold = tmp_path / "tests.jsonl"
    gold.write_text(json.dumps({"task_id": "add", "test": "assert add(2, 3) == 5"}) + "\n")
    verify_table(src, gold, tmp_path / "local", VerifyOptions(task="code", timeout=5))
    summary = verify_table(src, gold, tmp_path / "ray",
                           VerifyOptions(task="code", timeout=5, runner="ray", ray_block_rows=2))
    a, b = _verdicts(tmp_path / "local"), _verdicts(tmp_path / "ray")
    assert a == b
    assert [b[("add", "m", i)] for i in range(len(CODE))] == [(c, s) for _, c, s in CODE]
    assert summary["isolation"]["isolation"] == "bwrap"
    modes = read_rollouts(tmp_path / "ray")["check_mode"].to_pylist()
    assert modes == read_rollouts(tmp_path / "local")["check_mode"].to_pylist()


def test_a_node_without_isolation_refuses_code(local_ray):
    """The actor checks its own node's sandbox: no bubblewrap there, nothing graded."""
    from rlvr_boundary.verify.ray_grade import RayGrader, grader_config
    from rlvr_boundary.verify.sandbox import SandboxOptions, SandboxUnavailable

    sb = {**SandboxOptions(bwrap="").__dict__, "timeout": 2}  # as if bubblewrap were missing
    with RayGrader(grader_config("code", 2, 512, None, sb), workers=1) as g, \
            pytest.raises(SandboxUnavailable, match="a Ray node refused to grade code"):
        list(g.map([({"kind": "asserts", "tests": "assert True"}, "x = 1")]))


def _grading_actors() -> list:
    out = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            title = " ".join(p.info["cmdline"] or []) or p.info["name"] or ""
        except (psutil.Error, TypeError):
            continue
        if "MapWorker(MapBatches(_GradeUDF))" in title:
            out.append(p)
    return out


@pytest.mark.slow
def test_an_actor_killed_mid_run_still_grades_every_item_once(local_ray, tmp_path):
    src, gold, rows = _math_inputs(tmp_path, repeat=12)
    math = MathOptions(backend="canonical")  # fast items: the kill lands among many blocks
    rows_ = [r for r in rows if r[3] != "timeout"]
    src.write_text("".join(
        line for line, r in zip(src.read_text().splitlines(keepends=True), rows)
        if r[3] != "timeout"))
    killed, done, before, after = [], [], set(), set()

    def kill_on_progress(k):
        done.append(k)
        if not killed and sum(done) >= 20:  # on progress: a sixth of the items back
            actors = _grading_actors()
            assert actors, "no grading actor found to kill"
            before.update(a.pid for a in actors)
            os.kill(actors[0].pid, signal.SIGKILL)
            killed.append(actors[0].pid)
        elif killed:
            after.update(a.pid for a in _grading_actors())

    opts = VerifyOptions(timeout=5, batch_rows=16, math=math, runner="ray", ray_block_rows=2)
    summary = verify_table(src, gold, tmp_path / "ray", opts, progress=kill_on_progress)
    verify_table(src, gold, tmp_path / "local", VerifyOptions(timeout=5, batch_rows=16, math=math))
    assert killed and after - before, "Ray did not start a new actor after the kill"
    b = _verdicts(tmp_path / "ray")  # refuses an item written twice
    assert len(b) == len(rows_) and b == _verdicts(tmp_path / "local")
    assert sum(done) == len(rows_) and summary["rows"] == len(rows_)


def test_the_command_line_grades_on_ray(local_ray, tmp_path):
    """``--backend ray,canonical`` (and ``--runner ray``): Ray runs the canonical backend."""
    from rlvr_boundary.cli import main

    src, gold, rows = _math_inputs(tmp_path)
    base = ["verify", str(src), "--gold", str(gold), "--timeout", "5"]
    assert main([*base, "--backend", "canonical", "--out", str(tmp_path / "local")]) == 0
    res = tmp_path / "r.json"
    assert main([*base, "--backend", "ray,canonical", "--out", str(tmp_path / "ray"),
                 "--json", str(res)]) == 0
    doc = json.loads(res.read_text())
    assert doc["options"]["runner"] == "ray" and doc["ray"]["runner"] == "ray"
    assert doc["verifier"].startswith("canonical")
    assert _verdicts(tmp_path / "ray") == _verdicts(tmp_path / "local")
    assert len(_verdicts(tmp_path / "ray")) == len(rows)
    assert main([*base, "--runner", "ray", "--backend", "canonical",
                 "--out", str(tmp_path / "ray")]) == 0  # finished: nothing graded again


@pytest.mark.slow
def test_a_killed_driver_resumes_on_ray(local_ray, tmp_path):
    """A driver joining the cluster by address, SIGKILLed once a shard is written: the
    rerun on Ray grades the rest, every item once, the local verdicts."""
    import subprocess
    import sys
    import time

    src, gold, rows = _math_inputs(tmp_path, repeat=25)
    rows = [r for r in rows if r[3] != "timeout"]
    src.write_text("".join(line for line, r in zip(src.read_text().splitlines(keepends=True),
                                                   MATH * 25) if r[3] != "timeout"))
    out = tmp_path / "out"
    address = ray.get_runtime_context().gcs_address
    opts = "timeout=6, batch_rows=20, math=MathOptions(inner_timeout=5)"
    code = ("from rlvr_boundary.pipelines.verify import VerifyOptions, verify_table\n"
            "from rlvr_boundary.verify.math import MathOptions\n"
            f"verify_table({str(src)!r}, {str(gold)!r}, {str(out)!r}, VerifyOptions({opts}, "
            f"ray_address={address!r}, ray_block_rows=2))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not list(out.glob("part-*.parquet")) and proc.poll() is None and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before its first shard was written"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    written = len(list(out.glob("part-*.parquet")))
    assert not (out / "_COMPLETE").exists() and written >= 1
    graded = []
    math = MathOptions(inner_timeout=5)
    summary = verify_table(src, gold, out, VerifyOptions(timeout=6, batch_rows=20, math=math,
                                                         runner="ray"), progress=graded.append)
    verify_table(src, gold, tmp_path / "ref", VerifyOptions(timeout=6, batch_rows=20, math=math))
    assert _verdicts(out) == _verdicts(tmp_path / "ref") and summary["rows"] == len(rows)
    assert sum(graded) == len(rows)
    assert len([k for k in graded if k > 1]) == written  # the shards written before: skipped
