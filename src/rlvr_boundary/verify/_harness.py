"""The test harness: the main script of every sandboxed run (standard library only).

Run inside the sandbox as ``python -I -B _harness.py MODE TOKEN_FD RESULT_FD RUN_ID [FD...]``
next to ``program.py``. The grader hands each run a random token on TOKEN_FD; the
harness writes it to RESULT_FD only when its work has ended normally, so an exit
status of 0 alone is never a pass. The modes:

``serve`` (the program's side of a check made outside it)
    Run the program, say whether it loaded, then answer requests on a pipe (FD
    REQ, FD RESP): call a function of the program with the arguments sent, or read
    or set an attribute, and send back the result as plain data (below). No test, no
    expected value and no verdict exist in this process: the token only says
    that the program loaded and answered until the checker hung up.
``check`` (the checker, in a second sandbox that never runs the program)
    Run the tests (``tests.py``) with every name of the program bound to a stub
    that forwards calls to ``serve`` (FD REQ, FD RESP) and returns the answer as
    plain data; or, for APPS call-based records, call ``fn_name`` on each case's
    arguments and compare with its expected value. The token means: every test
    statement returned. The program cannot reach this process (another PID,
    mount, network and IPC namespace, another cgroup), so it can neither replace
    its functions nor read its token.
``assert`` (in-process: tests that use the program's names other than by calling
    them, or a SandboxFusion server) Run the program, then the tests, in one
    interpreter. Hardened where one process allows: the tests' source comes on a
    descriptor closed before the program starts (no file to read), the tests run
    with the built-ins as they were before the program ran, the harness's exit and
    write functions are its own copies, and the token lives in a closure, not in a
    frame's locals. A program written against this harness can still forge a pass
    (it shares the process with the tests); the grader counts these records.
``stdio``
    Run the program with stdin and stdout as given (files of the grader); the
    output is compared by the grader. A ``SystemExit`` with status 0 or None is
    the program's normal end.

**Plain data.** Values cross between ``serve`` and ``check`` as JSON built only of
None, bool, int, float, str, bytes, bytearray, complex, list, tuple, set,
frozenset, dict, range, Fraction and Decimal (tagged objects such as
``{"$tuple": [...]}``; subclasses are sent as their base type, numpy scalars as
their ``item()``). The decoder builds only those types, so no object with a
custom ``__eq__`` reaches the checker. Any other object stays in the program's
process and the checker gets an opaque handle to it: it can be passed back to
the program, called, or asked for or given an attribute, and it equals only itself.

A Python audit hook refuses writes outside the work directory, sockets, signals
outside the program and, unless processes are allowed, starting processes. It is
a second layer with a clear error message for honest programs; nothing relies
on it.
"""

import builtins
import os
import sys

# Our own references, taken before any program code runs: a program that replaces
# os._exit or os.write changes its module, not these.
_exit, _write, _read, _close = os._exit, os.write, os.read, os.close
_FRESH_BUILTINS = dict(builtins.__dict__)
_PROCESS_EVENTS = ("os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn",
                   "os.system", "subprocess.Popen", "pty.spawn", "os.startfile")
MAX_MESSAGE = 64 << 20  # bytes of one request or answer
MAX_DEPTH = 100


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


def _say(text: str) -> None:
    _flush()
    try:
        _write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass


# ----------------------------------------------------------------------------- plain data


class Unsplittable(BaseException):
    """The tests pass something to the program that is not plain data (checker side).

    A BaseException, so a test's ``except Exception`` does not swallow it.
    """


class ProgramError(Exception):
    """An exception raised in the program, or a broken answer, seen by the checker."""


class Remote:
    """The checker's stand-in for a name or an object of the program.

    Calling it, reading or setting an attribute asks the program; anything else
    treats it as an opaque object (it equals only itself).
    """

    __slots__ = ("_kind", "_key", "_label", "_chan")

    def __init__(self, chan, kind, key, label):
        object.__setattr__(self, "_chan", chan)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_label", label)

    def __call__(self, *args, **kwargs):
        return self._chan.call(self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._chan.getattr(self, name)

    def __setattr__(self, name, value):
        self._chan.setattr(self, name, value)

    def __repr__(self):
        return f"<{self._label} of the program>"


def encode(v, refs=None, depth=0):
    """``v`` as tagged JSON values; objects that are not plain data become handles.

    ``refs`` is the program's list of objects kept for handles (``serve``), or None
    on the checker's side, where only plain data and :class:`Remote` objects may be
    sent (anything else raises :class:`Unsplittable`).
    """
    if depth > MAX_DEPTH:
        return _opaque(v, refs, "nested too deeply")
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v if -(1 << 62) < v < (1 << 62) else {"$int": hex(v)}
    if t is float:
        return v if v == v and v not in (float("inf"), float("-inf")) else {"$float": repr(v)}
    if t is list:
        return [encode(x, refs, depth + 1) for x in v]
    if t is tuple:
        return {"$tuple": [encode(x, refs, depth + 1) for x in v]}
    if t is dict:
        return {"$dict": [[encode(k, refs, depth + 1), encode(x, refs, depth + 1)]
                          for k, x in v.items()]}
    if t is set or t is frozenset:
        return {"$" + t.__name__: [encode(x, refs, depth + 1) for x in v]}
    if t is bytes or t is bytearray:
        return {"$" + t.__name__: v.hex()}
    if t is complex:
        return {"$complex": [encode(v.real), encode(v.imag)]}
    if t is range:
        return {"$range": [v.start, v.stop, v.step]}
    if isinstance(v, Remote):
        return {"$ref": v._key} if v._kind == "ref" else {"$name": v._key}
    if refs is None:
        mod = getattr(t, "__module__", "")
        if mod in ("fractions", "decimal"):
            return {"$" + t.__name__.lower(): str(v)}
        raise Unsplittable(f"a {t.__name__} object (only plain data can be sent to the program)")
    try:  # the program's side: a value of the program, converted as far as it is data
        mod = getattr(t, "__module__", "")
        if mod == "numpy" and getattr(v, "shape", None) == ():
            return encode(v.item(), refs, depth + 1)
        if mod in ("fractions", "decimal") and t.__name__ in ("Fraction", "Decimal"):
            return {"$" + t.__name__.lower(): str(v)}
        for base in (bool, int, float, str, bytes, bytearray, complex, tuple, list, dict, set,
                     frozenset):
            if isinstance(v, base) and t is not base:
                if base is dict:
                    return encode(dict(dict.items(v)), refs, depth)
                if base in (tuple, list, set, frozenset):
                    return encode(base(base.__iter__(v)), refs, depth)
                return encode(base(v), refs, depth)
    except Exception:  # noqa: BLE001 - a value that breaks its own conversion stays opaque
        pass
    return _opaque(v, refs, None)


def _opaque(v, refs, why):
    if refs is None:
        raise Unsplittable(why or "an object that is not plain data")
    refs.append(v)
    try:
        label = f"{type(v).__module__}.{type(v).__qualname__}"
    except Exception:  # noqa: BLE001
        label = "object"
    return {"$ref": len(refs) - 1, "type": label[:200]}


def decode(x, resolve=None, depth=0):
    """Plain Python values from :func:`encode`'s JSON; refuses anything else (ValueError).

    ``resolve(tag, key)`` turns ``$ref``/``$name`` into an object (the program's side:
    its own objects; the checker's side: :class:`Remote` handles).
    """
    if depth > MAX_DEPTH + 2:
        raise ValueError("nested too deeply")
    t = type(x)
    if x is None or t in (bool, int, float, str):
        return x
    if t is list:
        return [decode(y, resolve, depth + 1) for y in x]
    if t is not dict or len(x) not in (1, 2):
        raise ValueError(f"not a plain value: {t.__name__}")
    tag = next(iter(x))
    val = x[tag]
    if tag in ("$ref", "$name"):
        if resolve is None or (tag == "$ref" and type(val) is not int) or (
                tag == "$name" and type(val) is not str):
            raise ValueError("unexpected reference")
        if len(x) == 2 and (set(x) != {"$ref", "type"} or type(x["type"]) is not str):
            raise ValueError("malformed reference")
        return resolve(tag, val, x.get("type"))
    if len(x) != 1:
        raise ValueError("malformed tagged value")
    if tag == "$int" and type(val) is str:
        return int(val, 16)
    if tag == "$float" and val in ("nan", "inf", "-inf"):
        return float(val)
    if tag in ("$tuple", "$set", "$frozenset") and type(val) is list:
        items = [decode(y, resolve, depth + 1) for y in val]
        return {"$tuple": tuple, "$set": set, "$frozenset": frozenset}[tag](items)
    if tag == "$dict" and type(val) is list:
        out = {}
        for pair in val:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("malformed dict")
            out[decode(pair[0], resolve, depth + 1)] = decode(pair[1], resolve, depth + 1)
        return out
    if tag in ("$bytes", "$bytearray") and type(val) is str:
        return (bytes if tag == "$bytes" else bytearray).fromhex(val)
    if tag == "$complex" and type(val) is list and len(val) == 2:
        re_, im = (decode(y, None, depth + 1) for y in val)
        if type(re_) is not float or type(im) is not float:
            raise ValueError("malformed complex")
        return complex(re_, im)
    if tag == "$range" and type(val) is list and len(val) == 3 and all(
            type(y) is int for y in val):
        return range(*val)
    if tag in ("$fraction", "$decimal") and type(val) is str and len(val) < 10000:
        import decimal
        import fractions

        return fractions.Fraction(val) if tag == "$fraction" else decimal.Decimal(val)
    raise ValueError(f"unknown tag {tag!r}")


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


class Channel:
    """One JSON message per line over two pipe descriptors."""

    def __init__(self, rfd, wfd):
        self.rfd, self.wfd, self.buf = rfd, wfd, bytearray()

    def send(self, obj):
        import json

        data = json.dumps(obj, ensure_ascii=True, allow_nan=False,
                          separators=(",", ":")).encode("ascii") + b"\n"
        view = memoryview(data)
        while view:
            view = view[_write(self.wfd, view[: 1 << 20]):]

    def recv(self, timeout=None):
        """The next message; None at end of file; ``"timeout"`` when none came in time."""
        import json
        import select
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                try:
                    return json.loads(line, parse_constant=_no_constant)
                except (ValueError, RecursionError) as exc:
                    raise ProgramError(f"a malformed message ({type(exc).__name__})") from None
            if len(self.buf) > MAX_MESSAGE:
                raise ProgramError(f"a message larger than {MAX_MESSAGE >> 20} MB")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                    return "timeout"
            chunk = _read(self.rfd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk


# ----------------------------------------------------------------------------- serve


def _serve(namespace, chan, solution):
    """Answer the checker's requests with the program's functions (the program's side)."""
    objs = []

    def resolve(tag, key, _label=None):
        if tag == "$ref":
            if not 0 <= key < len(objs):
                raise ValueError("unknown handle")
            return objs[key]
        if key in namespace:
            return namespace[key]
        if solution and "Solution" in namespace:  # LeetCode-style APPS records
            return getattr(namespace["Solution"](), key)
        raise NameError(f"name {key!r} is not defined by the program")

    while True:
        msg = chan.recv()
        if msg is None:
            return
        try:
            target = decode(msg["f"], resolve)
            if msg["op"] == "call":
                args = [decode(a, resolve) for a in msg["a"]]
                kwargs = {k: decode(v, resolve) for k, v in msg["k"]}
                value = target(*args, **kwargs)
                mut = []
                for i, a in enumerate(args):
                    if type(a) in (list, dict, set, bytearray):
                        e = encode(a, objs)
                        if e != msg["a"][i]:
                            mut.append([i, e])
                out = {"ok": encode(value, objs), "mut": mut}
            elif msg["op"] == "setattr":
                setattr(target, msg["n"], decode(msg["v"], resolve))
                out = {"ok": None, "mut": []}
            else:
                out = {"ok": encode(getattr(target, msg["n"]), objs), "mut": []}
        except BaseException as exc:  # noqa: BLE001 - the checker decides what it means
            try:
                out = {"raise": [type(exc).__name__, str(exc)[:2000]]}
            except BaseException:  # noqa: BLE001 - a str() that raises
                out = {"raise": ["Exception", "an exception that cannot be shown"]}
        chan.send(out)


# ----------------------------------------------------------------------------- check


class _Client:
    """The checker's end of the channel: every call on a :class:`Remote` comes here."""

    def __init__(self, chan, call_timeout):
        self.chan, self.call_timeout = chan, call_timeout
        self.unsplittable = None
        self.timed_out = False

    def _ask(self, msg):
        try:
            self.chan.send(msg)
        except OSError:
            raise ProgramError("the program ended before it answered") from None
        ans = self.chan.recv(self.call_timeout)
        if ans is None:
            raise ProgramError("the program ended before it answered")
        if ans == "timeout":
            self.timed_out = True
            raise Unsplittable("timeout")
        if type(ans) is not dict:
            raise ProgramError("a malformed answer")
        if "raise" in ans:
            raise _exception(ans["raise"])
        try:
            return decode(ans["ok"], self._resolve), ans.get("mut") or []
        except (KeyError, ValueError, TypeError, RecursionError) as exc:
            raise ProgramError(f"a malformed answer ({exc})") from None

    def _resolve(self, tag, key, label):
        return Remote(self, "ref", key, f"a {label or 'object'}")

    def _target(self, remote):
        return {"$ref": remote._key} if remote._kind == "ref" else {"$name": remote._key}

    def call(self, remote, args, kwargs):
        try:
            msg = {"op": "call", "f": self._target(remote),
                   "a": [encode(a) for a in args],
                   "k": [[str(k), encode(v)] for k, v in kwargs.items()]}
        except Unsplittable as exc:
            self.unsplittable = str(exc)
            raise
        value, mut = self._ask(msg)
        for item in mut:  # the program changed a list, dict, set or bytearray it was given
            try:
                i, new = item
                new = decode(new, self._resolve)
                old = args[i]
                if type(new) is type(old) is dict or type(new) is type(old) is set:
                    old.clear()
                    old.update(new)
                elif type(new) is type(old) and type(old) in (list, bytearray):
                    old[:] = new
            except (TypeError, ValueError, IndexError, RecursionError):
                raise ProgramError("a malformed answer (changed argument)") from None
        return value

    def getattr(self, remote, name):
        return self._ask({"op": "getattr", "f": self._target(remote), "n": name})[0]

    def setattr(self, remote, name, value):
        try:
            msg = {"op": "setattr", "f": self._target(remote), "n": str(name),
                   "v": encode(value)}
        except Unsplittable as exc:
            self.unsplittable = str(exc)
            raise
        self._ask(msg)


def _exception(raised):
    """The checker's copy of an exception of the program: a built-in type by name, else
    :class:`ProgramError` (never a BaseException such as SystemExit)."""
    try:
        name, msg = str(raised[0]), str(raised[1])
    except (TypeError, IndexError, KeyError):
        return ProgramError("a malformed answer")
    cls = _FRESH_BUILTINS.get(name)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
        try:
            return cls(msg)
        except Exception:  # noqa: BLE001 - exception types with other signatures
            pass
    return ProgramError(f"{name}: {msg}")


def _same_apps(got, want):
    """APPS's call-based rule: equal, after tuples become lists (JSON has no tuples), or
    equal to the only element of a one-element expected list."""

    def lists(v):
        if type(v) in (list, tuple):
            return [lists(x) for x in v]
        if type(v) is dict:
            return {k: lists(x) for k, x in v.items()}
        return v

    got = lists(got)
    return got == want or (type(want) is list and len(want) == 1 and got == want[0])


def _check(cfg, chan, tests):
    """Run the tests against the program through ``chan``; True when all returned."""
    client = _Client(chan, cfg.get("call_timeout"))
    try:
        ready = chan.recv(cfg.get("call_timeout"))
    except ProgramError as exc:
        ready = {"raise": ["ProgramError", str(exc)]}
    if ready != {"ready": True}:
        why = ready.get("raise") if type(ready) is dict else None
        why = why if type(why) is list and len(why) == 2 else ["ProgramError",
                                                               "no or a malformed answer"]
        _say(f"the program did not load: {str(why[0])[:100]}: {str(why[1])[:300]}\n")
        if ready == "timeout":
            client.timed_out = True
        return client, False
    apps = cfg.get("apps")
    if apps is not None:
        fn = Remote(client, "name", apps["fn_name"], apps["fn_name"])
        for k, (args, want) in enumerate(apps["cases"]):
            try:
                got = fn(*args) if type(args) is list else fn(args)
            except Unsplittable:
                return client, False
            except Exception as exc:  # noqa: BLE001
                _say(f"case {k}: the call raised {type(exc).__name__}: {str(exc)[:300]}\n")
                return client, False
            if not _same_apps(got, want):
                _say(f"case {k}: wrong value: expected {str(want)[:200]}, got "
                     f"{str(got)[:200]}\n")
                return client, False
        return client, True
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    for mod in cfg["modules"]:
        namespace[mod] = __import__(mod)
    for name in cfg["names"]:
        namespace[name] = Remote(client, "name", name, name)
    try:
        exec(compile(tests, "tests.py", "exec"), namespace)
    except Unsplittable:
        return client, False
    except BaseException:  # noqa: BLE001 - a failing test: its traceback is the detail
        import traceback

        _flush()
        traceback.print_exc()
        return client, False
    return client, client.unsplittable is None and not client.timed_out


# ----------------------------------------------------------------------------- main


def _reporter(token_src, result_dst):
    """Read the token; return the function that reports the end (the token stays in its
    closure, not in a frame's locals)."""
    if token_src == "file":  # SandboxFusion: a file in the current directory, removed now
        path = os.path.join(os.getcwd(), "token")
        with open(path, "rb") as fh:
            secret = fh.read().strip()
        os.remove(path)
    else:
        secret = _read(int(token_src), 128)
        _close(int(token_src))
    dst = result_dst

    def report(extra=b""):
        _flush()
        if dst == "stderr":  # remote: the last line of stderr
            _write(2, b"\n" + (extra or secret) + b"\n")
        else:
            _write(int(dst), extra or secret)

    return report


def _read_fd(fd):
    chunks = []
    while True:
        b = _read(fd, 1 << 20)
        if not b:
            break
        chunks.append(b)
    _close(fd)
    return b"".join(chunks)


def _new_main():
    """A real __main__ module, so the program's classes pickle and it sees itself as the
    main script, as when run directly."""
    import types

    main = types.ModuleType("__main__")
    main.__file__ = "main.py"
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    return main.__dict__


def _main():
    mode, token_src, result_dst = sys.argv[1], sys.argv[2], sys.argv[3]
    extra = [int(x) for x in sys.argv[5:]]
    report = _reporter(token_src, result_dst)
    here = os.getcwd() if token_src == "file" else os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "options.txt"), encoding="ascii") as fh:
        no_processes = fh.read().strip() == "no-processes"
    sys.argv = ["main.py"]
    if mode == "check":
        import json

        with open(os.path.join(here, "check.json"), "rb") as fh:
            cfg = json.load(fh)
        tests = None
        if cfg.get("apps") is None:
            with open(os.path.join(here, "tests.py"), "rb") as fh:
                tests = fh.read()
        _guard(True)
        client, passed = _check(cfg, Channel(extra[1], extra[0]), tests)
        if client.timed_out:
            report(b"timeout")
            _exit(1)
        if client.unsplittable is not None and not passed:
            report(b"unsplittable: " + client.unsplittable.encode("utf-8", "replace")[:200])
            _exit(1)
        if passed:
            report()
            _exit(0)
        _exit(1)
    with open(os.path.join(here, "program.py"), "rb") as fh:
        program = fh.read()
    tests = None
    if mode == "assert":
        if token_src == "file":
            with open(os.path.join(here, "tests.py"), "rb") as fh:
                tests = fh.read()
        else:  # a descriptor of a file that is not in the sandbox, closed before the program
            tests = _read_fd(extra[0])
    sys.path[0] = os.getcwd()
    _guard(no_processes)
    namespace = _new_main()
    if mode == "serve":
        chan = Channel(extra[0], extra[1])
        solution = os.path.exists(os.path.join(here, "solution"))
        try:
            exec(compile(program, "main.py", "exec"), namespace)
        except BaseException as exc:  # noqa: BLE001 - the checker reports a program that fails
            import traceback

            _flush()
            traceback.print_exc()
            chan.send({"raise": [type(exc).__name__, str(exc)[:2000]]})
            _flush()
            _exit(1)
        chan.send({"ready": True})
        _serve(namespace, chan, solution)
        report()
        _exit(0)
    try:
        exec(compile(program, "main.py", "exec"), namespace)
        if tests is not None:
            # The tests see the program's names, with the built-ins as they were before
            # the program ran.
            scope = dict(namespace)
            scope["__builtins__"] = dict(_FRESH_BUILTINS)
            exec(compile(tests, "tests.py", "exec"), scope)
    except SystemExit as exc:
        if not (tests is None and exc.code in (None, 0)):
            _say("\nrlvr-boundary harness: the program exited "
                 f"(SystemExit({exc.code!r})) before the tests finished\n")
            _exit(1)
    except BaseException:  # noqa: BLE001 - any other end is a failure, shown as a traceback
        import traceback

        _flush()
        traceback.print_exc()
        _flush()
        _exit(1)
    report()
    _exit(0)


if __name__ == "__main__":
    _main()
