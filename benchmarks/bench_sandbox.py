"""Benchmark: the cost of the code sandbox's boundary per run.

Each configuration runs the same tiny graded program (``def add`` and one
assert) ``--runs`` times, one after another, in this process:

- ours, checked outside: :func:`rlvr_boundary.verify.code.grade_code` with
  bubblewrap and the run's cgroup, as ``verify --task code`` grades this record:
  the program in one sandbox, the tests in a second one that calls it over a pipe
  of plain data (two sandboxes started side by side);
- ours, in-process: the same record forced to run its tests in the program's
  interpreter (one sandbox: what every assert record cost before the split);
- ours, unsafe: both without bubblewrap (``--unsafe-no-isolation``; as root the
  program runs as nobody below an init in its own PID namespace);
- peer, in the same run: ``subprocess.run([python, "-I", file])`` on the program
  and its assert in a temporary directory, with a timeout -- how a grading
  script without a sandbox runs tests.

Prints the median wall time and its ratio to the peer, and the CPU time per run
of every process involved (this one and all its reaped descendants: the
launcher, bubblewrap, the harness, the checker), which a loaded machine changes
much less than the wall time. The boundary's cost is a fixed start-up per run
(the launcher's interpreter, namespaces and mounts, the cgroup), independent of
the program's own work.

Run:  python benchmarks/bench_sandbox.py [--runs 30]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rlvr_boundary.verify.code import grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status

try:  # the split exists from this release on; older trees grade in-process only
    from rlvr_boundary.verify.code import assert_spec
except ImportError:
    assert_spec = None

PROGRAM = "def add(a, b):\n    return a + b\n"
TESTS = "assert add(2, 3) == 5\n"


def _peer() -> None:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "main.py"
        f.write_text(PROGRAM + TESTS)
        r = subprocess.run([sys.executable, "-I", str(f)], cwd=d, capture_output=True, timeout=10)
        assert r.returncode == 0


def _cpu() -> float:
    import resource

    return sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))


def _time(fn, runs: int) -> tuple[float, float]:
    """(median wall seconds, mean CPU seconds of all processes) per run."""
    fn()  # warm: caches, the probe of bubblewrap and cgroups
    ts = []
    c0 = _cpu()
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), (_cpu() - c0) / runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    safe = SandboxOptions()
    unsafe = SandboxOptions(bwrap="", unsafe_no_isolation=True)
    print(f"machine: {platform.machine()}, {platform.python_version()}, "
          f"isolation: {isolation_status(safe)}")
    peer = _time(_peer, args.runs)
    rows = [("peer: plain subprocess", peer)]
    specs = [("", TESTS)]
    if assert_spec is not None:
        split = assert_spec(TESTS)
        specs = [(", checked outside", split),
                 (", in-process", {**split, "check": "in-process"})]
    for mode, o in (("bubblewrap + cgroup", safe), ("unsafe (no bubblewrap)", unsafe)):
        if not isolation_status(o)["usable"]:
            continue
        for label, spec in specs:
            rows.append((f"ours: {mode}{label}",
                         _time(lambda: _check(grade_code(PROGRAM, spec, o)), args.runs)))
    print(f"load average {open('/proc/loadavg').read().split()[:3]}")
    for name, (t, cpu) in rows:
        print(f"{name:48s} median {t * 1000:7.1f} ms per run   ratio to peer {t / peer[0]:5.2f}"
              f"   CPU {cpu * 1000:6.1f} ms per run   ratio {cpu / peer[1]:5.2f}")


def _check(res: dict) -> None:
    assert res["correct"], res


if __name__ == "__main__":
    main()
