"""A worker pool where every item has a hard wall-clock timeout.

``concurrent.futures`` cannot stop a running task: a hung sympy call would hold
its worker forever. Here each worker is a process fed one item at a time over a
pipe; when an item passes its deadline the worker is killed (SIGKILL) and
replaced, the item gets ``verify_status = "timeout"``, and the batch goes on.
A worker that dies (segfault, ``os._exit``, the kernel's OOM killer) gives
``"error"``. Workers start from a forkserver that has already imported the
grading code (math-verify, sympy), so a replacement is ready in milliseconds and
the next item's clock starts only when it is handed to a live worker.

Design decisions, because the items are untrusted model output:

- **No pickle of user data.** Items and results cross the pipe as JSON bytes
  (``send_bytes``/``recv_bytes``), never as pickles: a worker that grading has
  somehow subverted (sympy's ``parse_expr`` is ``eval`` underneath, even if
  math-verify only hands it regex-filtered text) cannot make the parent run code
  by sending it a crafted pickle. Results larger than ``max_result_bytes`` are
  refused (status ``error``). The only pickled things are the grading function
  (by reference) and the pipe, both ours, sent once per worker.
- **Memory limit per worker.** ``RLIMIT_AS`` is set in each worker to what it
  holds after start-up plus ``memory_mb``, so ``9^{9^{9^9}}`` expanding into a
  huge integer ends in a ``MemoryError`` (status ``error``) instead of the
  machine swapping.
- **Workers die with the grader.** An idle worker sees the end of its pipe and
  returns. A busy one (deep in sympy) is ended by a watchdog thread that looks
  at the same pipe every 0.2 s while an item runs: the parent never writes
  while it waits for a result, so a readable pipe then means its end was
  closed, that is, ``verify`` died (SIGKILL included). A parent-death signal
  would not do: the workers' parent is the forkserver, which stays alive as
  long as its children hold the descriptor it watches.
- **Per-item seconds.** Each result gets ``seconds``: the wall time from hand-off
  to verdict, measured by the parent (so a timeout reads ``timeout``).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from multiprocessing.connection import wait
from typing import Callable, Iterable, Iterator

#: Result of an item killed at its deadline.
TIMEOUT_RESULT = {"answer": None, "correct": False, "verify_status": "timeout", "method": None,
                  "detail": "hard timeout"}


def _error(detail: str) -> dict:
    return {"answer": None, "correct": False, "verify_status": "error", "method": None,
            "detail": detail[:300]}


def _vm_size_bytes() -> int | None:
    """Current virtual memory size of this process (Linux), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _limit_memory(memory_mb: int | None) -> None:
    if not memory_mb:
        return
    import resource

    base = _vm_size_bytes()
    if base is None:
        return
    limit = base + memory_mb * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _watchdog(conn, state: dict) -> None:
    """Exit the worker when the grader's end of the pipe closes during an item."""
    import os

    while True:
        time.sleep(0.2)
        item = state["item"]  # a number while an item runs, else None
        if item is None:
            continue
        try:
            gone = conn.poll(0)  # nothing is sent to a busy worker: readable = EOF
        except (OSError, EOFError, ValueError):
            gone = True
        # Still the same item: the result was not sent, so no new item can be pending.
        if gone and state["item"] == item:
            os._exit(0)


def _worker(conn, fn, memory_mb) -> None:
    import threading

    state: dict = {"item": None}
    threading.Thread(target=_watchdog, args=(conn, state), daemon=True).start()
    n = 0
    _limit_memory(memory_mb)
    while True:
        try:
            msg = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not msg:
            return  # the empty message means "stop"
        n += 1
        state["item"] = n
        idx, args = json.loads(msg)
        try:
            res = fn(*args)
            out = json.dumps([idx, res], ensure_ascii=True)
        except MemoryError:
            out = json.dumps([idx, _error("MemoryError: the worker's memory limit was reached")])
        except Exception as exc:  # noqa: BLE001 - report, never die on one item
            out = json.dumps([idx, _error(f"{type(exc).__name__}: {exc}")])
        state["item"] = None
        conn.send_bytes(out.encode("ascii"))


class TimeoutPool:
    """Run ``fn(*args)`` for many items on ``workers`` processes, each with a hard timeout.

    Parameters
    ----------
    fn
        A top-level (importable) function taking JSON values and returning a
        JSON-serialisable dict.
    workers
        Number of worker processes (>= 1).
    timeout
        Wall-clock seconds per item (> 0).
    preload
        Modules the forkserver imports once, so that workers start warm.
    memory_mb
        Address space a worker may add to what it holds at start-up (None: no
        limit).
    max_result_bytes
        Largest JSON result accepted from a worker.

    Notes
    -----
    Use as a context manager; :meth:`map` yields ``(index, result)`` in
    completion order. Items must be tuples of JSON values (str, int, float,
    bool, None, lists and dicts of them); strings with lone surrogates survive
    the round trip (JSON escapes them).
    """

    def __init__(self, fn: Callable, workers: int = 2, timeout: float = 5.0,
                 preload: tuple[str, ...] = (), memory_mb: int | None = 2048,
                 max_result_bytes: int = 1 << 20) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if not timeout > 0:
            raise ValueError("timeout must be > 0")
        self.fn, self.workers, self.timeout = fn, workers, timeout
        self.memory_mb, self.max_result_bytes = memory_mb, max_result_bytes
        self.ctx = mp.get_context("forkserver")
        self.ctx.set_forkserver_preload(list(preload))
        self.slots: list[dict] = []
        self.n_killed = 0

    def _spawn(self) -> dict:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.fn, self.memory_mb), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "item": None, "deadline": None, "t0": None}

    def __enter__(self) -> "TimeoutPool":
        self.slots = [self._spawn() for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> None:
        for s in self.slots:
            try:
                s["conn"].send_bytes(b"")
            except (OSError, ValueError):
                pass
        for s in self.slots:
            s["proc"].join(timeout=1)
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join()
            s["conn"].close()

    def map(self, items: Iterable[tuple]) -> Iterator[tuple[int, dict]]:
        """Yield ``(index, result)`` as items finish (not in input order)."""
        it = iter(enumerate(items))
        pending = True
        busy = 0
        while True:
            for s in self.slots:
                if s["item"] is None and pending:
                    nxt = next(it, None)
                    if nxt is None:
                        pending = False
                        break
                    payload = json.dumps([nxt[0], list(nxt[1])], ensure_ascii=True).encode("ascii")
                    s["item"] = nxt[0]
                    s["t0"] = time.monotonic()
                    s["deadline"] = s["t0"] + self.timeout
                    try:
                        s["conn"].send_bytes(payload)
                    except (OSError, ValueError):
                        pass  # a dead worker: recv below sees EOF and reports "error"
                    busy += 1
            if busy == 0:
                return
            live = [s for s in self.slots if s["item"] is not None]
            left = min(s["deadline"] for s in live) - time.monotonic()
            ready = wait([s["conn"] for s in live], timeout=max(0.0, left))
            for s in live:
                if s["conn"] in ready:
                    idx, seconds = s["item"], time.monotonic() - s["t0"]
                    try:
                        got_idx, res = json.loads(s["conn"].recv_bytes(self.max_result_bytes))
                        if got_idx != idx or not isinstance(res, dict):
                            raise ValueError("worker answered out of turn")
                    except (EOFError, OSError, ValueError) as exc:
                        what = "worker died" if isinstance(exc, EOFError) else \
                            f"unusable worker result ({type(exc).__name__})"
                        res = _error(what)
                        self._replace(s)
                    res["seconds"] = seconds
                    s["item"] = None
                    busy -= 1
                    yield idx, res
                elif time.monotonic() >= s["deadline"]:
                    idx = s["item"]
                    res = dict(TIMEOUT_RESULT, seconds=time.monotonic() - s["t0"])
                    self._replace(s)
                    self.n_killed += 1
                    busy -= 1
                    yield idx, res

    def _replace(self, s: dict) -> None:
        s["proc"].kill()
        s["proc"].join()
        s["conn"].close()
        s.update(self._spawn())
