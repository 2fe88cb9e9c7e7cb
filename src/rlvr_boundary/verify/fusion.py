"""Run code on a SandboxFusion server instead of the local sandbox.

SandboxFusion (ByteDance Seed's HTTP code sandbox, the one verl calls for code
rewards) runs a program sent to ``POST /run_code`` and answers with its exit
status and output. For users who already run such a server, ``verify --task
code --sandbox-fusion-url URL`` sends each run there: the isolation is then the
server's, not ours, and the manifest says so (``isolation = "sandbox-fusion"``
and the URL).

What we send is our own test harness (:mod:`rlvr_boundary.verify._harness`) as
the code, with the program, its tests and the run's random token as files. The
harness removes the token file before the program starts and prints the token
as the last line of stderr only after the last test returned; as locally, a
run passes only when the token comes back and the exit status is 0, so an
early ``sys.exit(0)`` is not a pass.

Only the standard library is used (``urllib``). The request schema follows the
server's documented ``/run_code`` API: ``code``, ``language``,
``compile_timeout``, ``run_timeout``, ``memory_limit_MB``, ``stdin``, ``files``
(name to base64) and ``fetch_files``; the answer's ``run_result`` has
``status`` (``Finished``, ``TimeLimitExceeded``, ...), ``return_code``,
``stdout`` and ``stderr``.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rlvr_boundary.verify.runtypes import RunResult, SandboxOptions, public_url

_HARNESS = Path(__file__).resolve().parent / "_harness.py"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def request_body(program: str, opts: SandboxOptions, stdin: str, tests: str | None,
                 token: str) -> dict:
    """The ``/run_code`` request of one run (JSON-ready)."""
    mode = "assert" if tests is not None else "stdio"
    code = (f"import sys\nsys.argv = ['harness', {mode!r}, 'file', 'stderr']\n"
            + _HARNESS.read_text(encoding="utf-8"))
    files = {"program.py": _b64(program.encode("utf-8", errors="replace")),
             "options.txt": _b64(b"processes" if opts.allow_processes else b"no-processes"),
             "token": _b64(token.encode("ascii"))}
    if tests is not None:
        files["tests.py"] = _b64(tests.encode("utf-8", errors="replace"))
    return {"code": code, "language": "python", "compile_timeout": 10,
            "run_timeout": opts.timeout, "memory_limit_MB": opts.memory_mb,
            "stdin": stdin, "files": files, "fetch_files": []}


def run_fusion(program: str, opts: SandboxOptions, *, stdin: str = "",
               tests: str | None = None, stdout_limit: int | None = None) -> RunResult:
    """Run ``program`` (and ``tests``) on the SandboxFusion server at ``opts.fusion_url``.

    ``stdout_limit``: as in :func:`rlvr_boundary.verify.sandbox.run_python` (the
    server's own output limits, which we cannot see, apply first).

    Returns
    -------
    RunResult
        As :func:`rlvr_boundary.verify.sandbox.run_python`; ``status`` is
        ``error`` when the server cannot be reached or answers something else
        than a run result (the detail is in ``stderr``).
    """
    token = secrets.token_hex(16)
    body = json.dumps(request_body(program, opts, stdin, tests, token)).encode("utf-8")
    url = public_url(opts.fusion_url).rstrip("/") + "/run_code"
    headers = {"Content-Type": "application/json"}
    parts = urlsplit(opts.fusion_url)
    if parts.username is not None:  # user:password@ in the URL: HTTP basic authentication
        cred = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Authorization"] = "Basic " + _b64(cred)
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=opts.timeout + 60) as resp:
            cap = max(16 << 20, 8 * (stdout_limit or 0))  # JSON escapes may grow the text
            body = resp.read(cap + 1)
            if len(body) > cap:
                raise ValueError(f"an answer larger than {cap >> 20} MB")
            doc = json.loads(body)
        run = doc.get("run_result") or {}
        if not isinstance(run, dict) or doc.get("status") == "SandboxError" or not run:
            raise ValueError(f"no run result (status {doc.get('status')!r})")
        rc = run.get("return_code")
        out, err = str(run.get("stdout") or ""), str(run.get("stderr") or "")
    except (OSError, urllib.error.URLError, ValueError, AttributeError) as exc:
        return RunResult("error", None, "", f"SandboxFusion at {url}: {exc}"[:500],
                         time.monotonic() - t0, "sandbox-fusion")
    seconds = time.monotonic() - t0
    lines = err.rstrip("\n").split("\n")
    completed = secrets.compare_digest(lines[-1].encode(), token.encode())
    if completed:
        err = "\n".join(lines[:-1])
    keep = opts.max_output if stdout_limit is None else stdout_limit
    cut = stdout_limit is not None and len(out.encode("utf-8", "replace")) > stdout_limit
    out, err = out[:keep], err[: opts.max_output]
    if run.get("status") == "TimeLimitExceeded":
        status = "timeout"
    elif "MemoryError" in err:
        status = "memory"
    elif rc == 0 and completed:
        status = "ok"
    else:
        status = "failed"
        if rc == 0:
            err += ("\n[the program ended with status 0 before the harness reported the end of "
                    "the tests: not a pass]")
    return RunResult(status, rc, out, err, seconds, "sandbox-fusion", None, completed,
                     output_cut=cut)
