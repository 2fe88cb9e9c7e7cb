"""vLLM offline engine (GPU): one request per sample, top-K logprobs, rigorous entropy bounds.

Written against vLLM's documented offline API (``vllm.LLM``,
``vllm.SamplingParams``, ``RequestOutput.outputs[0]`` with ``text``,
``token_ids``, ``finish_reason`` and ``logprobs``: per step a dict token id ->
``Logprob(logprob, rank, decoded_token)``). Each sample is its own request with
``n = 1`` and its own ``seed`` (vLLM's per-request seeded generator), so the
samples do not depend on batch composition; vLLM batches the requests itself.

vLLM returns the top-K logprobs of each step (plus the sampled token's when it
ranks below K), never the full distribution: the entropy is the interval of
:func:`rlvr_boundary.core.tokens.entropy_bounds_topk` (``entropy_kind =
"topk_bounds"``) and the RBF a flagged lower bound where the top-K mass is
below 0.95. Which distribution the logprobs describe is vLLM's
``logprobs_mode`` engine option (``raw_logprobs`` by default: before
temperature and top-p), mapped from our ``SamplingParams.logprobs_mode``.

Not run in our CI: there is no GPU there, and the PyPI vLLM wheel is a CUDA build
(see docs/backends.md for what was and was not run).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from rlvr_boundary.backends.base import Backend, SamplingParams, model_hash
from rlvr_boundary.core.tokens import TokenSummarizer
from rlvr_boundary.errors import InputError, require

__all__ = ["VLLMBackend", "topk_from_vllm"]

_MODES = {"raw": "raw_logprobs", "processed": "processed_logprobs"}


def topk_from_vllm(step_logprobs: Sequence[dict], sampled: Sequence[int], K: int):
    """Top-K and sampled-token logprobs from vLLM's per-step ``{token_id: Logprob}`` dicts.

    Parameters
    ----------
    step_logprobs
        One dict per generated token; values have ``.logprob`` and ``.rank``
        (1 = most likely).
    sampled
        The generated token ids.
    K
        Requested number of logprobs.

    Returns
    -------
    top, token_lp, top_ids
        ``(T, K)`` top-K logprobs (``-inf`` padding), ``(T,)`` sampled-token
        logprobs, ``(T, K)`` ids (-1 padding). The sampled token enters the
        top-K only if its rank is <= K.
    """
    T = len(step_logprobs)
    top = np.full((T, K), -np.inf)
    ids = np.full((T, K), -1, dtype=np.int64)
    tok_lp = np.empty(T)
    for t, (d, s) in enumerate(zip(step_logprobs, sampled)):
        if s not in d:
            raise ValueError(f"step {t}: vLLM returned no logprob for the sampled token")
        tok_lp[t] = float(d[s].logprob)
        ranked = sorted(((v.rank if v.rank is not None else K + 1, int(k), float(v.logprob))
                         for k, v in d.items()), key=lambda x: (x[0], -x[2]))
        kept = [x for x in ranked if x[0] <= K][:K]
        for j, (_, tid, lp) in enumerate(kept):
            top[t, j] = lp
            ids[t, j] = tid
    return top, tok_lp, ids


class VLLMBackend(Backend):
    """Sample with vLLM's offline engine.

    Parameters
    ----------
    model
        Hugging Face folder or hub name.
    dtype
        Passed to ``vllm.LLM`` (``"auto"``, ``"bfloat16"``, ...).
    logprobs_mode
        ``"raw"`` or ``"processed"``: fixed per engine (vLLM's engine option).
    engine_kwargs
        Further ``vllm.LLM`` options (``tensor_parallel_size``, ``gpu_memory_utilization``, ...).
    """

    name = "vllm"

    def __init__(self, model: str, dtype: str = "auto", logprobs_mode: str = "raw",
                 **engine_kwargs) -> None:
        vllm = require("vllm", "vllm", "the vLLM backend")
        if logprobs_mode not in _MODES:
            raise InputError("logprobs_mode must be 'raw' or 'processed'", field="logprobs_mode")
        self.model_path = str(model)
        self.logprobs_mode = logprobs_mode
        kw = dict(model=self.model_path, dtype=dtype, seed=0, **engine_kwargs)
        try:
            self.llm = vllm.LLM(logprobs_mode=_MODES[logprobs_mode], **kw)
            self.mode_recorded = _MODES[logprobs_mode]
        except TypeError:  # vLLM before the logprobs_mode option: raw logprobs only
            if logprobs_mode != "raw":
                raise InputError("this vLLM version returns raw logprobs only", field="logprobs_mode")
            self.llm = vllm.LLM(**kw)
            self.mode_recorded = "raw_logprobs (vLLM default)"
        self.tok = self.llm.get_tokenizer()
        self.vocab_size = int(self.llm.llm_engine.model_config.get_vocab_size())
        self._vllm = vllm

    def info(self) -> dict:
        return {"engine": "vllm", "engine_version": self._vllm.__version__,
                "model_path": self.model_path, "model_hash": model_hash(self.model_path),
                "vocab_size": self.vocab_size, "logprobs_mode": self.mode_recorded,
                "logprobs_source": "top-K logprobs (entropy as an interval)"}

    def _prompt(self, item: dict) -> str:
        if item.get("messages") is not None:
            return self.tok.apply_chat_template(item["messages"], tokenize=False,
                                                add_generation_prompt=True)
        return item["prompt"]

    def generate_items(self, items: Sequence[dict], params: SamplingParams) -> Iterator[dict]:
        if params.logprobs_mode != self.logprobs_mode:
            raise InputError(f"this engine was built with logprobs_mode={self.logprobs_mode!r}",
                             field="logprobs_mode")
        items = list(items)
        K = max(params.logprobs, 1)  # always ask for logprobs: the summaries need them
        sps = [self._vllm.SamplingParams(
            n=1, temperature=params.temperature, top_p=params.top_p,
            top_k=params.top_k if params.top_k > 0 else -1, max_tokens=params.max_new_tokens,
            stop=list(params.stop) or None, seed=int(it["seed"]) % (2**63), logprobs=K)
            for it in items]
        outs = self.llm.generate([self._prompt(it) for it in items], sps, use_tqdm=False)
        for it, ro in zip(items, outs):
            o = ro.outputs[0]
            ids = list(o.token_ids)
            summ = TokenSummarizer(bins=params.position_bins, vocab_size=self.vocab_size)
            row_extra = {}
            if ids and o.logprobs:
                top, tok_lp, top_ids = topk_from_vllm(o.logprobs, ids, K)
                summ.add_topk(top, tok_lp)
                if params.token_arrays:
                    row_extra["token_ids"] = ids
                    row_extra["token_logprobs"] = tok_lp.tolist()
                if params.logprobs:
                    row_extra["top_ids"] = top_ids.tolist()
                    row_extra["top_logprobs"] = top.tolist()
            yield {"prompt_id": it["prompt_id"], "sample_idx": int(it["sample_idx"]),
                   "seed": int(it["seed"]), "text": o.text, "finish_reason": o.finish_reason,
                   "num_tokens": len(ids), "truncated": o.finish_reason == "length",
                   **summ.result(), **row_extra}

    def score(self, prompts, completions, *, position_bins: int = 10) -> list[dict]:
        raise InputError("exact scoring needs the full logits: use the transformers backend "
                         "(vLLM returns top-K logprobs only)", field="backend")
