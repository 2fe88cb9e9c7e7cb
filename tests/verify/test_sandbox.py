"""The code sandbox: functional behaviour and the simpler hostile programs.

The escape classes of an adversarial run (writes outside the work directory
around the audit hook, processes, cgroup files, /proc, outliving the deadline,
orphans, summed memory, forged passes) have their own attacker tests in
``test_escapes.py``; these tests run wherever a sandbox that holds exists.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from rlvr_boundary.verify.code import grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status, run_python

OPTS = SandboxOptions(timeout=3.0, cpu_seconds=10)
ALLOW = SandboxOptions(timeout=3.0, cpu_seconds=10, allow_processes=True)
NS = isolation_status(OPTS)["usable"]
pytestmark = pytest.mark.skipif(not NS, reason="no sandbox that holds here: "
                                "test_escapes.py checks that grading refuses")


def test_good_program_passes_and_failing_tests_fail():
    ok = grade_code("def add(a, b):\n    return a + b", "assert add(2, 3) == 5", OPTS)
    assert ok["correct"] and ok["verify_status"] == "ok"
    bad = grade_code("def add(a, b):\n    return a - b", "assert add(2, 3) == 5", OPTS)
    assert not bad["correct"] and "AssertionError" in bad["detail"]


def test_infinite_loop_is_killed_at_the_deadline():
    t0 = time.monotonic()
    r = run_python("while True:\n    pass", OPTS)
    assert r.status == "timeout" and time.monotonic() - t0 < OPTS.timeout + 1.5


BOMB = ("import os, time\nn = 0\nfor _ in range(500):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        continue\n    if pid == 0:\n        time.sleep(60)\n"
        "        os._exit(0)\n    n += 1\nprint('forked', n, flush=True)\nwhile True:\n    pass")


def _survivors() -> list:
    return [p for p in Path("/proc").iterdir() if p.name.isdigit() and b"rlvr-sbx-" in _cmdline(p)]


def test_fork_bomb_is_refused_by_default():
    r = run_python(BOMB, OPTS)
    assert "forked 0" in r.stdout and r.status == "timeout"


def test_fork_bomb_is_capped_and_killed_when_processes_are_allowed():
    opts = SandboxOptions(timeout=3.0, cpu_seconds=10, allow_processes=True, max_processes=16)
    t0 = time.monotonic()
    r = run_python(BOMB, opts)
    assert r.status == "timeout" and time.monotonic() - t0 < opts.timeout + 2.5
    forked = int(r.stdout.split()[1])
    assert 0 < forked < 16
    # No survivor: in a PID namespace the kernel kills the rest when its init dies.
    for _ in range(100):
        if not _survivors():
            break
        time.sleep(0.1)
    assert not _survivors()


def _cmdline(p: Path) -> bytes:
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""


def test_memory_hog_fails_inside_its_limit():
    r = run_python("x = bytearray(8 * 1024 ** 3)\nprint('allocated')", OPTS)
    assert r.status == "memory" and "allocated" not in r.stdout
    # Touched pages, below the per-process address space but above the run's cgroup limit.
    r = run_python("x = bytearray(200 * 1024 ** 2)\nprint('allocated')",
                   SandboxOptions(timeout=5.0, memory_mb=120))
    assert r.status == "memory" and "allocated" not in r.stdout


@pytest.mark.parametrize("how", ["python", "shell"])
def test_writing_outside_the_work_directory_fails(tmp_path, how):
    target = tmp_path / f"pwned-{how}"
    prog = (f"open({str(target)!r}, 'w').write('x')" if how == "python"
            else f"import os\nos.system('echo x > {target}')")
    run_python(prog, ALLOW)  # processes allowed: the shell goes below the audit hook
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
    res = run_python(prog, SandboxOptions(timeout=3.0, allow_processes=True))
    q.put(res.status)


def test_killing_its_parent_fails():
    # The hostile program targets a decoy process, never the test runner itself.
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_decoy, args=(q,))
    p.start()
    p.join(30)
    assert p.exitcode == 0, "the sandboxed program killed its parent"
    assert q.get(timeout=1) in ("ok", "failed")


def test_parent_secrets_are_not_visible(monkeypatch):
    monkeypatch.setenv("RLVR_TEST_SECRET", "hunter2")
    r = run_python("import os\nprint(os.environ.get('RLVR_TEST_SECRET'))\n"
                   "print(open('/proc/self/environ','rb').read())\n"
                   "import subprocess\nprint(subprocess.run(['env'], capture_output=True, text=True).stdout)",
                   ALLOW)
    assert "hunter2" not in r.stdout and "hunter2" not in r.stderr


def test_output_is_capped():
    r = run_python("print('x' * 10_000_000)", SandboxOptions(timeout=5, max_output=1000))
    assert r.status == "ok" and len(r.stdout) < 1100 and r.stdout.endswith("[output cut]")


def test_isolation_level_is_reported():
    r = run_python("print(1)", OPTS)
    assert r.isolation == "bwrap" and r.cgroup in ("v1", "v2") and r.completed


def test_a_program_that_never_reads_a_large_stdin_does_not_block_us():
    t0 = time.monotonic()
    r = run_python("print('done')", OPTS, stdin="x" * (3 << 20))
    assert r.status == "ok" and r.stdout.strip() == "done"
    assert time.monotonic() - t0 < OPTS.timeout


def test_lone_surrogates_in_a_program_do_not_crash_the_grader():
    r = run_python("s = '\udcff'\nprint(len(s))", OPTS)
    assert r.status == "ok" and r.stdout.strip() == "1"


# ----------------------------------------------------------------------------- code grading


def test_extract_code_takes_the_last_python_block_after_thinking():
    from rlvr_boundary.verify.code import extract_code

    text = ("<think>draft:\n```python\nprint(0)\n```\n</think>Here:\n```bash\nls\n```\n"
            "```python\nprint(1)\n```\nand finally\n```py\nprint(2)\n```\nDone.")
    assert extract_code(text) == "print(2)\n"
    assert extract_code("```\nx = 1\n```") == "x = 1\n"
    assert extract_code("```cpp\nint main(){}\n```") == "int main(){}\n"
    assert extract_code("def f():\n    return 1") == "def f():\n    return 1"


def test_prose_around_code_is_not_run():
    ok = grade_code("Sure! Here is the function:\n```python\ndef add(a, b):\n    return a + b\n```\n"
                    "It adds two numbers.", "assert add(2, 3) == 5", OPTS)
    assert ok["correct"], ok


def test_humaneval_entry_point_calls_check():
    from rlvr_boundary.verify.code import code_spec

    spec = code_spec({"test": "def check(candidate):\n    assert candidate(2) == 4\n",
                      "entry_point": "double"})
    assert grade_code("def double(x):\n    return 2 * x", spec, OPTS)["correct"]
    assert not grade_code("def double(x):\n    return x + 1", spec, OPTS)["correct"]
    with pytest.raises(ValueError, match="identifier"):
        code_spec({"test": "pass", "entry_point": "os.system('x')"})


def test_stdio_cases_in_both_layouts():
    from rlvr_boundary.verify.code import code_spec

    prog = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    listed = code_spec({"test_cases": [{"input": "1 2\n", "output": "3\n"},
                                       {"input": "10 -4", "output": "6"}]})
    apps = code_spec({"input_output": json.dumps({"inputs": ["1 2\n", "5 5\n"],
                                                  "outputs": ["3\n", "10\n"]})})
    assert listed["kind"] == apps["kind"] == "stdio"
    assert grade_code(prog, listed, OPTS)["correct"]
    assert grade_code(prog, apps, OPTS)["correct"]
    wrong = grade_code(prog.replace("a + b", "a * b"), apps, OPTS)
    assert not wrong["correct"] and wrong["detail"] == "case 0: wrong output"
    with pytest.raises(ValueError, match="equal length"):
        code_spec({"input_output": {"inputs": ["1"], "outputs": []}})


def test_empty_program_is_no_answer_and_timeouts_are_timeouts():
    assert grade_code("", "assert True", OPTS)["verify_status"] == "no_answer"
    r = grade_code("while True:\n    pass", "assert True", SandboxOptions(timeout=1.0))
    assert r["verify_status"] == "timeout" and not r["correct"]


def test_starting_processes_is_refused_by_default():
    r = run_python("import subprocess\nsubprocess.run(['true'])", OPTS)
    assert r.status == "failed" and "starting processes is disabled" in r.stderr
    assert run_python("import subprocess\nsubprocess.run(['true'], check=True)", ALLOW).status == "ok"


def test_stale_cleanup_removes_dead_runs_only_and_never_foreign_groups():
    import fcntl

    from rlvr_boundary.verify.sandbox import (CGROUP_PREFIX, _ensure_root, cgroup_home,
                                              clean_stale)

    root = _ensure_root()
    home = cgroup_home()
    dead = root / "run-999999999-0123456789ab"   # its grader is gone: nothing holds the lock
    live = root / f"run-{os.getpid()}-ba9876543210"
    foreign = [b / f"{CGROUP_PREFIX}other-tool" for b in home.bases.values()]
    for d in (dead, live):
        (d / "work").mkdir(parents=True)
        (d / "lock").touch()
    fd = os.open(live / "lock", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    dead_groups = [b / f"{CGROUP_PREFIX}{dead.name[4:]}" for b in home.bases.values()]
    try:
        for g in foreign + dead_groups:
            g.mkdir()
        clean_stale()  # (another test process may have cleaned the dead run first)
        assert not dead.exists()
        assert not any(g.exists() for g in dead_groups)
        assert live.is_dir() and all(g.is_dir() for g in foreign)
    finally:
        os.close(fd)
        for g in foreign + dead_groups:
            if g.exists():
                g.rmdir()
        import shutil

        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(dead, ignore_errors=True)


def test_the_program_runs_as_the_main_module():
    prog = ("import pickle, sys\nclass P:\n    pass\n"
            "print(__name__, sys.modules['__main__'].P is P,\n"
            "      type(pickle.loads(pickle.dumps(P()))).__name__)")
    r = run_python(prog, OPTS)
    assert r.status == "ok" and r.stdout.split() == ["__main__", "True", "P"], r


def test_the_work_directory_is_bounded_and_not_host_disk():
    prog = ("import os\nn = 0\ntry:\n    for i in range(100):\n"
            "        open(f'f{i}', 'wb').write(b'x' * (1 << 20))\n        n += 1\n"
            "except OSError as e:\n    print('stopped', n, e.errno)\n"
            "print(os.getcwd(), os.stat('.').st_uid)")
    r = run_python(prog, SandboxOptions(timeout=5.0, work_mb=8))
    assert r.status == "ok", r
    first, second = r.stdout.splitlines()
    assert first.split()[0] == "stopped" and int(first.split()[1]) <= 8 and first.split()[2] == "28"
    assert second == "/sandbox/work 65534"


def test_an_interpreter_under_tmp_is_visible_inside_the_sandbox(tmp_path):
    """A venv under /tmp (a CI checkout, say) stays reachable under the sandbox's empty /tmp."""
    import subprocess
    import sys
    import tempfile

    venv = Path(tempfile.mkdtemp(prefix="rlvr-venv-", dir="/tmp"))
    venv.chmod(0o755)  # as a checkout is (mkdtemp makes it private)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                        "--system-site-packages", str(venv)], check=True, timeout=60)
        code = ("from rlvr_boundary.verify.sandbox import SandboxOptions, run_python\n"
                "r = run_python('print(6 * 7)', SandboxOptions(timeout=10.0))\n"
                "print(r.status, r.isolation, r.stdout.strip(), r.stderr.strip()[:200])\n")
        src = str(Path(__file__).resolve().parents[2] / "src")
        env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
        out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                             text=True, timeout=120, env=env)
        assert out.returncode == 0, out.stderr
        status, isolation, printed = out.stdout.split()[:3]
        assert (status, isolation, printed) == ("ok", "bwrap", "42"), out.stdout
    finally:
        import shutil

        shutil.rmtree(venv, ignore_errors=True)
