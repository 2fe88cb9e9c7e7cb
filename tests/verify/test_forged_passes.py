"""Forged passes: wrong code that an in-process test runner grades correct.

Five attacks, each against an MBPP-style assert list and a HumanEval
``check(candidate)``: the wrong program must be graded wrong and the right
program (with the same trick where it does not change the answer) graded right.

1. ``os._exit = lambda *a: None``: the harness's own exit on a failed test is disarmed;
2. a return value whose ``__eq__`` is always True;
3. ``builtins.abs = lambda v: 0`` under tests that compare with ``abs``;
4. the harness's token read from its frame (``sys._getframe(1).f_locals``);
5. the tests' source parsed into a lookup table of answers.

Both forms are checked outside the candidate (the tests run in a second sandbox that
calls the program's functions through a pipe of plain data); the in-process form
(tests that use a program's name other than by calling it) keeps the hardening that
can be had in one process, and says that it is in-process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_boundary.verify.code import code_spec, grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status

OPTS = SandboxOptions(timeout=5.0, cpu_seconds=10)
pytestmark = pytest.mark.skipif(not isolation_status(OPTS)["usable"],
                                reason="no sandbox that holds here")

RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"

MBPP = {"prompt_id": "add", "tests": ["assert add(1, 2) == 3", "assert add(5, 7) == 12"]}
MBPP_ABS = {"prompt_id": "add", "tests": ["assert abs(add(0.5, 0.25) - 0.75) < 1e-9",
                                          "assert abs(add(2.0, 3.0) - 5.0) < 1e-9"]}
HUMANEVAL = {"prompt_id": "add", "entry_point": "add",
             "test": "METADATA = {}\n\n\ndef check(candidate):\n"
                     "    assert candidate(1, 2) == 3\n    assert candidate(5, 7) == 12\n"}
HUMANEVAL_ABS = {"prompt_id": "add", "entry_point": "add",
                 "test": "def check(candidate):\n"
                         "    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n"
                         "    assert abs(candidate(2.0, 3.0) - 5.0) < 1e-9\n"}
#: Tests that use the program's name as a value: these run in the candidate's process.
IN_PROCESS = {"prompt_id": "add", "tests": ["assert callable(add)", "assert add(1, 2) == 3",
                                            "assert add(5, 7) == 12"]}
IN_PROCESS_ABS = {"prompt_id": "add", "tests": ["assert callable(add)",
                                                "assert abs(add(0.5, 0.25) - 0.75) < 1e-9"]}

EXIT_TRICK = "import os\nos._exit = lambda *a: None\n"
ABS_TRICK = "import builtins\nbuiltins.abs = lambda v: 0\n"
EQ_TRICK = ("class _Any:\n    def __eq__(self, other):\n        return True\n"
            "    def __ne__(self, other):\n        return False\n    __hash__ = None\n"
            "def add(a, b):\n    return _Any()\n")
# Walk every frame above the program for the harness's token and write it where the
# harness would, then leave before the tests run.
FRAME_TRICK = """import os, sys
try:
    f = sys._getframe(1)
    while f is not None:
        loc = f.f_locals
        if 'token' in loc and 'result_dst' in loc:
            os.write(int(loc['result_dst']), loc['token'])
            os._exit(0)
        f = f.f_back
except Exception:
    pass
"""
# Parse the tests into a table (arguments -> expected value) and answer from it.
TABLE_TRICK = """import ast
_table = {}
try:
    src = open('/sandbox/src/tests.py').read()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            key = tuple(ast.literal_eval(a) for a in node.left.args)
            _table[key] = ast.literal_eval(node.comparators[0])
except Exception:
    pass
_real = add
def add(a, b):
    return _table.get((a, b), _real(a, b))
"""

#: attack -> (wrong completion, right completion, the gold records it is tried on)
ATTACKS = {
    "os._exit disarmed": (WRONG + EXIT_TRICK, RIGHT + EXIT_TRICK, (MBPP, HUMANEVAL)),
    "__eq__ always True": (EQ_TRICK, RIGHT, (MBPP, HUMANEVAL)),
    "builtins.abs replaced": (WRONG + ABS_TRICK, RIGHT + ABS_TRICK, (MBPP_ABS, HUMANEVAL_ABS)),
    "token from the harness frame": (WRONG + FRAME_TRICK, RIGHT + FRAME_TRICK,
                                     (MBPP, HUMANEVAL)),
    "tests parsed into a table": (WRONG + TABLE_TRICK, RIGHT + TABLE_TRICK, (MBPP, HUMANEVAL)),
}


@pytest.mark.parametrize("form", ["mbpp", "humaneval"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_forged_pass_is_graded_wrong_and_the_right_program_right(attack, form):
    wrong, right, golds = ATTACKS[attack]
    spec = code_spec(golds[form == "humaneval"])
    bad = grade_code(wrong, spec, OPTS)
    assert not bad["correct"], bad
    assert bad["verify_status"] == "ok" and bad["check_mode"] == "outside", bad
    good = grade_code(right, spec, OPTS)
    assert good["correct"], good
    assert good["check_mode"] == "outside"


@pytest.mark.parametrize("attack", ["os._exit disarmed", "builtins.abs replaced",
                                    "token from the harness frame", "tests parsed into a table"])
def test_in_process_grading_is_hardened_against_the_cheap_attacks(attack):
    wrong, right, golds = ATTACKS[attack]
    spec = code_spec(IN_PROCESS_ABS if "abs" in attack else IN_PROCESS)
    assert spec["check"] == "in-process"
    bad = grade_code(wrong, spec, OPTS)
    assert not bad["correct"] and bad["check_mode"] == "in-process", bad
    good = grade_code(right, spec, OPTS)
    assert good["correct"] and good["check_mode"] == "in-process", good


def test_the_command_line_grades_the_reproduction_of_the_report_wrong(tmp_path):
    """The report's reproduction, end to end, and the count of in-process records."""
    rows = [{"prompt_id": "add", "model": "m", "sample_idx": i, "text": t}
            for i, t in enumerate([WRONG + EXIT_TRICK, RIGHT, WRONG + FRAME_TRICK,
                                   WRONG + TABLE_TRICK, EQ_TRICK])]
    rows.append({"prompt_id": "inproc", "model": "m", "sample_idx": 0, "text": RIGHT})
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "g.jsonl").write_text(json.dumps(MBPP) + "\n"
                                      + json.dumps({**IN_PROCESS, "prompt_id": "inproc"}) + "\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    r = subprocess.run([sys.executable, "-m", "rlvr_boundary.cli", "verify",
                        str(tmp_path / "r.jsonl"), "--task", "code", "--gold",
                        str(tmp_path / "g.jsonl"), "--out", str(tmp_path / "o.jsonl"),
                        "--timeout", "10", "--json", str(tmp_path / "res.json")],
                       capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": src})
    assert r.returncode == 0, r.stderr
    out = {(d["prompt_id"], d["sample_idx"]): d for d in
           map(json.loads, (tmp_path / "o.jsonl").read_text().splitlines())}
    assert [out["add", i]["correct"] for i in range(5)] == [False, True, False, False, False]
    assert {out["add", i]["check_mode"] for i in range(5)} == {"outside"}
    assert out["inproc", 0]["correct"] and out["inproc", 0]["check_mode"] == "in-process"
    summary = json.loads((tmp_path / "res.json").read_text())
    summary = summary.get("result", summary)
    assert summary["check_modes"] == {"outside": 5, "in-process": 1}
    # and the console says where the verdicts were made, in words
    assert ("where the verdicts were made: 1 inside the program's process (its tests need "
            "its objects), 5 outside the program's process") in " ".join(r.stdout.split())
