"""Any OpenAI-compatible server (vLLM, SGLang, ``transformers serve``) over HTTP with httpx.

One request per sample (``n = 1``, the sample's own ``seed``), never ``n > 1``:
samples stay independent, resumable and evenly shardable, and servers that
ignore ``seed`` with ``n > 1`` cannot correlate them. Prompts rendered as a
string go to ``/completions``; chat ``messages`` go to ``/chat/completions``.

- **Logprobs.** With ``SamplingParams.logprobs = K > 0`` we ask for the top-K
  logprobs of every step (``logprobs=K`` on completions; ``logprobs=true,
  top_logprobs=K`` on chat) and summarize them with the rigorous top-K bounds
  of :func:`rlvr_boundary.core.tokens.entropy_bounds_topk` (needs
  ``vocab_size``). With K = 0 we still ask for the sampled tokens' logprobs
  (log-PPL only). Servers that return no logprobs (``transformers serve`` as of
  5.x) give rows without token summaries; the manifest's ``logprobs_returned``
  says how many rows had them. vLLM returns raw logprobs by default
  (``--logprobs-mode``); record what the server used in ``logprobs_mode``.
- **Robustness.** A semaphore caps requests in flight; each request has a
  timeout; connection errors, timeouts, HTTP 429 and 5xx are retried with
  exponential backoff and jitter (``backoff * 2**attempt``, capped at 30 s); any
  other 4xx is an :class:`rlvr_boundary.errors.InputError` with the server's message.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator, Sequence

import numpy as np

from rlvr_boundary.backends.base import Backend, SamplingParams
from rlvr_boundary.core.tokens import TokenSummarizer
from rlvr_boundary.errors import InputError, require

__all__ = ["OpenAIBackend", "parse_choice"]

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def parse_choice(choice: dict, usage: dict | None, *, chat: bool) -> dict:
    """Text, finish reason and per-step logprobs of one response choice.

    Returns
    -------
    dict
        ``text``, ``finish_reason``, ``num_tokens``, ``token_logprobs`` (list or
        None) and ``top_logprobs`` (list of per-step lists of logprobs, or None).
    """
    if chat:
        text = (choice.get("message") or {}).get("content") or ""
        content = (choice.get("logprobs") or {}).get("content")
        tok_lp = [float(c["logprob"]) for c in content] if content else None
        top = ([[float(x["logprob"]) for x in (c.get("top_logprobs") or [])] for c in content]
               if content else None)
    else:
        text = choice.get("text") or ""
        lp = choice.get("logprobs") or {}
        tl = lp.get("token_logprobs")
        tok_lp = [float(x) for x in tl if x is not None] if tl else None
        tops = lp.get("top_logprobs")
        top = ([[float(v) for v in (d or {}).values()] for d in tops] if tops else None)
    n = (usage or {}).get("completion_tokens")
    if n is None and tok_lp is not None:
        n = len(tok_lp)
    if top is not None and not any(top):
        top = None
    return {"text": text, "finish_reason": choice.get("finish_reason"), "num_tokens": n,
            "token_logprobs": tok_lp, "top_logprobs": top}


def _unreachable(base_url: str, path: str, attempts: int, err: Exception | None) -> InputError:
    """The error of a request that failed on every attempt: the URL, what failed, what to check."""
    import httpx

    what = f"{type(err).__name__}: {err}" if err is not None else "no answer"
    if isinstance(err, (httpx.TransportError, httpx.TimeoutException)):
        hint = ("cannot connect to the server or it did not answer in time; is it running, and "
                "is --base-url right (scheme, host, port and the /v1 path)?")
    else:
        hint = "the server kept answering with an error status"
    return InputError(f"POST {base_url}{path} failed after {attempts} attempt(s) ({what}): "
                      f"{hint}", field="base-url")


class OpenAIBackend(Backend):
    """Sample through an OpenAI-compatible HTTP server.

    Parameters
    ----------
    base_url
        Server root including ``/v1``, e.g. ``http://127.0.0.1:8000/v1``.
    model
        Model name the server knows.
    api_key
        Sent as a bearer token (default ``"EMPTY"``, as local servers expect).
    concurrency
        Requests in flight at once.
    timeout
        Seconds per request (connect, read and write).
    max_retries
        Retries of a failed request before giving up.
    backoff
        First retry delay in seconds (doubled each retry, with jitter).
    vocab_size
        The model's vocabulary size V, needed to bound the entropy from top-K
        logprobs; without it only ``log_ppl`` is filled.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str = "EMPTY", concurrency: int = 8,
                 timeout: float = 120.0, max_retries: int = 5, backoff: float = 0.5,
                 vocab_size: int | None = None) -> None:
        require("httpx", "openai", "the OpenAI-compatible backend")
        if not base_url:
            raise InputError("the openai backend needs a base URL (e.g. http://127.0.0.1:8000/v1)",
                             field="base_url")
        if concurrency < 1 or timeout <= 0 or max_retries < 0 or backoff < 0:
            raise InputError("concurrency >= 1, timeout > 0, max_retries >= 0 and backoff >= 0",
                             field="openai options")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.vocab_size = vocab_size
        self.stats = {"requests": 0, "retries": 0, "rows": 0, "logprobs_returned": 0}

    def info(self) -> dict:
        import httpx

        return {"engine": "openai-server", "engine_version": None, "client": f"httpx {httpx.__version__}",
                "base_url": self.base_url, "model_path": self.model, "model_hash": None,
                "concurrency": self.concurrency, "timeout": self.timeout,
                "max_retries": self.max_retries, "vocab_size": self.vocab_size}

    def _body(self, item: dict, params: SamplingParams) -> tuple[str, dict]:
        body: dict = {"model": self.model, "n": 1, "seed": int(item["seed"]) % (2**31),
                      "temperature": params.temperature, "top_p": params.top_p,
                      "max_tokens": params.max_new_tokens}
        if params.top_k:
            body["top_k"] = params.top_k  # vLLM / SGLang extension
        if params.stop:
            body["stop"] = list(params.stop)
        if item.get("messages") is not None:
            body["messages"] = item["messages"]
            body["logprobs"] = True
            if params.logprobs:
                body["top_logprobs"] = params.logprobs
            return "/chat/completions", body
        body["prompt"] = item["prompt"]
        body["logprobs"] = params.logprobs  # 0: the sampled tokens' logprobs only
        return "/completions", body

    async def _post(self, client, sem: asyncio.Semaphore, path: str, body: dict) -> dict:
        import httpx

        attempt = 0
        while True:
            async with sem:
                self.stats["requests"] += 1
                try:
                    resp = await client.post(self.base_url + path, json=body)
                except (httpx.TransportError, httpx.TimeoutException) as exc:
                    err: Exception | None = exc
                    resp = None
                else:
                    err = None
            if resp is not None:
                if resp.status_code < 400:
                    return resp.json()
                if resp.status_code not in _RETRY_STATUS:
                    raise InputError(f"server refused the request (HTTP {resp.status_code}): "
                                     f"{resp.text[:500]}", field="openai")
                err = RuntimeError(f"HTTP {resp.status_code}: {resp.text[:200]}")
            if attempt >= self.max_retries:
                raise _unreachable(self.base_url, path, attempt + 1, err)
            delay = min(30.0, self.backoff * 2**attempt) * (0.5 + random.random() / 2)
            attempt += 1
            self.stats["retries"] += 1
            await asyncio.sleep(delay)

    async def _run(self, items: list[dict], params: SamplingParams) -> list[dict]:
        import httpx

        sem = asyncio.Semaphore(self.concurrency)
        headers = {"Authorization": f"Bearer {self.api_key}"}
        limits = httpx.Limits(max_connections=self.concurrency)
        async with httpx.AsyncClient(timeout=self.timeout, headers=headers, limits=limits) as client:
            async def one(it: dict) -> dict:
                path, body = self._body(it, params)
                doc = await self._post(client, sem, path, body)
                choices = doc.get("choices") or []
                if not choices:
                    raise RuntimeError(f"server answered without choices: {str(doc)[:200]}")
                return self._row(it, parse_choice(choices[0], doc.get("usage"),
                                                  chat=path.startswith("/chat")), params)

            return await asyncio.gather(*(one(it) for it in items))

    def _row(self, item: dict, got: dict, params: SamplingParams) -> dict:
        summ = TokenSummarizer(bins=params.position_bins, vocab_size=self.vocab_size)
        top = got["top_logprobs"]
        tl = got["token_logprobs"]
        if top is not None and self.vocab_size:
            K = max(len(r) for r in top)
            arr = np.full((len(top), K), -np.inf)  # (T, K), padding -inf
            for t, r in enumerate(top):
                arr[t, :len(r)] = r
            summ.add_topk(arr, tl if tl is not None and len(tl) == len(top) else None)
        elif tl:
            summ.add_token_logprobs(tl)
        if tl or top:
            self.stats["logprobs_returned"] += 1
        self.stats["rows"] += 1
        row = {"prompt_id": item["prompt_id"], "sample_idx": int(item["sample_idx"]),
               "seed": int(item["seed"]), "text": got["text"], "finish_reason": got["finish_reason"],
               "num_tokens": got["num_tokens"], "truncated": got["finish_reason"] == "length",
               **summ.result()}
        if params.token_arrays:
            row["token_logprobs"] = tl
        if params.logprobs:
            row["top_logprobs"] = top
        return row

    def generate_items(self, items: Sequence[dict], params: SamplingParams) -> Iterator[dict]:
        items = list(items)
        step = max(64, 8 * self.concurrency)
        for s in range(0, len(items), step):
            yield from asyncio.run(self._run(items[s:s + step], params))

    def score(self, prompts, completions, *, position_bins: int = 10) -> list[dict]:
        raise InputError("scoring needs the full next-token distribution, which OpenAI-compatible "
                         "servers do not return; score with the transformers backend",
                         field="backend")
