"""Results are cached per session by the hash of the inputs and options; the PNG/PDF of a
result are drawn on request, once; a killed server's folder is removed at the next start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("gradio")

from rlvr_boundary.app import compute as C  # noqa: E402
from rlvr_boundary.app import shutdown, ui  # noqa: E402
from rlvr_boundary.app.jobs import JobRunner  # noqa: E402
from rlvr_boundary.app.options import AppOptions  # noqa: E402


class CountingRunner(JobRunner):
    """A real worker pool that counts the jobs it was asked to run."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls: list[str] = []

    def run(self, name, *args, progress=None):
        self.calls.append(name)
        return super().run(name, *args, progress=progress)


@pytest.fixture
def app():
    runner = CountingRunner(1)
    demo = ui.build_app(AppOptions(bootstrap=50), runner=runner)
    fns = {f.api_name: f.fn for f in demo.fns.values() if f.api_name}
    yield demo, runner, fns
    shutdown(demo)


def test_same_request_in_a_session_is_answered_from_its_cache(app):
    demo, runner, fns = app
    args = (C.OMNI_MATH_CURVE, "auto", "base", "RL", "", 0.05, 0)
    page1, files1, session, run1 = fns["paste"](*args, None)
    assert 'data-field="price_k">256<' in page1 and runner.calls == ["paste_job"]
    page2, files2, session2, run2 = fns["paste"](*args, session)
    assert (page2, files2, session2, run2) == (page1, files1, session, run1)
    assert runner.calls == ["paste_job"]  # nothing recomputed
    # Another option is another analysis; both stay cached.
    page3, _, _, run3 = fns["paste"](*args[:-1], 7, session)
    assert run3 != run1 and runner.calls == ["paste_job", "paste_job"]
    assert fns["paste"](*args, session)[0] == page1 and len(runner.calls) == 2
    # Another session does not see this one's results: it computes its own.
    other = fns["paste"](*args, None)
    assert other[2] != session and len(runner.calls) == 3
    # PNG and PDF only on request, from the stored result, once.
    assert not list(Path(run1).rglob("*.png"))
    msg, figs = fns["paste_figures"](run1, session)
    assert runner.calls[-1] == "figures_job" and len(runner.calls) == 4
    with zipfile.ZipFile(figs[0]) as zf:
        assert set(zf.namelist()) == {"figures/price.png", "figures/price.pdf"}
    assert fns["paste_figures"](run1, session)[1] == figs and len(runner.calls) == 4
    # A run folder of another session is refused.
    assert "rb-error" in fns["paste_figures"](other[3], session)[0]


def test_cache_key_hashes_file_content_and_name(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"id": "p", "c": 1, "n": 4}\n')
    b.write_text('{"id": "p", "c": 1, "n": 4}\n')
    k = ui.cache_key("files_job", [(a, "m.jsonl")], {"seed": 0})
    assert k == ui.cache_key("files_job", [(b, "m.jsonl")], {"seed": 0})  # same bytes
    assert k != ui.cache_key("files_job", [(b, "other.jsonl")], {"seed": 0})  # label differs
    assert k != ui.cache_key("files_job", [(a, "m.jsonl")], {"seed": 1})
    b.write_text('{"id": "p", "c": 2, "n": 4}\n')
    assert k != ui.cache_key("files_job", [(b, "m.jsonl")], {"seed": 0})


def test_prune_keeps_the_latest_finished_runs(tmp_path):
    for i in range(5):
        run = tmp_path / f"run-paste-{i}"
        run.mkdir()
        ui._store(run, f"<p>{i}</p>", [])
        os.utime(run, (1000 + i, 1000 + i))
    (tmp_path / "run-paste-busy").mkdir()  # not finished: left alone
    ui._prune(str(tmp_path), "paste", 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "run-paste-3", "run-paste-4", "run-paste-busy"]
    assert ui.cached(tmp_path / "run-paste-4") == ("<p>4</p>", [])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times from /proc")
def test_claim_root_removes_folders_of_dead_servers_only(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{ui.ROOT_PREFIX}stale"
    (stale / "session-x").mkdir(parents=True)
    (stale / "owner.json").write_text(json.dumps({"pid": dead.pid, "start": "1"}))
    live = tmp_path / f"{ui.ROOT_PREFIX}live"
    live.mkdir()
    (live / "owner.json").write_text(json.dumps({"pid": os.getpid(),
                                                  "start": ui._start_time(os.getpid())}))
    reused = tmp_path / f"{ui.ROOT_PREFIX}reused"  # our pid, another start time: dead owner
    reused.mkdir()
    (reused / "owner.json").write_text(json.dumps({"pid": os.getpid(), "start": "-1"}))
    unknown = tmp_path / f"{ui.ROOT_PREFIX}unknown"  # no owner file: not ours to judge
    unknown.mkdir()
    root = ui.claim_root(tmp_path)
    assert not stale.exists() and not reused.exists()
    assert live.is_dir() and unknown.is_dir() and root.is_dir()
    assert json.loads((root / "owner.json").read_text())["pid"] == os.getpid()
