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
    assert main_job.startswith("python3 -m venv .venv") and "rlvr-audit report --example" in main_job
    assert tests.startswith("python3 -m venv .venv") and "pytest" in tests
    assert "torch==2.13.0" in tests  # never an unpinned torch on the CPU machine


def test_ci_runs_the_readme_test_command_and_handles_exit_5():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci
    assert '"$code" = "5"' in ci
