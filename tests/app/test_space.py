"""The Space entry: pinned Gradio in sync, loopback unless the Space says otherwise."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SPACE = ROOT / "deploy" / "space"


def _load_entry(monkeypatch):
    import rlvr_boundary.app as app

    def refuse(*a, **k):
        raise AssertionError("importing the entry must not build the app")

    monkeypatch.setattr(app, "build_app", refuse)
    monkeypatch.setattr(app, "launch", refuse)
    spec = importlib.util.spec_from_file_location("space_app", SPACE / "app.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gradio_version_is_pinned_once():
    header = (SPACE / "README.md").read_text(encoding="utf-8").split("---")[1]
    sdk = re.search(r"^sdk_version:\s*(\S+)$", header, re.M).group(1)
    assert re.search(r"^sdk:\s*gradio$", header, re.M)
    assert re.search(r"^app_file:\s*app.py$", header, re.M) and (SPACE / "app.py").is_file()
    pin = re.search(r'app = \["gradio==([^"]+)"\]',
                    (ROOT / "pyproject.toml").read_text(encoding="utf-8")).group(1)
    assert sdk == pin
    assert "rlvr-boundary[app]" in (SPACE / "requirements.txt").read_text(encoding="utf-8")
    # CI installs the app extra: .ci/setup installs '.[all]', which names it, with the lock.
    assert "-e '.[all]'" in (ROOT / ".ci" / "setup").read_text(encoding="utf-8")
    assert re.search(r'all = \[\s*"rlvr-boundary\[[\w,-]*\bapp\b',
                     (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert f"gradio=={pin}\n" in (ROOT / "constraints.txt").read_text(encoding="utf-8")
    gradio = pytest.importorskip("gradio")
    assert gradio.__version__ == pin


def test_entry_binds_loopback_unless_the_space_says_otherwise(monkeypatch):
    mod = _load_entry(monkeypatch)
    assert mod.options_from_env({}).host == "127.0.0.1"
    opts = mod.options_from_env({"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "7861",
                                 "RLVR_BOUNDARY_MAX_UPLOAD_MB": "5", "RLVR_BOUNDARY_WORKERS": "1"})
    assert (opts.host, opts.port, opts.max_upload_mb, opts.workers) == ("0.0.0.0", 7861, 5.0, 1)
    assert not opts.is_local
