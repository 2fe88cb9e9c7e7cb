"""Run untrusted generated code against its tests, contained.

Every run gets:

- a fresh, empty temporary working directory (removed afterwards);
- a minimal environment: nothing of the parent's (no API keys, no tokens), only
  ``PATH``, ``LANG`` and ``HOME`` pointing at the work directory;
- resource limits set in the child before ``exec``: CPU seconds
  (``RLIMIT_CPU``), address space (``RLIMIT_AS``), file size (``RLIMIT_FSIZE``),
  open files (``RLIMIT_NOFILE``) and processes (``RLIMIT_NPROC``);
- a pids cgroup with ``pids.max`` when we may create one, because the kernel
  never enforces ``RLIMIT_NPROC`` for uid 0: run as root (containers, CI), a
  fork bomb would otherwise spawn thousands of processes until the deadline;
- its own session and process group, killed as a whole (``SIGKILL``) at the
  wall-clock deadline, whatever the code is doing;
- stdout and stderr captured through pipes and cut at ``max_output`` bytes;
- namespaces when the machine allows them (probed once): with bubblewrap
  (``bwrap``) a read-only root, a private ``/tmp``, no network, its own PID
  namespace, and the work directory as the only writable place; else
  util-linux ``unshare`` with its own user, network, PID and IPC namespaces (no
  network interface but a down loopback, no view of or signal to any process
  outside, every process dies with the namespace's init);
- in every case an audit hook in the program's own interpreter refusing writes
  outside the work directory, sockets, signals to other processes and, unless
  ``allow_processes``, starting processes (a second layer: ctypes can get
  around it; rlimits, the cgroup and namespaces are the first);
- stdin fed through the same ``select`` loop as the output pipes, so a program
  that never reads its input cannot block us past the deadline.

The isolation level ("bwrap", "unshare" or "rlimits") is returned with every
result so a run can say what protected it.

The code runs with ``python -I`` (isolated mode: no user site, no ``PYTHON*``
variables). Nothing here imports or ``exec``s model output in our process.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass
class SandboxOptions:
    """Limits of one sandboxed run."""

    timeout: float = 10.0
    """Wall-clock seconds before the whole process group is killed."""
    cpu_seconds: int = 10
    """RLIMIT_CPU (the kernel sends SIGXCPU then SIGKILL)."""
    memory_mb: int = 1024
    """RLIMIT_AS, address space per process."""
    max_file_mb: int = 16
    """RLIMIT_FSIZE: largest file the code may write."""
    max_processes: int = 32
    """RLIMIT_NPROC (effective inside a user namespace or for non-root users)."""
    max_output: int = 64 * 1024
    """Bytes of stdout and of stderr kept."""
    max_input: int = 1 << 22
    """Bytes of stdin fed to the program at most."""
    isolation: str = "auto"
    """'auto' (namespaces when available), 'namespaces', or 'rlimits'."""
    allow_processes: bool = False
    """Let the program start processes (fork, subprocess, os.system). Off by
    default: the audit hook refuses them; the process limit below holds either way."""


@dataclass
class RunResult:
    """Outcome of one sandboxed run."""

    status: str
    """'ok' (exit 0), 'failed' (non-zero exit), 'timeout', 'memory', or 'error'."""
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    isolation: str
    pids_cgroup: bool = False
    """True when a pids cgroup capped the number of processes (see :func:`pids_cgroup_base`)."""


# Prepended to the user program unless bubblewrap isolates the file system: a
# Python audit hook that refuses writes outside the work directory, sockets and
# signals to other processes. It is a second layer (ctypes can get around it);
# namespaces and rlimits are the first.
_GUARD = """\
def _rlvr_guard(_NO_PROCS):
    import os, sys
    work = os.path.realpath(os.getcwd())
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    def inside(p):
        try:
            p = os.path.realpath(os.fsdecode(p))
        except Exception:
            return False
        return p == work or p.startswith(work + os.sep)
    def hook(event, args):
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            if isinstance(path, int) or path is None:
                return
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & write_flags)
            if writing and not inside(path):
                raise PermissionError("rlvr-boundary sandbox: writing outside the work directory")
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                       "os.truncate", "os.utime", "shutil.rmtree"):
            if args and not isinstance(args[0], int) and not inside(args[0]):
                raise PermissionError("rlvr-boundary sandbox: changing files outside the work directory")
        elif event in ("os.rename", "os.link", "os.symlink"):
            if not all(inside(a) for a in args[:2] if not isinstance(a, int)):
                raise PermissionError("rlvr-boundary sandbox: changing files outside the work directory")
        elif event.startswith("socket.") and event not in ("socket.__new__", "socket.gethostname"):
            raise PermissionError("rlvr-boundary sandbox: network access is disabled")
        elif event in _NO_PROCS:
            raise PermissionError("rlvr-boundary sandbox: starting processes is disabled")
        elif event in ("os.kill", "os.killpg"):
            pid = args[0]
            if pid <= 0 or pid == os.getppid() or event == "os.killpg":
                raise PermissionError("rlvr-boundary sandbox: signals outside the program are disabled")
    sys.addaudithook(hook)
_rlvr_guard(%s)
del _rlvr_guard
"""
_PROCESS_EVENTS = ("os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system",
                   "subprocess.Popen", "pty.spawn", "os.startfile")


@lru_cache(maxsize=1)
def namespace_prefix() -> tuple[tuple[str, ...], str] | None:
    """How to isolate a run in namespaces here: (command prefix, kind), or None.

    ``kind`` is "bwrap" (bubblewrap: read-only root, private /tmp, no network,
    own PID namespace) or "unshare" (util-linux: own user, network, PID and IPC
    namespaces; the file system is guarded by the audit hook only).
    """
    bwrap = shutil.which("bwrap")
    if bwrap:
        cmd = (bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
               "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *_interpreter_binds())
        if _works(cmd):
            return cmd, "bwrap"
    unshare = shutil.which("unshare")
    if unshare:
        cmd = (unshare, "--user", "--map-root-user", "--net", "--pid", "--ipc", "--fork",
               "--kill-child", "--mount-proc")
        if _works(cmd):
            return cmd, "unshare"
        cmd = cmd[:-1]  # --mount-proc needs a mount namespace some kernels refuse
        if _works(cmd):
            return cmd, "unshare"
    return None


def _interpreter_binds() -> tuple[str, ...]:
    """Read-only binds that re-expose this interpreter when it lives under /tmp.

    The private ``/tmp`` would otherwise hide a virtual environment created
    there (as CI does on a fresh clone).
    """
    out: list[str] = []
    for p in sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}):
        if p == "/tmp" or p.startswith("/tmp/"):
            out += ["--ro-bind", p, p]
    return tuple(out)


def _works(prefix: tuple[str, ...]) -> bool:
    try:
        return subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True,
                              timeout=20, cwd=tempfile.gettempdir()).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@lru_cache(maxsize=1)
def pids_cgroup_base() -> Path | None:
    """A cgroup directory where we may create pids-limited groups, or None.

    ``RLIMIT_NPROC`` counts the processes of a user and is never enforced for
    uid 0 (the kernel exempts root), so when we run as root a fork bomb is only
    stopped by the wall clock. A cgroup with ``pids.max`` caps it for anyone.
    Tried: cgroup v1 ``/sys/fs/cgroup/pids`` and the cgroup v2 root; probed by
    creating and removing a test group.
    """
    for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
        if not (base / "cgroup.procs").exists():
            continue
        probe = base / f"rlvr-sbx-probe-{os.getpid()}"
        try:
            probe.mkdir()
            try:
                (probe / "pids.max").write_text("8")
                return base
            finally:
                probe.rmdir()
        except OSError:
            continue
    return None


def _new_pids_cgroup(max_processes: int) -> Path | None:
    base = pids_cgroup_base()
    if base is None:
        return None
    path = Path(tempfile.mkdtemp(prefix="rlvr-sbx-", dir=base))
    try:
        (path / "pids.max").write_text(str(max_processes))
    except OSError:
        _remove_cgroup(path)
        return None
    return path


def _remove_cgroup(path: Path) -> None:
    for _ in range(200):  # the killed processes leave the group as the kernel reaps them
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.01)


def _limits(opts: SandboxOptions, cgroup: Path | None = None):
    procs = None if cgroup is None else os.fsencode(cgroup / "cgroup.procs")

    def apply() -> None:  # runs in the child between fork and exec
        if procs is not None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # "0" is the writing process itself
            finally:
                os.close(fd)
        mb = 1024 * 1024
        resource.setrlimit(resource.RLIMIT_CPU, (opts.cpu_seconds, opts.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (opts.memory_mb * mb, opts.memory_mb * mb))
        resource.setrlimit(resource.RLIMIT_FSIZE, (opts.max_file_mb * mb, opts.max_file_mb * mb))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_NPROC, (opts.max_processes, opts.max_processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run_python(program: str, opts: SandboxOptions | None = None, *, stdin: str = "") -> RunResult:
    """Run a Python program in the sandbox and report how it ended.

    Parameters
    ----------
    program
        Source code (the completion followed by its tests).
    opts
        Limits; see :class:`SandboxOptions`.
    stdin
        Text fed to the program's standard input.
    """
    opts = opts or SandboxOptions()
    found = None
    if opts.isolation in ("auto", "namespaces"):
        found = namespace_prefix()
        if found is None and opts.isolation == "namespaces":
            raise RuntimeError("namespace isolation was requested but is not available here")
    level = found[1] if found else "rlimits"
    work = Path(tempfile.mkdtemp(prefix="rlvr-sbx-"))
    cgroup = None
    try:
        src = work / "main.py"
        guard = _GUARD % (repr(()) if opts.allow_processes else repr(_PROCESS_EVENTS))
        src.write_bytes((guard + program).encode("utf-8", errors="replace"))
        cgroup = _new_pids_cgroup(opts.max_processes)
        prefix: tuple[str, ...] = ()
        if found and found[1] == "bwrap":
            # The work directory is the only writable place (besides a private /tmp).
            prefix = (*found[0], "--bind", str(work), str(work), "--chdir", str(work))
        elif found:
            prefix = found[0]
        cmd = [*prefix, sys.executable, "-I", "-B", str(src)]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(work),
               "PYTHONHASHSEED": "0"}
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=_limits(opts, cgroup))
        out, err, timed_out = _communicate(proc, stdin.encode("utf-8", errors="replace"), opts)
        seconds = time.monotonic() - t0
        rc = proc.returncode
        if timed_out:
            status = "timeout"
        elif rc == 0:
            status = "ok"
        elif rc in (-signal.SIGXCPU, -signal.SIGKILL) and seconds < opts.timeout:
            status = "timeout"  # the CPU limit fired before the wall clock
        elif b"MemoryError" in err:
            status = "memory"
        else:
            status = "failed"
        return RunResult(status, rc, _text(out, opts), _text(err, opts), seconds, level,
                         cgroup is not None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if cgroup is not None:
            _remove_cgroup(cgroup)


def _communicate(proc: subprocess.Popen, data: bytes, opts: SandboxOptions):
    """Read both pipes with size caps until exit or the deadline; kill the group then."""
    import selectors

    deadline = time.monotonic() + opts.timeout
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    sel = selectors.DefaultSelector()
    for f in bufs:
        sel.register(f, selectors.EVENT_READ)
    # stdin is fed through the selector too: a program that never reads its input
    # must not block us on a full pipe past the deadline.
    todo = memoryview(data[: opts.max_input])
    if todo:
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdin, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    timed_out = False
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 0.5)):
            if key.fileobj is proc.stdin:
                try:
                    todo = todo[os.write(key.fd, todo[:65536]):]
                except (BrokenPipeError, BlockingIOError, OSError) as exc:
                    if isinstance(exc, BlockingIOError):
                        continue
                    todo = todo[:0]
                if not todo:
                    sel.unregister(proc.stdin)
                    proc.stdin.close()
                continue
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            buf = bufs[key.fileobj]
            if len(buf) < opts.max_output:
                buf.extend(chunk[: opts.max_output - len(buf)])
    if not timed_out:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    _kill_group(proc)
    sel.close()
    if not proc.stdin.closed:
        proc.stdin.close()
    for f in bufs:
        f.close()
    return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), timed_out


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the whole process group (repeatedly: a fork bomb keeps forking)."""
    for _ in range(50):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.01)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _text(b: bytes, opts: SandboxOptions) -> str:
    s = b.decode("utf-8", errors="replace")
    return s + ("\n[output cut]" if len(b) >= opts.max_output else "")
