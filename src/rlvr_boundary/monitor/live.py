"""Sample a model that is in memory (the one being trained) with the transformers backend.

:class:`LiveBackend` is :class:`rlvr_boundary.backends.transformers.TransformersBackend`
without the loading: it takes the trainer's model object and tokenizer, so a look
costs no checkpoint write and no reload. Everything else (per-sample seeds,
inverse-CDF draws, exact token statistics, stop strings) is the backend's own
code, so a live model and the same weights saved and loaded from a folder draw
the same samples (tested).

:func:`sampling_mode` puts the model in eval mode for the look (no dropout) and
restores its training mode afterwards; sampling never touches torch's global
random state (each sample draws from its own numpy generator), so a look does
not change the training run's random stream.
"""

from __future__ import annotations

from contextlib import contextmanager

from rlvr_boundary.backends.transformers import TransformersBackend
from rlvr_boundary.errors import require

__all__ = ["LiveBackend", "sampling_mode"]


class LiveBackend(TransformersBackend):
    """The transformers backend on a model object already in memory.

    Parameters
    ----------
    model
        A Hugging Face causal LM (``PreTrainedModel``); a wrapper with a
        ``module`` attribute (DDP) is unwrapped.
    tokenizer
        Its tokenizer.
    batch_size
        Sequences decoded together.
    label
        Recorded as the model path in :meth:`info`.
    """

    name = "transformers"

    def __init__(self, model, tokenizer, *, batch_size: int = 64, label: str = "live model") -> None:
        torch = require("torch", "hf", "sampling a live model")
        import inspect

        model = getattr(model, "module", model)
        self.model_path = label
        self.model = model
        self.tok = tokenizer
        self.device = next(model.parameters()).device
        self.batch_size = int(batch_size)
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self.dtype = str(model.dtype).replace("torch.", "")
        eos = set()
        for src in (getattr(model.generation_config, "eos_token_id", None) if
                    getattr(model, "generation_config", None) is not None else None,
                    tokenizer.eos_token_id):
            if isinstance(src, int):
                eos.add(src)
            elif src:
                eos.update(int(x) for x in src)
        self.eos_ids = eos
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (min(eos) if eos else 0))
        self._hash = None
        del torch

    def info(self) -> dict:
        import torch
        import transformers

        return {"engine": "transformers", "engine_version": transformers.__version__,
                "torch_version": torch.__version__, "model_path": self.model_path,
                "model_hash": None, "device": str(self.device), "dtype": self.dtype,
                "batch_size": self.batch_size, "vocab_size": self.vocab_size,
                "logprobs_source": "full logits (exact)"}


@contextmanager
def sampling_mode(model):
    """Eval mode and no gradients for the look; the model's training mode is restored after."""
    torch = require("torch", "hf", "sampling a live model")
    inner = getattr(model, "module", model)
    was_training = inner.training
    inner.eval()
    try:
        with torch.no_grad():
            yield inner
    finally:
        inner.train(was_training)
