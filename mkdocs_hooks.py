"""Build-time additions to the documentation site (mkdocs ``hooks:``).

- The nav gains a "Result kinds" section with every ``docs/results/*.md`` (its
  ``index.md`` first) when that folder exists, so pages added there are in the
  site without editing ``mkdocs.yml``.
- The API reference: one page per entry of ``extra.api`` in ``mkdocs.yml``, each
  a list of ``::: module`` blocks that mkdocstrings renders from the numpydoc
  docstrings. The pages are generated, never written by hand, so they cannot
  fall behind the list.
- Links that leave ``docs/`` (``../README.md#...``, ``../examples/x.py``) work on
  GitHub as they are; on the site they are pointed at the repository
  (``extra.repo_blob``), since those files are not part of the site.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

API_DIR = "api"


def _results(docs_dir: Path) -> list:
    folder = docs_dir / "results"
    if not folder.is_dir():
        return []
    pages = sorted(folder.glob("*.md"), key=lambda p: (p.name != "index.md", p.name))
    return [f"results/{p.name}" for p in pages]


def on_config(config):
    docs_dir = Path(config["docs_dir"])
    nav = list(config["nav"] or [])
    results = _results(docs_dir)
    if results:
        nav.append({"Result kinds": results})
    api = (config.get("extra") or {}).get("api") or {}
    if api:
        nav.append({"API reference": [{title: f"{API_DIR}/{title}.md"} for title in api]})
    config["nav"] = nav
    return config


def api_page(title: str, modules: list[str]) -> str:
    """The Markdown of one generated API page."""
    lines = [f"# API reference: {title}", "",
             "Generated from the numpydoc docstrings of the public functions and classes "
             "(names without a leading underscore).", ""]
    for module in modules:
        lines += [f"::: {module}", "    options:", "      show_submodules: false", ""]
    return "\n".join(lines)


def on_files(files, config):
    api = (config.get("extra") or {}).get("api") or {}
    for title, modules in api.items():
        files.append(File.generated(config, f"{API_DIR}/{title}.md",
                                    content=api_page(title, list(modules))))
    return files


_LINK = re.compile(r"\]\((?P<target>\.\./[^)\s#]*)(?P<anchor>#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    blob = (config.get("extra") or {}).get("repo_blob")
    if not blob:
        return markdown
    here = posixpath.dirname(page.file.src_uri)  # folder of the page inside docs/

    def fix(m: re.Match) -> str:
        inside = posixpath.normpath(posixpath.join(here, m.group("target")))
        if not inside.startswith("../"):
            return m.group(0)  # still inside docs/: mkdocs checks it
        repo_path = posixpath.normpath(posixpath.join("docs", inside))
        return f"]({blob}{repo_path}{m.group('anchor') or ''})"

    return _LINK.sub(fix, markdown)
