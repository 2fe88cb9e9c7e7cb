"""Run untrusted generated code against its tests, behind a boundary.

The boundary holds by construction, not by checks inside the program's own
process (which the program can undo). Every run gets:

- **an unprivileged user**: uid/gid 65534 inside its own user namespace, with no
  capabilities, ``no_new_privs``, and no right to create further user
  namespaces. Run as root (CI, containers), the launcher first drops the host
  uid to 65534 too, so the program is nobody on the host as well; run as a
  normal user (a laptop), 65534 maps to that user, who owns nothing the
  sandbox can reach writable except its work directory;
- **its own mount, PID, network, IPC, UTS and cgroup namespaces** (bubblewrap,
  ``bwrap``): a root file system made of read-only binds of the system
  directories and of this interpreter's directories only (no ``/home``,
  ``/root``, ``/tmp`` or ``/run`` of the host), a read-only empty ``/tmp``, a
  private ``/proc`` of its own PID namespace (the host's ``/proc`` is not
  underneath it, and without capabilities it cannot be unmounted anyway), no
  ``/sys``, a minimal ``/dev``, no network interface but a down loopback, and an
  empty work directory (``/sandbox/work``) as the only writable place;
- **one cgroup for the whole run** (cgroup v2, or the v1 ``pids`` and
  ``memory`` hierarchies), created and limited by the grader before the program
  starts: ``pids.max`` (processes) and the memory limit (all processes together,
  swap included) are written from outside; the cgroup files are neither mounted
  in the sandbox nor owned by the program's user;
- **the deadline kills the cgroup**: ``cgroup.kill`` (v2), or ``pids.max = 0``
  then SIGKILL to every member until it is empty (v1; no member can fork in
  between), so a descendant that left the process group or the session dies
  too; when the PID namespace's first process dies the kernel kills the rest;
- **death with the grader**: the launcher sets a parent-death signal
  (SIGKILL) and bubblewrap's ``--die-with-parent`` passes it on, so when
  ``verify`` is killed the program goes with it; the work directory and cgroup
  of a killed run are removed by the next run (a run directory is in use
  exactly while its lock file is locked by the grader that made it);
- **no host socket**: a seccomp filter (:func:`rlvr_boundary.verify._launch.socket_filter`)
  refuses Unix sockets, datagram socket pairs and io_uring, so a socket file in
  a bound directory cannot be reached;
- rlimits as a second layer (CPU seconds, address space per process, file size,
  open files, no core dumps), a clean environment (nothing of the parent's),
  ``python -I``, stderr cut at ``max_output``; stdin is a file of the grader's
  (any size, opened and unlinked before the launch), and a stdio run's stdout
  too (kept up to ``stdout_limit``);
- **a pass is reported by a harness**, not inferred from the exit status:
  the grader hands a per-run random token to the harness
  (:mod:`rlvr_boundary.verify._harness`), which writes it back on a separate
  pipe only when its work ended normally. With :func:`run_split` the tests run
  in a second sandbox, the checker, that calls the program's functions over a
  pipe of plain data: the verdict is the checker's token, out of the program's
  reach. With :func:`run_python` and tests, program and tests share one
  interpreter (in-process: hardened, not proof against a program written
  against the harness).

Where bubblewrap or a usable cgroup is missing, :func:`run_python` refuses
(:class:`SandboxUnavailable`, saying what to install, how to run, and what the
unsafe mode would not hold) unless the caller asks for ``unsafe_no_isolation``:
then, as root, the program runs as nobody below a root init in its own PID
namespace (it cannot leave its cgroup and dies with the grader), with the host's
file system and network; as a normal user it runs as that user. Every result
says ``isolation = "none"``.

Nothing here imports or ``exec``'s model output in our process.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rlvr_boundary.verify.runtypes import (  # noqa: F401 - re-exported
    RunResult,
    SandboxOptions,
    SandboxUnavailable,
    public_url,
)

NOBODY = 65534
SANDBOX_SRC = "/sandbox/src"
SANDBOX_WORK = "/sandbox/work"
CGROUP_PREFIX = "rlvr-sbx-"
_RUN_ID = re.compile(r"^[0-9]+-[0-9a-f]{12}$")  # "<grader pid>-<random>", see _run
_HERE = Path(__file__).resolve().parent
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")


# ----------------------------------------------------------------------------- cgroups


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every mount (from mountinfo)."""
    out = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) >= 5 and len(rparts) >= 3:
            out.append((parts[4].replace("\\040", " "), rparts[0], set(rparts[2].split(","))))
    return out


def _own_cgroups() -> dict[str, str]:
    """Controller -> our cgroup path ('' for the v2 hierarchy)."""
    out = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            out[c] = path
    return out


def _writable_dir(base: Path) -> bool:
    probe = base / f"{CGROUP_PREFIX}probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


class CgroupHome:
    """Where this process may create one limited cgroup per run (v2 or v1).

    v2: our own cgroup must be able to enable the ``memory`` and ``pids``
    controllers for children. If it holds processes (ours), the kernel forbids
    that ("no internal processes"): we then move this process into a leaf
    ``rlvr-boundary-grader-<pid>`` first, as the systemd delegation rules ask.
    v1: the ``pids`` and ``memory`` hierarchies, each under our own cgroup there.
    """

    def __init__(self, version: str, bases: dict[str, Path]) -> None:
        self.version, self.bases = version, bases

    @staticmethod
    def find() -> "CgroupHome | None":
        mounts, own = _mounts(), _own_cgroups()
        v2 = next((m for m, t, _ in mounts if t == "cgroup2"), None)
        if v2 is not None and "" in own:
            home = CgroupHome._v2(Path(v2 + own[""].rstrip("/")))
            if home is not None:
                return home
        bases = {}
        for ctrl in ("pids", "memory"):
            mnt = next((m for m, t, o in mounts if t == "cgroup" and ctrl in o), None)
            if mnt is None or ctrl not in own:
                return None
            base = Path(mnt + own[ctrl].rstrip("/"))
            if not (base / "cgroup.procs").exists() or not _writable_dir(base):
                return None
            bases[ctrl] = base
        return CgroupHome("v1", bases)

    @staticmethod
    def _v2(base: Path) -> "CgroupHome | None":
        try:
            available = set((base / "cgroup.controllers").read_text().split())
        except OSError:
            return None
        if not {"memory", "pids"} <= available or not _writable_dir(base):
            return None
        ctl = base / "cgroup.subtree_control"
        if {"memory", "pids"} <= set(ctl.read_text().split()):
            return CgroupHome("v2", {"": base})
        try:
            ctl.write_text("+memory +pids")
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return None
            leaf = base / f"rlvr-boundary-grader-{os.getpid()}"
            try:
                leaf.mkdir(exist_ok=True)
                (leaf / "cgroup.procs").write_text("0")
                ctl.write_text("+memory +pids")
            except OSError:
                return None
        return CgroupHome("v2", {"": base})

    def create(self, run_id: str, opts: SandboxOptions) -> "RunCgroup":
        mem = opts.memory_mb * 1024 * 1024
        dirs = [b / f"{CGROUP_PREFIX}{run_id}" for b in self.bases.values()]
        cg = RunCgroup(self.version, dirs)
        try:
            for d in dirs:
                d.mkdir()
            if self.version == "v2":
                d = dirs[0]
                (d / "pids.max").write_text(str(opts.max_processes))
                (d / "memory.max").write_text(str(mem))
                if (d / "memory.swap.max").exists():
                    (d / "memory.swap.max").write_text("0")
            else:
                (dirs[0] / "pids.max").write_text(str(opts.max_processes))
                (dirs[1] / "memory.limit_in_bytes").write_text(str(mem))
                if (dirs[1] / "memory.memsw.limit_in_bytes").exists():
                    (dirs[1] / "memory.memsw.limit_in_bytes").write_text(str(mem))
        except OSError:
            cg.remove()
            raise
        return cg


class RunCgroup:
    """The cgroup(s) of one run: join, kill everything in it, tell an OOM kill, remove."""

    def __init__(self, version: str, dirs: list[Path]) -> None:
        self.version, self.dirs = version, dirs

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids(self) -> list[int]:
        out: set[int] = set()
        for d in self.dirs:
            try:
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(out)

    def kill(self) -> None:
        """SIGKILL every process in the cgroup; return when it is empty (or after ~5 s)."""
        d = self.dirs[0]
        if self.version == "v2" and (d / "cgroup.kill").exists():
            _write_quiet(d / "cgroup.kill", "1")
        else:
            _write_quiet(d / "pids.max", "0")  # nothing in it can fork from now on
        for _ in range(500):
            left = self.pids()
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def oom_killed(self) -> bool:
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        d = self.dirs[0] if self.version == "v2" else self.dirs[-1]
        try:
            for line in (d / name).read_text().splitlines():
                k, _, v = line.partition(" ")
                if k == "oom_kill" and int(v) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def remove(self) -> None:
        for d in self.dirs:
            for _ in range(300):  # killed processes leave as the kernel reaps them
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def _write_quiet(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError:
        pass


# ----------------------------------------------------------------------------- probing

_LOCK = threading.Lock()
_CACHE: dict = {}


def cgroup_home() -> CgroupHome | None:
    """The cgroup home of this process (probed once), or None."""
    with _LOCK:
        if "cgroup" not in _CACHE:
            _CACHE["cgroup"] = CgroupHome.find()
        return _CACHE["cgroup"]


def _bwrap_path(opts: SandboxOptions) -> str | None:
    if opts.bwrap == "":
        return None
    return opts.bwrap or shutil.which("bwrap")


def isolation_status(opts: SandboxOptions | None = None) -> dict:
    """What protects a run with ``opts`` here (for manifests and ``--help`` texts).

    Returns
    -------
    dict
        ``isolation`` ('bwrap' or 'none'), ``cgroup`` ('v2', 'v1' or None),
        ``uid`` (the program's host uid), ``usable`` (bool) and ``missing`` (what
        to install or change when not usable).
    """
    opts = opts or SandboxOptions()
    if opts.fusion_url:
        return {"isolation": "sandbox-fusion", "url": public_url(opts.fusion_url), "cgroup": None,
                "uid": None, "usable": True, "missing": [], "unsafe_no_isolation": False}
    bwrap = _bwrap_path(opts)
    key = ("bwrap", bwrap)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = bwrap is not None and _bwrap_works(bwrap)
        works = _CACHE[key]
    home = cgroup_home()
    missing = []
    if not works:
        missing.append("bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf "
                       "install bubblewrap; it also needs unprivileged user namespaces)"
                       if bwrap is None else f"a working bubblewrap ({bwrap} failed to start "
                       "a sandbox: are user namespaces enabled?)")
    if home is None:
        missing.append("a cgroup for memory and process limits (run as root, or inside a "
                       "delegated cgroup: systemd-run --user --scope -p Delegate=yes "
                       "rlvr-boundary verify ...)")
    usable = not missing or opts.unsafe_no_isolation
    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    return {"isolation": "bwrap" if works else "none", "cgroup": home.version if home else None,
            "uid": uid, "usable": usable, "missing": missing,
            "unsafe_no_isolation": bool(missing) and opts.unsafe_no_isolation}


def _bwrap_works(bwrap: str) -> bool:
    """Start one real sandbox (the full launch chain) running ``pass``."""
    opts = SandboxOptions(timeout=20, bwrap=bwrap)
    try:
        res = _run({"program.py": b"pass\n"}, "stdio", opts, use_bwrap=True, home=None)
    except OSError:
        return False
    return res.status == "ok"


def unsafe_caveat() -> str:
    """What ``--unsafe-no-isolation`` does not hold here (the refusal says it; see
    docs/reliability.md)."""
    if os.geteuid() != 0:
        return ("it can then read and write whatever this user can, open network "
                "connections, and leave its cgroup (a delegated cgroup is this user's), so "
                "the deadline, the process and memory limits and the cleanup after a killed "
                "verify hold only for programs that do not try.")
    held = ("its cgroup, deadline and process and memory limits still hold" if
            cgroup_home() is not None else "without a cgroup here only per-process limits "
            "hold (CPU seconds, address space, and a process count for nobody)")
    return ("the program then runs as nobody, in its own PID namespace, on this machine's file "
            "system and network: it can read what any user may read, write where anyone may "
            f"write (/tmp, /dev/shm) and open network connections; {held}.")


def require_isolation(opts: SandboxOptions) -> dict:
    """:func:`isolation_status`, or :class:`SandboxUnavailable` when it does not hold."""
    st = isolation_status(opts)
    if not st["usable"]:
        raise SandboxUnavailable(
            "code grading needs a sandbox that holds and this machine lacks "
            + " and ".join(st["missing"])
            + ". Install what is missing, or pass --unsafe-no-isolation to run generated code "
              "without the boundary: " + unsafe_caveat())
    return st


# ----------------------------------------------------------------------------- run dirs


def sandbox_root() -> Path:
    """Parent of the run directories of this user (``$TMPDIR/rlvr-boundary-sandbox-<uid>``)."""
    return Path(tempfile.gettempdir()) / f"rlvr-boundary-sandbox-{os.geteuid()}"


def _ensure_root() -> Path:
    root = sandbox_root()
    try:
        root.mkdir(mode=0o711)
    except FileExistsError:
        pass
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise OSError(f"{root} is not a private directory of this user; remove it")
    os.chmod(root, 0o711)
    return root


def clean_stale() -> list[str]:
    """Remove the run directories and cgroups of runs whose grader is gone.

    A run directory is live while its ``lock`` file is locked (``flock``) by the
    grader process that made it; the kernel drops the lock when that process
    dies, however it dies. A cgroup ``rlvr-sbx-<id>`` is stale when run ``<id>``
    is not live; its processes are killed before it is removed.

    Returns
    -------
    list of str
        The run ids cleaned.
    """
    root = sandbox_root()
    cleaned = []
    live: set[str] = set()
    if root.is_dir():
        for d in root.iterdir():
            rid = d.name[4:]
            if not d.name.startswith("run-") or not _RUN_ID.match(rid):
                continue
            if _is_live(d):
                live.add(rid)
                continue
            _rmtree(d)
            cleaned.append(rid)
    home = cgroup_home()
    if home is not None:
        for base in home.bases.values():
            for d in base.glob("rlvr-boundary-grader-*"):  # v2 leaves of finished graders
                if d.name != f"rlvr-boundary-grader-{os.getpid()}":
                    try:
                        d.rmdir()  # only ever succeeds on an empty group
                    except OSError:
                        pass
            for d in base.glob(f"{CGROUP_PREFIX}*"):
                rid = d.name[len(CGROUP_PREFIX):]
                # Only names this code makes: never touch groups of other tools or versions.
                if rid in live or not _RUN_ID.match(rid) or not d.is_dir():
                    continue
                if (root / f"run-{rid}").exists() and _is_live(root / f"run-{rid}"):
                    continue
                cg = RunCgroup(home.version, [d])
                cg.kill()
                cg.remove()
                cleaned.append(rid)
    return sorted(set(cleaned))


def _is_live(run_dir: Path) -> bool:
    lock = run_dir / "lock"
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        # Being created right now (mkdir, then the lock): live for a minute.
        try:
            return time.time() - run_dir.stat().st_mtime < 60
        except OSError:
            return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _rmtree(path: Path) -> None:
    def fix(func, p, _exc):  # a program may have left directories without write permission
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
        except OSError:
            pass
        try:
            func(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=fix)
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)


_CLEANED = False


def _clean_once() -> None:
    global _CLEANED
    with _LOCK:
        if _CLEANED:
            return
        _CLEANED = True
    clean_stale()


# ----------------------------------------------------------------------------- the run


def run_python(program: str, opts: SandboxOptions | None = None, *, stdin: str = "",
               tests: str | None = None, stdout_limit: int | None = None) -> RunResult:
    """Run a Python program (and its tests) in the sandbox and report how it ended.

    Parameters
    ----------
    program
        Source code of the program (model output).
    opts
        Limits; see :class:`SandboxOptions`.
    stdin
        Text on the program's standard input (a file of the grader's, any size).
    tests
        Test statements run after the program in the same interpreter (in-process:
        see :func:`run_split` for the form checked outside the program); the run
        passes only when the harness reports that the last one returned. None: the
        program alone (its output is judged by the caller).
    stdout_limit
        With ``tests=None``: the program's stdout goes to a file of the grader's and
        at most this many bytes are kept (``RunResult.output_cut`` says when more
        was written; the file-size limit of the run is raised to it). None: stdout
        is a pipe cut at ``opts.max_output``.

    Raises
    ------
    SandboxUnavailable
        When no isolation that holds is available and ``opts.unsafe_no_isolation``
        is not set.
    """
    opts = opts or SandboxOptions()
    if opts.fusion_url:
        from rlvr_boundary.verify.fusion import run_fusion

        return run_fusion(program, opts, stdin=stdin, tests=tests,
                          stdout_limit=stdout_limit if tests is None else None)
    st = require_isolation(opts)
    _clean_once()
    files = {"program.py": program.encode("utf-8", errors="replace")}
    return _run(files, "assert" if tests is not None else "stdio", opts,
                use_bwrap=st["isolation"] == "bwrap", home=cgroup_home(),
                stdin_data=stdin.encode("utf-8", errors="replace"),
                fd_data=None if tests is None else tests.encode("utf-8", errors="replace"),
                stdout_limit=stdout_limit if tests is None else None)


def run_split(program: str, opts: SandboxOptions | None = None, *, tests: str | None = None,
              names: list[str] = (), modules: list[str] = (), apps: dict | None = None,
              timeout: float | None = None) -> tuple[RunResult, RunResult]:
    """Check a program from outside its process: two sandboxes joined by a pipe of data.

    The program runs in one sandbox (harness mode ``serve``): it loads, then
    answers requests to call its functions with plain-data arguments, sending
    back plain-data results. The tests run in a second sandbox (mode ``check``)
    with every program name in ``names`` bound to a stub that forwards calls over
    the pipe. The verdict is the checker's token: the program never sees the
    tests' source, the expected values, the checker's token or its interpreter.

    Parameters
    ----------
    program
        Source code of the program (model output).
    opts
        Limits of each of the two runs.
    tests
        Test code run by the checker (None with ``apps``).
    names
        Names of the program the tests use (bound to stubs in the checker).
    modules
        Standard-library modules the tests use without importing them (the
        program's imports are not visible to the checker).
    apps
        ``{"fn_name": str, "cases": [[args, expected], ...]}``: APPS call-based
        cases, compared by the checker; each call has ``opts.timeout`` seconds.
    timeout
        Deadline of both runs (default ``opts.timeout``).

    Returns
    -------
    (RunResult, RunResult)
        The program's run and the checker's run. The check passed when the
        checker's ``status`` is ``ok``; its ``marker`` is ``timeout`` when a call
        outlived its time and starts with ``unsplittable`` when the tests passed the
        program something that is not plain data (grade in-process instead).

    Raises
    ------
    SandboxUnavailable
        As :func:`run_python`.
    """
    from dataclasses import replace

    opts = opts or SandboxOptions()
    st = require_isolation(opts)
    _clean_once()
    home, use_bwrap = cgroup_home(), st["isolation"] == "bwrap"
    if timeout is not None:
        opts = replace(opts, timeout=timeout)
    cfg = {"names": list(names), "modules": list(modules), "apps": apps,
           "call_timeout": opts.timeout if apps is not None else None}
    cand_files = {"program.py": program.encode("utf-8", errors="replace")}
    if apps is not None:
        cand_files["solution"] = b""  # look fn_name up on Solution() when it is not global
    chk_files = {"check.json": json.dumps(cfg).encode("utf-8")}
    if tests is not None:
        chk_files["tests.py"] = tests.encode("utf-8", errors="replace")
    chk_opts = replace(opts, allow_processes=False)
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    stop = threading.Event()
    box: dict = {}

    def serve() -> None:
        try:
            box["res"] = _run(cand_files, "serve", opts, use_bwrap=use_bwrap, home=home,
                              channel_fds=(req_r, resp_w), stop=stop)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            box["exc"] = exc

    t = threading.Thread(target=serve, name="rlvr-sandbox-serve", daemon=True)
    t.start()
    try:
        chk = _run(chk_files, "check", chk_opts, use_bwrap=use_bwrap, home=home,
                   channel_fds=(req_w, resp_r))
    finally:
        stop.set()  # the verdict is in: the program's run ends now
        t.join()
    if "exc" in box:
        raise box["exc"]
    return box["res"], chk


def _run(files: dict[str, bytes], mode: str, opts: SandboxOptions, *, use_bwrap: bool,
         home: CgroupHome | None, stdin_data: bytes | None = None, fd_data: bytes | None = None,
         stdout_limit: int | None = None, channel_fds: tuple[int, int] | None = None,
         stop: threading.Event | None = None) -> RunResult:
    """One sandboxed run of the harness in ``mode`` with ``files`` in its source directory.

    ``stdin_data`` and ``fd_data`` (the tests of an in-process run) are files of the
    grader, opened and unlinked before the launch: the program sees an open
    descriptor (the tests' one is closed before it starts), never a path.
    ``channel_fds`` are passed to the harness and closed here; ``stop`` ends the run
    early (not a timeout).
    """
    root = _ensure_root()
    # As root the program always runs as nobody: with bubblewrap inside its namespaces;
    # without it (the explicitly unsafe mode) below a root init in a PID namespace, so it
    # cannot leave its cgroup and dies with the grader either way.
    drop = os.geteuid() == 0
    pidns = drop and not use_bwrap
    run_id = f"{os.getpid()}-{secrets.token_hex(6)}"
    run_dir = root / f"run-{run_id}"
    run_dir.mkdir(mode=0o711)
    lock_fd = os.open(run_dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    cg: RunCgroup | None = None
    fds: list[int] = list(channel_fds or ())
    out_fd = None
    try:
        src, work = run_dir / "src", run_dir / "work"
        src.mkdir(mode=0o755)
        if not use_bwrap:  # with bubblewrap the work directory is a tmpfs in the sandbox
            work.mkdir(mode=0o700)
            if drop:
                os.chown(work, NOBODY, NOBODY)
        shutil.copyfile(_HERE / "_harness.py", src / "harness.py")
        for name, data in files.items():
            (src / name).write_bytes(data)
        (src / "options.txt").write_text("processes" if opts.allow_processes else "no-processes")
        for f in src.iterdir():
            os.chmod(f, 0o644)
        in_fd = _private_file(run_dir / "stdin", stdin_data or b"")
        fds.append(in_fd)
        extra = list(channel_fds or ())
        if fd_data is not None:
            extra.append(_private_file(run_dir / "tests", fd_data))
            fds.append(extra[-1])
        if stdout_limit is not None:
            out_fd = os.open(run_dir / "stdout", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                             0o600)
            os.unlink(run_dir / "stdout")
            fds.append(out_fd)
        if home is not None:
            cg = home.create(run_id, opts)
        token = secrets.token_hex(16).encode("ascii")
        tok_r, tok_w = os.pipe()
        res_r, res_w = os.pipe()
        fds += [tok_r, tok_w, res_r, res_w]
        os.write(tok_w, token)
        os.close(tok_w)
        fds.remove(tok_w)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
        expose: list[list[str]] = []
        cover: list[str] = []
        tail = [mode, str(tok_r), str(res_w), run_id, *map(str, extra)]
        if use_bwrap:
            env.update(HOME=SANDBOX_WORK, TMPDIR=SANDBOX_WORK)
            argv = _bwrap_argv(_bwrap_path(opts), run_dir, drop, expose, opts.work_mb)
            argv += [sys.executable, "-I", "-B", f"{SANDBOX_SRC}/harness.py", *tail]
            cwd = "/"
        else:
            env.update(HOME=str(work), TMPDIR=str(work))
            argv = [sys.executable, "-I", "-B", str(src / "harness.py"), *tail]
            cwd = str(work)
            if pidns:
                for p in _interpreter_dirs():
                    if not _can_traverse(p + "/", NOBODY, NOBODY):
                        point = run_dir / f"mnt{len(expose)}"
                        point.mkdir(mode=0o755)
                        expose.append([p, str(point)])
                        cover.append(_first_closed(p))
        mb = 1024 * 1024
        fsize = max(opts.max_file_mb * mb, (stdout_limit or 0) + 1)
        rlimits = {"RLIMIT_CPU": [opts.cpu_seconds, opts.cpu_seconds + 1],
                   "RLIMIT_AS": [opts.memory_mb * mb, opts.memory_mb * mb],
                   "RLIMIT_FSIZE": [fsize, fsize],
                   "RLIMIT_NOFILE": [256, 256], "RLIMIT_CORE": [0, 0]}
        if cg is None:
            # Without a pids cgroup, RLIMIT_NPROC is the only cap. It counts every process
            # of the user (and does not bind root): allow what the user already runs.
            n = _processes_of(NOBODY if drop else os.getuid()) + opts.max_processes
            rlimits["RLIMIT_NPROC"] = [n, n]
        cfg = {"cgroup_procs": cg.procs_files if cg else [], "expose": expose,
               "rlimits": rlimits, "drop_to": NOBODY if drop else None,
               "parent": os.getpid(), "argv": argv, "env": env, "seccomp": True,
               "bwrap": use_bwrap, "pidns": pidns, "cover": sorted(set(cover))}
        cmd = [sys.executable, "-I", "-S", "-B", str(_HERE / "_launch.py"), json.dumps(cfg)]
        t0 = time.monotonic()
        passed = (tok_r, res_w, *extra)
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=in_fd,
                                stdout=subprocess.PIPE if out_fd is None else out_fd,
                                stderr=subprocess.PIPE, pass_fds=passed, start_new_session=True)
        for fd in passed:
            os.close(fd)
            fds.remove(fd)
        out, err, timed_out = _communicate(proc, opts, cg, stop)
        seconds = time.monotonic() - t0
        os.set_blocking(res_r, False)
        try:
            reported = os.read(res_r, 256)
        except BlockingIOError:
            reported = b""
        completed = secrets.compare_digest(reported, token)
        marker = "" if completed else reported.decode("utf-8", "replace")
        cut = False
        if out_fd is not None:
            size = os.fstat(out_fd).st_size
            out = os.pread(out_fd, stdout_limit, 0)
            cut = size > stdout_limit
        rc = proc.returncode
        oom = cg.oom_killed() if cg else False
        if timed_out or marker == "timeout":
            status = "timeout"
        elif oom or b"MemoryError" in err:
            status = "memory"
        elif rc == 125 and b"sandbox launcher" in err:
            status = "error"
        elif rc == 0 and completed:
            status = "ok"
        elif rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (
                rc in (-signal.SIGKILL, 128 + signal.SIGKILL) and seconds >= opts.cpu_seconds
                and not (stop is not None and stop.is_set())):
            status = "timeout"  # the CPU limit (SIGXCPU, then SIGKILL) fired before the clock
        else:
            status = "failed"
            if rc == 0 and mode != "serve":
                err += b"\n[the program ended with status 0 before the harness reported the end " \
                       b"of the tests: not a pass]"
            if rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or cut:
                err += b"\n[the output reached the file-size limit of the run]"
        stdout = out.decode("utf-8", errors="replace") if out_fd is not None else _text(out, opts)
        return RunResult(status, rc, stdout, _text(err, opts), seconds,
                         "bwrap" if use_bwrap else "none", cg.version if cg else None,
                         completed, run_id, marker, cut)
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        if cg is not None:
            cg.kill()
            cg.remove()
        _rmtree(run_dir)
        os.close(lock_fd)


def _private_file(path: Path, data: bytes) -> int:
    """Write ``data`` to ``path``, open it read-only and unlink it: a descriptor, no path."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    rfd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    os.unlink(path)
    return rfd


def _interpreter_dirs() -> list[str]:
    """This interpreter's directories (a venv, a pyenv under /root ...) outside the system
    directories, without nested duplicates."""
    needed = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.abspath(sys.executable)),
              os.path.dirname(os.path.realpath(sys.executable))}
    shown = [p for p in sorted(needed, key=len)
             if not any(p == "/" + n or p.startswith(f"/{n}/") for n in _SYSTEM_DIRS)]
    tops: list[str] = []
    for p in shown:
        if not any(p == t or p.startswith(t + "/") for t in tops):
            tops.append(p)
    return tops


def _first_closed(path: str) -> str:
    """The first directory on the way to ``path`` that nobody may not search (``/root``
    for a pyenv under it)."""
    cur = Path("/")
    for name in Path(path).parts[1:]:
        cur = cur / name
        st = os.stat(cur)
        bit = 0o100 if st.st_uid == NOBODY else 0o010 if st.st_gid == NOBODY else 0o001
        if not st.st_mode & bit:
            return str(cur)
    return path


def _can_traverse(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid`` can reach ``path`` (search permission on every ancestor, no ACLs)."""
    parts = Path(path).parts
    cur = Path(parts[0])
    for name in parts[1:]:
        try:
            st = os.stat(cur)
        except OSError:
            return False
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return False
        cur = cur / name
    return True


def _processes_of(uid: int) -> int:
    """Processes (and threads) whose real uid is ``uid`` right now (Linux /proc)."""
    n = 0
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            st = p.stat()
            if st.st_uid == uid:
                n += len(os.listdir(p / "task"))
        except OSError:
            pass
    return n


def _bwrap_argv(bwrap: str, run_dir: Path, drop: bool, expose: list[list[str]],
                work_mb: int) -> list[str]:
    """The bubblewrap command line of one run (``expose`` gets the launcher's binds)."""
    argv = [bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
            "--unshare-uts", "--unshare-cgroup-try", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--disable-userns", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    for name in _SYSTEM_DIRS:
        p = "/" + name
        if os.path.islink(p):
            argv += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            argv += ["--ro-bind", p, p]
    binds: list[str] = []
    for p in _interpreter_dirs():
        if drop and not _can_traverse(p + "/", NOBODY, NOBODY):
            # bubblewrap resolves bind sources as nobody: bind the directory onto an
            # empty mount point in the launcher's private mount namespace first.
            point = run_dir / f"mnt{len(expose)}"
            point.mkdir(mode=0o755)
            expose.append([p, str(point)])
            binds += ["--ro-bind", str(point), p]
        else:
            binds += ["--ro-bind", p, p]
    # bubblewrap's /dev is a writable tmpfs (with /dev/shm): read-only like the rest
    # (device nodes such as /dev/null stay writable on a read-only mount). The
    # interpreter's binds come after the empty /tmp and before it is made read-only:
    # a venv under /tmp (a CI checkout, say) would otherwise be hidden by that tmpfs.
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
             "--tmpfs", "/tmp", *binds, "--remount-ro", "/tmp",
             "--ro-bind", str(run_dir / "src"), SANDBOX_SRC,
             # The work directory is a tmpfs of bounded size, not host disk.
             "--size", str(work_mb * 1024 * 1024), "--perms", "0700", "--tmpfs", SANDBOX_WORK,
             "--remount-ro", "/", "--chdir", SANDBOX_WORK]
    return argv


def _communicate(proc: subprocess.Popen, opts: SandboxOptions, cg: RunCgroup | None,
                 stop: threading.Event | None = None):
    """Read the output pipes with size caps until exit, ``stop`` or the deadline; then kill
    the whole run."""
    import selectors

    deadline = time.monotonic() + opts.timeout
    pipes = [f for f in (proc.stdout, proc.stderr) if f is not None]
    bufs = {f: bytearray() for f in pipes}
    sel = selectors.DefaultSelector()
    for f in pipes:
        sel.register(f, selectors.EVENT_READ)
    timed_out = stopped = False
    exited_at = None
    while True:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            timed_out = proc.poll() is None
            break
        if stop is not None and stop.is_set():
            stopped = True
            break
        if proc.poll() is not None:
            exited_at = exited_at or now
            if not sel.get_map() or now - exited_at > 0.2:
                break  # the main process ended; descendants holding the pipes do not keep us
        # A run that may be stopped looks at its flag every 10 ms.
        wait = min(left, 0.01 if stop is not None else 0.05 if exited_at else 0.5)
        if not sel.get_map():  # both pipes closed, the process not yet reaped
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
            continue
        for key, _ in sel.select(timeout=wait):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            buf = bufs[key.fileobj]
            if len(buf) < opts.max_output:
                buf.extend(chunk[: opts.max_output - len(buf)])
    if not timed_out and not stopped:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    # The whole run goes, wherever its processes went (other sessions, groups).
    if cg is not None:
        cg.kill()
    _kill_group(proc)
    sel.close()
    for f in pipes:
        f.close()
    out = bytes(bufs[proc.stdout]) if proc.stdout is not None else b""
    return out, bytes(bufs[proc.stderr]), timed_out


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the launcher's process group (bubblewrap and, without it, the program)."""
    for _ in range(50):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        # Reap the launcher once it is dead: a group of zombies still takes signals, and
        # would keep this loop going for its full half second.
        proc.poll()
        time.sleep(0.01)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _text(b: bytes, opts: SandboxOptions) -> str:
    s = b.decode("utf-8", errors="replace")
    return s + ("\n[output cut]" if len(b) >= opts.max_output else "")
