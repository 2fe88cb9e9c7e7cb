"""`sample --backend openai` against a server that returns no logprobs (as `transformers
serve` does): the rows' token summaries are NaN and the console says so."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow.parquet as pq
import pytest

from rlvr_boundary.cli import main

pytest.importorskip("httpx")


class _NoLogprobs(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body.get("prompt") or body["messages"][-1]["content"]
        out = json.dumps({"choices": [{"text": "so \\boxed{" + str(len(text)) + "}",
                                       "message": {"content": "so \\boxed{1}"},
                                       "finish_reason": "stop"}],
                          "usage": {"completion_tokens": 3}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _NoLogprobs)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


def test_sample_says_when_the_server_returned_no_logprobs(server, tmp_path, capsys):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps({"prompt_id": f"q{i}", "prompt": f"1 + {i}?"}) + "\n"
                               for i in range(3)))
    out = tmp_path / "s"
    assert main(["sample", "--model", "m", "--prompts", str(prompts), "--out", str(out),
                 "--n", "2", "--backend", "openai", "--base-url", server, "--concurrency", "2",
                 "--json", str(tmp_path / "s.json")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert ("6 of 6 samples drawn now have no token summaries (entropy_mean, rbf_mean, log_ppl "
            "are NaN): the server returned no logprobs") in printed
    t = pq.read_table(next(out.glob("part-*.parquet")))
    assert all(x is None or x != x for x in t.column("entropy_mean").to_pylist())  # as said
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["without_token_summaries"] == 6
