"""Stdio and call-based grading without silent limits.

The four misgrades of the adversarial review, at the sizes it gave, each with the
wrong program graded wrong and the right one graded right:

- 150 cases and a program wrong only from n = 100 on (only the first 100 ran);
- an expected output over 64 kB (1..20000; stdout was a pipe cut at 64 kB);
- stdin over 4 MiB (700,000 numbers; stdin was cut at 4 MiB);
- APPS call-based records (``"fn_name": "add"``; they ran as stdio).
"""

from __future__ import annotations

import json

import pytest

from rlvr_boundary.verify.code import _same_output, code_spec, grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status

OPTS = SandboxOptions(timeout=10.0, cpu_seconds=10)
needs_sandbox = pytest.mark.skipif(not isolation_status(OPTS)["usable"],
                                   reason="no sandbox that holds here")

DOUBLE = "n = int(input())\nprint(2 * n)\n"
DOUBLE_WRONG_FROM_100 = "n = int(input())\nprint(2 * n if n < 100 else 2 * n + 1)\n"


def _cases_150() -> dict:
    return {"input_output": json.dumps({"inputs": [f"{n}\n" for n in range(150)],
                                        "outputs": [f"{2 * n}\n" for n in range(150)]})}


def test_every_case_is_kept():
    spec = code_spec(_cases_150())
    assert spec["kind"] == "stdio" and len(spec["cases"]) == 150
    assert spec["cases"][149] == ["149\n", "298\n"]


@pytest.mark.slow
@needs_sandbox
def test_a_program_wrong_only_from_case_100_on_is_graded_wrong():
    """150 cases run (about 250 sandboxed runs in all: a slow test)."""
    spec = code_spec(_cases_150())
    bad = grade_code(DOUBLE_WRONG_FROM_100, spec, OPTS)
    assert not bad["correct"] and bad["detail"] == "case 100: wrong output", bad
    good = grade_code(DOUBLE, spec, OPTS)
    assert good["correct"] and good["detail"] == "ok (150 cases)", good


@needs_sandbox
def test_a_program_wrong_only_on_the_last_case_is_graded_wrong():
    """Every case runs until one fails (the 150-case version is a slow test)."""
    spec = code_spec({"test_cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"}
                                     for n in range(95, 101)]})
    assert len(spec["cases"]) == 6
    bad = grade_code(DOUBLE_WRONG_FROM_100, spec, OPTS)
    assert not bad["correct"] and bad["detail"] == "case 5: wrong output"


@needs_sandbox
def test_an_expected_output_over_64_kb():
    want = "".join(f"{i}\n" for i in range(1, 20001))
    assert len(want.encode()) > 64 * 1024
    spec = code_spec({"test_cases": [{"input": "20000\n", "output": want}]})
    right = "n = int(input())\nprint('\\n'.join(map(str, range(1, n + 1))))\n"
    good = grade_code(right, spec, OPTS)
    assert good["correct"], good
    wrong = "n = int(input())\nprint('\\n'.join(map(str, range(1, n))))\n"  # one short
    assert not grade_code(wrong, spec, OPTS)["correct"]
    last = "n = int(input())\nprint('\\n'.join(map(str, range(1, n))), n + 1)\n"
    assert not grade_code(last, spec, OPTS)["correct"]


@needs_sandbox
def test_an_output_far_larger_than_expected_is_cut_and_wrong():
    spec = code_spec({"test_cases": [{"input": "", "output": "1\n"}]})
    flood = "import sys\nsys.stdout.write('1' + ' ' * (8 << 20))\n"
    r = grade_code(flood, spec, SandboxOptions(timeout=10.0, max_output=4096))
    assert not r["correct"] and r["detail"].startswith("case 0: output longer than"), r


@needs_sandbox
def test_stdin_over_4_mib():
    numbers = list(range(1, 700_001))
    stdin = " ".join(map(str, numbers)) + "\n"
    assert len(stdin.encode()) > 4 << 20
    spec = code_spec({"test_cases": [{"input": stdin, "output": f"{sum(numbers)}\n"}]})
    right = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
    assert grade_code(right, spec, OPTS)["correct"]
    wrong = "import sys\nprint(sum(map(int, sys.stdin.read().split()[:600000])))\n"
    assert not grade_code(wrong, spec, OPTS)["correct"]


APPS_ADD = {"input_output": json.dumps({"fn_name": "add", "inputs": [[1, 2], [5, 7], [-3, 3]],
                                        "outputs": [[3], [12], [0]]})}


def test_apps_call_based_records_are_calls():
    spec = code_spec(APPS_ADD)
    assert spec == {"kind": "call", "fn_name": "add",
                    "cases": [[[1, 2], [3]], [[5, 7], [12]], [[-3, 3], [0]]]}
    with pytest.raises(ValueError, match="identifier"):
        code_spec({"input_output": {"fn_name": "a b", "inputs": [[1]], "outputs": [[1]]}})
    with pytest.raises(ValueError, match="equal length"):
        code_spec({"input_output": {"fn_name": "f", "inputs": [[1]], "outputs": []}})


@needs_sandbox
@pytest.mark.parametrize("shape", ["function", "Solution"])
def test_apps_call_based_records_are_graded_as_calls(shape):
    right = ("def add(a, b):\n    return a + b\n" if shape == "function" else
             "class Solution:\n    def add(self, a, b):\n        return a + b\n")
    spec = code_spec(APPS_ADD)
    good = grade_code(right, spec, OPTS)
    assert good["correct"] and good["check_mode"] == "outside", good
    bad = grade_code(right.replace("a + b", "a - b"), spec, OPTS)
    assert not bad["correct"] and "case 0: wrong value" in bad["detail"], bad


@needs_sandbox
def test_apps_rules_tuples_as_lists_and_unwrapped_values():
    spec = code_spec({"input_output": {"fn_name": "pair", "inputs": [[1], [2]],
                                       "outputs": [[[1, 2]], [[2, 4]]]}})
    assert grade_code("def pair(x):\n    return (x, 2 * x)\n", spec, OPTS)["correct"]
    assert not grade_code("def pair(x):\n    return (x, 2 * x + 1)\n", spec, OPTS)["correct"]


@needs_sandbox
def test_apps_call_that_hangs_is_a_timeout():
    spec = code_spec(APPS_ADD)
    r = grade_code("def add(a, b):\n    while True:\n        pass\n", spec,
                   SandboxOptions(timeout=1.0))
    assert r["verify_status"] == "timeout" and not r["correct"], r


def test_token_comparison_matches_split():
    cases = [("1 2\n3", "1\n2 3\n"), ("", "  \n"), ("a", "a b"), ("a b", "a"), ("ab", "a b"),
             ("x\ty\r\nz", "x y z"), ("", ""), ("a\x1cb", "a b"), ("a\u2028b", "a b"),
             ("a\u00a0b", "a b"), ("a\x85b", "a b")]
    for got, want in cases:
        assert _same_output(got, want) == (got.split() == want.split()), (got, want)
