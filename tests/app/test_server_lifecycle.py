"""A real server: one analysis through the API, then SIGTERM stops it and removes its files."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

pytest.importorskip("gradio")
psutil = pytest.importorskip("psutil")

from rlvr_boundary.app import compute  # noqa: E402
from tests.app.server import port_open, running_server  # noqa: E402

pytestmark = pytest.mark.slow


def test_sigterm_stops_workers_and_deletes_session_files():
    from gradio_client import Client

    with running_server("--workers", "1") as (url, proc, log):
        root = Path(re.search(r"session files under (\S+)", " ".join(log)).group(1))
        client = Client(url, verbose=False)
        html, files = client.predict(compute.OMNI_MATH_CURVE, "auto", "base", "RL", "", 0.05, 0,
                                     api_name="/paste")
        assert 'data-field="crossing_intervals">(64, 256]<' in html
        assert len(list(root.glob("session-*/run-paste-*"))) == 1
        # Session folders and other server files are not served by path.
        import httpx

        (own,) = root.glob("session-*/run-paste-*/price.json")
        for target in (own, Path("/etc/passwd"), Path(__file__)):
            r = httpx.get(f"{url}gradio_api/file={target}", timeout=30)
            assert r.status_code in (403, 404), (target, r.status_code)
        workers = psutil.Process(proc.pid).children(recursive=True)
        assert workers  # the analysis ran in a worker process
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        port = int(url.rsplit(":", 1)[1].strip("/"))
        assert not port_open(port)
        assert not root.exists()
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive
