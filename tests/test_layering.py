"""Imports point one way, floor by floor, and no files import each other in a loop.

The floors (``tests/import_graph.py``, :data:`FLOORS`), ground first:

- leaves: ``errors``, ``_version``, ``console``, ``examples``, ``options`` (options
  declared once), ``kinds`` (the result kinds);
- ``core`` (numpy and scipy only), then ``theory`` and ``shaping``;
- ``analysis`` (aligned counts -> JSON-ready numbers);
- ``io`` (readers and writers; never computes: it imports no ``analysis``);
- ``report``, ``backends``, ``verify`` (apart from each other);
- ``pipelines`` (one module per workflow: load -> compute -> write);
- ``lab``; ``commands`` and ``app`` (parse -> pipeline -> render); ``cli``.

Every import counts (top level, inside functions, under ``TYPE_CHECKING``): a
lazy import is still a dependency. Extra rules for the pure layers: ``core``,
``theory``, ``shaping`` and ``analysis`` import no third-party package but numpy
and scipy (``shaping``'s torch mirror and trainer adapters import their extras
lazily).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import import_graph as IG  # noqa: E402

STDLIB = set(sys.stdlib_module_names) | {"__future__"}
PURE = {"core", "theory", "shaping", "analysis"}
PURE_THIRD_PARTY = {"numpy", "scipy"}
#: Files of the pure layers that are adapters to heavy extras (their imports are lazy).
EDGE_FILES = {"shaping/torch_ops.py", "shaping/adapters/trl.py", "shaping/adapters/verl.py"}

#: Loops of files owned by work in progress elsewhere (each entry names its files); a new
#: loop fails the test, and so does a loop that grows.
KNOWN_CYCLES: list[set[str]] = [
    {"rlvr_boundary.verify.fusion", "rlvr_boundary.verify.sandbox"},
]


def third_party_in_pure_layers(src: Path = IG.SRC) -> list[str]:
    bad = []
    root = src / "rlvr_boundary"
    for path in IG.modules(src):
        rel = path.relative_to(root).as_posix()
        pkg = IG.package_of(IG.module_name(path, src))
        if pkg not in PURE or rel in EDGE_FILES:
            continue
        for line, mod, _ in IG.raw_imports(path, src):
            top = mod.split(".")[0]
            if top != "rlvr_boundary" and top not in STDLIB and top not in PURE_THIRD_PARTY:
                bad.append(f"{rel}:{line} imports {mod} ({pkg}: numpy/scipy only)")
    return bad


def test_every_package_has_a_floor():
    for m in IG.graph():
        IG.floor_of(m)


def test_no_upward_or_forbidden_imports():
    edges = IG.graph()
    assert IG.upward(edges) == []
    assert IG.forbidden(edges) == []


def test_pure_layers_import_numpy_and_scipy_only():
    assert third_party_in_pure_layers() == []


def test_no_new_import_cycles():
    cycles = IG.cycles(IG.graph())
    assert [c for c in cycles if set(c) not in KNOWN_CYCLES] == []
    assert IG.cycles(IG.package_edges(IG.graph())) == []


def test_the_checker_sees_an_upward_edge_and_a_cycle(tmp_path):
    """The checks can fail: planted upward imports, a forbidden one and a loop are reported."""
    import shutil

    fake = tmp_path / "src" / "rlvr_boundary"
    shutil.copytree(IG.SRC / "rlvr_boundary", fake,
                    ignore=shutil.ignore_patterns("__pycache__", "data"))
    (fake / "core" / "planted.py").write_text(
        "def f():\n    from rlvr_boundary.report import words\n    import pyarrow\n")
    (fake / "io" / "planted.py").write_text("from ..analysis import audit\n")
    (fake / "report" / "a.py").write_text("from rlvr_boundary.report import b\n")
    (fake / "report" / "b.py").write_text("from rlvr_boundary.report import a\n")
    src = tmp_path / "src"
    edges = IG.graph(src)
    up = IG.upward(edges)
    assert any(u.startswith("rlvr_boundary.core.planted:2 imports rlvr_boundary.report.words")
               for u in up)
    assert any("io.planted:1 imports rlvr_boundary.analysis.audit (io must not import analysis)"
               in f for f in IG.forbidden(edges))
    assert ["rlvr_boundary.report.a", "rlvr_boundary.report.b"] in IG.cycles(edges)
    assert any("core/planted.py:3 imports pyarrow" in b for b in third_party_in_pure_layers(src))


@pytest.mark.parametrize("path", ["core", "analysis", "theory", "shaping", "pipelines"])
def test_layers_exist(path):
    assert (IG.SRC / "rlvr_boundary" / path / "__init__.py").exists()
