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
6. ``exec`` bubblewrap (or, in the explicitly unsafe mode, the harness).

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
CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


def main() -> None:
    cfg = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc: int, what: str) -> None:
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    for procs in cfg["cgroup_procs"]:
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")  # "0": the writing process itself
        finally:
            os.close(fd)
    if cfg["expose"]:
        check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
        for src, dst in cfg["expose"]:
            check(libc.mount(os.fsencode(src), os.fsencode(dst), None, MS_BIND | MS_REC, None),
                  f"bind {src}")
    for name, (soft, hard) in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    uid = cfg["drop_to"]
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid):
            raise OSError("could not drop to the unprivileged user")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    if os.getppid() != cfg["parent"]:
        os._exit(125)  # the grader died before the signal was armed
    os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # noqa: BLE001 - report and stop, never run the program
        sys.stderr.write(f"rlvr-boundary sandbox launcher: {exc}\n")
        os._exit(125)
