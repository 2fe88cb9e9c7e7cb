"""Model backends: draw samples and score texts, behind one interface.

>>> from rlvr_boundary.backends import get_backend, SamplingParams
>>> backend = get_backend("transformers", model="/path/hf_folder", device="cpu")  # doctest: +SKIP
>>> rows = list(backend.generate([{"prompt_id": "p1", "prompt": "1+1="}], 4,
...                              SamplingParams(max_new_tokens=32)))  # doctest: +SKIP

:data:`BACKENDS` is the registry: each backend's name, its ``"module:Class"``
(imported only when asked for, so ``import rlvr_boundary.backends`` needs neither
torch nor an HTTP client), the extra that installs its dependency, one line of
help, and which of the :class:`BackendOptions` it takes. A missing dependency
raises :class:`rlvr_boundary.errors.MissingExtraError` naming the extra. The
command line (``sample``, ``score``) and :func:`build_backend` read the
registry; nothing else lists backends.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from rlvr_boundary.backends.base import (
    Backend,
    SamplingParams,
    render_prompt,
    sample_seed,
    template_text,
)
from rlvr_boundary.errors import InputError, MissingExtraError
from rlvr_boundary.options import check, option

__all__ = ["BACKENDS", "BackendSpec", "BackendOptions", "get_backend", "backend_class",
           "build_backend", "Backend", "SamplingParams", "render_prompt", "sample_seed",
           "template_text"]


@dataclass(frozen=True)
class BackendSpec:
    """One registered backend."""

    target: str
    """``"module:Class"``, imported when the backend is built."""
    extra: str
    """The extra of rlvr-boundary that installs its dependency."""
    dep: str
    """The third-party module the extra provides (checked before the import)."""
    help: str
    """One line for ``--backend``'s help."""
    options: tuple[str, ...] = ()
    """The :class:`BackendOptions` fields it takes (besides the model)."""
    scores: bool = False
    """Whether it can score texts with full logits (``rlvr-boundary score``)."""


#: name -> the backend's registration.
BACKENDS: dict[str, BackendSpec] = {
    "transformers": BackendSpec(
        "rlvr_boundary.backends.transformers:TransformersBackend", "hf", "transformers",
        "Hugging Face transformers on CPU or GPU: exact token entropy from the logits",
        ("device", "dtype", "batch_size", "threads"), scores=True),
    "vllm": BackendSpec("rlvr_boundary.backends.vllm:VLLMBackend", "vllm", "vllm",
                        "vLLM's offline engine (GPU)", ("dtype",)),
    "openai": BackendSpec("rlvr_boundary.backends.openai:OpenAIBackend", "openai", "httpx",
                          "any OpenAI-compatible server (vLLM or SGLang serve): top-K bounds",
                          ("base_url", "served_model", "concurrency", "request_timeout")),
    "ray": BackendSpec("rlvr_boundary.backends.ray:RayBackend", "ray", "ray",
                       "Ray Data workers, each running an inner backend (one row per sample)",
                       ("ray_inner", "ray_workers", "ray_address", "device", "dtype",
                        "batch_size", "threads")),
}


def _names() -> tuple[str, ...]:
    return tuple(BACKENDS)


@dataclass
class BackendOptions:
    """Which engine runs the model and how (flags of ``sample`` and ``score``)."""

    backend: str = option("transformers", choices=_names, group="backend",
                          help="engine: " + "; ".join(f"{n}: {b.help}"
                                                      for n, b in BACKENDS.items()))
    device: str = option("cpu", group="backend", help="transformers/vllm device")
    dtype: str = option("auto", group="backend",
                        help="weights dtype: auto, float32, bfloat16, ...")
    batch_size: int = option(16, low=1, high=65_536, group="backend",
                             help="sequences decoded together by the transformers backend")
    threads: int | None = option(None, low=1, high=1_024, group="backend",
                                 help="torch CPU threads (default 1 on --device cpu: torch's "
                                      "own default, one per core, collapses when other "
                                      "processes share the cores; raise it on an idle machine)")
    base_url: str | None = option(None, group="backend",
                                  help="openai: server URL, e.g. http://127.0.0.1:8000/v1")
    served_model: str | None = option(None, group="backend",
                                      help="openai: model name the server knows (default: "
                                           "--model)")
    concurrency: int = option(8, low=1, high=1_024, group="backend",
                              help="openai: requests in flight")
    request_timeout: float = option(120.0, low=0, low_open=True, group="backend",
                                    help="openai: seconds per request")
    ray_inner: str = option("transformers", choices=("transformers", "vllm"), group="backend",
                            help="ray: backend each Ray worker runs")
    ray_workers: int = option(2, low=1, high=4_096, group="backend", help="ray: worker actors")
    ray_address: str | None = option(None, group="backend",
                                     help="ray: cluster address (default: local)")

    def __post_init__(self) -> None:
        check(self)


def backend_class(name: str) -> type[Backend]:
    """The class registered as ``name``, imported now; its dependencies checked."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; known: {sorted(BACKENDS)}", field="backend")
    spec = BACKENDS[name]
    try:
        importlib.import_module(spec.dep)
    except ImportError as exc:
        raise MissingExtraError(spec.dep, spec.extra, f"the {name} backend") from exc
    module, cls = spec.target.split(":")
    return getattr(importlib.import_module(module), cls)


def get_backend(name: str, **kwargs) -> Backend:
    """Build the backend registered as ``name`` with its keyword options."""
    return backend_class(name)(**kwargs)


def _kwargs(name: str, opts: BackendOptions, model: str) -> dict:
    if name == "transformers":
        # One CPU thread unless asked: on a shared machine torch's one-thread-per-core default
        # spins against the other processes (4.5 samples/s against 247 with one thread).
        threads = opts.threads if opts.threads is not None else (
            1 if opts.device == "cpu" else None)
        return {"model": model, "device": opts.device, "dtype": opts.dtype,
                "batch_size": opts.batch_size, "num_threads": threads}
    if name == "vllm":
        return {"model": model, "dtype": opts.dtype}
    if name == "openai":
        return {"base_url": opts.base_url, "model": opts.served_model or model,
                "concurrency": opts.concurrency, "timeout": opts.request_timeout}
    inner = _kwargs(opts.ray_inner, opts, model)
    return {"inner": opts.ray_inner, "inner_kwargs": inner, "num_workers": opts.ray_workers,
            "address": opts.ray_address}


def build_backend(opts: BackendOptions, model: str) -> Backend:
    """The backend ``opts.backend`` for ``model``, with the options it takes."""
    return get_backend(opts.backend, **_kwargs(opts.backend, opts, model))
