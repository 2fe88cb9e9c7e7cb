"""The code sandbox holds against hostile programs. Each attack has its own test.

Every attack is tried twice where it matters: through plain Python (stopped by
the audit hook) and around it (a shell command or ctypes, stopped by namespaces
or rlimits), so each layer is shown to hold on its own.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from rlvr_audit.verify.sandbox import SandboxOptions, grade_code, namespace_prefix, run_python

OPTS = SandboxOptions(timeout=3.0, cpu_seconds=10)
NS = namespace_prefix() is not None


def test_good_program_passes_and_failing_tests_fail():
    ok = grade_code("def add(a, b):\n    return a + b", "assert add(2, 3) == 5", OPTS)
    assert ok["correct"] and ok["verify_status"] == "ok"
    bad = grade_code("def add(a, b):\n    return a - b", "assert add(2, 3) == 5", OPTS)
    assert not bad["correct"] and "AssertionError" in bad["detail"]


def test_infinite_loop_is_killed_at_the_deadline():
    t0 = time.monotonic()
    r = run_python("while True:\n    pass", OPTS)
    assert r.status == "timeout" and time.monotonic() - t0 < OPTS.timeout + 1.5


def test_fork_bomb_is_contained():
    t0 = time.monotonic()
    r = run_python("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                   "        pass", OPTS)
    assert r.status == "timeout" and time.monotonic() - t0 < OPTS.timeout + 2.5
    # No survivor: within a few seconds nothing runs a sandbox program any more (in a PID
    # namespace the kernel kills the rest when its init dies; that takes a moment).
    for _ in range(100):
        leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit()
                     and b"rlvr-sbx-" in _cmdline(p)]
        if not leftovers:
            break
        time.sleep(0.1)
    assert not leftovers


def _cmdline(p: Path) -> bytes:
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""


def test_memory_hog_fails_inside_its_limit():
    r = run_python("x = bytearray(8 * 1024 ** 3)\nprint('allocated')", OPTS)
    assert r.status == "memory" and "allocated" not in r.stdout


@pytest.mark.parametrize("how", ["python", "shell"])
def test_writing_outside_the_work_directory_fails(tmp_path, how):
    target = tmp_path / f"pwned-{how}"
    prog = (f"open({str(target)!r}, 'w').write('x')" if how == "python"
            else f"import os\nos.system('echo x > {target}')")
    if how == "shell" and namespace_prefix() is not None and namespace_prefix()[1] != "bwrap":
        pytest.skip("only bubblewrap makes the file system read-only below the audit hook")
    if how == "shell" and not NS:
        pytest.skip("no namespaces on this machine: only the audit hook guards files")
    run_python(prog, OPTS)
    assert not target.exists()


def test_writing_inside_the_work_directory_works():
    r = run_python("open('out.txt', 'w').write('hi')\nprint(open('out.txt').read())", OPTS)
    assert r.status == "ok" and r.stdout.strip() == "hi"


@pytest.mark.parametrize("how", ["python", "ctypes"])
def test_network_connections_fail(how):
    if how == "python":
        prog = ("import socket\ns = socket.socket()\ns.settimeout(2)\n"
                "s.connect(('1.1.1.1', 53))\nprint('CONNECTED')")
    else:
        if not NS:
            pytest.skip("no network namespace on this machine")
        # Around the audit hook: raw connect(2) through libc.
        prog = ("import ctypes, socket, struct\nlibc = ctypes.CDLL(None)\n"
                "fd = libc.socket(2, 1, 0)\n"
                "addr = struct.pack('<HH4s8x', 2, socket.htons(53), bytes([1, 1, 1, 1]))\n"
                "rc = libc.connect(fd, addr, len(addr))\nprint('CONNECTED' if rc == 0 else 'refused')")
    r = run_python(prog, OPTS)
    assert "CONNECTED" not in r.stdout


def _decoy(q):
    """A stand-in parent: runs the hostile program and reports it survived."""
    prog = (f"import os, signal\ntry:\n    os.kill({os.getpid()}, signal.SIGKILL)\nexcept Exception:\n"
            "    pass\nos.system('kill -9 $PPID; kill -9 %d')\n" % os.getpid())
    res = run_python(prog, SandboxOptions(timeout=3.0))
    q.put(res.status)


def test_killing_its_parent_fails():
    # The hostile program targets a decoy process, never the test runner itself.
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_decoy, args=(q,))
    p.start()
    p.join(30)
    if not NS:
        pytest.skip("no PID namespace: a shell can signal the parent (audit hook covers os.kill)")
    assert p.exitcode == 0, "the sandboxed program killed its parent"
    assert q.get(timeout=1) in ("ok", "failed")


def test_parent_secrets_are_not_visible(monkeypatch):
    monkeypatch.setenv("RLVR_TEST_SECRET", "hunter2")
    r = run_python("import os\nprint(os.environ.get('RLVR_TEST_SECRET'))\n"
                   "print(open('/proc/self/environ','rb').read())\n"
                   "import subprocess\nprint(subprocess.run(['env'], capture_output=True, text=True).stdout)",
                   OPTS)
    assert "hunter2" not in r.stdout and "hunter2" not in r.stderr


def test_output_is_capped():
    r = run_python("print('x' * 10_000_000)", SandboxOptions(timeout=5, max_output=1000))
    assert r.status == "ok" and len(r.stdout) < 1100 and r.stdout.endswith("[output cut]")


def test_isolation_level_is_reported():
    r = run_python("print(1)", OPTS)
    assert r.isolation in ("bwrap", "unshare", "rlimits")
    assert run_python("print(1)", SandboxOptions(isolation="rlimits")).isolation == "rlimits"
