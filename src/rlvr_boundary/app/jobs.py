"""Analyses run in a small pool of worker processes, one job per worker at a time.

Why processes and not the web server's threads:

- the report draws with ``matplotlib.pyplot``, whose figure registry is global
  to a process; two requests drawing in two threads of one process could mix
  their figures. One job per process at a time cannot;
- CPU and memory are bounded by the number of workers: twenty users who press
  "analyse" at once queue for the workers instead of each holding a copy of
  their data in the server at the same time;
- a worker that crashes (or is killed for memory) costs one request, not the
  server: the pool is rebuilt and the next request runs.

Workers are started with ``spawn`` (a fork of a threaded web server is unsafe)
and replaced after a number of jobs, so memory a job leaves behind does not
accumulate. Jobs are functions of :mod:`rlvr_boundary.app.compute`; their
arguments and results are plain Python values.

Warm start: each worker imports the library and draws one small figure when it
starts (:func:`_init_worker`), and :meth:`JobRunner.start` starts them all when the
server starts, so no visitor's request pays for it (a worker replaced after
``max_tasks_per_child`` jobs warms itself the same way before taking work).

No orphans: a worker watches its parent (:func:`_watch_parent`) and exits when the
server is gone, even after a SIGKILL that gave the server no chance to stop it.
The multiprocessing resource tracker then exits too: it stops when the last
process holding its pipe (the server and its workers) is gone.
"""

from __future__ import annotations

import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from rlvr_boundary.errors import InputError


#: Environment variables that set the BLAS and OpenMP thread counts of a worker.
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class JobError(Exception):
    """A job failed for a reason other than bad input (shown to the user as such)."""


def _run(name: str, args: tuple) -> tuple[str, object]:
    """Worker side: call ``compute.<name>(*args)``; bad input comes back as its message."""
    from rlvr_boundary.app import compute

    try:
        return "ok", getattr(compute, name)(*args)
    except InputError as exc:
        return "input", str(exc)
    except (MemoryError, RecursionError) as exc:
        return "error", f"the analysis ran out of resources ({type(exc).__name__})"


def _watch_parent(parent: int, every: float = 0.5) -> None:
    """Exit this process as soon as its parent ``parent`` is gone (it was re-parented).

    A polling thread rather than ``prctl(PR_SET_PDEATHSIG)``: that signal fires when
    the *thread* that started the worker exits, and the server starts workers from
    short-lived request threads.
    """
    import os
    import threading
    import time

    def watch():
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="rb-parent-watch", daemon=True).start()


def _init_worker(parent: int | None = None) -> None:
    """Worker start-up: watch the server, then import and draw once so jobs start warm."""
    import os

    if parent is not None:
        _watch_parent(parent)
    # A worker must not print progress bars into the server's terminal.
    os.environ.setdefault("CI", "1")
    _warm()


def _warm() -> None:
    from rlvr_boundary.app import compute

    compute.warm()


def _ready() -> int:
    import os

    return os.getpid()


def plain(value):
    """``value`` with every ``str`` subclass made a plain ``str`` (through tuples, lists, dicts).

    Why: the web framework hands uploads over as its own ``str`` subclass, and a worker
    unpickling one must first import the framework (3 s in a fresh worker: most of a
    first request's time). Jobs take plain Python values only.
    """
    if isinstance(value, str):
        return str.__str__(value) if type(value) is not str else value
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value) if type(value) in (list, tuple) \
            else [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


class JobRunner:
    """A pool of ``workers`` processes running :mod:`~rlvr_boundary.app.compute` jobs.

    Parameters
    ----------
    workers
        Number of worker processes.
    timeout
        Seconds to wait for one job's result.
    max_tasks_per_child
        Jobs a worker runs before it is replaced by a fresh process.
    """

    def __init__(self, workers: int = 2, timeout: float = 600.0, max_tasks_per_child: int = 20):
        self.workers = workers
        self.timeout = timeout
        self.max_tasks_per_child = max_tasks_per_child
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._waiting: list = []  # futures of jobs not yet answered, in submission order

    def _get_pool(self) -> ProcessPoolExecutor:
        import multiprocessing as mp
        import os

        with self._lock:
            if self._pool is None:
                # One BLAS thread per worker: the workers are the parallelism (one per core);
                # each worker's BLAS spreading over every core as well oversubscribes them.
                # Set in the server before the workers exist, so their numpy starts with it;
                # a value the user set is kept.
                for var in BLAS_THREADS:
                    os.environ.setdefault(var, "1")
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=mp.get_context("spawn"),
                    initializer=_init_worker, initargs=(os.getpid(),),
                    max_tasks_per_child=self.max_tasks_per_child)
            return self._pool

    def start(self) -> list:
        """Start every worker now (each warms itself up); returns futures done when they are."""
        pool = self._get_pool()
        return [pool.submit(_ready) for _ in range(self.workers)]

    @staticmethod
    def wait_ready(futures: list, timeout: float = 300.0) -> None:
        """Wait (at most ``timeout`` s in all) until the workers of :meth:`start` are warm."""
        from concurrent.futures import wait

        wait(futures, timeout=timeout)

    def _reset(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    def run(self, name: str, *args, progress=None):
        """Run ``compute.<name>(*args)`` in a worker and return its result.

        Parameters
        ----------
        progress
            Called (from this thread, about every 0.25 s while the job waits) with the
            number of jobs submitted before this one that no worker has taken yet, or
            with None once a worker has it.

        Raises
        ------
        InputError
            The input was refused; the message is the library's.
        JobError
            The worker died, ran out of resources or timed out.
        """
        import time

        pool = self._get_pool()
        try:
            fut = pool.submit(_run, name, plain(args))
            with self._lock:
                self._waiting.append(fut)
            deadline = time.monotonic() + self.timeout
            try:
                while True:
                    if progress is not None:
                        progress(self._ahead(fut))
                    try:
                        status, value = fut.result(timeout=0.25)
                        break
                    except FutureTimeout:
                        if time.monotonic() >= deadline:
                            raise
            finally:
                with self._lock:
                    self._waiting.remove(fut)
        except BrokenProcessPool:
            self._reset(pool)
            raise JobError("the analysis worker stopped unexpectedly (out of memory?); "
                           "the server is still running, try a smaller input") from None
        except FutureTimeout:
            # A running job cannot be cancelled inside a shared pool; it finishes in its
            # worker and its result is dropped. The page is told now.
            fut.cancel()
            raise JobError(f"the analysis took longer than {self.timeout:g} s and was "
                           "abandoned") from None
        if status == "input":
            raise InputError(value)
        if status == "error":
            raise JobError(value)
        return value

    def _ahead(self, fut) -> int | None:
        """Jobs queued before ``fut`` that no worker has taken; None once ``fut`` is taken."""
        if fut.running() or fut.done():
            return None
        with self._lock:
            waiting = list(self._waiting)
        ahead = 0
        for other in waiting:
            if other is fut:
                break
            if not (other.running() or other.done()):
                ahead += 1
        return ahead

    def close(self) -> None:
        """Stop the workers now: queued jobs are cancelled, running ones terminated."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((pool._processes or {}).values())  # the executor has no public handle
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(10)
