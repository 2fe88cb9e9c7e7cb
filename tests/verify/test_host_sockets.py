"""No host socket is reachable from the sandbox.

The review found a channel: a Unix socket file in a directory bound read-only
into the sandbox (a virtual environment, say) accepted a connection from inside
(a read-only mount does not stop ``connect(2)``). Here a real listener on the host
side (stream and datagram sockets in a directory that is bound into the sandbox)
waits while a program tries every way in below the audit hook (libc's
``socket``/``connect``/``sendto``, a datagram socket pair's ``sendto``, the
abstract namespace); nothing may arrive. Unix socket pairs for the program's own
use keep working.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest

from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status, run_python

BOUNDED = SandboxOptions(timeout=6.0, cpu_seconds=10)


def _bound_dir() -> Path:
    """A new directory inside a tree the sandbox binds (a system directory, or the venv)."""
    for base in (Path("/usr/share"), Path(sys.prefix)):
        if os.access(base, os.W_OK):
            d = base / f"rlvr-sock-test-{secrets.token_hex(4)}"
            d.mkdir(mode=0o755)
            return d
    pytest.skip("no writable directory that the sandbox binds (run as root or in a venv)")


ATTACK = r'''
import ctypes, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
def addr(path):
    raw = path.encode()
    return struct.pack("H", socket.AF_UNIX) + raw + b"\0" * (108 - len(raw))
res = {}
for name, kind in (("stream", socket.SOCK_STREAM), ("dgram", socket.SOCK_DGRAM)):
    path = DIR + "/" + name + ".sock"
    a = addr(path)
    fd = libc.socket(socket.AF_UNIX, kind, 0)
    res[name + "-socket"] = fd if fd >= 0 else -ctypes.get_errno()
    if fd >= 0:
        rc = libc.connect(fd, a, len(a))
        res[name + "-connect"] = rc if rc == 0 else -ctypes.get_errno()
        if rc == 0:
            libc.send(fd, b"PWNED", 5, 0)
        n = libc.sendto(fd, b"PWNED", 5, 0, a, len(a))
        res[name + "-sendto"] = n if n >= 0 else -ctypes.get_errno()
# A datagram socket pair can send to any path with sendto.
pair = (ctypes.c_int * 2)()
rc = libc.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM, 0, pair)
res["dgram-pair"] = rc if rc == 0 else -ctypes.get_errno()
if rc == 0:
    a = addr(DIR + "/dgram.sock")
    n = libc.sendto(pair[0], b"PWNED", 5, 0, a, len(a))
    res["dgram-pair-sendto"] = n if n >= 0 else -ctypes.get_errno()
# The abstract namespace (per network namespace).
fd = libc.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0)
if fd >= 0:
    raw = b"\0" + ABSTRACT.encode()
    a = struct.pack("H", socket.AF_UNIX) + raw
    rc = libc.connect(fd, a, len(a))
    res["abstract-connect"] = rc if rc == 0 else -ctypes.get_errno()
# An honest program's own socket pair.
s1, s2 = socket.socketpair()
s1.sendall(b"ok")
res["own-pair"] = s2.recv(2).decode()
print(res)
'''


@pytest.mark.skipif(not isolation_status(BOUNDED)["usable"], reason="no sandbox that holds here")
@pytest.mark.parametrize("mode", ["bwrap", "unsafe"])
def test_no_host_unix_socket_is_reachable(mode):
    """Also without bubblewrap (the explicitly unsafe mode loads the same filter)."""
    opts = BOUNDED if mode == "bwrap" else SandboxOptions(timeout=6.0, bwrap="",
                                                          unsafe_no_isolation=True)
    d = _bound_dir()
    abstract = f"rlvr-sock-test-{secrets.token_hex(4)}"
    received: list[bytes] = []
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    abst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        stream.bind(str(d / "stream.sock"))
        dgram.bind(str(d / "dgram.sock"))
        abst.bind("\0" + abstract)
        for s in (stream, abst):
            s.listen(4)
        for p in ("stream.sock", "dgram.sock"):
            os.chmod(d / p, 0o777)  # anyone may connect: only the boundary stops it
        for s in (stream, dgram, abst):
            s.settimeout(0.2)
        stop = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                for s in (stream, abst):
                    try:
                        conn, _ = s.accept()
                        received.append(b"connection " + conn.recv(16))
                        conn.close()
                    except OSError:
                        pass
                try:
                    received.append(dgram.recv(16))
                except OSError:
                    pass

        t = threading.Thread(target=listen, daemon=True)
        t.start()
        prog = f"DIR = {str(d)!r}\nABSTRACT = {abstract!r}\n" + ATTACK
        try:
            r = run_python(prog, opts)
        finally:
            stop.set()
            t.join(5)
        assert r.status == "ok", r
        res = eval(r.stdout)  # noqa: S307 - our own program's printed dict of ints
        assert received == [], (received, res)
        assert res["own-pair"] == "ok"
        assert res["stream-socket"] < 0 and res["dgram-socket"] < 0, res
        assert res["dgram-pair"] < 0, res
    finally:
        for s in (stream, dgram, abst):
            s.close()
        shutil.rmtree(d, ignore_errors=True)
