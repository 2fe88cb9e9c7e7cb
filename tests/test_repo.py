"""Repository promises: the README's two commands, and .ci/run calling the second."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def test_readme_starts_with_the_two_setup_commands():
    main_job, tests = readme_commands()[:2]
    assert main_job.startswith("python3 -m venv .venv") and "rlvr-boundary report --example" in main_job
    assert tests.startswith("python3 -m venv .venv") and "pytest" in tests
    assert "torch==2.13.0" in tests  # never an unpinned torch on the CPU machine


def test_ci_runs_the_readme_test_command_and_handles_exit_5():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci
    assert '"$code" = "5"' in ci


def test_the_old_name_appears_nowhere():
    """The package was renamed (an unrelated PyPI package holds the old name)."""
    old = ("rlvr" + "_audit", "rlvr" + "-audit", "RLVR" + "_AUDIT")
    hits = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".git", ".venv", "test-artifacts"} or not path.is_file():
            continue
        if "egg-info" in str(rel) or "__pycache__" in rel.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        hits += [f"{rel}: {o}" for o in old if o in text or o in str(rel)]
    assert not hits, hits
