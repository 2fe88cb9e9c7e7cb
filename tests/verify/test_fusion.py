"""The SandboxFusion backend against a local stand-in server on 127.0.0.1.

The real server (a large container image) cannot run here, so a stand-in
implements its documented ``POST /run_code`` contract: it writes the request's
files next to the code in a fresh directory, runs ``python`` on the code with
the given stdin and timeout, and answers ``run_result`` with the status,
return code and output. The programs it runs are this file's own fixed strings,
not model output. It checks our side of the protocol: the request we build,
how the answer is graded (the harness token, not the exit status), timeouts,
and an unreachable or broken server.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.verify.code import grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, run_python

REQUESTS: list[dict] = []
AUTH: list = []


class _StandIn(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append(body)
        AUTH.append(self.headers.get("Authorization"))
        if self.path != "/run_code":
            self.send_response(404)
            self.end_headers()
            return
        if body.get("code") == "broken":
            return self._answer({"status": "SandboxError", "message": "boom"})
        with tempfile.TemporaryDirectory() as d:
            for name, data in body["files"].items():
                (Path(d) / name).write_bytes(base64.b64decode(data))
            (Path(d) / "main.py").write_text(body["code"])
            try:
                p = subprocess.run([sys.executable, "main.py"], cwd=d, input=body["stdin"],
                                   capture_output=True, text=True, timeout=body["run_timeout"])
                run = {"status": "Finished", "return_code": p.returncode, "stdout": p.stdout,
                       "stderr": p.stderr, "execution_time": 0.1}
            except subprocess.TimeoutExpired:
                run = {"status": "TimeLimitExceeded", "return_code": None, "stdout": "",
                       "stderr": "", "execution_time": body["run_timeout"]}
        self._answer({"status": "Success", "compile_result": None, "run_result": run,
                      "files": {}})

    def _answer(self, doc: dict) -> None:
        data = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    t.join(5)


def test_assert_tests_pass_and_fail_by_the_harness_token(server):
    o = SandboxOptions(timeout=10, fusion_url=server)
    assert grade_code("def add(a, b):\n    return a + b", "assert add(2, 3) == 5", o)["correct"]
    bad = grade_code("def add(a, b):\n    return a - b", "assert add(2, 3) == 5", o)
    assert not bad["correct"] and "AssertionError" in bad["detail"]
    assert bad["isolation"] == "sandbox-fusion"
    assert bad["check_mode"] == "in-process"  # one program per request: no second sandbox
    req = REQUESTS[-1]
    assert req["language"] == "python" and req["run_timeout"] == 10
    assert set(req["files"]) == {"program.py", "tests.py", "options.txt", "token"}
    assert "def add" not in req["code"]  # the program travels as a file, the code is our harness


@pytest.mark.parametrize("trick", ["import os\nos._exit(0)", "import sys\nsys.exit(0)"])
def test_early_exit_with_status_0_is_not_a_pass_remotely(server, trick):
    o = SandboxOptions(timeout=10, fusion_url=server)
    r = grade_code("def add(a, b):\n    return a - b\n" + trick, "assert add(2, 3) == 5", o)
    assert not r["correct"]


def test_stdio_timeout_and_token_line_removed(server):
    o = SandboxOptions(timeout=10, fusion_url=server)
    r = run_python("import sys\nprint(int(input()) * 2)\nprint('note', file=sys.stderr)", o,
                   stdin="21\n")
    assert r.status == "ok" and r.completed and r.stdout.strip() == "42"
    assert r.stderr.strip() == "note"  # the token line is not part of what the program wrote
    slow = run_python("while True:\n    pass", SandboxOptions(timeout=1, fusion_url=server))
    assert slow.status == "timeout"


def test_unreachable_or_broken_server_is_an_error_status(server):
    import socket

    with socket.socket() as s:  # a port on loopback with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_python("print(1)", SandboxOptions(timeout=2, fusion_url=f"http://127.0.0.1:{port}"))
    assert r.status == "error" and "SandboxFusion" in r.stderr
    r = grade_code("x = 1", "assert x == 1", SandboxOptions(timeout=2, fusion_url=server + "/nope"))
    assert r["verify_status"] == "error" and not r["correct"]


def test_verify_cli_records_the_remote_isolation(server, tmp_path, capsys):
    src = tmp_path / "code.jsonl"
    src.write_text("".join(json.dumps({"prompt_id": "add", "model": "m", "sample_idx": i,
                                       "text": t}) + "\n" for i, t in enumerate(
        ["def add(a, b):\n    return a + b", "def add(a, b):\n    return 0"])))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"task_id": "add", "test": "assert add(2, 3) == 5"}) + "\n")
    out = tmp_path / "graded"
    url = server.replace("http://", "http://user:secret@")
    assert main(["verify", str(src), "--task", "code", "--gold", str(gold), "--out", str(out),
                 "--sandbox-fusion-url", url]) == 0
    verifier = json.loads((out / "_manifest.json").read_text())["verifier"]
    assert verifier["isolation"] == "sandbox-fusion" and verifier["url"] == server
    assert "secret" not in (out / "_manifest.json").read_text()
    assert AUTH[-1] == "Basic " + base64.b64encode(b"user:secret").decode()
    from rlvr_boundary.io.rollouts import read_rollouts

    assert read_rollouts(out).sort_by("sample_idx")["correct"].to_pylist() == [True, False]
    assert main(["verify", str(src), "--task", "code", "--gold", str(gold), "--out",
                 str(tmp_path / "x"), "--sandbox-fusion-url", "ftp://nope"]) == 2
    assert "must start with http" in capsys.readouterr().err


def test_call_based_records_are_graded_in_process_remotely(server):
    import json as _json

    from rlvr_boundary.verify.code import code_spec

    spec = code_spec({"input_output": _json.dumps({"fn_name": "add", "inputs": [[1, 2], [5, 7]],
                                                   "outputs": [[3], [12]]})})
    o = SandboxOptions(timeout=10, fusion_url=server)
    good = grade_code("def add(a, b):\n    return a + b\n", spec, o)
    assert good["correct"] and good["check_mode"] == "in-process", good
    assert not grade_code("class Solution:\n    def add(self, a, b):\n        return a - b\n",
                          spec, o)["correct"]
    assert grade_code("class Solution:\n    def add(self, a, b):\n        return a + b\n",
                      spec, o)["correct"]


def test_stdio_output_over_64_kb_remotely(server):
    from rlvr_boundary.verify.code import code_spec

    want = "".join(f"{i}\n" for i in range(1, 20001))
    spec = code_spec({"test_cases": [{"input": "20000\n", "output": want}]})
    o = SandboxOptions(timeout=10, fusion_url=server)
    r = grade_code("n = int(input())\nprint('\\n'.join(map(str, range(1, n + 1))))\n", spec, o)
    assert r["correct"] and r["check_mode"] == "outside", r
