"""The test harness: the main script of every sandboxed run (standard library only).

Run inside the sandbox as ``python -I -B _harness.py MODE TOKEN_FD RESULT_FD RUN_ID``
next to ``program.py`` (and ``tests.py`` in MODE ``assert``). It reads the run's
random token from TOKEN_FD and closes it (on a SandboxFusion server: from a file
``token`` it then deletes, and it reports on the last line of stderr), compiles and runs the program, then
the tests, in one namespace (``__name__ == "__main__"``), and only when the last
test statement has returned writes the token to RESULT_FD. The grader counts a
pass only when it reads its token there: a program that ends the process early
(``os._exit(0)``, ``sys.exit(0)``, a signal, ``exec``) never reaches that line,
so an exit status of 0 alone is not a pass.

In MODE ``stdio`` (no tests here: the grader compares the output) a
``SystemExit`` with status 0 or None is the program's normal end.

What this does not protect against: a program written to attack the harness
itself can read the token from this process (its frames or its memory) before
the tests run and write it first. Tests that run inside the program's own
interpreter cannot be shielded from that program; the boundary (bubblewrap,
cgroup, unprivileged user) is what protects the machine, and stdio cases are
judged outside the sandbox.

A Python audit hook refuses writes outside the work directory, sockets,
signals outside the program and, unless processes are allowed, starting
processes. It is a second layer with a clear error message for honest
programs; it can be undone from inside the process and nothing relies on it.
"""

import os
import sys

_PROCESS_EVENTS = ("os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn",
                   "os.system", "subprocess.Popen", "pty.spawn", "os.startfile")


def _guard(no_processes: bool) -> None:
    work = os.path.realpath(os.getcwd())
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    banned = _PROCESS_EVENTS if no_processes else ()

    def inside(p) -> bool:
        try:
            p = os.path.realpath(os.fsdecode(p))
        except Exception:  # noqa: BLE001
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
                raise PermissionError("rlvr-boundary sandbox: changing files outside the work "
                                      "directory")
        elif event in ("os.rename", "os.link", "os.symlink"):
            if not all(inside(a) for a in args[:2] if not isinstance(a, int)):
                raise PermissionError("rlvr-boundary sandbox: changing files outside the work "
                                      "directory")
        elif event.startswith("socket.") and event not in ("socket.__new__", "socket.gethostname"):
            raise PermissionError("rlvr-boundary sandbox: network access is disabled")
        elif event in banned:
            raise PermissionError("rlvr-boundary sandbox: starting processes is disabled")
        elif event in ("os.kill", "os.killpg"):
            pid = args[0]
            if pid <= 0 or pid == os.getppid() or event == "os.killpg":
                raise PermissionError("rlvr-boundary sandbox: signals outside the program are "
                                      "disabled")

    sys.addaudithook(hook)


def _flush() -> None:
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:  # noqa: BLE001 - a program may have replaced or closed them
            pass


def _main() -> None:
    mode, token_src, result_dst = sys.argv[1], sys.argv[2], sys.argv[3]
    if token_src == "file":
        # Remote (SandboxFusion): the files sit in the current directory; the token
        # file is read and removed before the program starts.
        here = os.getcwd()
        with open(os.path.join(here, "token"), "rb") as fh:
            token = fh.read().strip()
        os.remove(os.path.join(here, "token"))
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        token = os.read(int(token_src), 128)
        os.close(int(token_src))
    with open(os.path.join(here, "program.py"), "rb") as fh:
        program = fh.read()
    tests = None
    if mode == "assert":
        with open(os.path.join(here, "tests.py"), "rb") as fh:
            tests = fh.read()
    with open(os.path.join(here, "options.txt"), encoding="ascii") as fh:
        no_processes = fh.read().strip() == "no-processes"
    sys.argv = ["main.py"]
    sys.path[0] = os.getcwd()
    _guard(no_processes)
    # A real __main__ module, so classes defined by the program pickle and the
    # program sees itself as the main script, as when run directly.
    import types

    main = types.ModuleType("__main__")
    main.__file__ = "main.py"
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    namespace = main.__dict__
    try:
        exec(compile(program, "main.py", "exec"), namespace)
        if tests is not None:
            exec(compile(tests, "tests.py", "exec"), namespace)
    except SystemExit as exc:
        if not (tests is None and exc.code in (None, 0)):
            _flush()
            sys.stderr.write("\nrlvr-boundary harness: the program exited "
                             f"(SystemExit({exc.code!r})) before the tests finished\n")
            _flush()
            os._exit(1)
    except BaseException:  # noqa: BLE001 - any other end is a failure, shown as a traceback
        import traceback

        _flush()
        traceback.print_exc()
        _flush()
        os._exit(1)
    _flush()
    if result_dst == "stderr":  # remote: the last line of stderr
        os.write(2, b"\n" + token + b"\n")
    else:
        os.write(int(result_dst), token)
    os._exit(0)


_main()
