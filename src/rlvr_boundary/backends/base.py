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

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

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


#: Longest generation a run may ask for (tokens); a longer one is refused before sampling.
MAX_NEW_TOKENS = 131_072
#: Most top-K log-probabilities kept per step.
MAX_LOGPROBS = 1_000


@dataclass(frozen=True)
class SamplingParams:
    """Sampling options shared by every backend (each field is a flag of ``sample``).

    ``seed`` is the run seed; each sample's own seed is derived from it
    (:func:`sample_seed`). ``logprobs = K > 0`` also keeps the top-K
    log-probabilities of every step (engines that only return top-K summarize
    from them). ``logprobs_mode`` says which distribution the summaries describe:
    the model's (``raw``) or the one sampled from after temperature, top-k and
    top-p (``processed``).
    """

    temperature: float = option(1.0, low=0, group="sampling",
                                help="softmax temperature; 0 = greedy decoding (argmax)")
    top_p: float = option(1.0, low=0, high=1, low_open=True, group="sampling",
                          help="nucleus sampling: keep the smallest set of tokens with mass >= "
                               "top-p (1 = off)")
    top_k: int = option(0, low=0, group="sampling",
                        help="keep the k most likely tokens (0 = off)")
    max_new_tokens: int = option(256, low=1, high=MAX_NEW_TOKENS, group="sampling",
                                 help="generation stops after this many tokens (finish_reason "
                                      "length, truncated)")
    stop: tuple[str, ...] = option((), metavar="STRING", group="sampling",
                                   help="stop string: the text is cut before it (repeatable)")
    seed: int = option(0, low=0, high=2**63 - 1, group="sampling",
                       what="an integer from 0 to 2**63 - 1", help="run seed")
    logprobs: int = option(0, metavar="K", low=0, high=MAX_LOGPROBS, group="sampling",
                           help="keep the top-K logprobs of every step (0 = summaries only)")
    logprobs_mode: str = option("raw", choices=("raw", "processed"), group="sampling",
                                help="summaries of the model's distribution (raw) or of the "
                                     "sampled one after temperature/top-k/top-p (processed)")
    token_arrays: bool = option(False, group="sampling",
                                help="keep token ids and their logprobs in every row")
    position_bins: int = option(10, low=1, high=1_000, group="sampling",
                                help="relative-position bins of entropy_bins")

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(self.stop))
        check(self)
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise InputError("stop strings must be non-empty strings", field="stop")

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
    import hashlib

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
    import hashlib

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
