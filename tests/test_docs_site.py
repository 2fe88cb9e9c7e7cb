"""The documentation site: every page reachable, the API list complete, and
``mkdocs build --strict`` passing (no broken link or anchor, no docstring the API
reference cannot parse)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def mkdocs_config() -> dict:
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        """mkdocs.yml's ``!!python/...`` tags (the slug function) read as plain data."""

    Loader.add_multi_constructor("tag:yaml.org,2002:python/",
                                 lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("could not import 'mkdocs': No module named 'mkdocs'")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _nav_files(nav) -> list[str]:
    out = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def test_every_page_under_docs_is_in_the_nav():
    cfg = mkdocs_config()
    nav = _nav_files(cfg["nav"])
    # docs/results/ joins the nav at build time (mkdocs_hooks.py), whatever it holds.
    nav += [f"results/{p.name}" for p in (DOCS / "results").glob("*.md")]
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(set(nav)) == pages
    assert len(nav) == len(set(nav))  # no page twice


def test_the_api_list_names_real_modules_and_every_pure_module():
    api = mkdocs_config()["extra"]["api"]
    listed = [m for mods in api.values() for m in mods]
    assert len(listed) == len(set(listed))
    for m in listed:
        rel = Path("src", *m.split("."))
        assert (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file(), m
    # core/, theory/ and shaping/ are documented whole: a new module there must be listed.
    for pkg in ("core", "theory", "shaping"):
        for f in (ROOT / "src" / "rlvr_boundary" / pkg).rglob("*.py"):
            parts = f.relative_to(ROOT / "src").with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(p.startswith("_") for p in parts):
                continue
            assert ".".join(parts) in listed, f"{f.relative_to(ROOT)} is not in mkdocs.yml extra.api"


def test_links_that_leave_docs_point_at_the_repository():
    hooks = _hooks()
    config = {"extra": {"repo_blob": "https://example.org/blob/main/"}}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="report.md"))
    md = ("[a](../README.md#compare-a-trained-checkpoint) [b](statistics.md#band) "
          "[c](../examples/trl_shaped_grpo.py) [d](https://x.org/a.md)")
    assert hooks.on_page_markdown(md, page, config, None) == (
        "[a](https://example.org/blob/main/README.md#compare-a-trained-checkpoint) "
        "[b](statistics.md#band) [c](https://example.org/blob/main/examples/trl_shaped_grpo.py) "
        "[d](https://x.org/a.md)")
    nested = SimpleNamespace(file=SimpleNamespace(src_uri="results/compare.md"))
    assert hooks.on_page_markdown("[s](../schema.md) [r](../../README.md)", nested, config,
                                  None) == "[s](../schema.md) [r](https://example.org/blob/main/README.md)"


def test_api_pages_hold_one_block_per_module():
    hooks = _hooks()
    text = hooks.api_page("core", ["rlvr_boundary.core.passk", "rlvr_boundary.core.compare"])
    assert text.startswith("# API reference: core\n")
    assert [ln for ln in text.splitlines() if ln.startswith(":::")] == [
        "::: rlvr_boundary.core.passk", "::: rlvr_boundary.core.compare"]


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI builds the documentation site: pip install -c constraints.txt -e '.[docs]'")
        pytest.skip("could not import 'mkdocs': No module named 'mkdocs'")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    pages = sorted(p.parent.relative_to(tmp_path / "site").as_posix()
                   for p in (tmp_path / "site").rglob("index.html"))
    md = sorted(str(p.relative_to(DOCS).with_suffix("")) for p in DOCS.rglob("*.md"))
    api = mkdocs_config()["extra"]["api"]
    # index.md and a folder's README.md are the folder's page (mkdocs makes them index.html)
    folder = {m: m.rsplit("/", 1)[0] for m in md if m.endswith("/README")}
    want = sorted(["." if m == "index" else folder.get(m, m) for m in md]
                  + [f"api/{t}" for t in api])
    assert pages == want
    report = (tmp_path / "site" / "report" / "index.html").read_text(encoding="utf-8")
    assert "blob/main/README.md#compare-a-trained-checkpoint-with-its-base" in report


def test_result_pages_join_the_nav_when_their_folder_appears(tmp_path):
    hooks = _hooks()
    cfg = {"docs_dir": str(tmp_path), "nav": [{"Home": "index.md"}],
           "extra": {"api": {"core": ["rlvr_boundary.core"]}}}
    assert hooks.on_config(dict(cfg))["nav"] == [
        {"Home": "index.md"}, {"API reference": [{"core": "api/core.md"}]}]
    (tmp_path / "results").mkdir()
    for name in ("pairwise.md", "audit.md", "index.md"):
        (tmp_path / "results" / name).write_text("# x\n")
    assert hooks.on_config(dict(cfg))["nav"] == [
        {"Home": "index.md"},
        {"Result kinds": ["results/index.md", "results/audit.md", "results/pairwise.md"]},
        {"API reference": [{"core": "api/core.md"}]}]
