"""Many machines: Ray Data, one row per sample, each worker running an inner backend.

The work items (one per sample, with its ``sample_idx`` and seed; see
:func:`rlvr_boundary.backends.base.iter_items`) become a Ray Dataset and flow
through ``map_batches`` into a pool of actors; each actor builds the inner
backend once (``transformers`` on CPUs or GPUs, or ``vllm`` with
``num_gpus = 1`` per actor on a GPU cluster) and generates its block. One row
per sample, not ``n > 1`` per request, so blocks shard evenly and any block can
be redone. Because every sample's random stream depends only on its own seed,
the samples equal those of the single-process path, whatever the block sizes
and however the rows are spread over workers.

Ray's own LLM processor (``ray.data.llm.build_llm_processor`` with a
``vLLMEngineProcessorConfig``) is an alternative for vLLM clusters; we use
plain ``map_batches`` so the same code runs the transformers backend anywhere
and the token summaries are computed the same way in every backend.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from rlvr_boundary.backends.base import Backend, SamplingParams
from rlvr_boundary.errors import InputError, require

__all__ = ["RayBackend"]


class _GenerateUDF:
    """Ray Data actor: builds the inner backend once, generates one block of items."""

    def __init__(self, inner: str, inner_kwargs: dict, params: dict) -> None:
        from rlvr_boundary.backends import get_backend

        params = dict(params)
        params["stop"] = tuple(params.get("stop") or ())
        self.params = SamplingParams(**params)
        self.backend = get_backend(inner, **inner_kwargs)

    def __call__(self, batch):  # pandas DataFrame in, pandas DataFrame out
        import pandas as pd

        items = []
        for rec in batch.to_dict("records"):
            it = {k: v for k, v in rec.items() if v is not None and not (isinstance(v, float) and v != v)}
            if "messages" in it and not isinstance(it["messages"], list):
                it["messages"] = list(it["messages"])
            items.append(it)
        rows = list(self.backend.generate_items(items, self.params))
        for it, row in zip(items, rows):
            row["_order"] = int(it["_order"])
        return pd.DataFrame(rows)


class RayBackend(Backend):
    """Fan sampling out over a Ray cluster (or a local Ray instance).

    Parameters
    ----------
    inner
        Backend each worker runs: ``"transformers"`` or ``"vllm"``.
    inner_kwargs
        Its options (``model``, ``device``, ``batch_size``, ...).
    num_workers
        Actors in the pool.
    num_cpus, num_gpus
        Resources per actor.
    batch_size
        Rows per Ray block handed to an actor.
    address
        Ray cluster address (None: join a running local instance or start one).
    """

    name = "ray"

    def __init__(self, inner: str = "transformers", inner_kwargs: dict | None = None,
                 num_workers: int = 2, num_cpus: float = 1, num_gpus: float = 0,
                 batch_size: int = 16, address: str | None = None) -> None:
        self.ray = require("ray", "ray", "the Ray backend")
        require("ray.data", "ray", "the Ray backend")
        if inner not in ("transformers", "vllm"):
            raise InputError("the Ray backend runs the transformers or vllm backend", field="inner")
        if num_workers < 1 or batch_size < 1:
            raise InputError("num_workers and batch_size must be >= 1", field="ray options")
        self.inner = inner
        self.inner_kwargs = dict(inner_kwargs or {})
        self.num_workers = int(num_workers)
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.batch_size = int(batch_size)
        self.address = address
        self._started = False
        self._info: dict | None = None

    def _ensure_ray(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        src = str(Path(__file__).resolve().parents[2])  # the directory holding rlvr_boundary/
        pypath = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
        ray.init(address=self.address, ignore_reinit_error=True, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": pypath}})
        self._started = True

    def info(self) -> dict:
        if self._info is None:
            from rlvr_boundary.backends import backend_class
            from rlvr_boundary.backends.base import model_hash

            backend_class(self.inner)  # check the inner backend's extra on the driver
            path = self.inner_kwargs.get("model")
            self._info = {"engine": f"ray+{self.inner}", "engine_version": self.ray.__version__,
                          "inner": self.inner, "inner_kwargs": self.inner_kwargs,
                          "model_path": path, "model_hash": model_hash(path) if path else None,
                          "num_workers": self.num_workers, "num_cpus": self.num_cpus,
                          "num_gpus": self.num_gpus, "block_rows": self.batch_size}
        return self._info

    def generate_items(self, items: Sequence[dict], params: SamplingParams) -> Iterator[dict]:
        import ray.data

        items = [{**it, "_order": i} for i, it in enumerate(items)]
        if not items:
            return
        self._ensure_ray()
        # Before the dataset is built: a dataset captures the context when it is made.
        ray.data.DataContext.get_current().execution_options.preserve_order = True
        ds = ray.data.from_items(items)
        out = ds.map_batches(
            _GenerateUDF, batch_size=self.batch_size, batch_format="pandas",
            compute=ray.data.ActorPoolStrategy(size=self.num_workers),
            num_cpus=self.num_cpus, num_gpus=self.num_gpus,
            fn_constructor_kwargs={"inner": self.inner, "inner_kwargs": self.inner_kwargs,
                                   "params": params.to_dict()})
        # Stream rows back in item order, so callers can write shards as they complete. Ray
        # may still hand blocks back out of order, so rows wait in a buffer until their turn.
        pending, nxt = {}, 0
        for r in out.iter_rows():
            r = dict(r)
            pending[int(r.pop("_order"))] = {k: _plain(v) for k, v in r.items()}
            while nxt in pending:
                yield pending.pop(nxt)
                nxt += 1
        if pending or nxt != len(items):
            raise RuntimeError(f"Ray Data returned {nxt + len(pending)} rows for {len(items)} "
                               "items")

    def score(self, prompts, completions, *, position_bins: int = 10) -> list[dict]:
        raise InputError("scoring runs in one process: use the transformers backend", field="backend")

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
            self._started = False


def _plain(v):
    """Arrow/numpy values back to Python (lists, ints, floats, None)."""
    import numpy as np

    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    return v
