"""Sample a lab checkpoint into rollout rows, with token statistics.

This is the one place the lab's audit stage generates text. It takes the shape
of the backends' interface, ``generate(prompts, n, params) -> rows``: rows
carry the text, generation facts and the per-sample token summaries of the
canonical rollout table (exact entropy from the full logits, RBF, log-PPL,
entropy by relative position), and the verifier fills in the verdict
afterwards. Swapping this for the transformers backend changes nothing
downstream.

Sampling is plain ancestral sampling at temperature 1 with no truncation
(``top_k = 0``, ``top_p = 1``): pass@k at large k is only meaningful for the
model's own distribution. Each batch of prompts is seeded from ``(seed,
batch index)``, so a resumed audit draws the same samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_boundary.core.tokens import TokenSummarizer
from rlvr_boundary.errors import require


@dataclass
class SamplingParams:
    """How to sample (the fields of the backends' sampling parameters the lab uses)."""

    temperature: float = 1.0
    """Softmax temperature (1: the model's own distribution)."""
    max_new_tokens: int = 32
    """Longest completion; longer ones are cut (``finish_reason = "length"``)."""
    seed: int = 0
    """Seed of the draws."""
    batch_size: int = 512
    """Sequences per forward batch."""
    position_bins: int = 10
    """Relative-position bins of ``entropy_bins``."""

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature!r}")
        for name in ("max_new_tokens", "batch_size", "position_bins"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")


def generate(model, tokenizer, prompts: list[str], n: int, params: SamplingParams,
             progress=None) -> list[dict]:
    """``n`` completions of every prompt: one row per completion, prompt-major.

    Rows hold ``prompt_index``, ``sample_idx``, ``text``, ``finish_reason``,
    ``num_tokens``, ``truncated`` and the token summary columns
    (:data:`rlvr_boundary.core.tokens.SUMMARY_KEYS`).
    ``progress(done)`` is called with the number of finished sequences.
    """
    torch = require("torch", "hf", "the lab")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    jobs = [(i, j) for i in range(len(prompts)) for j in range(n)]  # prompt-major
    rows: list[dict] = []
    eos = tokenizer.eos_token_id
    for b, lo in enumerate(range(0, len(jobs), params.batch_size)):
        chunk = jobs[lo:lo + params.batch_size]
        enc = [[tokenizer.bos_token_id] + tokenizer(prompts[i], add_special_tokens=False)["input_ids"]
               for i, _ in chunk]
        width = max(len(e) for e in enc)
        ids = torch.full((len(enc), width), tokenizer.pad_token_id, dtype=torch.long)  # (B, Lp)
        att = torch.zeros_like(ids)
        for r, e in enumerate(enc):  # left padding: generation continues at the right edge
            ids[r, width - len(e):] = torch.tensor(e)
            att[r, width - len(e):] = 1
        torch.manual_seed(int(np.random.SeedSequence([params.seed, b]).generate_state(1)[0]))
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=att, do_sample=True,
                                 temperature=params.temperature, top_k=0, top_p=1.0,
                                 max_new_tokens=params.max_new_tokens, output_logits=True,
                                 return_dict_in_generate=True, pad_token_id=tokenizer.pad_token_id,
                                 eos_token_id=eos)
        gen = out.sequences[:, width:].numpy()  # (B, T)
        # Raw logits: the model's distribution before temperature (the schema's "raw" mode).
        logits = torch.stack(out.logits, dim=1).float().numpy()  # (B, T, V)
        for r, (i, j) in enumerate(chunk):
            toks = gen[r]
            stop = np.flatnonzero(toks == eos)
            T_used = int(stop[0]) + 1 if stop.size else toks.size  # the end token counts
            finished = bool(stop.size)
            s = TokenSummarizer(bins=params.position_bins)
            if T_used:
                s.add_logits(logits[r, :T_used], token_ids=toks[:T_used])
            text_ids = toks[:T_used - 1] if finished else toks[:T_used]
            rows.append({"prompt_index": i, "sample_idx": j,
                         "text": tokenizer.decode(text_ids, skip_special_tokens=True),
                         "finish_reason": "stop" if finished else "length",
                         "num_tokens": T_used, "truncated": not finished, **s.result()})
        if progress is not None:
            progress(lo + len(chunk))
    return rows
