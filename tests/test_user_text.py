"""No internal references in what a user reads: docs, READMEs, source strings, CLI help.

Papers are cited by authors, title and arXiv id; the project's own planning
documents (a specification, the source summaries it was written from, issue
numbers) mean nothing to a user and must not appear.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlvr_boundary.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

INTERNAL = [
    re.compile(r"\bSPEC\b"),  # the internal specification
    re.compile(r"\bseed 0\d\d\b", re.I),  # the internal source summaries, by number
    re.compile(r"\bseed (report|document|paper)s?\b", re.I),
    re.compile(r"\bthe seed (leaves|says|prints|gives)\b", re.I),
    re.compile(r"\bissue\s*#?\s*\d+", re.I),  # tracker numbers
    re.compile(r"\bits issue\b", re.I),
]


def internal_references(text: str) -> list[str]:
    """Every match of an internal-reference pattern in ``text``."""
    return [m.group(0) for rx in INTERNAL for m in rx.finditer(text)]


def _user_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "benchmarks" / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "benchmarks").glob("*.py"))
    files += sorted(p for p in (ROOT / "src").rglob("*")
                    if p.suffix in (".py", ".md") and "__pycache__" not in p.parts)
    return [p for p in files if p.exists()]


def test_the_patterns_catch_what_they_should():
    bad = ("see SPEC section 2", "(seed 003)", "issue 2", "Target (issue #3)",
           "the seed report flips", "the seed leaves it open", "the target of its issue")
    for text in bad:
        assert internal_references(text), text
    good = ("seed 0 draws differently", "fixed seeds", "seeded", "default_rng(seed)",
            "a known issue with verl", "specification of the format")
    for text in good:
        assert not internal_references(text), text


@pytest.mark.parametrize("path", _user_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_internal_references_in_user_text(path):
    hits = internal_references(path.read_text(encoding="utf-8"))
    assert not hits, f"{path.relative_to(ROOT)}: {hits}"


def _all_help(parser) -> list[str]:
    """The help text of ``parser`` and, recursively, of every sub-command."""
    import argparse

    out = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _all_help(sub)
    return out


def test_no_internal_references_in_cli_help():
    helps = _all_help(build_parser())
    assert len(helps) > 8  # every verb and sub-verb was reached
    hits = [h for text in helps for h in internal_references(text)]
    assert not hits, hits


def test_the_no_free_lunch_paper_is_said_to_have_no_public_identifier():
    """A reader cannot follow a citation with no authors or identifier: the theory page says
    the paper has none, and no docs page names the release history."""
    from pathlib import Path

    docs = Path(__file__).parents[1] / "docs"
    theory = " ".join((docs / "theory.md").read_text(encoding="utf-8").split())
    assert "it has no public identifier such as an arXiv id or a DOI" in theory
    for page in ("schema.md", "report.md", "theory.md", "backends.md"):
        assert "until this release" not in (docs / page).read_text(encoding="utf-8").lower()
