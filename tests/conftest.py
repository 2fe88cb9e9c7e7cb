"""Test-wide set-up.

pytest-xdist workers run with ``COLUMNS=80`` in their environment, which our
consoles honour as a user's explicit width; the console tests check what a
script reading piped output sees, so the variable is removed before the package
creates its consoles.

Skip reasons: ``pytest.importorskip`` says only "could not import 'gradio'". The
hooks below add what a person needs: which extra (or system package) brings the
module, and the one command that installs everything the suite exercises on a
CPU machine (``bash .ci/setup``, README command 2). The README's list of tests
that cannot run here is the list of reasons this leaves on the reference machine.
"""

from __future__ import annotations

import os
import re

import pytest

os.environ.pop("COLUMNS", None)

SETUP = "bash .ci/setup installs everything the suite exercises on a CPU machine"

#: top-level module -> how to get it (an extra of this package, or why it is not one).
HOW_TO_INSTALL = {
    "torch": "pip install -c constraints.txt -e '.[torch]' (torch==2.13.0)",
    "transformers": "pip install -c constraints.txt -e '.[hf]'",
    "tokenizers": "pip install -c constraints.txt -e '.[hf]'",
    "safetensors": "pip install -c constraints.txt -e '.[hf]'",
    "trl": "pip install -c constraints.txt -e '.[trl]'",
    "datasets": "pip install -c constraints.txt -e '.[trl]'",
    "httpx": "pip install -c constraints.txt -e '.[openai]'",
    "fastapi": "pip install -c constraints.txt -e '.[hf-serving]'",
    "uvicorn": "pip install -c constraints.txt -e '.[hf-serving]'",
    "ray": "pip install -c constraints.txt -e '.[ray]'",
    "gradio": "pip install -c constraints.txt -e '.[app]'",
    "playwright": "pip install -c constraints.txt -e '.[test]'",
    "psutil": "pip install -c constraints.txt -e '.[test]'",
    "pandas": "pip install -c constraints.txt -e '.[test]'",
    "threadpoolctl": "pip install -c constraints.txt -e '.[test]'",
    "jsonschema": "pip install -c constraints.txt -e '.[test]'",
    "scorio": "pip install -c constraints.txt -e '.[test]'",
    "passk_inference": "pip install -c constraints.txt -e '.[test]'",
    "mkdocs": "pip install -c constraints.txt -e '.[docs]'",
    "math_verify": "pip install -c constraints.txt -e . (math-verify is a core dependency)",
    "verl": ("pip install -c constraints.txt --no-deps verl==0.9.1 and "
             "pip install -c constraints.txt -e '.[verl-runtime]' (verl's metadata pins an "
             "older transformers, so it goes in without its dependency set)"),
    "vllm": "vLLM's PyPI wheel is a CUDA build and its engine needs a GPU: pip install vllm on a GPU machine",
    "lighteval": ("lighteval is not installed with the others: lighteval 0.13.0 pins "
                  "latex2sympy2_extended==1.0.6, which math-verify 0.9.0 (a core dependency) "
                  "cannot use; pip install lighteval in a separate environment to run it"),
}

#: modules .ci/setup does not install (so the hint does not point at it).
NOT_INSTALLED_BY_SETUP = {"vllm", "lighteval"}

_NO_MODULE = re.compile(r"could not import '([\w.]+)'")


def explain_skip(reason: str) -> str:
    """Return ``reason`` with how to install what it names as missing, if it names any.

    Parameters
    ----------
    reason : str
        The skip reason pytest recorded, e.g. from ``pytest.importorskip``.

    Returns
    -------
    str
        The reason unchanged when it names nothing we know how to install, otherwise the
        reason followed by the install command and the one-command set-up.
    """
    hint, setup = None, SETUP
    m = _NO_MODULE.search(reason)
    if m:
        top = m.group(1).split(".")[0]
        hint = HOW_TO_INSTALL.get(top)
        if top in NOT_INSTALLED_BY_SETUP:
            setup = ""
    elif "bubblewrap" in reason and "apt-get" not in reason:
        hint = "as root: apt-get install bubblewrap (a cgroup is needed too: run as root or in a delegated cgroup)"
    elif reason.removeprefix("Skipped: ") == "outside CI":
        hint = ("this check runs with CI=true only: there a machine without bubblewrap must "
                "fail, not skip the sandbox attacks")
        setup = ""
    elif "transformers[serving]" in reason or "the transformers CLI" in reason:
        hint = "pip install -c constraints.txt -e '.[hf-serving]'"
    if hint is None or hint in reason:
        return reason
    return f"{reason} -- {hint}" + (f"; {setup}" if setup else "")


def _rewrite(report) -> None:
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        report.longrepr = (path, line, explain_skip(str(reason)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _rewrite(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _rewrite(outcome.get_result())
