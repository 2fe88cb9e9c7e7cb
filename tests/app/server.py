"""Start ``rlvr-boundary serve`` on 127.0.0.1 in a subprocess, and stop it (tests, benchmarks).

The server runs in its own process group, so the analysis workers it spawns
are stopped with it: first Ctrl-C (the app shuts its workers down and deletes
its files), then SIGKILL of the group if it has not exited within the grace
period. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import rlvr_boundary

SRC = Path(rlvr_boundary.__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def running_server(*extra: str, start_timeout: float = 180.0, stop_timeout: float = 30.0):
    """Yield ``(url, process, log lines)`` of a server on a free loopback port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlvr_boundary.cli", "serve", "--host", "127.0.0.1",
         "--port", str(port), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
        env=env, start_new_session=True)
    log: list[str] = []
    ready = threading.Event()

    def drain():
        for line in proc.stdout:
            log.append(line.rstrip("\n"))
            if "session files under" in line:  # printed right after the URL
                ready.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        t0 = time.monotonic()
        while not ready.is_set():
            if proc.poll() is not None:
                raise RuntimeError("the server exited:\n" + "\n".join(log))
            if time.monotonic() - t0 > start_timeout:
                raise RuntimeError(f"the server did not start in {start_timeout:g} s:\n"
                                   + "\n".join(log))
            ready.wait(0.2)
        yield f"http://127.0.0.1:{port}/", proc, log
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(stop_timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        # Workers of the server's group that outlived it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
