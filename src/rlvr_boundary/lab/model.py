"""The lab's tiny causal LM: a standard Hugging Face Llama, saved as a normal HF folder.

Design: we use ``LlamaForCausalLM`` unchanged (RMSNorm, rotary positions, SwiGLU)
at toy width, so every Hugging Face-based backend loads a lab checkpoint offline
with ``AutoModelForCausalLM.from_pretrained(folder)``. A checkpoint folder holds
``config.json``, ``generation_config.json``, ``model.safetensors`` and the
tokenizer files; nothing is pickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.errors import require


def _quiet(tf) -> None:
    """Our own progress bars say what happens; silence the library's per-file ones."""
    tf.utils.logging.disable_progress_bar()

#: File written last into a checkpoint folder: its presence means the folder is complete.
COMPLETE = "LAB_COMPLETE"


@dataclass
class ModelConfig:
    """Size of the tiny Llama."""

    hidden: int = 64
    """Hidden width."""
    layers: int = 2
    """Number of transformer blocks."""
    heads: int = 4
    """Attention heads (as many key/value heads)."""
    mlp: int = 192
    """Width of the SwiGLU feed-forward layer."""
    max_len: int = 48
    """Longest sequence (prompt + completion) in tokens."""

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "heads", "mlp", "max_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.hidden % self.heads or (self.hidden // self.heads) % 2:
            raise ValueError("hidden / heads must be an even integer (rotary embeddings)")


def build_model(cfg: ModelConfig, tokenizer, seed: int = 0):
    """A freshly initialised ``LlamaForCausalLM`` for ``tokenizer``'s vocabulary."""
    torch = require("torch", "hf", "the lab")
    tf = require("transformers", "hf", "the lab")
    config = tf.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden, intermediate_size=cfg.mlp,
        num_hidden_layers=cfg.layers, num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.heads, max_position_embeddings=cfg.max_len,
        tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = tf.LlamaForCausalLM(config)
    # Sampling defaults of the folder: plain ancestral sampling, no top-k/top-p truncation.
    model.generation_config = tf.GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=cfg.max_len,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id)
    return model


def save_checkpoint(model, tokenizer, folder: str | Path, extra: dict | None = None) -> Path:
    """Save ``model`` and ``tokenizer`` as an HF folder, atomically (temp dir, then rename).

    ``extra`` is written as ``lab_state.json`` (training step, options); the
    :data:`COMPLETE` marker is written last.
    """
    import json
    import shutil

    _quiet(require("transformers", "hf", "the lab"))
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / "lab_state.json").write_text(json.dumps(extra or {}, indent=1), encoding="utf-8")
    (tmp / COMPLETE).write_text("ok\n", encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    return folder


def is_complete(folder: str | Path) -> bool:
    """True when ``folder`` is a finished checkpoint written by :func:`save_checkpoint`."""
    return (Path(folder) / COMPLETE).is_file()


def load_checkpoint(folder: str | Path):
    """``(model, tokenizer)`` from an HF folder, in eval mode on CPU."""
    tf = require("transformers", "hf", "the lab")
    folder = Path(folder)
    _quiet(tf)
    model = tf.AutoModelForCausalLM.from_pretrained(folder)
    tok = tf.AutoTokenizer.from_pretrained(folder)
    model.eval()
    return model, tok
