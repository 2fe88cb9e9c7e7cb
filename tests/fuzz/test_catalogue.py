"""The catalogue of hostile command lines (tests/fuzz/catalogue.py), light cases in-process.

Each case is built in a fresh folder and run through ``main``; it must give the
outcome the catalogue states (success, a clear error, or a refused output) with no
traceback and no change to anything that was there before. Heavy cases (2 GB inputs,
runs of minutes, cases that need a time limit or a cgroup) run in the benchmark runner
``benchmarks/fuzz_catalogue.py`` and in the slow test below. Cases that wait for a fix
elsewhere are expected failures naming it.
"""

from __future__ import annotations

import pytest

from tests.fuzz.catalogue import CASES
from tests.fuzz.catalogue_run import run_case, verdict


def _param(case):
    marks = []
    if case.waits_for:
        marks.append(pytest.mark.xfail(reason=f"waits for {case.waits_for}", strict=False))
    return pytest.param(case, id=case.id, marks=marks)


LIGHT = [_param(c) for c in CASES if not c.heavy]
HEAVY = [_param(c) for c in CASES if c.heavy]


@pytest.mark.parametrize("case", LIGHT)
def test_case(case, tmp_path):
    o = run_case(case, tmp_path, subprocess_mode=False)
    if o.skipped:
        pytest.skip(o.skipped)
    problems = verdict(case, o)
    assert not problems, f"{case.id}: {' '.join(case.argv)}\n" + "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("case", HEAVY)
def test_heavy_case_in_a_subprocess(case, tmp_path):
    o = run_case(case, tmp_path, subprocess_mode=True, cache=tmp_path)
    if o.skipped:
        pytest.skip(o.skipped)
    problems = verdict(case, o)
    assert not problems, f"{case.id}: {' '.join(case.argv)}\n" + "\n".join(problems)
    assert o.peak_mb is None or o.peak_mb < 1024, f"{case.id}: peak {o.peak_mb:.0f} MB"


def test_catalogue_covers_every_verb():
    from rlvr_boundary.cli import _command_modules

    verbs = {c.verb for c in CASES}
    assert {m.replace("_", "-") for m in _command_modules()} <= verbs
    assert len(CASES) >= 288
