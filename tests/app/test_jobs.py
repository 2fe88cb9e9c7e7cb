"""The worker pool: bad input comes back as the library's message; a dead worker costs one job."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from rlvr_boundary.app import compute as C
from rlvr_boundary.app.jobs import JobError, JobRunner
from rlvr_boundary.errors import InputError
from rlvr_boundary.examples import example_files


@pytest.fixture(scope="module")
def runner():
    r = JobRunner(workers=1, timeout=120)
    yield r
    r.close()


def test_input_error_crosses_the_process_boundary(runner, tmp_path):
    with pytest.raises(InputError) as err:
        runner.run("paste_job", "0.5 0.6\nabc 0.3\n", "auto", ("", ""), {"bootstrap": 10},
                   str(tmp_path))
    assert str(err.value) == "pasted table:2: expected numbers, found ['abc', '0.3']"
    res = runner.run("paste_job", C.OMNI_MATH_CURVE, "auto", ("", ""), {"bootstrap": 10},
                     str(tmp_path))
    assert res["result"]["crossing_intervals"] == [[64, 256]]


def test_killed_worker_fails_one_job_and_the_next_one_runs(runner, tmp_path):
    ex = example_files("deepscaler32k")
    runner.run("paste_job", C.OMNI_MATH_CURVE, "auto", ("", ""), {"bootstrap": 10},
               str(tmp_path))  # the pool is up
    pids = list(runner._pool._processes)
    work = tmp_path / "killed"
    work.mkdir()
    # Keyed on progress, not on a clock: the job copies its uploads into its folder first,
    # so once the second one appears the worker is inside the job; kill it there.
    started = work / "inputs" / "1" / "rl.jsonl"

    def kill_when_the_job_runs():
        deadline = time.monotonic() + 120  # hang guard only
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        for p in pids:
            os.kill(p, signal.SIGKILL)

    killer = threading.Thread(target=kill_when_the_job_runs)
    killer.start()
    with pytest.raises(JobError, match="stopped unexpectedly"):
        runner.run("files_job", [(str(ex["base"]), "base.jsonl"), (str(ex["rl"]), "rl.jsonl")],
                   {"bootstrap": 4000}, (10**7, 10**5), str(work))
    killer.join()
    assert started.exists()  # the kill landed inside the job
    t0 = time.monotonic()
    res = runner.run("paste_job", C.OMNI_MATH_CURVE, "auto", ("", ""), {"bootstrap": 10},
                     str(tmp_path))
    assert res["result"]["price_k"] == 256 and time.monotonic() - t0 < 60
    assert not set(pids) & set(runner._pool._processes)


def test_timeout_is_reported(tmp_path):
    r = JobRunner(workers=1, timeout=0.01)
    try:
        ex = example_files("deepscaler32k")
        with pytest.raises(JobError, match="longer than 0.01 s"):
            r.run("files_job", [(str(ex["base"]), "base.jsonl"), (str(ex["rl"]), "rl.jsonl")],
                  {"bootstrap": 100}, (10**7, 10**5), str(tmp_path))
    finally:
        r.close()


def test_place_in_line_counts_the_jobs_ahead_that_no_worker_has_taken():
    from concurrent.futures import Future

    from rlvr_boundary.app.jobs import JobRunner

    r = JobRunner(1)
    futs = [Future() for _ in range(4)]
    r._waiting.extend(futs)
    assert [r._ahead(f) for f in futs] == [0, 1, 2, 3]
    futs[0].set_running_or_notify_cancel()  # a worker took the first
    assert [r._ahead(f) for f in futs] == [None, 0, 1, 2]
    futs[0].set_result(("ok", 1))
    futs[2].set_running_or_notify_cancel()
    assert [r._ahead(f) for f in futs] == [None, 0, None, 1]


def test_jobs_receive_plain_strings_not_the_frameworks_subclass(runner, tmp_path):
    """The web framework hands uploads over as its own str subclass; unpickled in a worker
    it imports the framework first (3 s of a first request). A subclass from a module the
    worker cannot import at all proves the job gets a plain str."""
    import sys
    import types

    from rlvr_boundary.app.jobs import plain

    mod = types.ModuleType("rb_not_importable_in_workers")
    exec("class NamedString(str):\n    pass\n", mod.__dict__)
    mod.NamedString.__module__ = mod.__name__
    sys.modules[mod.__name__] = mod
    try:
        text = mod.NamedString(C.OMNI_MATH_CURVE)
        got = plain(((text, [text]), {"k": text}, 3))
        assert type(got[0][0]) is str and type(got[0][1][0]) is str and type(got[1]["k"]) is str
        assert got == ((C.OMNI_MATH_CURVE, [C.OMNI_MATH_CURVE]), {"k": C.OMNI_MATH_CURVE}, 3)
        res = runner.run("paste_job", text, "auto", ("", ""), {"bootstrap": 10}, str(tmp_path))
        assert res["result"]["crossing_intervals"] == [[64, 256]]
    finally:
        del sys.modules[mod.__name__]
