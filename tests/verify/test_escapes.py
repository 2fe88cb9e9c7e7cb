"""Attacker tests: one per escape class an adversarial run found in the old sandbox.

Each program below is what a hostile completion would run. Every test is
bounded in time (a few seconds of sandbox deadline) and ends with the same
checks (:func:`aftermath`): no file appeared outside the work directory, no
process of the run is left, no cgroup and no run directory of this test
process remain.

Each attack runs twice: with bubblewrap (the boundary must hold) and with
bubblewrap hidden, where grading must refuse (and, with the explicit unsafe
switch, the parts that do not depend on bubblewrap still hold: the cgroup's
process and memory limits, the kill at the deadline, the harness token).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_boundary.verify.code import grade_code
from rlvr_boundary.verify.sandbox import (CGROUP_PREFIX, SandboxOptions, SandboxUnavailable,
                                          cgroup_home, clean_stale, isolation_status, run_python,
                                          sandbox_root)

HOLDS = isolation_status(SandboxOptions())["usable"]
needs_boundary = pytest.mark.skipif(not HOLDS, reason="no bubblewrap or cgroup on this machine")
BOUNDED = 4.0  # seconds of sandbox deadline per run; each test asserts its wall time


def opts(mode: str, **kw) -> SandboxOptions:
    """Options with bubblewrap ('bwrap'), hidden ('hidden') or hidden but explicitly unsafe."""
    kw.setdefault("timeout", BOUNDED)
    kw.setdefault("cpu_seconds", 10)
    if mode == "bwrap":
        return SandboxOptions(**kw)
    return SandboxOptions(bwrap="", unsafe_no_isolation=(mode == "unsafe"), **kw)


def _my_cgroups() -> list[Path]:
    home = cgroup_home()
    if home is None:
        return []
    return [d for b in home.bases.values() for d in b.glob(f"{CGROUP_PREFIX}{os.getpid()}-*")]


def _my_run_dirs() -> list[Path]:
    root = sandbox_root()
    return sorted(root.glob(f"run-{os.getpid()}-*")) if root.is_dir() else []


def _procs_named(marker: str) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                comm, cmdline = (p / "comm").read_text(), (p / "cmdline").read_bytes()
            except OSError:
                continue
            if marker in comm or marker.encode() in cmdline:
                out.append(int(p.name))
    return out


@pytest.fixture
def aftermath(tmp_path):
    """Yield (marker, canary dir); afterwards assert nothing of the run is left."""
    marker = "rx" + secrets.token_hex(4)
    canary = tmp_path / "outside"
    canary.mkdir()
    before = set(Path("/tmp").iterdir())
    t0 = time.monotonic()
    yield marker, canary
    assert time.monotonic() - t0 < 60, "the attack was not bounded in time"
    for _ in range(100):  # the kernel reaps killed processes asynchronously
        if not _procs_named(marker):
            break
        time.sleep(0.05)
    assert not _procs_named(marker), "a process of the run survived it"
    assert not _my_cgroups(), "a cgroup of the run was left"
    assert not _my_run_dirs(), "a work directory of the run was left"
    assert list(canary.iterdir()) == [], "a file appeared outside the work directory"
    new = {p.name for p in set(Path("/tmp").iterdir()) - before}
    assert not {n for n in new if "pwned" in n}, new


def attack(program: str, mode: str, **kw):
    """Run an attack; with bubblewrap hidden, check that grading refuses and stop there."""
    o = opts(mode, **kw)
    if mode == "hidden":
        with pytest.raises(SandboxUnavailable, match="bubblewrap"):
            run_python(program, o)
        return None
    if mode == "bwrap" and not HOLDS:
        pytest.skip("no bubblewrap or cgroup on this machine")
    t0 = time.monotonic()
    res = run_python(program, o)
    assert time.monotonic() - t0 < o.timeout + 8
    return res


MODES = ["bwrap", "hidden"]


def test_the_boundary_is_available_in_ci():
    """CI installs bubblewrap: there a broken sandbox must fail, not skip the attacks."""
    import shutil

    if not os.environ.get("CI"):
        pytest.skip("outside CI")
    assert shutil.which("bwrap"), "CI installs bubblewrap (.ci/run)"
    st = isolation_status(SandboxOptions())
    assert st["usable"] and st["isolation"] == "bwrap", st

# A name visible in the host's /proc (comm), set without exec: what a survivor would show.
NAME = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def mark(m):\n    libc.prctl(15, m.encode(), 0, 0, 0)\n")
# fork(2) and setsid(2) through libc: no audited Python entry point is passed.
CFORK = NAME + "fork = libc.fork\nsetsid = libc.setsid\n"


# ----------------------------------------------------------------------------- files


def _write_targets(canary: Path) -> list[str]:
    return [str(canary / "pwned"), "/etc/pwned-etc", f"{sys.prefix}/pwned-venv",
            "/usr/lib/pwned-usr", "/pwned-root", "/tmp/pwned-tmp", "/sandbox/src/pwned-src",
            "/proc/sys/kernel/pwned", "/dev/shm/pwned", "/proc/sys/kernel/core_pattern",
            "/proc/sysrq-trigger", "/dev/pwned"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["undo-audit-hook", "ctypes"])
def test_writes_outside_the_work_directory(aftermath, mode, how):
    marker, canary = aftermath
    targets = _write_targets(canary)
    if how == "undo-audit-hook":
        # Pure Python: the hook asks os.path.realpath whether a path is inside the work
        # directory; make every path look inside, then write with plain open().
        prog = ("import os\nos.path.realpath = lambda p, *a, **k: os.getcwd() + '/x'\n"
                f"for t in {targets!r}:\n    try:\n        open(t, 'w').write('x')\n"
                "        print('WROTE', t)\n    except OSError as e:\n"
                "        print('no', t, e.errno)\n"
                "open('inside.txt', 'w').write('ok')\nprint('inside ok')\n")
    else:
        prog = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                f"for t in {targets!r}:\n"
                "    fd = libc.open(t.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
                "    print('WROTE' if fd >= 0 else 'no', t, ctypes.get_errno())\n")
    res = attack(prog, mode)
    if res is None:
        return
    assert "WROTE" not in res.stdout, res.stdout
    assert res.stdout.count("no ") == len(targets)
    if how == "undo-audit-hook":
        assert "inside ok" in res.stdout
    for t in targets[:4]:
        assert not Path(t).exists(), t


# ----------------------------------------------------------------------------- processes


@pytest.mark.parametrize("mode", MODES)
def test_processes_started_below_the_audit_hook_are_capped_and_killed(aftermath, mode):
    marker, _ = aftermath
    # The audit hook refuses os.fork; libc's fork does not pass it. Children sleep.
    prog = (CFORK + "import time\nn = 0\nfor _ in range(200):\n    pid = fork()\n"
            f"    if pid == 0:\n        mark({marker!r})\n        time.sleep(120)\n"
            "    if pid > 0:\n        n += 1\nprint('forked', n, flush=True)\ntime.sleep(120)\n")
    res = attack(prog, mode, max_processes=12)
    if res is None:
        return
    assert res.status == "timeout"
    forked = int(res.stdout.split()[1])
    assert 0 < forked < 12


@pytest.mark.parametrize("mode", MODES)
def test_the_process_cap_cannot_be_raised_through_cgroup_files(aftermath, mode):
    marker, _ = aftermath
    prog = (CFORK + "import os, time\ncg = open('/proc/self/cgroup').read()\nprint(cg)\n"
            "wrote = []\nfor line in cg.splitlines():\n    path = line.split(':', 2)[2]\n"
            "    for root in ('/sys/fs/cgroup', '/sys/fs/cgroup/pids', '/sys/fs/cgroup/unified'):\n"
            "        for f in ('pids.max', 'cgroup.procs', 'memory.max',\n"
            "                  'memory.limit_in_bytes'):\n"
            "            p = root + path + '/' + f\n            try:\n"
            "                open(p, 'w').write('max')\n                wrote.append(p)\n"
            "            except OSError:\n                pass\n"
            "os.makedirs('cg', exist_ok=True)\n"
            "rc = libc.mount(b'cgroup2', b'cg', b'cgroup2', 0, None)\n"
            "rc1 = libc.mount(b'cgroup', b'cg', b'cgroup', 0, b'pids')\n"
            "print('WROTE' if wrote else 'no writes', wrote, 'mount', rc, rc1)\n"
            "n = 0\nfor _ in range(200):\n    pid = fork()\n"
            f"    if pid == 0:\n        mark({marker!r})\n        time.sleep(120)\n"
            "    if pid > 0:\n        n += 1\nprint('forked', n, flush=True)\n")
    res = attack(prog, mode, max_processes=12)
    if res is None:
        return
    assert "no writes" in res.stdout and "mount -1 -1" in res.stdout, res.stdout
    assert 0 < int(res.stdout.split("forked")[1].split()[0]) < 12


@pytest.mark.parametrize("mode", MODES)
def test_proc_cannot_be_unmounted_and_shows_no_host_process(aftermath, mode):
    marker, _ = aftermath
    prog = ("import ctypes, os, json\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "rc = [libc.umount2(b'/proc', 2), libc.umount2(b'/proc', 0), libc.umount(b'/proc')]\n"
            "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "cmds = []\nfor p in pids:\n    try:\n"
            "        cmds.append(open(f'/proc/{p}/cmdline', 'rb').read()\n"
            "                    .decode(errors='replace'))\n"
            "    except OSError:\n        pass\n"
            "print(json.dumps({'rc': rc, 'pids': pids, 'cmds': cmds, 'uid': os.getuid(),\n"
            "                  'status': open('/proc/self/status').read()}))\n")
    res = attack(prog, mode)
    if res is None:
        return
    doc = json.loads(res.stdout)
    assert doc["rc"] == [-1, -1, -1]
    assert len(doc["pids"]) <= 3  # bubblewrap's reaper and the program (and its /proc read)
    joined = " ".join(doc["cmds"])
    assert "pytest" not in joined and "rlvr_boundary" not in joined
    assert os.getpid() not in doc["pids"]
    status = dict(line.split(":\t", 1) for line in doc["status"].splitlines() if ":\t" in line)
    assert doc["uid"] == 65534
    assert status["CapEff"].strip() == status["CapPrm"].strip() == "0" * 16
    assert status["NoNewPrivs"].strip() == "1"


@pytest.mark.parametrize("mode", MODES)
def test_leaving_the_process_group_does_not_outlive_the_deadline(aftermath, mode):
    marker, _ = aftermath
    # A double fork with a new session: the survivor is in no group of ours.
    prog = (CFORK + "import os, time\nif fork() == 0:\n    setsid()\n    if fork() == 0:\n"
            f"        mark({marker!r})\n        time.sleep(300)\n    os._exit(0)\n"
            "print('detached', flush=True)\n")
    t0 = time.monotonic()
    res = attack(prog, mode)
    if res is None:
        return
    assert "detached" in res.stdout
    assert time.monotonic() - t0 < BOUNDED + 8


def test_leaving_the_process_group_is_killed_also_without_bubblewrap_when_unsafe(aftermath):
    marker, _ = aftermath
    if cgroup_home() is None:
        pytest.skip("no cgroup here")
    prog = (CFORK + "import os, time\nif fork() == 0:\n    setsid()\n    if fork() == 0:\n"
            f"        mark({marker!r})\n        time.sleep(300)\n    os._exit(0)\n"
            "print('detached', flush=True)\n")
    res = attack(prog, "unsafe")
    assert res.isolation == "none" and "detached" in res.stdout


# Move the program out of its run's cgroup (into the grader's, its parent), then leave a
# detached sleeper: as root without bubblewrap this used to outlive the deadline.
LEAVE_CGROUP = """import os, time
wrote = []
for line in open('/proc/self/cgroup').read().splitlines():
    _, ctrls, path = line.split(':', 2)
    for c in ctrls.split(','):
        if c in ('pids', 'memory'):
            parent = os.path.dirname(path.rstrip('/')) or '/'
            target = ('/sys/fs/cgroup/' + c + parent + '/cgroup.procs').replace('//', '/')
            fd = libc.open(target.encode(), os.O_WRONLY)  # below the audit hook
            if fd >= 0 and libc.write(fd, b'0', 1) == 1:
                wrote.append(target)
if fork() == 0:
    setsid()
    mark({marker!r})
    time.sleep(300)
print('wrote', wrote, os.getuid(), flush=True)
time.sleep(300)
"""


@pytest.mark.parametrize("mode", ["bwrap", "unsafe"])
def test_the_program_cannot_leave_its_cgroup(aftermath, mode):
    """Also in the unsafe mode as root: the program is nobody, below a root init in a PID
    namespace (the aftermath fixture checks that the sleeper died at the deadline)."""
    marker, _ = aftermath
    if mode == "unsafe" and (cgroup_home() is None or os.geteuid() != 0):
        pytest.skip("the unsafe mode holds its cgroup only as root (and with a cgroup)")
    res = attack(CFORK + LEAVE_CGROUP.format(marker=marker), mode)
    assert res.status == "timeout", res
    assert res.stdout.startswith("wrote [] 65534"), res.stdout


@pytest.mark.parametrize("mode", MODES + ["unsafe"])
def test_memory_is_capped_summed_over_processes(aftermath, mode):
    marker, _ = aftermath
    if mode == "unsafe" and cgroup_home() is None:
        pytest.skip("no cgroup here")
    # Four children of 150 MB each (pages touched) under a 300 MB run: at most one can
    # hold its memory at a time; the others are killed by the cgroup's OOM killer.
    prog = (CFORK + MEMORY_HOGS.format(marker=marker))
    res = attack(prog, mode, memory_mb=300, timeout=10.0)
    if res is None:
        return
    assert res.status == "memory", res
    alive = [int(x.split()[1]) for x in res.stdout.splitlines() if x.startswith("alive")]
    assert alive in ([], [0], [1]), res.stdout  # [] when the OOM killer chose the parent


# Children report on a pipe once their 150 MB are touched; the parent waits until
# every child has reported or died (at most 6 s, so a loaded machine does not end the
# run before the allocations do), then counts those still alive: the memory held at
# the same time is 150 MB times that count.
MEMORY_HOGS = """import os, time
r, w = os.pipe()
os.set_blocking(r, False)
kids = []
for i in range(4):
    pid = fork()
    if pid == 0:
        mark({marker!r})
        x = bytearray(150 * 1024 * 1024)
        for j in range(0, len(x), 4096):
            x[j] = 1
        os.write(w, b'%d ' % os.getpid())
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
done, dead = set(), set()
t0 = time.monotonic()
while len(done | dead) < len(kids) and time.monotonic() - t0 < 6:
    time.sleep(0.1)
    try:
        done |= {{int(x) for x in os.read(r, 4096).split()}}
    except BlockingIOError:
        pass
    dead |= {{k for k in kids if k not in dead and os.waitpid(k, os.WNOHANG)[0] != 0}}
alive = [k for k in kids if k not in dead and os.waitpid(k, os.WNOHANG)[0] == 0]
print('allocated', len(done), flush=True)
print('alive', len(done & set(alive)), flush=True)
"""


# ----------------------------------------------------------------------------- forged passes

EARLY_EXITS = {
    "os._exit(0)": "import os\nos._exit(0)",
    "sys.exit(0)": "import sys\nsys.exit(0)",
    "raise SystemExit": "raise SystemExit",
    "exec true": ("import ctypes\n"
                  "ctypes.CDLL(None).execv(b'/bin/true', (ctypes.c_char_p * 2)(b'true', None))"),
    "kill the harness": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
    "exit from atexit": ("import atexit, os\natexit.register(lambda: os._exit(0))\n"
                         "raise SystemExit(0)"),
}


@pytest.mark.parametrize("mode", MODES + ["unsafe"])
@pytest.mark.parametrize("trick", sorted(EARLY_EXITS))
def test_early_exit_with_status_0_is_not_a_pass(aftermath, mode, trick):
    completion = "def add(a, b):\n    return a - b\n" + EARLY_EXITS[trick] + "\n"
    o = opts(mode)
    if mode == "hidden":
        with pytest.raises(SandboxUnavailable):
            grade_code(completion, "assert add(2, 3) == 5", o)
        return
    if mode == "bwrap" and not HOLDS:
        pytest.skip("no bubblewrap or cgroup on this machine")
    r = grade_code(completion, "assert add(2, 3) == 5", o)
    assert not r["correct"], r
    # The same program without the trick and with a right answer passes.
    assert grade_code("def add(a, b):\n    return a + b\n", "assert add(2, 3) == 5", o)["correct"]


# ----------------------------------------------------------------------------- verify killed


def _verify_cmd(tmp_path: Path, completion: str, env_path: str | None = None) -> tuple[list, dict]:
    src = tmp_path / "code.jsonl"
    src.write_text(json.dumps({"prompt_id": "p", "model": "m", "sample_idx": 0,
                               "text": completion}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "p", "test": "assert True"}) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    if env_path is not None:
        env["PATH"] = env_path
    cmd = [sys.executable, "-m", "rlvr_boundary.cli", "verify", str(src), "--task", "code",
           "--gold", str(gold), "--out", str(tmp_path / "out"), "--timeout", "30"]
    return cmd, env


@needs_boundary
@pytest.mark.parametrize("mode", ["bwrap", "unsafe"])
def test_nothing_outlives_a_killed_verify(tmp_path, mode):
    if mode == "unsafe" and os.geteuid() != 0:
        pytest.skip("without bubblewrap only root gets a PID namespace for the program")
    marker = "rx" + secrets.token_hex(4)
    prog = (CFORK + "import time\nfor _ in range(3):\n    if fork() == 0:\n        setsid()\n"
            f"        mark({marker!r})\n        time.sleep(300)\n"
            f"mark({marker!r})\ntime.sleep(300)\n")
    nobin = tmp_path / "nobin"
    nobin.mkdir()
    cmd, env = _verify_cmd(tmp_path, prog, env_path=str(nobin) if mode == "unsafe" else None)
    if mode == "unsafe":
        cmd.append("--unsafe-no-isolation")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while len(_procs_named(marker)) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_procs_named(marker)) == 4, "the attack did not start"
        # Two runs: the program's and the checker's (the tests are checked outside it).
        runs = sorted(sandbox_root().glob(f"run-{proc.pid}-*"))
        assert len(runs) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    for _ in range(100):  # parent-death signals: bubblewrap, then the PID namespace
        if not _procs_named(marker):
            break
        time.sleep(0.05)
    assert not _procs_named(marker), "sandboxed processes survived the killed verify"
    # The killed run's directory and cgroup are stale; the next start removes them.
    home = cgroup_home()
    clean_stale()  # what the next start does (a parallel test process may do it first)
    for run in runs:
        assert not run.exists()
        rid = run.name[4:]
        assert not [d for b in home.bases.values() for d in b.glob(f"{CGROUP_PREFIX}{rid}")]


def _pool_owner(q) -> None:
    """A stand-in for verify: a pool whose two workers are busy for minutes."""
    import time as _time

    from rlvr_boundary.verify.pool import TimeoutPool

    with TimeoutPool(_time.sleep, workers=2, timeout=600, memory_mb=None) as pool:
        q.put([s["proc"].pid for s in pool.slots])
        for _ in pool.map([(300,), (300,)]):
            pass


def test_math_workers_die_with_a_killed_verify():
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    owner = ctx.Process(target=_pool_owner, args=(q,))
    owner.start()
    try:
        workers = q.get(timeout=60)
        # Keyed on progress, not on a clock: wait until both workers sleep inside their item.
        deadline = time.monotonic() + 60  # hang guard only
        while not all(_in_sleep(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert all(_in_sleep(w) for w in workers), "the workers never started their items"
        assert all(_state(w) != "Z" for w in workers)
        os.kill(owner.pid, signal.SIGKILL)
        owner.join(10)
    finally:
        if owner.is_alive():
            owner.kill()
    for _ in range(100):
        alive = [w for w in workers if _state(w) != "Z"]
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, f"grading workers survived their killed parent: {alive}"


def _in_sleep(pid: int) -> bool:
    """Whether ``pid`` is blocked in ``clock_nanosleep`` (Python's ``time.sleep``)."""
    try:
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        if wchan not in ("", "0"):
            return "nanosleep" in wchan
        # No kernel symbol names: the syscall number (x86-64 230, arm64 115).
        return Path(f"/proc/{pid}/syscall").read_text().split()[0] in ("230", "115")
    except (OSError, IndexError):
        return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


# ----------------------------------------------------------------------------- refusal


def test_verify_refuses_code_grading_without_bubblewrap_unless_unsafe(tmp_path):
    empty = tmp_path / "nobin"
    empty.mkdir()
    cmd, env = _verify_cmd(tmp_path, "def f():\n    return 1\n", env_path=str(empty))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    err = " ".join(r.stderr.split())
    assert "bubblewrap" in err and "--unsafe-no-isolation" in err and "Traceback" not in err
    # The refusal says what the unsafe mode does not hold.
    assert "open network connections" in err and "write where anyone may write" in err
    assert not (tmp_path / "out").exists()
    if cgroup_home() is None:
        return
    res = tmp_path / "result.json"
    r = subprocess.run(cmd + ["--unsafe-no-isolation", "--json", str(res)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(res.read_text())["isolation"]["isolation"] == "none"
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    assert manifest["verifier"]["isolation"] == "none"
    assert manifest["verifier"]["unsafe_no_isolation"] is True


# ----------------------------------------------------------------------------- a laptop

_AS_USER = r'''
import json, os, sys
from rlvr_boundary.verify.code import grade_code
from rlvr_boundary.verify.sandbox import (SandboxOptions, SandboxUnavailable, isolation_status,
                                          run_python)
o = SandboxOptions(timeout=10.0, memory_mb=300, max_processes=12)
out = {"status": isolation_status(o), "uid": os.geteuid()}
if sys.argv[1] == "refuse":
    try:
        run_python("print(1)", o)
        out["refused"] = False
    except SandboxUnavailable as exc:
        out["refused"] = str(exc)
    # The explicit unsafe mode for a user who already runs many processes (RLIMIT_NPROC
    # counts them all): 40 sleepers, then a program with 5 children of its own.
    import subprocess
    busy = [subprocess.Popen(["sleep", "60"]) for _ in range(40)]
    try:
        u = SandboxOptions(timeout=4.0, max_processes=12, unsafe_no_isolation=True,
                           allow_processes=True)
        r = run_python("import subprocess\nps = [subprocess.Popen(['true']) for _ in range(5)]\n"
                       "print(sum(p.wait() == 0 for p in ps))", u)
        out["unsafe"] = [r.status, r.stdout.strip(), r.isolation, r.cgroup]
    finally:
        for b in busy:
            b.kill()
else:
    lib = "import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    out["write"] = run_python(lib + "print(libc.open(b'" + sys.argv[2] + "', 0o101, 0o644))",
                              o).stdout
    out["fork"] = run_python(lib + "n = 0\nfor _ in range(100):\n    p = libc.fork()\n"
                             "    if p == 0:\n        time.sleep(60)\n    n += p > 0\nprint(n)",
                             o).stdout
    mem = run_python(lib + "fork = libc.fork\ndef mark(m):\n    pass\n" + sys.argv[3], o)
    out["memory"] = [mem.status, mem.stdout]
    out["early"] = grade_code("def f():\n    return 0\nimport os\nos._exit(0)",
                              "assert f() == 1", o)
    out["uid_map"] = run_python("print(open('/proc/self/uid_map').read().split())", o).stdout
print(json.dumps(out))
'''


def _run_as_nobody(tmp_path: Path, args: list[str], cgroups: list[Path]) -> dict:
    src = str(Path(__file__).resolve().parents[2] / "src")
    join = "".join(f"echo $$ > {c}/cgroup.procs; " for c in cgroups)
    cmd = ["sh", "-c", join + 'exec "$@"', "sh", "setpriv", "--reuid", "65534", "--regid", "65534",
           "--clear-groups", "env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={src}", "TMPDIR=/tmp",
           "/usr/bin/python3", "-c", _AS_USER, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _laptop_ready() -> None:
    import shutil

    if os.geteuid() != 0 or not shutil.which("setpriv") or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root (to set up the user and its cgroup), setpriv and /usr/bin/python3")
    if subprocess.run(["/usr/bin/python3", "-c", "import sys; assert sys.version_info >= (3, 10)"]
                      ).returncode:
        pytest.skip("/usr/bin/python3 is too old")
    from rlvr_boundary.verify.sandbox import _can_traverse

    if not _can_traverse(str(Path(__file__).resolve().parents[2] / "src") + "/", 65534, 65534):
        pytest.skip("the source tree is not readable by uid 65534")
    home = cgroup_home()
    if home is None or home.version != "v1" or not HOLDS:
        pytest.skip("the delegated-cgroup simulation is written for cgroup v1 hierarchies")


def test_as_a_normal_user_without_a_cgroup_grading_refuses(tmp_path):
    _laptop_ready()
    out = _run_as_nobody(tmp_path, ["refuse"], [])
    assert out["uid"] == 65534 and out["status"]["isolation"] == "bwrap"
    assert out["refused"] and "cgroup" in out["refused"] and "Delegate=yes" in out["refused"]
    assert "leave its cgroup" in out["refused"]  # what the unsafe mode does not hold there
    assert out["unsafe"] == ["ok", "5", "bwrap", None]


def test_as_a_normal_user_in_a_delegated_cgroup_the_boundary_holds(tmp_path, aftermath):
    """A laptop: an unprivileged user, bubblewrap, and a cgroup delegated to that user."""
    _laptop_ready()
    home = cgroup_home()
    cgroups = [b / f"laptop-{os.getpid()}-{secrets.token_hex(3)}" for b in home.bases.values()]
    target = Path("/tmp") / f"pwned-laptop-{secrets.token_hex(4)}"  # writable by that user
    try:
        for c in cgroups:
            c.mkdir()
            for f in [c, *c.iterdir()]:
                os.chown(f, 65534, 65534)  # what systemd's Delegate=yes does
        out = _run_as_nobody(tmp_path, ["attack", str(target), MEMORY_HOGS.format(marker="x")],
                             cgroups)
    finally:
        for c in cgroups:
            for sub in c.glob(f"{CGROUP_PREFIX}*"):
                sub.rmdir()
            c.rmdir()
    assert out["status"]["usable"] and out["status"]["cgroup"] == "v1"
    assert out["write"].split() == ["-1"] and not target.exists()
    assert 0 < int(out["fork"]) < 12
    assert out["memory"][0] == "memory"
    assert [x for x in out["memory"][1].splitlines() if x.startswith("alive")] in (
        [], ["alive 0"], ["alive 1"])
    assert not out["early"]["correct"]
    inside = out["uid_map"].split()
    assert len(inside) == 3 and inside[0] == "['65534'," and inside[2] == "'1']"  # one uid mapped
