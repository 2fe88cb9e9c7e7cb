"""Grading on a Ray cluster: the local pool's verdicts, one Ray Data row per item.

The driver (``rlvr-boundary verify --runner ray``) reads the rollout table and
the gold file, turns each item into a JSON string ``[gold, text]`` and maps a
Ray Data dataset of ``{"i": index, "job": json}`` rows through
``map_batches`` into a pool of actors, one per grading worker. Each actor is
what one local worker is:

- **math**: a one-process :class:`~rlvr_boundary.verify.pool.TimeoutPool`
  running :func:`~rlvr_boundary.verify.math.grade_math_job`, so every item has
  the same hard wall-clock timeout (the process is killed at the deadline) and
  the same address-space cap as with the local pool, and crosses the pipe as
  JSON;
- **code**: :func:`~rlvr_boundary.verify.code.grade_code` in the node's own
  sandbox. An actor on a node where the sandbox does not hold (no bubblewrap or
  no cgroup, and ``--unsafe-no-isolation`` not given) grades nothing: every row
  it receives comes back as a refusal and the driver stops with the sandbox's
  message, writing no shard from it.

Only JSON strings cross between the driver and the actors (the options once, as
one string per actor; the items and the results as one string per row): a
subverted worker hands back text, never a pickle the driver would load.

**Exactly once.** Ray restarts a dead actor and redoes the blocks it held, so a
result can in principle arrive twice and a block is only ever lost with an
error. The driver keeps the first result of each index and ignores (and counts)
any other; it writes a shard only when every one of its items has a result and
raises when the dataset ends with an item missing, so a shard on disk holds each
of its items exactly once and a rerun grades what was not written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Self

from rlvr_boundary.errors import require

__all__ = ["RayGrader", "grader_config", "init_ray"]

#: Marker of a row an actor refused to grade (code on a node without isolation).
REFUSED = "refused"


def grader_config(task: str, timeout: float, memory_mb: int, math: dict | None,
                  sandbox: dict | None) -> str:
    """The grading options as one JSON string (what each actor receives).

    Parameters
    ----------
    task
        ``"math"`` or ``"code"``.
    timeout
        Hard wall-clock seconds per item (math) or per sandboxed run (code).
    memory_mb
        Address space a math worker may add to its start-up size.
    math
        :func:`~rlvr_boundary.verify.math.options_to_json` of the math options.
    sandbox
        The sandbox options as a dict (its ``timeout`` replaced by ``timeout``).

    Returns
    -------
    str
        JSON text; :class:`_GradeUDF` reads it back.
    """
    return json.dumps({"task": task, "timeout": timeout, "memory_mb": memory_mb,
                       "math": math, "sandbox": sandbox}, sort_keys=True)


class _GradeUDF:
    """Ray Data actor: one grading worker (a one-process timeout pool, or the sandbox)."""

    def __init__(self, config: str) -> None:
        cfg = json.loads(config)
        self.task = cfg["task"]
        self.refusal = None
        self.pool = None
        if self.task == "math":
            from rlvr_boundary.verify.math import grade_math_job
            from rlvr_boundary.verify.pool import TimeoutPool

            preload = ["rlvr_boundary.verify.math"]
            if "math-verify" in (cfg["math"]["backend"], *cfg["math"].get("also", ())):
                preload += ["math_verify", "sympy"]
            self.pool = TimeoutPool(grade_math_job, workers=1, timeout=cfg["timeout"],
                                    preload=tuple(preload),
                                    memory_mb=cfg["memory_mb"]).__enter__()
            self.mopts = cfg["math"]
            # Warm up before the first real item: the forkserver's imports (sympy,
            # math-verify) must not count against an item's hard timeout in a new actor.
            list(self.pool.map([("1", "\\boxed{1}", self.mopts)]))
        else:
            from rlvr_boundary.verify.sandbox import SandboxOptions, require_isolation

            self.sb = SandboxOptions(**cfg["sandbox"])
            try:
                require_isolation(self.sb)  # this node's sandbox, not the driver's
            except Exception as exc:  # noqa: BLE001 - SandboxUnavailable, said to the driver
                self.refusal = f"{type(exc).__name__}: {exc}"

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        idx = [int(i) for i in batch["i"]]
        jobs = [json.loads(j) for j in batch["job"]]
        if self.refusal is not None:
            res = [json.dumps({REFUSED: self.refusal})] * len(idx)
            return {"i": np.array(idx, dtype=np.int64), "res": np.array(res, dtype=object)}
        out: list = [None] * len(jobs)
        if self.task == "math":
            for k, r in self.pool.map((g, t, self.mopts) for g, t in jobs):
                out[k] = r
        else:
            from rlvr_boundary.verify.code import grade_code

            for k, (g, t) in enumerate(jobs):
                try:
                    out[k] = grade_code(t, g, self.sb)
                except Exception as exc:  # noqa: BLE001 - as the local thread pool does
                    out[k] = {"answer": None, "correct": False, "verify_status": "error",
                              "detail": f"{type(exc).__name__}: {exc}"[:300]}
        res = [json.dumps(r, ensure_ascii=True) for r in out]
        return {"i": np.array(idx, dtype=np.int64), "res": np.array(res, dtype=object)}

    def __del__(self) -> None:
        if self.pool is not None:
            self.pool.__exit__(None, None, None)


def init_ray(address: str | None) -> bool:
    """Join the cluster at ``address`` (None: a running local instance, else start one).

    Returns True when this call started Ray (the caller then shuts it down). Workers
    import this package from where the driver does (``PYTHONPATH``).
    """
    ray = require("ray", "ray", "grading on Ray")
    if ray.is_initialized():
        return False
    src = str(Path(__file__).resolve().parents[2])  # the directory holding rlvr_boundary/
    pypath = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    ray.init(address=address, ignore_reinit_error=True, include_dashboard=False,
             log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": pypath}})
    return True


class RayGrader:
    """Grade items on a pool of Ray actors; results streamed back to the driver.

    Parameters
    ----------
    config
        :func:`grader_config`.
    workers
        Actors in the pool (each grades one item at a time).
    block_rows
        Items per block handed to an actor (the unit Ray redoes when an actor dies).
    address
        Ray cluster address; None: a running local instance, else a new one.

    Notes
    -----
    Use as a context manager. ``duplicates`` counts results that arrived for an
    item already graded (ignored); ``refused`` holds an actor's refusal.
    """

    def __init__(self, config: str, workers: int = 2, block_rows: int = 32,
                 address: str | None = None) -> None:
        self.ray = require("ray", "ray", "grading on Ray")
        require("ray.data", "ray", "grading on Ray")
        self.config, self.workers, self.block_rows = config, int(workers), int(block_rows)
        self.address = address
        self._started = False
        self.duplicates = 0

    def __enter__(self) -> Self:
        self._started = init_ray(self.address)
        return self

    def __exit__(self, *exc) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False

    def map(self, items: Iterable[tuple]) -> Iterator[tuple[int, dict]]:
        """Yield ``(index, result)`` once per item, in completion order.

        ``items`` are ``(gold, text)`` pairs of JSON values. Raises
        :class:`~rlvr_boundary.verify.sandbox.SandboxUnavailable` when an actor's node
        refuses to run code, RuntimeError when the dataset ends with an item missing.
        """
        import ray.data

        rows = [{"i": i, "job": json.dumps([g, t], ensure_ascii=True)}
                for i, (g, t) in enumerate(items)]
        if not rows:
            return
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.execution_options.preserve_order = False
        n_blocks = max(1, -(-len(rows) // self.block_rows))
        ds = ray.data.from_items(rows, override_num_blocks=n_blocks)
        out = ds.map_batches(_GradeUDF, batch_size=self.block_rows, batch_format="numpy",
                             compute=ray.data.ActorPoolStrategy(size=self.workers),
                             num_cpus=1, fn_constructor_kwargs={"config": self.config})
        seen: set[int] = set()
        for r in out.iter_rows():
            i = int(r["i"])
            res = json.loads(r["res"])
            if REFUSED in res:
                from rlvr_boundary.verify.sandbox import SandboxUnavailable

                raise SandboxUnavailable(f"a Ray node refused to grade code: {res[REFUSED]}")
            if i in seen or not 0 <= i < len(rows):
                self.duplicates += 1
                continue
            seen.add(i)
            yield i, res
        if len(seen) != len(rows):
            raise RuntimeError(f"Ray Data returned {len(seen)} of {len(rows)} graded items")
