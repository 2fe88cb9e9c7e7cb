"""Imports point one way: cli/app -> report/backends/io/verify -> analysis -> core, theory, shaping.

Reads every module's imports with ``ast`` (top level, inside functions and under
``TYPE_CHECKING`` alike: a lazy import is still a dependency) and fails on any
upward edge:

- ``core/`` imports numpy, scipy, the standard library and itself only;
- ``theory/``, ``shaping/`` and ``analysis/`` import ``core/`` (and the leaf
  ``errors`` module), plus themselves; ``shaping``'s torch mirror and trainer
  adapters may import their heavy extras, and ``shaping/rft.py`` must not import
  ``verify/``;
- nothing but the top layers (cli, commands, app) imports ``report``,
  ``commands``, ``cli``, ``app``, ``backends`` or ``lab`` -- except that
  ``report`` and ``lab`` may use ``backends``-free parts of themselves.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "rlvr_boundary"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}

#: Third-party packages each pure layer may import.
PURE_THIRD_PARTY = {"numpy", "scipy"}
#: Modules every layer above core may import: leaves with no package imports.
LEAVES = {"errors", "_version"}
#: Files of the pure layers that are adapters to heavy extras (their imports are lazy).
EDGE_FILES = {"shaping/torch_ops.py", "shaping/adapters/trl.py", "shaping/adapters/verl.py"}
#: Packages no lower layer may import.
TOP = {"report", "commands", "cli", "app", "backends", "lab", "monitor"}
#: Who may import a TOP package (besides itself).
TOP_IMPORTERS = {
    "report": {"commands", "cli", "app", "lab"},
    "commands": {"cli"},
    "cli": set(),
    "app": {"commands", "cli"},
    "backends": {"commands", "cli", "app", "lab", "monitor"},
    "lab": {"commands", "cli", "app"},
    "monitor": {"commands", "cli", "app", "lab"},
}


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(SRC).with_suffix("")
    here = ["rlvr_boundary", *rel.parts[:-1]] if rel.name != "__init__" else \
        ["rlvr_boundary", *rel.parts[:-1]]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # "from rlvr_boundary import report" imports the subpackage.
            if mod == "rlvr_boundary":
                out += [(node.lineno, f"rlvr_boundary.{a.name}") for a in node.names]
    return out


def _target(mod: str) -> str | None:
    """The top-level package of an internal import (None for external modules)."""
    parts = mod.split(".")
    if parts[0] != "rlvr_boundary" or len(parts) < 2:
        return None
    return parts[1]


def upward_edges() -> list[str]:
    bad = []
    for path in _modules():
        rel = path.relative_to(SRC).as_posix()
        pkg = _package_of(path)
        for line, mod in _imports(path):
            where = f"{rel}:{line} imports {mod}"
            target = _target(mod)
            top = mod.split(".")[0]
            if pkg == "core":
                if target is None and top not in STDLIB and top not in PURE_THIRD_PARTY:
                    bad.append(where + " (core: numpy/scipy only)")
                elif target is not None and target != "core":
                    bad.append(where + " (core imports core only)")
            elif pkg in ("theory", "shaping", "analysis"):
                if rel in EDGE_FILES:
                    if target is not None and target not in ("core", pkg, *LEAVES):
                        bad.append(where + f" ({pkg} adapters: core, {pkg} and leaves only)")
                    continue
                if target is None and top not in STDLIB and top not in PURE_THIRD_PARTY:
                    bad.append(where + f" ({pkg}: numpy/scipy only)")
                elif target is not None and target not in ("core", pkg, *LEAVES):
                    bad.append(where + f" ({pkg} imports core only)")
            if target in TOP and target != pkg and pkg not in TOP_IMPORTERS[target]:
                bad.append(where + f" (nothing below the top layers imports {target})")
            if rel == "shaping/rft.py" and target == "verify":
                bad.append(where + " (shaping/rft.py must not import verify)")
    return bad


def test_no_upward_imports():
    assert upward_edges() == []


def test_the_checker_sees_an_upward_edge(tmp_path, monkeypatch):
    """The test can fail: a planted upward import in a copy of core is reported."""
    import shutil

    fake = tmp_path / "rlvr_boundary"
    shutil.copytree(SRC, fake, ignore=shutil.ignore_patterns("__pycache__", "data"))
    (fake / "core" / "planted.py").write_text(
        "def f():\n    from rlvr_boundary.report import words\n    import pyarrow\n")
    (fake / "analysis" / "planted.py").write_text("from ..io import counts\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    bad = upward_edges()
    assert any("core/planted.py:2 imports rlvr_boundary.report (" in b for b in bad)
    assert any("core/planted.py:3 imports pyarrow" in b for b in bad)
    assert any("analysis/planted.py:1 imports rlvr_boundary.io (" in b for b in bad)


@pytest.mark.parametrize("path", ["core", "analysis", "theory", "shaping"])
def test_pure_layers_exist(path):
    assert (SRC / path / "__init__.py").exists()
