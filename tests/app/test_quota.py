"""Upload quotas (per visitor and for the server) and no orphans after a SIGKILL of the server."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from rlvr_boundary.app.quota import MB, Quota, folder_bytes


def test_quota_refuses_past_the_visitor_and_the_global_limit(tmp_path):
    q = Quota(tmp_path, per_visitor=3 * MB, total=5 * MB, window=3600)
    assert q.admit("a", 2 * MB) is None
    q.done(2 * MB)
    status, msg = q.admit("a", 2 * MB)  # 2 + 2 > 3 for this visitor
    assert status == 429 and "you have uploaded 2.0 MB" in msg and "at most 3 MB per visitor" in msg
    assert q.admit("a", 1 * MB) is None  # exactly at the limit is allowed
    q.done(1 * MB)
    # The server's folder holds 4.5 MB: another visitor's 1 MB would pass 5 MB in all.
    (tmp_path / "f").write_bytes(b"x" * int(4.5 * MB))
    assert folder_bytes(tmp_path) == int(4.5 * MB)
    status, msg = q.admit("b", 1 * MB)
    assert status == 507 and "holds 4.5 MB" in msg and "at most 5 MB for all visitors" in msg
    assert q.admit("b", MB // 4) is None
    # Uploads in progress count too.
    status, _ = q.admit("c", MB // 4 + 1)
    assert status == 507
    q.done(MB // 4)
    assert q.admit("c", MB // 4 + 1) is None


def test_quota_forgets_after_the_window(tmp_path):
    q = Quota(tmp_path, per_visitor=MB, total=100 * MB, window=0.2)
    assert q.admit("a", MB) is None
    assert q.admit("a", 1)[0] == 429
    time.sleep(0.3)
    assert q.admit("a", MB) is None


pytest.importorskip("gradio")
psutil = pytest.importorskip("psutil")


@pytest.mark.slow
def test_server_refuses_uploads_past_the_visitor_quota_with_a_clear_message(tmp_path):
    import httpx

    from tests.app.server import running_server

    f = tmp_path / "counts.jsonl"
    f.write_bytes(b'{"id": "p", "c": 1, "n": 4}\n' * 30_000)  # ~0.8 MB
    with running_server("--workers", "1", "--max-upload-mb", "1", "--upload-quota-mb", "2",
                        "--total-upload-mb", "10") as (url, proc, log):
        codes = []
        for _ in range(3):
            with open(f, "rb") as fh:
                r = httpx.post(f"{url}gradio_api/upload", files={"files": ("c.jsonl", fh)},
                               timeout=60)
            codes.append(r.status_code)
        assert codes == [200, 200, 429], codes
        assert "at most 2 MB per visitor" in r.text and "you have uploaded 1.6 MB" in r.text
        # An upload that does not say its size is refused before it is stored.
        r = httpx.post(f"{url}gradio_api/upload", timeout=60,
                       content=iter([b"--x\r\n"]), headers={"content-type":
                                                             "multipart/form-data; boundary=x"})
        assert r.status_code == 411


@pytest.mark.slow
def test_sigkill_of_the_server_leaves_no_process_and_the_next_start_removes_its_folder():
    from gradio_client import Client

    from rlvr_boundary.app import compute
    from tests.app.server import running_server

    with running_server("--workers", "2") as (url, proc, log):
        root = Path(re.search(r"session files under (\S+)", " ".join(log)).group(1))
        Client(url, verbose=False).predict(compute.OMNI_MATH_CURVE, "auto", "base", "RL", "",
                                           0.05, 0, api_name="/paste")
        server = psutil.Process(proc.pid)
        children = server.children(recursive=True)
        # Two workers and multiprocessing's resource tracker.
        assert len(children) >= 3, [c.cmdline() for c in children]
        assert any("resource_tracker" in " ".join(c.cmdline()) for c in children)
        assert list(root.glob("session-*"))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        gone, alive = psutil.wait_procs(children, timeout=20)
        assert not alive, [c.cmdline() for c in alive]
        assert root.is_dir()  # a killed server cannot clean up ...
    # ... the next server removes its folder when it starts.
    with running_server("--workers", "1") as (url, proc, log):
        assert not root.exists()
