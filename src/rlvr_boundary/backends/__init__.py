"""Model backends: draw samples and score texts, behind one interface.

>>> from rlvr_boundary.backends import get_backend, SamplingParams
>>> backend = get_backend("transformers", model="/path/hf_folder", device="cpu")  # doctest: +SKIP
>>> rows = list(backend.generate([{"prompt_id": "p1", "prompt": "1+1="}], 4,
...                              SamplingParams(max_new_tokens=32)))  # doctest: +SKIP

Backends are registered by name as ``"module:Class"`` strings and imported only
when asked for, so ``import rlvr_boundary.backends`` needs neither torch nor an
HTTP client; a missing dependency raises
:class:`rlvr_boundary.errors.MissingExtraError` naming the extra to install.
"""

from __future__ import annotations

import importlib

from rlvr_boundary.backends.base import (
    Backend,
    SamplingParams,
    render_prompt,
    sample_seed,
    template_text,
)
from rlvr_boundary.errors import InputError, MissingExtraError

__all__ = ["BACKENDS", "get_backend", "backend_class", "Backend", "SamplingParams",
           "render_prompt", "sample_seed", "template_text"]

#: name -> ("module:Class", extra, the third-party module the extra provides)
BACKENDS: dict[str, tuple[str, str, str]] = {
    "transformers": ("rlvr_boundary.backends.transformers:TransformersBackend", "hf", "transformers"),
    "vllm": ("rlvr_boundary.backends.vllm:VLLMBackend", "vllm", "vllm"),
    "openai": ("rlvr_boundary.backends.openai:OpenAIBackend", "openai", "httpx"),
    "ray": ("rlvr_boundary.backends.ray:RayBackend", "ray", "ray"),
}


def backend_class(name: str) -> type[Backend]:
    """The class registered as ``name``, imported now; its dependencies checked."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}; known: {sorted(BACKENDS)}", field="backend")
    target, extra, dep = BACKENDS[name]
    try:
        importlib.import_module(dep)
    except ImportError as exc:
        raise MissingExtraError(dep, extra, f"the {name} backend") from exc
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def get_backend(name: str, **kwargs) -> Backend:
    """Build the backend registered as ``name`` with its keyword options."""
    return backend_class(name)(**kwargs)
