"""A worker pool where every item has a hard wall-clock timeout.

``concurrent.futures`` cannot stop a running task: a hung sympy call would hold
its worker forever. Here each worker is a process fed one item at a time over a
pipe; when an item passes its deadline the worker is killed (SIGKILL) and
replaced, the item gets ``verify_status = "timeout"``, and the batch goes on.
A worker that dies (segfault, ``os._exit``) gives ``"error"``. Workers start
from a forkserver that has already imported the grading code (math-verify,
sympy), so a replacement is ready in milliseconds and the next item's clock
starts only when it is handed to a live worker.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from multiprocessing.connection import wait
from typing import Callable, Iterable

TIMEOUT_RESULT = {"answer": None, "correct": False, "verify_status": "timeout", "method": None,
                  "detail": "hard timeout"}


def _worker(conn, fn) -> None:
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        idx, args = msg
        try:
            res = fn(*args)
        except Exception as exc:  # noqa: BLE001 - report, never die on one item
            res = {"answer": None, "correct": False, "verify_status": "error", "method": None,
                   "detail": f"{type(exc).__name__}: {exc}"[:300]}
        conn.send((idx, res))


class TimeoutPool:
    """Run ``fn(*args)`` for many items on ``workers`` processes, each with a hard timeout.

    Parameters
    ----------
    fn
        A picklable top-level function returning a dict.
    workers
        Number of worker processes (>= 1).
    timeout
        Wall-clock seconds per item.
    preload
        Modules the forkserver imports once, so that workers start warm.
    """

    def __init__(self, fn: Callable, workers: int = 2, timeout: float = 5.0,
                 preload: tuple[str, ...] = ()) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.fn, self.workers, self.timeout = fn, workers, timeout
        self.ctx = mp.get_context("forkserver")
        self.ctx.set_forkserver_preload(list(preload))
        self.slots: list[dict] = []
        self.n_killed = 0

    def _spawn(self) -> dict:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.fn), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "item": None, "deadline": None}

    def __enter__(self) -> "TimeoutPool":
        self.slots = [self._spawn() for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> None:
        for s in self.slots:
            try:
                s["conn"].send(None)
            except (OSError, BrokenPipeError):
                pass
        for s in self.slots:
            s["proc"].join(timeout=1)
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join()

    def map(self, items: Iterable[tuple], on_result: Callable[[int, dict], None] | None = None):
        """Yield ``(index, result)`` as items finish (not in order)."""
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
                    s["item"] = nxt[0]
                    s["conn"].send(nxt)
                    s["deadline"] = time.monotonic() + self.timeout
                    busy += 1
            if busy == 0:
                return
            live = [s for s in self.slots if s["item"] is not None]
            left = min(s["deadline"] for s in live) - time.monotonic()
            ready = wait([s["conn"] for s in live], timeout=max(0.0, left))
            for s in live:
                if s["conn"] in ready:
                    try:
                        idx, res = s["conn"].recv()
                    except (EOFError, OSError):
                        idx, res = s["item"], {"answer": None, "correct": False,
                                               "verify_status": "error", "method": None,
                                               "detail": "worker died"}
                        self._replace(s)
                    s["item"] = None
                    busy -= 1
                    yield idx, res
                elif time.monotonic() >= s["deadline"]:
                    idx = s["item"]
                    self._replace(s)
                    self.n_killed += 1
                    busy -= 1
                    yield idx, dict(TIMEOUT_RESULT)

    def _replace(self, s: dict) -> None:
        s["proc"].kill()
        s["proc"].join()
        s["conn"].close()
        s.update(self._spawn())
