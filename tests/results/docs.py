"""Generate docs/results/ from the registry of result kinds (run with --write to update).

Each page is :func:`rlvr_boundary.kinds.markdown` of its kind, with the table of
the options the kind records (:func:`rlvr_boundary.options.describe` of the
options dataclass) when that class is declared with options.

    python tests/results/docs.py            # list the pages that differ
    python tests/results/docs.py --write    # rewrite them
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "results"


def options_rows(spec: str) -> list[dict] | None:
    """The options table of ``module:Class`` (None when it is not a dataclass of options)."""
    from rlvr_boundary.options import describe

    if ":" not in spec.split(" ")[0]:
        return None
    module, cls = spec.split(" ")[0].split(":")
    try:
        target = getattr(importlib.import_module(module), cls)
    except ImportError:  # a heavy extra (the lab needs torch): leave its table out
        return None
    if not dataclasses.is_dataclass(target):
        return None
    return describe(target) or None


def pages() -> dict[str, str]:
    """``{file name: text}`` of every page of docs/results/."""
    from rlvr_boundary.kinds import KINDS, index_markdown, markdown

    out = {"README.md": index_markdown()}
    for name, k in KINDS.items():
        out[f"{name}.md"] = markdown(name, options_rows(k.options))
    return out


GLOSSARY_PAGE = DOCS.parent / "glossary.md"


def glossary_page() -> str:
    """docs/glossary.md: every term of :data:`rlvr_boundary.report.words.GLOSSARY`."""
    from rlvr_boundary.report.words import GLOSSARY

    lines = ["# Glossary", "",
             "<!-- Generated from rlvr_boundary.report.words.GLOSSARY (python "
             "tests/results/docs.py --write). -->", "",
             "The terms of the report, the console and the app, as they define them.", ""]
    for term, text in GLOSSARY.items():
        lines += [f"**`{term}`**: {text}", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    stale = []
    everything = {DOCS / name: text for name, text in pages().items()}
    everything[GLOSSARY_PAGE] = glossary_page()
    for path, text in everything.items():
        name = path.name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if args.write:
                DOCS.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    print(("wrote " if args.write else "stale: ") + (", ".join(stale) or "nothing"))
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    sys.exit(main())
