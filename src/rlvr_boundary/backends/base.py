"""The backend interface, the sampling options, per-sample seeds and prompt templates.

Every backend turns prompts into samples and texts into scores behind the same
two calls:

``generate(prompts, n, params)``
    yields one dict per sample (:data:`ROW_KEYS`, plus the token summaries of
    :data:`rlvr_boundary.core.tokens.SUMMARY_KEYS`, plus token arrays when
    asked), in the order of ``prompts`` x ``sample_idx``.
``score(prompts, completions)``
    returns one dict per completion with the log-PPL and the token summaries of
    the given text under the backend's model (cross-model perplexity,
    limit-of-RLVR Figure 6).

Design decisions:

- **One random stream per sample.** Sample ``s`` of prompt ``p`` draws its
  uniforms from a seed derived from ``(run seed, prompt_id, s)``
  (:func:`sample_seed`), never from a stream shared by a batch. So a resumed run,
  a run with another batch size, or a run split over Ray workers draws the same
  samples, and any single sample can be regenerated alone. Samples are
  independent: a server is asked for one completion per request (not ``n > 1``).
- **Summaries while streaming.** Backends feed each step to a
  :class:`rlvr_boundary.core.tokens.TokenSummarizer` and drop the logits; token
  arrays are kept only when asked (``SamplingParams.token_arrays`` or
  ``logprobs = K``).
- ``logprobs_mode``: ``"raw"`` summaries describe the model's own next-token
  distribution (temperature 1, no truncation), the quantity the papers report
  and what :meth:`Backend.score` recomputes; ``"processed"`` describes the
  distribution actually sampled from (after temperature, top-k, top-p), which
  is what entropy-matched sampling compares. Engines that only return top-K
  logprobs give intervals (``entropy_kind = "topk_bounds"``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError

__all__ = [
    "SamplingParams",
    "Backend",
    "ROW_KEYS",
    "TEMPLATES",
    "QWEN_BOXED_SYSTEM",
    "sample_seed",
    "render_prompt",
    "template_text",
    "model_hash",
    "iter_items",
]

#: Keys of every generated row besides the token summaries.
ROW_KEYS = ("prompt_id", "sample_idx", "seed", "text", "finish_reason", "num_tokens", "truncated")

#: Prompt templates known to ``rlvr-boundary sample``.
TEMPLATES = ("plain", "chat", "qwen-boxed")

#: System prompt of the Qwen2.5-Math evaluation template (also used by limit-of-RLVR).
QWEN_BOXED_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."

_QWEN_BOXED = ("<|im_start|>system\n" + QWEN_BOXED_SYSTEM + "<|im_end|>\n"
               "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n")


@dataclass(frozen=True)
class SamplingParams:
    """Sampling options shared by every backend.

    Parameters
    ----------
    temperature
        Softmax temperature; 0 means greedy decoding (argmax).
    top_p
        Nucleus sampling: keep the smallest set of tokens with mass >= top_p (1 = off).
    top_k
        Keep the k most likely tokens (0 = off).
    max_new_tokens
        Generation stops after this many tokens (finish_reason ``length``,
        ``truncated = True``).
    stop
        Stop strings: generation stops once the text contains one; the text is
        cut before it (finish_reason ``stop``).
    seed
        Run seed; each sample's own seed is derived from it (:func:`sample_seed`).
    logprobs
        0: only the summaries (exact where the backend sees logits). K > 0: also
        keep, and for engines that only return top-K, summarize from, the top-K
        logprobs of every step.
    logprobs_mode
        ``"raw"`` (model distribution) or ``"processed"`` (after temperature,
        top-k, top-p): which distribution the summaries describe.
    token_arrays
        Keep the generated token ids and their logprobs in every row.
    position_bins
        Number of relative-position bins of ``entropy_bins``.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int = 0
    logprobs: int = 0
    logprobs_mode: str = "raw"
    token_arrays: bool = False
    position_bins: int = 10

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(self.stop))
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and self.temperature >= 0):
            raise InputError(f"temperature must be a finite number >= 0, got {self.temperature!r}",
                             field="temperature")
        if not 0.0 < float(self.top_p) <= 1.0:
            raise InputError(f"top_p must lie in (0, 1], got {self.top_p!r}", field="top_p")
        for name in ("top_k", "logprobs", "seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"{name} must be an integer >= 0, got {v!r}", field=name)
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) \
                or self.max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be an integer >= 1, got {self.max_new_tokens!r}",
                             field="max_new_tokens")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise InputError("stop strings must be non-empty strings", field="stop")
        if self.logprobs_mode not in ("raw", "processed"):
            raise InputError(f"logprobs_mode must be 'raw' or 'processed', got {self.logprobs_mode!r}",
                             field="logprobs_mode")
        if not isinstance(self.position_bins, int) or self.position_bins < 1:
            raise InputError("position_bins must be an integer >= 1", field="position_bins")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d


def sample_seed(run_seed: int, prompt_id: str, sample_idx: int) -> int:
    """Seed of one sample, from the run seed, the prompt id and the sample index.

    The first 8 bytes of ``sha256("{run_seed}\\x1f{prompt_id}\\x1f{sample_idx}")``,
    shifted right by one bit so it fits a signed 64-bit column. Independent of
    batch composition, shard, worker and resume point.
    """
    msg = f"{int(run_seed)}\x1f{prompt_id}\x1f{int(sample_idx)}".encode("utf-8")
    return int.from_bytes(hashlib.sha256(msg).digest()[:8], "big") >> 1


def template_text(template: str) -> str:
    """The template's text (hashed into the manifest)."""
    if template == "plain":
        return "{question}"
    if template == "qwen-boxed":
        return _QWEN_BOXED
    if template == "chat":
        return "tokenizer chat template: [{'role': 'user', 'content': question}]"
    raise InputError(f"unknown template {template!r}; known: {list(TEMPLATES)}", field="template")


def render_prompt(template: str, question: str) -> dict:
    """Prompt payload for a backend: ``{"prompt": str}`` or ``{"messages": [...]}``.

    ``plain`` passes the question through; ``qwen-boxed`` wraps it in the
    Qwen2.5-Math chat markup with the boxed-answer system prompt (a string, so
    it works with any tokenizer and any completions endpoint); ``chat`` leaves
    the markup to the model's own chat template (applied by the backend).
    """
    if template == "plain":
        return {"prompt": question}
    if template == "qwen-boxed":
        return {"prompt": _QWEN_BOXED.replace("{question}", question)}
    if template == "chat":
        return {"messages": [{"role": "user", "content": question}]}
    raise InputError(f"unknown template {template!r}; known: {list(TEMPLATES)}", field="template")


def model_hash(path: str | Path) -> str | None:
    """sha256 over a local checkpoint's config and weight files (None for a hub name).

    Hashes ``config.json`` and every ``*.safetensors`` / ``*.bin`` file, in name
    order, each preceded by its name. Reads every byte: seconds per GB.
    """
    p = Path(path)
    if not p.is_dir():
        return None
    files = [p / "config.json"] if (p / "config.json").exists() else []
    files += sorted(f for f in p.iterdir() if f.suffix in (".safetensors", ".bin"))
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _check_prompts(prompts: Sequence[dict]) -> None:
    for i, p in enumerate(prompts):
        if not isinstance(p, dict) or "prompt_id" not in p or not (
                isinstance(p.get("prompt"), str) or isinstance(p.get("messages"), list)):
            raise InputError(f"prompt {i}: expected a dict with 'prompt_id' and a 'prompt' string "
                             "(or chat 'messages')", line=i + 1)


def iter_items(prompts: Sequence[dict], n: int, params: SamplingParams) -> Iterator[dict]:
    """One work item per sample: the prompt, its ``sample_idx`` and its seed."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n must be an integer >= 1, got {n!r}", field="n")
    _check_prompts(prompts)
    for p in prompts:
        for s in range(n):
            yield {**p, "prompt_id": str(p["prompt_id"]), "sample_idx": s,
                   "seed": sample_seed(params.seed, str(p["prompt_id"]), s)}


class Backend:
    """Base class of the backends: subclasses implement :meth:`generate_items` and :meth:`score`.

    ``generate_items`` takes the per-sample work items of :func:`iter_items`
    (each with its ``sample_idx`` and ``seed``), so a caller can regenerate any
    subset (a resumed shard, a Ray block) and get the very same samples.
    """

    name = "base"

    def generate(self, prompts: Sequence[dict], n: int, params: SamplingParams) -> Iterator[dict]:
        """Yield one row per sample, ``n`` per prompt, in prompt then sample order."""
        yield from self.generate_items(list(iter_items(prompts, n, params)), params)

    def generate_items(self, items: Sequence[dict], params: SamplingParams) -> Iterator[dict]:
        raise NotImplementedError

    def score(self, prompts: Sequence[dict], completions: Sequence[dict], *,
              position_bins: int = 10) -> list[dict]:
        """Score each completion (``{"prompt_id", "text"}`` or ``"token_ids"``) under the model."""
        raise NotImplementedError

    def info(self) -> dict:
        """Engine, version, model path and hash, for the run manifest."""
        return {"engine": self.name}

    def close(self) -> None:
        """Release resources (servers, worker pools)."""


def by_prompt_id(prompts: Iterable[dict]) -> dict[str, dict]:
    """Index prompts by id, refusing duplicates."""
    out: dict[str, dict] = {}
    for i, p in enumerate(prompts):
        pid = str(p["prompt_id"])
        if pid in out:
            raise InputError(f"duplicate prompt_id {pid!r}", line=i + 1, field="prompt_id")
        out[pid] = p
    return out
