"""Hugging Face transformers backend: batched sampling with a KV cache, on CPU or GPU.

Our own decoding loop rather than ``model.generate``, for three reasons:

1. **Per-sample random streams.** ``generate`` draws every row of a batch from
   one global torch generator, so a sample depends on its batch mates. Here row
   b draws step t with the inverse-CDF method from its own uniform ``U[b, t]``,
   taken from ``numpy.random.default_rng(seed_b)`` (seed from
   :func:`rlvr_boundary.backends.base.sample_seed`). A sample is then a function
   of (model, prompt, seed) only, whatever the batch size, the shard or the Ray
   worker. (Batched matmuls can change logits in the last float bits; a draw
   flips only if its uniform falls within that distance of a CDF boundary.)
2. **Exact token statistics while streaming.** Each step's ``(B, V)`` logits go
   through :func:`rlvr_boundary.core.tokens.step_stats` (entropy, RBF, inverse
   Simpson, sampled-token log-prob) and are dropped.
3. **Stop strings** cut the text before the stop string, as vLLM does.

Left padding with an attention mask and explicit position ids; finished rows
keep a slot in the batch (fed a pad token) until the whole batch is done.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from rlvr_boundary.backends.base import Backend, SamplingParams, by_prompt_id, model_hash
from rlvr_boundary.core.tokens import TokenSummarizer, step_stats
from rlvr_boundary.errors import InputError, require

__all__ = ["TransformersBackend", "processed_logprobs", "draw_tokens"]


def processed_logprobs(z, params: SamplingParams):
    """Log-probabilities of the distribution we sample from, after temperature, top-k, top-p.

    Parameters
    ----------
    z
        ``(B, V)`` float64 torch logits.
    params
        Sampling options.

    Returns
    -------
    torch.Tensor
        ``(B, V)`` log-probabilities; removed tokens are ``-inf``. Temperature 0
        is the point mass on the argmax (the first one on ties).

    Notes
    -----
    Same order as Hugging Face's warpers: temperature, then top-k (keep the k
    largest logits, ties at the k-th kept), then top-p (keep the most likely
    tokens until the mass *before* a token reaches top_p; the first is always kept).
    """
    torch = require("torch", "hf")
    if params.temperature == 0:
        out = torch.full_like(z, float("-inf"))
        out.scatter_(1, z.argmax(dim=1, keepdim=True), 0.0)
        return out
    x = z / params.temperature
    V = x.shape[1]
    if 0 < params.top_k < V:
        kth = torch.topk(x, params.top_k, dim=1).values[:, -1:]  # (B, 1)
        x = x.masked_fill(x < kth, float("-inf"))
    if params.top_p < 1.0:
        xs, order = torch.sort(x, dim=1, descending=True)  # (B, V)
        ps = torch.softmax(xs, dim=1)
        before = torch.cumsum(ps, dim=1) - ps  # mass of the more likely tokens
        drop_sorted = before >= params.top_p
        drop_sorted[:, 0] = False
        drop = torch.zeros_like(drop_sorted).scatter_(1, order, drop_sorted)
        x = x.masked_fill(drop, float("-inf"))
    return torch.log_softmax(x, dim=1)


def draw_tokens(logp, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw per row: the first token whose cumulative probability exceeds ``u``.

    ``logp`` is ``(B, V)`` torch float64, ``u`` ``(B,)`` uniforms in [0, 1). The
    cumulative sum runs in vocabulary order in float64, so a token of zero
    probability is never drawn.
    """
    torch = require("torch", "hf")
    p = torch.exp(logp).to(torch.float64)
    cum = torch.cumsum(p, dim=1)  # (B, V)
    target = torch.as_tensor(u, dtype=torch.float64, device=p.device) * cum[:, -1]
    idx = torch.searchsorted(cum, target[:, None], right=True)[:, 0]
    return idx.clamp_(max=p.shape[1] - 1).cpu().numpy()


class _Row:
    """Decoding state of one sequence of a batch."""

    __slots__ = ("item", "summ", "ids", "lps", "top_ids", "top_lps", "done", "finish", "text")

    def __init__(self, item: dict, params: SamplingParams) -> None:
        self.item = item
        self.summ = TokenSummarizer(bins=params.position_bins)
        self.ids: list[int] = []
        self.lps: list[float] = []
        self.top_ids: list[list[int]] = []
        self.top_lps: list[list[float]] = []
        self.done = False
        self.finish: str | None = None
        self.text: str | None = None


class TransformersBackend(Backend):
    """Sample and score with a local Hugging Face causal LM.

    Parameters
    ----------
    model
        Path of a Hugging Face folder (config, safetensors, tokenizer) or a hub name
        already in the local cache.
    device
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    dtype
        ``"auto"`` (float32 on CPU, the checkpoint's dtype on GPU), ``"float32"``,
        ``"float64"``, ``"bfloat16"`` or ``"float16"``.
    batch_size
        Sequences decoded together (one KV cache).
    num_threads
        torch intra-op threads (``torch.set_num_threads``, process-wide); None
        leaves torch's default. On a small shared CPU, 1 is often much faster for
        small models (thread hand-off costs more than the matmuls).
    """

    name = "transformers"

    def __init__(self, model: str | Path, device: str = "cpu", dtype: str = "auto",
                 batch_size: int = 16, num_threads: int | None = None) -> None:
        torch = require("torch", "hf", "the transformers backend")
        tr = require("transformers", "hf", "the transformers backend")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError("batch_size must be an integer >= 1", field="batch_size")
        self.model_path = str(model)
        self.device = device
        self.batch_size = batch_size
        if dtype == "auto":
            torch_dtype = torch.float32 if str(device).startswith("cpu") else "auto"
        else:
            torch_dtype = getattr(torch, dtype, None)
            if not isinstance(torch_dtype, torch.dtype):
                raise InputError(f"unknown dtype {dtype!r}", field="dtype")
        # transformers' own "Loading weights" bar would print on every sample/score run;
        # our progress bar is the one that counts. Restored afterwards for library callers.
        bars = tr.utils.logging.is_progress_bar_enabled()
        tr.utils.logging.disable_progress_bar()
        try:
            self.tok = tr.AutoTokenizer.from_pretrained(self.model_path)
            self.model = tr.AutoModelForCausalLM.from_pretrained(self.model_path, dtype=torch_dtype)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load the model ({exc})", path=self.model_path) from None
        finally:
            if bars:
                tr.utils.logging.enable_progress_bar()
        self.model.to(device).eval()
        if num_threads is not None:
            torch.set_num_threads(int(num_threads))
        import inspect

        # the KV cache argument was renamed past_key_values -> cache in transformers 5.x
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self.dtype = str(self.model.dtype).replace("torch.", "")
        eos = set()
        for src in (getattr(self.model.generation_config, "eos_token_id", None), self.tok.eos_token_id):
            if isinstance(src, int):
                eos.add(src)
            elif src:
                eos.update(int(x) for x in src)
        self.eos_ids = eos
        pad = self.tok.pad_token_id
        self.pad_id = int(pad if pad is not None else (min(eos) if eos else 0))
        self._hash: str | None = None

    # ----------------------------------------------------------------- helpers

    def info(self) -> dict:
        import torch
        import transformers

        if self._hash is None:
            self._hash = model_hash(self.model_path)
        return {"engine": "transformers", "engine_version": transformers.__version__,
                "torch_version": torch.__version__, "model_path": self.model_path,
                "model_hash": self._hash, "device": str(self.device), "dtype": self.dtype,
                "batch_size": self.batch_size, "vocab_size": self.vocab_size,
                "logprobs_source": "full logits (exact)"}

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def encode_prompt(self, item: dict) -> list[int]:
        """Token ids of a prompt: a plain string, or chat ``messages`` through the chat template."""
        if "messages" in item and item.get("messages") is not None:
            if not getattr(self.tok, "chat_template", None):
                raise InputError("the 'chat' template needs a tokenizer with a chat template; "
                                 "use --template plain or qwen-boxed", path=self.model_path)
            text = self.tok.apply_chat_template(item["messages"], tokenize=False,
                                                add_generation_prompt=True)
            return list(self.tok(text, add_special_tokens=False)["input_ids"])
        return list(self.tok(item["prompt"], add_special_tokens=True)["input_ids"])

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        """The text of each token on its own (for token categories)."""
        return [self.tok.decode([int(i)], skip_special_tokens=False) for i in ids]

    def _decode(self, ids: list[int]) -> str:
        return self.tok.decode([i for i in ids if i not in self.eos_ids], skip_special_tokens=False)

    def _cache_of(self, out):
        c = getattr(out, "cache", None)
        return c if c is not None else out.past_key_values

    def _left_pad(self, seqs: list[list[int]]):
        import torch

        L = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), L), dtype=torch.long)
        for b, s in enumerate(seqs):
            if s:
                ids[b, L - len(s):] = torch.tensor(s, dtype=torch.long)
                mask[b, L - len(s):] = 1
        pos = (mask.cumsum(dim=1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), pos.to(self.device)

    # ----------------------------------------------------------------- generation

    def generate_items(self, items: Sequence[dict], params: SamplingParams) -> Iterator[dict]:
        items = list(items)
        for s in range(0, len(items), self.batch_size):
            yield from self._run_batch(items[s:s + self.batch_size], params)

    def _run_batch(self, items: list[dict], params: SamplingParams) -> list[dict]:
        import torch

        seqs = [self.encode_prompt(it) for it in items]
        if any(not s for s in seqs):
            raise InputError("a prompt encodes to no tokens", field="prompt")
        B, T = len(items), params.max_new_tokens
        U = np.stack([np.random.default_rng(int(it["seed"])).random(T) for it in items])  # (B, T)
        rows = [_Row(it, params) for it in items]
        K = params.logprobs
        with torch.inference_mode():
            ids, mask, pos = self._left_pad(seqs)
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
            past, logits = self._cache_of(out), out.logits[:, -1, :]  # (B, V)
            next_pos = pos[:, -1] + 1  # (B,)
            for t in range(T):
                z = logits.to(torch.float64)  # (B, V)
                proc = processed_logprobs(z, params)
                tok = draw_tokens(proc, U[:, t])  # (B,)
                act = [b for b in range(B) if not rows[b].done]
                src = torch.log_softmax(z, dim=1) if params.logprobs_mode == "raw" else proc
                src_act = src[act]  # (A, V)
                st = step_stats(src_act.cpu().numpy(), tok[act])
                if K:
                    k = min(K, src_act.shape[1])
                    tv, ti = torch.topk(src_act, k, dim=1)
                    tv, ti = tv.cpu().numpy(), ti.cpu().numpy()
                for j, b in enumerate(act):
                    r = rows[b]
                    r.summ.add_exact_steps(st["entropy"][j:j + 1], st["rbf"][j:j + 1],
                                           st["inv_simpson"][j:j + 1], st["token_logprob"][j:j + 1])
                    r.ids.append(int(tok[b]))
                    r.lps.append(float(st["token_logprob"][j]))
                    if K:
                        r.top_ids.append(ti[j].tolist())
                        r.top_lps.append(tv[j].tolist())
                    self._check_finish(r, params)
                if all(r.done for r in rows):
                    break
                feed = torch.tensor([self.pad_id if rows[b].done and b not in act else int(tok[b])
                                     for b in range(B)], dtype=torch.long, device=self.device)
                mask = torch.cat([mask, torch.ones((B, 1), dtype=mask.dtype, device=mask.device)], 1)
                out = self.model(input_ids=feed[:, None], attention_mask=mask,
                                 position_ids=next_pos[:, None], use_cache=True,
                                 **{self._cache_kw: past})
                past, logits = self._cache_of(out), out.logits[:, -1, :]
                next_pos = next_pos + 1
        return [self._row(r, params) for r in rows]

    def _check_finish(self, r: _Row, params: SamplingParams) -> None:
        if r.ids[-1] in self.eos_ids:
            r.done, r.finish = True, "stop"
        elif params.stop:
            text = self._decode(r.ids)
            hits = [i for i in (text.find(s) for s in params.stop) if i >= 0]
            if hits:
                r.done, r.finish, r.text = True, "stop", text[:min(hits)]
        if not r.done and len(r.ids) >= params.max_new_tokens:
            r.done, r.finish = True, "length"

    def _row(self, r: _Row, params: SamplingParams) -> dict:
        it = r.item
        row = {"prompt_id": it["prompt_id"], "sample_idx": int(it["sample_idx"]),
               "seed": int(it["seed"]), "text": r.text if r.text is not None else self._decode(r.ids),
               "finish_reason": r.finish, "num_tokens": len(r.ids),
               "truncated": r.finish == "length", **r.summ.result()}
        if params.token_arrays:
            row["token_ids"] = r.ids
            row["token_logprobs"] = r.lps
        if params.logprobs:
            row["top_ids"] = r.top_ids
            row["top_logprobs"] = r.top_lps
        return row

    # ----------------------------------------------------------------- scoring

    def score(self, prompts: Sequence[dict], completions: Sequence[dict], *,
              position_bins: int = 10, token_arrays: bool = False) -> list[dict]:
        """Exact token statistics of each completion under this model (teacher forcing).

        Parameters
        ----------
        prompts
            ``{"prompt_id", "prompt" | "messages"}`` dicts, rendered as when sampling.
        completions
            ``{"prompt_id", "text"}`` or ``{"prompt_id", "token_ids"}`` dicts. With
            ``token_ids`` the exact generated tokens are scored (and a sample's
            recorded log-probs are reproduced); with ``text`` the text is
            re-tokenized, and ``"append_eos": True`` adds the end-of-sequence
            token the sampler drew when it stopped on its own (the sampler's
            summaries include that token).
        position_bins
            Number of relative-position bins.
        token_arrays
            Also return each completion's ``token_ids``, ``token_logprobs`` and
            ``token_entropy`` (per-step entropy of the full distribution).

        Returns
        -------
        list of dict
            Per completion: ``num_tokens`` and the summary columns (``log_ppl`` is
            the mean negative log-likelihood per token; ``nan``-free: a completion
            with no tokens gets None summaries).
        """
        import torch

        index = by_prompt_id(prompts)
        jobs = []
        for i, c in enumerate(completions):
            pid = str(c.get("prompt_id"))
            if pid not in index:
                raise InputError(f"completion {i}: prompt_id {pid!r} is not among the prompts",
                                 line=i + 1, field="prompt_id")
            if c.get("token_ids") is not None:
                comp = [int(x) for x in c["token_ids"]]
            elif isinstance(c.get("text"), str):
                comp = list(self.tok(c["text"], add_special_tokens=False)["input_ids"])
                if c.get("append_eos") and self.eos_ids:
                    eos = self.tok.eos_token_id
                    comp.append(int(eos if eos is not None else min(self.eos_ids)))
            else:
                raise InputError(f"completion {i}: needs 'text' or 'token_ids'", line=i + 1)
            jobs.append((self.encode_prompt(index[pid]), comp))
        out: list[dict] = []
        with torch.inference_mode():
            for s in range(0, len(jobs), self.batch_size):
                chunk = jobs[s:s + self.batch_size]
                ids, mask, pos = self._left_pad([p + c for p, c in chunk])
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=pos).logits
                L = ids.shape[1]
                for b, (p, c) in enumerate(chunk):
                    summ = TokenSummarizer(bins=position_bins)
                    if c:
                        # logits at position t predict token t + 1: the completion's tokens
                        # sit at L - len(c) .. L - 1, predicted from L - len(c) - 1 .. L - 2
                        z = logits[b, L - len(c) - 1:L - 1].to(torch.float64).cpu().numpy()  # (Tc, V)
                        st = step_stats(z, c)
                        summ.add_exact_steps(st["entropy"], st["rbf"], st["inv_simpson"],
                                             st["token_logprob"])
                    res = {"num_tokens": len(c), **summ.result()}
                    if token_arrays:
                        res["token_ids"] = c
                        res["token_logprobs"] = [] if not c else st["token_logprob"].tolist()
                        res["token_entropy"] = [] if not c else st["entropy"].tolist()
                    out.append(res)
        return out
