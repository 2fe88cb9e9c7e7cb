"""The OpenAI-compatible backend against a real ``transformers serve`` on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_boundary.backends import SamplingParams, get_backend
from rlvr_boundary.errors import InputError

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

PROMPTS = [{"prompt_id": "a", "prompt": "What is 12 + 7?"},
           {"prompt_id": "b", "prompt": "Let x + 2 = 5."},
           {"prompt_id": "c", "prompt": "Compute 3 * 4 - 5."}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_cmd() -> list[str]:
    exe = shutil.which("transformers", path=str(Path(sys.executable).parent)) or shutil.which("transformers")
    if exe is None:
        pytest.skip("the transformers CLI is not installed")
    return [exe, "serve"]


def _wait_until_serving(base: str, proc: subprocess.Popen, log: Path, limit: float = 300.0) -> None:
    """Poll ``GET /health`` until the server answers; fail with its log if it exits or hangs."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"transformers serve exited with code {proc.returncode}:\n"
                        f"{log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(base.removesuffix("/v1") + "/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"transformers serve did not answer within {limit:.0f} s:\n"
                f"{log.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def server(tiny_model, tmp_path_factory):
    """Start ``transformers serve`` with the tiny model, wait until it answers, yield
    (base_url, proc), stop it."""
    from transformers.utils.import_utils import is_serve_available

    if not is_serve_available():
        pytest.skip("transformers serve needs its serving extra: pip install 'transformers[serving]'")
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*_serve_cmd(), str(tiny_model), "--host", "127.0.0.1", "--port", str(port),
                                 "--device", "cpu"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(base, proc, log)
        yield base, proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


@pytest.mark.slow
def test_real_server_greedy_matches_local_backend(server, tiny_model):
    base, proc = server
    b = get_backend("openai", base_url=base, model=str(tiny_model), concurrency=2, timeout=60,
                    max_retries=4, backoff=0.5)
    params = SamplingParams(temperature=0, max_new_tokens=16)
    rows = list(b.generate(PROMPTS, 2, params))
    assert proc.poll() is None
    assert [(r["prompt_id"], r["sample_idx"]) for r in rows] == [(p["prompt_id"], s) for p in PROMPTS
                                                                 for s in range(2)]
    local = get_backend("transformers", model=str(tiny_model), num_threads=1)
    ref = list(local.generate(PROMPTS, 2, params))
    for r, g in zip(rows, ref):
        assert r["text"] == g["text"]
        assert r["finish_reason"] == g["finish_reason"] and r["num_tokens"] == g["num_tokens"]
        assert r["truncated"] == (r["finish_reason"] == "length")
    assert b.stats["rows"] == 6 and b.stats["requests"] == 6 + b.stats["retries"]
    # transformers serve returns no logprobs: the rows say so rather than inventing summaries
    assert b.stats["logprobs_returned"] == 0 and rows[0]["log_ppl"] is None
    # chat messages go to /chat/completions
    chat = list(b.generate([{"prompt_id": "m", "messages": [{"role": "user", "content": "1+1?"}]}], 1,
                           params))
    assert chat[0]["num_tokens"] >= 1 and chat[0]["finish_reason"] in ("stop", "length")
    # a 4xx is reported with the server's answer, not retried
    bad = get_backend("openai", base_url=base, model="/no/such/model", max_retries=3)
    with pytest.raises(InputError, match="HTTP 4"):
        list(bad.generate(PROMPTS[:1], 1, params))
    assert bad.stats["retries"] == 0
    # a per-request timeout too short for any answer: retried, then a clear failure
    slow = get_backend("openai", base_url=base, model=str(tiny_model), timeout=0.001, max_retries=2,
                       backoff=0.01)
    with pytest.raises(InputError, match=r"after 3 attempt\(s\)"):
        list(slow.generate(PROMPTS[:1], 1, SamplingParams(max_new_tokens=64)))
    assert slow.stats["retries"] == 2


def test_concurrency_limit_and_retries_on_a_local_server():
    """A real HTTP server on 127.0.0.1 (stdlib): 503 twice, then answers; never more than
    `concurrency` requests at once."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    state = {"active": 0, "peak": 0, "calls": 0}
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state["calls"] += 1
                call = state["calls"]
                state["active"] += 1
                state["peak"] = max(state["peak"], state["active"])
            time.sleep(0.05)
            with lock:
                state["active"] -= 1
            if call <= 2:
                self.send_response(503)
                self.end_headers()
                return
            out = json.dumps({"choices": [{"text": body["prompt"][::-1], "finish_reason": "length",
                                           "logprobs": {"token_logprobs": [-0.5, -1.0],
                                                        "top_logprobs": [{"a": -0.5, "b": -1.2},
                                                                         {"c": -1.0, "d": -1.1}]}}],
                              "usage": {"completion_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        b = get_backend("openai", base_url=f"http://127.0.0.1:{srv.server_port}/v1", model="m",
                        concurrency=3, backoff=0.01, timeout=10, vocab_size=50)
        rows = list(b.generate(PROMPTS, 4, SamplingParams(max_new_tokens=2, logprobs=2)))
    finally:
        srv.shutdown()
        srv.server_close()
    assert len(rows) == 12 and state["peak"] <= 3 and b.stats["retries"] == 2
    assert rows[0]["text"] == PROMPTS[0]["prompt"][::-1]
    assert rows[0]["log_ppl"] == pytest.approx(0.75)
    assert rows[0]["entropy_kind"] == "topk_bounds"
    assert rows[0]["entropy_mean_lo"] <= rows[0]["entropy_mean"] <= rows[0]["entropy_mean_hi"]


def test_topk_summaries_from_server_format_bound_the_exact_entropy(tiny_model):
    """Top-K logprobs in the OpenAI completions format give intervals containing the exact value."""
    from rlvr_boundary.backends.openai import OpenAIBackend, parse_choice

    local = get_backend("transformers", model=str(tiny_model), num_threads=1)
    params = SamplingParams(max_new_tokens=12, seed=4, logprobs=4, token_arrays=True)
    b = OpenAIBackend(base_url="http://127.0.0.1:9/v1", model="m", vocab_size=local.vocab_size)
    for r in local.generate(PROMPTS, 2, params):
        choice = {"text": r["text"], "finish_reason": r["finish_reason"],
                  "logprobs": {"tokens": [str(i) for i in r["token_ids"]],
                               "token_logprobs": r["token_logprobs"],
                               "top_logprobs": [{str(i): lp for i, lp in zip(ids, lps)}
                                                for ids, lps in zip(r["top_ids"], r["top_logprobs"])]}}
        got = b._row({"prompt_id": r["prompt_id"], "sample_idx": r["sample_idx"], "seed": r["seed"]},
                     parse_choice(choice, None, chat=False), params)
        assert got["entropy_mean_lo"] - 1e-6 <= r["entropy_mean"] <= got["entropy_mean_hi"] + 1e-6
        assert got["log_ppl"] == pytest.approx(r["log_ppl"], abs=1e-9)
        assert got["num_tokens"] == r["num_tokens"]
        # chat format: the same numbers
        chat = {"message": {"content": r["text"]}, "finish_reason": r["finish_reason"],
                "logprobs": {"content": [{"token": str(i), "logprob": lp,
                                          "top_logprobs": [{"token": str(j), "logprob": v}
                                                           for j, v in zip(ids, lps)]}
                                         for i, lp, ids, lps in zip(r["token_ids"], r["token_logprobs"],
                                                                    r["top_ids"], r["top_logprobs"])]}}
        g2 = b._row({"prompt_id": "x", "sample_idx": 0, "seed": 1}, parse_choice(chat, None, chat=True),
                    params)
        assert g2["entropy_mean"] == pytest.approx(got["entropy_mean"])


def test_unreachable_server_is_a_clear_error_naming_the_url():
    """Nothing listens on port 1: after the retries, an input error naming the URL, the
    request and the transport failure (the CLI prints it; no traceback)."""
    from rlvr_boundary.backends import get_backend
    from rlvr_boundary.backends.base import SamplingParams

    b = get_backend("openai", base_url="http://127.0.0.1:1/v1", model="m", max_retries=1,
                    backoff=0.01, timeout=5)
    with pytest.raises(InputError) as info:
        list(b.generate([{"prompt_id": "a", "prompt": "1+1?"}], 1, SamplingParams()))
    msg = str(info.value)
    assert "POST http://127.0.0.1:1/v1/completions failed after 2 attempt(s)" in msg
    assert "ConnectError" in msg and "--base-url" in msg
