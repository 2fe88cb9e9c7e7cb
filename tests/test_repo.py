"""Repository promises: the README's two commands, .ci/run calling the second, one
constraints file for both, an `all` extra that is all that installs on CPU, and skip
reasons that say how to install what is missing."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def constraints() -> dict[str, str]:
    """``constraints.txt`` as {normalized name: exact version}; every line must be a pin."""
    pins = {}
    for i, line in enumerate((ROOT / "constraints.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
        assert m, f"constraints.txt:{i}: not an exact pin: {line!r}"
        pins[_norm(m.group(1))] = m.group(2)
    return pins


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str:
    return _norm(re.match(r"[A-Za-z0-9_.\-]+", req).group(0))


def test_readme_starts_with_the_two_setup_commands():
    main_job, tests = readme_commands()[:2]
    assert main_job.startswith("python3 -m venv .venv") and "rlvr-boundary report --example" in main_job
    assert "pip install -c constraints.txt -e ." in main_job  # the locked versions
    assert tests.startswith("python3 -m venv .venv") and "pytest" in tests
    assert "bash .ci/setup" in tests
    setup = (ROOT / ".ci" / "setup").read_text(encoding="utf-8")
    # every CPU extra, the locked versions, never an unpinned torch on the CPU machine
    assert "-e '.[all]' torch==2.13.0" in setup and "-c constraints.txt" in setup
    assert "--no-deps verl==0.9.1" in setup


def test_all_is_every_extra_that_installs_on_cpu():
    extras = pyproject()["project"]["optional-dependencies"]
    (spec,) = extras["all"]
    named = set(re.fullmatch(r"rlvr-boundary\[([\w,-]+)\]", spec).group(1).split(","))
    assert named == set(extras) - {"all", "vllm"}


def test_constraints_pin_every_dependency_ci_installs():
    pins = constraints()
    project = pyproject()["project"]
    extras = project["optional-dependencies"]
    reqs = list(project["dependencies"])
    for name, items in extras.items():
        if name not in {"all", "vllm"}:
            reqs += items
    missing = sorted({_req_name(r) for r in reqs} - set(pins))
    assert not missing, f"not in constraints.txt: {missing}"
    # The versions the documented numbers were made with.
    assert pins["torch"] == "2.13.0" and pins["transformers"] == "5.25.0"
    assert pins["verl"] == "0.9.1" and pins["math-verify"] == "0.9.0"
    # Exact pins in pyproject agree with the lock.
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", r)
        if m:
            assert pins[_norm(m.group(1))] == m.group(2), r
    assert "rlvr-boundary" not in pins  # the package itself is never pinned there


def test_ci_runs_the_readme_test_command_and_handles_exit_5():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci
    assert '"$code" = "5"' in ci
    assert "OPENBLAS_CORETYPE=Haswell python -m pytest -n 2 -q tests/stats tests/core" in ci
    assert "python -m pytest -n 2 -m slow" in ci
    latest = (ROOT / ".ci" / "latest").read_text(encoding="utf-8")
    assert "RLVR_BOUNDARY_CONSTRAINTS=none" in latest and ".ci/latest" in readme_text()


def readme_text() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_skip_reasons_say_how_to_install_what_is_missing():
    from tests.conftest import explain_skip

    got = explain_skip("could not import 'gradio': No module named 'gradio'")
    assert got == ("could not import 'gradio': No module named 'gradio' -- "
                   "pip install -c constraints.txt -e '.[app]'; bash .ci/setup installs "
                   "everything the suite exercises on a CPU machine")
    assert "GPU" in explain_skip("could not import 'vllm': No module named 'vllm'")
    assert ".ci/setup" not in explain_skip("could not import 'vllm': No module named 'vllm'")
    assert "latex2sympy2_extended" in explain_skip(
        "could not import 'lighteval.metrics.metrics_sample': No module named 'lighteval'")
    assert "apt-get install bubblewrap" in explain_skip("no bubblewrap or cgroup on this machine")
    assert explain_skip("root reads files whatever their mode") == "root reads files whatever their mode"
    assert "CI=true" in explain_skip("outside CI") and ".ci/setup" not in explain_skip("outside CI")
    # every extra a hint names exists
    extras = set(pyproject()["project"]["optional-dependencies"])
    from tests.conftest import HOW_TO_INSTALL
    for hint in HOW_TO_INSTALL.values():
        for extra in re.findall(r"\.\[([\w-]+)\]", hint):
            assert extra in extras, hint


def test_readme_lists_the_tests_that_cannot_run_here():
    text = readme_text()
    section = text[text.index("### Tests that cannot run here"):text.index("### Versions that move")]
    for path in ("tests/backends/test_vllm_backend.py", "tests/core/test_metrics_lighteval.py",
                 "tests/verify/test_verify_inputs.py", "tests/verify/test_escapes.py"):
        assert path in section and (ROOT / path).exists()


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
