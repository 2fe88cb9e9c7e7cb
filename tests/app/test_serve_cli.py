"""``rlvr-boundary serve``: safe defaults, validated options, a clear error without Gradio."""

from __future__ import annotations

import sys

import pytest

from rlvr_boundary.app import AppOptions
from rlvr_boundary.cli import build_parser, main


def test_defaults_bind_to_loopback():
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.port == 7860
    opts = AppOptions()
    assert opts.host == "127.0.0.1" and opts.is_local
    assert AppOptions(host="localhost").is_local and AppOptions(host="::1").is_local
    assert not AppOptions(host="0.0.0.0").is_local
    assert not AppOptions(host="example.org").is_local


@pytest.mark.parametrize("kw", [{"port": 70000}, {"max_upload_mb": 0}, {"max_rows": 0},
                                {"workers": 0}, {"bootstrap": 1}, {"host": ""},
                                {"max_cells": True}])
def test_options_are_validated(kw):
    with pytest.raises(ValueError):
        AppOptions(**kw)


def test_bad_flag_is_an_input_error(capsys):
    assert main(["serve", "--workers", "0"]) == 2
    assert "workers must be an integer >= 1" in capsys.readouterr().err


def test_missing_gradio_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gradio", None)  # import gradio -> ImportError
    assert main(["serve", "--port", "0"]) == 3
    err = capsys.readouterr().err
    assert "pip install 'rlvr-boundary[app]'" in err.replace("\n", " ")


def test_app_package_imports_without_gradio(monkeypatch):
    monkeypatch.setitem(sys.modules, "gradio", None)
    import importlib

    for mod in ("options", "compute", "jobs", "render"):
        importlib.import_module(f"rlvr_boundary.app.{mod}")


def test_sweep_deletes_idle_session_folders_only(tmp_path):
    import os
    import time

    from rlvr_boundary.app.ui import sweep

    old, fresh, mine = (tmp_path / f"session-{x}" for x in ("old", "fresh", "mine"))
    for d in (old, fresh, mine):
        (d / "run-1").mkdir(parents=True)
    past = time.time() - 7200
    os.utime(old, (past, past))
    os.utime(mine, (past, past))
    other = tmp_path / "not-a-session"
    other.mkdir()
    os.utime(other, (past, past))
    assert sweep(tmp_path, 3600, keep=str(mine)) == [str(old)]
    assert not old.exists() and fresh.exists() and mine.exists() and other.exists()


def test_only_compute_calls_into_the_library():
    """The seam: every app module but compute.py imports only the app, the error types and the
    options machinery (AppOptions is declared with it)."""
    import ast
    from pathlib import Path

    import rlvr_boundary.app as app

    allowed = ("rlvr_boundary.app", "rlvr_boundary.errors", "rlvr_boundary.options")
    for path in Path(app.__file__).parent.glob("*.py"):
        if path.name == "compute.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("rlvr_boundary"):
                    assert name.startswith(allowed), f"{path.name} imports {name}"
