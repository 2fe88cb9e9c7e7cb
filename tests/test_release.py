"""The release: one version, a changelog and a citation that match it, and a wheel
that installs into a new virtual environment and runs the examples from there.

The wheel test (slow) builds the sdist and the wheel from a copy of the tree (the
build writes egg-info next to the sources), checks both with ``twine check``,
installs the wheel with ``pip install -c constraints.txt`` into a new virtual
environment (no editable install, no torch) and runs ``compare --example``,
``report --example`` and ``report --example lab`` from a folder outside the tree,
so the example data must come from inside the wheel. It needs the ``release``
extra and the package index (or a pip cache).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from rlvr_boundary import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_set_in_one_place():
    from tests.test_repo import pyproject

    meta = pyproject()
    assert "version" not in meta["project"] and meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "rlvr_boundary._version.__version__"}
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*.py")
            if re.search(r"(?m)^__version__\s*=", p.read_text(encoding="utf-8"))]
    assert hits == ["src/rlvr_boundary/_version.py"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_changelog_and_citation_name_this_version():
    yaml = pytest.importorskip("yaml")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"(?m)^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog)
    assert releases and releases[0][0] == __version__  # the newest entry is this version
    assert "## [Unreleased]" in changelog
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == __version__ and cff["title"] == "rlvr-boundary"
    assert all(("family-names" in a) or ("name" in a) for r in cff["references"]
               for a in r["authors"])
    ids = {i["value"] for r in cff["references"] for i in r.get("identifiers", [])}
    ids |= {r["doi"] for r in cff["references"] if "doi" in r}
    # the methods we implement: pass@k, the RLVR boundary papers, the band
    for want in ("arXiv:2107.03374", "arXiv:2504.13837", "arXiv:2507.14843",
                 "arXiv:2508.07534", "arXiv:2609.22547", "10.1214/13-AOS1161"):
        assert want in ids, want


def _copy_tree(dest: Path) -> Path:
    junk = shutil.ignore_patterns(".git", ".venv", "build", "dist", "site", "*.egg-info",
                                  "__pycache__", ".pytest_cache", ".hypothesis",
                                  "test-artifacts", "*.pyc")
    shutil.copytree(ROOT, dest, ignore=junk)
    return dest


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["CI"] = "1"  # no progress bars in captured output
    return env


@pytest.mark.slow
def test_the_wheel_installs_in_a_new_venv_and_runs_the_examples(tmp_path):
    try:
        import build  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("could not import 'build': pip install -c constraints.txt -e '.[release]'")
    src = _copy_tree(tmp_path / "src-copy")
    dist = tmp_path / "dist"
    env = _clean_env()
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel, = dist.glob(f"rlvr_boundary-{__version__}-py3-none-any.whl")
    sdist, = dist.glob(f"rlvr_boundary-{__version__}.tar.gz")
    if shutil.which("twine") or _has_module("twine"):
        r = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel),
                            str(sdist)], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and r.stdout.count("PASSED") == 2, r.stdout + r.stderr

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
                        str(wheel)], env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    # the installed package, not the tree; torch not needed for these commands
    r = subprocess.run([str(py), "-c", "import rlvr_boundary, importlib.util as u; "
                        "print(rlvr_boundary.__file__, rlvr_boundary.__version__, "
                        "u.find_spec('torch') is None)"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    where, version, no_torch = r.stdout.split()
    assert str(env_dir) in where and version == __version__ and no_torch == "True", r.stdout

    cli = env_dir / "bin" / "rlvr-boundary"
    run = tmp_path / "run"
    run.mkdir()

    def call(*args: str) -> str:
        r = subprocess.run([str(cli), *args], env=env, cwd=run, capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, f"{args}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
        return r.stdout

    out = call("compare", "--example", "--json", "compare.json")
    assert "k* = 22" in out
    res = json.loads((run / "compare.json").read_text())
    assert res["k_star"] == 22 and res["tool_version"] == __version__ and res["n_prompts"] == 1060
    call("report", "--example", "--out", "deepscaler.html")
    call("report", "--example", "lab", "--out", "lab.html")
    for page in ("deepscaler.html", "lab.html"):
        html = (run / page).read_text(encoding="utf-8")
        assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
        assert "<script" not in html.lower()  # the page runs no scripts
    assert "step-40" in (run / "lab.html").read_text(encoding="utf-8")


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
