"""Start one sandboxed run: the trusted step between the grader and the program.

Run by :mod:`rlvr_boundary.verify.sandbox` as ``python -I -S -B _launch.py CONFIG``
(standard library only; no import of our package, nothing of the program is
read here). In this order, all before the program exists:

1. join the run's cgroup(s), whose limits the grader has already written;
2. (root only) in a private mount namespace, bind the interpreter directories
   that the unprivileged user cannot reach (``/root/...``) onto empty mount
   points, so bubblewrap, which resolves its bind sources as that user, can
   re-expose them at their own paths inside the sandbox;
3. set the rlimits;
4. (root only) drop to the unprivileged user: no supplementary groups, real,
   effective and saved uid/gid all that user, so no capability survives;
5. ``no_new_privs`` and a parent-death signal (SIGKILL), set after the uid
   change because changing credentials clears the parent-death signal; if the
   grader already died, stop here;
6. a seccomp filter (:func:`socket_filter`): handed to bubblewrap (``--seccomp``),
   which loads it just before it starts the harness, or, without bubblewrap,
   loaded here;
7. ``exec`` bubblewrap (or, in the explicitly unsafe mode, the harness).

As root without bubblewrap (the explicitly unsafe mode), steps 2-7 differ: the
launcher also enters a new PID namespace, hides each directory on the way to an
unreachable interpreter under an empty tmpfs and binds the interpreter back at
its own path (:func:`_cover`), then forks PID 1 of the namespace, a root init
(:func:`_init`: its own ``/proc``, a parent-death signal, it reaps and waits),
which forks the harness and does steps 3-7 there. The launcher and the init stay
root and never run the program; the program, as nobody, can neither signal them
nor write any ``cgroup.procs``, and when the init ends the kernel kills the rest
of its namespace. The exit status of the harness is passed up (128 + signal).

Any failure exits with status 125 and a message on stderr.
"""

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


#: Architecture -> (AUDIT_ARCH value, socket, socketpair, first io_uring call, x32 bit).
_ARCHES = {"x86_64": (0xC000003E, 41, 53, 425, 0x40000000),
           "aarch64": (0xC00000B7, 198, 199, 425, None)}


def socket_filter(machine: str | None = None) -> bytes | None:
    """A classic-BPF seccomp program that closes every way to a host Unix socket.

    Refused (EPERM): ``socket(AF_UNIX, ...)`` (no socket to ``connect`` to a path or
    ``sendto`` one) and ``socketpair`` of any type but ``SOCK_STREAM`` (a datagram
    pair may ``sendto`` any path). Refused (ENOSYS): the io_uring calls (their
    operations bypass seccomp), x32 calls and any other architecture's calls (the
    32-bit entry points of a 64-bit kernel). Everything else is allowed. A program's
    own ``socket.socketpair()`` (stream) keeps working; network sockets have no
    interface but a down loopback in the sandbox's network namespace.

    Returns None on an architecture without numbers here (the filter is not used).
    """
    import struct

    arch = _ARCHES.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit, nr_socket, nr_pair, nr_uring, x32 = arch
    ld, jeq, jge, ret, and_ = 0x20, 0x15, 0x35, 0x06, 0x54
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    prog: list = [(ld, 0, 0, 4), (jeq, 0, "nosys", audit), (ld, 0, 0, 0)]  # arch, then nr
    if x32 is not None:
        prog.append((jge, "nosys", 0, x32))
    prog += [(jeq, "socket", 0, nr_socket), (jeq, "pair", 0, nr_pair),
             (jeq, "nosys", 0, nr_uring), (jeq, "nosys", 0, nr_uring + 1),
             (jeq, "nosys", 0, nr_uring + 2), (ret, 0, 0, allow),
             "socket", (ld, 0, 0, 16), (jeq, "perm", 0, 1), (ret, 0, 0, allow),  # AF_UNIX = 1
             "pair", (ld, 0, 0, 24), (and_, 0, 0, 0xF), (jeq, 0, "perm", 1),  # SOCK_STREAM
             (ret, 0, 0, allow),
             "perm", (ret, 0, 0, eperm), "nosys", (ret, 0, 0, enosys)]
    labels, code = {}, []
    for item in prog:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)
    out = b""
    for i, (op, jt, jf, k) in enumerate(code):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        out += struct.pack("=HBBI", op, jt, jf, k)
    return out


def _load_filter(libc, prog: bytes) -> None:
    """Load a seccomp filter into this process (after ``no_new_privs``)."""

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {os.strerror(err)}")


def _check(libc, rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _cover(libc, cfg: dict) -> None:
    """Root without bubblewrap: make the interpreter reachable by the unprivileged user.

    In this process's private mount namespace each directory of ``cfg["cover"]``
    (an ancestor the user cannot search, such as ``/root``) is hidden under an
    empty tmpfs, and each interpreter directory, bound first onto its mount point
    in the run directory, is bound back at its own path inside it.
    """
    for top in cfg["cover"]:
        _check(libc, libc.mount(b"tmpfs", os.fsencode(top), b"tmpfs", 0, b"mode=0755,size=64k"),
               f"tmpfs on {top}")
    for src, point in cfg["expose"]:
        os.makedirs(src, mode=0o755, exist_ok=True)
        _check(libc, libc.mount(os.fsencode(point), os.fsencode(src), None, MS_BIND | MS_REC,
                                None), f"bind {src} back")


def _drop(libc, cfg: dict) -> None:
    """rlimits, the unprivileged user, no_new_privs, the parent-death signal."""
    for name, (soft, hard) in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    uid = cfg["drop_to"]
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid):
            raise OSError("could not drop to the unprivileged user")
    _check(libc, libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _exec(libc, cfg: dict) -> None:
    argv = list(cfg["argv"])
    prog = socket_filter() if cfg.get("seccomp") else None
    if prog is not None and cfg.get("bwrap"):
        r, w = os.pipe()  # bubblewrap reads the program from a descriptor to its end
        os.write(w, prog)
        os.close(w)
        os.set_inheritable(r, True)
        argv[1:1] = ["--seccomp", str(r)]
    elif prog is not None:
        _load_filter(libc, prog)
    os.execve(argv[0], argv, cfg["env"])


def _exit_like(status: int) -> None:
    """End this process the way a child with wait ``status`` ended (128 + signal)."""
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _init(libc, cfg: dict, alive: int) -> None:
    """PID 1 of the run's PID namespace (root, never runs the program).

    It starts the harness as the unprivileged user and waits for it, reaping
    orphans; when it ends, for whatever reason (the harness ended, the deadline's
    cgroup kill, the grader's death through the parent-death signal), the kernel
    kills every process left in the namespace. The program can neither signal it
    (another user) nor leave the namespace.
    """
    _check(libc, libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    import select

    if select.select([alive], [], [], 0)[0]:  # end of file: the launcher died before that
        os._exit(125)
    os.close(alive)
    MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
    # A /proc of this namespace: the program sees its own processes, not the host's.
    _check(libc, libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
           "mount /proc")
    child = os.fork()
    if child == 0:
        try:
            _drop(libc, cfg)
            _check(libc, libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death")
            if os.getppid() != 1:
                os._exit(125)
            _exec(libc, cfg)
        except BaseException as exc:  # noqa: BLE001
            sys.stderr.write(f"rlvr-boundary sandbox launcher: {exc}\n")
            os._exit(125)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(125)
        if pid == child:
            _exit_like(status)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    for procs in cfg["cgroup_procs"]:
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")  # "0": the writing process itself
        finally:
            os.close(fd)
    pidns = bool(cfg.get("pidns"))
    if cfg["expose"] or pidns:
        _check(libc, libc.unshare(CLONE_NEWNS | (CLONE_NEWPID if pidns else 0)), "unshare")
        _check(libc, libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
        for src, dst in cfg["expose"]:
            _check(libc, libc.mount(os.fsencode(src), os.fsencode(dst), None, MS_BIND | MS_REC,
                                    None), f"bind {src}")
    if pidns:  # root without bubblewrap: stay root here, run the program below an init
        _cover(libc, cfg)
        _check(libc, libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
        if os.getppid() != cfg["parent"]:
            os._exit(125)
        # The parent of PID 1 is outside its namespace (getppid() is 0 there): it learns
        # that the launcher is alive from a pipe whose write end only the launcher holds.
        alive, keep = os.pipe()
        init = os.fork()
        if init == 0:
            os.close(keep)
            try:
                _init(libc, cfg, alive)
            except BaseException as exc:  # noqa: BLE001
                sys.stderr.write(f"rlvr-boundary sandbox launcher: {exc}\n")
            os._exit(125)
        os.close(alive)
        _, status = os.waitpid(init, 0)
        _exit_like(status)
    _drop(libc, cfg)
    _check(libc, libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    if os.getppid() != cfg["parent"]:
        os._exit(125)  # the grader died before the signal was armed
    _exec(libc, cfg)


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # noqa: BLE001 - report and stop, never run the program
        sys.stderr.write(f"rlvr-boundary sandbox launcher: {exc}\n")
        os._exit(125)
