"""The check made outside the program: plain data, which tests split, and what they see.

Layers: the wire format (round trip of plain values, refusal of anything else, by
hypothesis); the static rule that decides ``outside`` or ``in-process`` on real
test shapes; and, in the sandbox, what tests observe through the stubs
(exceptions, changed arguments, opaque objects, keyword arguments, a program that
sends garbage) compared with running the same tests in-process.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.verify import _harness as h
from rlvr_boundary.verify.code import assert_spec, grade_code
from rlvr_boundary.verify.sandbox import SandboxOptions, isolation_status, run_split

OPTS = SandboxOptions(timeout=5.0, cpu_seconds=10)
needs_sandbox = pytest.mark.skipif(not isolation_status(OPTS)["usable"],
                                   reason="no sandbox that holds here")

# ----------------------------------------------------------------------------- wire format

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-2 ** 200,
                                                                   max_value=2 ** 200)
           | st.floats(allow_nan=False) | st.text() | st.binary()
           | st.complex_numbers(allow_nan=False) | st.fractions())
hashable = st.recursive(scalars, lambda c: st.tuples(c, c) | st.frozensets(c, max_size=3),
                        max_leaves=8)
values = st.recursive(
    scalars | hashable,
    lambda c: (st.lists(c, max_size=4) | st.tuples(c, c) | st.sets(hashable, max_size=3)
               | st.dictionaries(hashable, c, max_size=3)
               | st.binary().map(bytearray)),
    max_leaves=20)


def _wire(v, refs=None):
    """Encode (the program's side), send as JSON text, decode (the checker's side)."""
    text = json.dumps(h.encode(v, refs), allow_nan=False)
    return h.decode(json.loads(text), lambda tag, key, label: ("handle", key, label))


def _same(a, b) -> bool:
    """Equal with the same types all the way down (1 vs 1.0 vs True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@given(values)
@settings(max_examples=300, deadline=None)
def test_plain_values_cross_unchanged_with_their_types(v):
    assert _same(_wire(v, []), v)


def test_special_values():
    for v in (float("nan"), float("inf"), -0.0, 2 ** 5000, -(2 ** 70), range(1, 10, 3),
              Decimal("1.10"), Fraction(1, 3), "\udcff", b"\x00", complex(float("inf"), 1)):
        got = _wire(v, [])
        assert type(got) is type(v) and (repr(got) == repr(v)), v


class _Any:
    def __eq__(self, other):
        return True


class _Int(int):
    def __eq__(self, other):
        return True


def test_objects_with_their_own_equality_do_not_cross():
    refs: list = []
    handle = _wire(_Any(), refs)
    assert handle[0] == "handle" and handle[2].endswith("_Any") and refs and type(refs[0]) is _Any
    # A subclass of a plain type crosses as its base type: its __eq__ stays behind.
    got = _wire([_Int(5), {"k": _Int(2)}], [])
    assert got == [5, {"k": 2}] and type(got[0]) is int and got != [6, {"k": 2}]


def test_the_checker_side_refuses_to_send_objects():
    with pytest.raises(h.Unsplittable):
        h.encode(lambda: 1)
    with pytest.raises(h.Unsplittable):
        h.encode([1, _Any()])


@pytest.mark.parametrize("bad", [
    {"$eval": "1"}, {"$tuple": 1}, {"$int": 5}, {"$float": "1.5"}, {"a": 1, "b": 2},
    {"$dict": [[1]]}, {"$dict": [[[1], 2]]}, {"$complex": ["1", 2]}, {"$range": [1, 2.5, 1]},
    {"$ref": 0}, {"$bytes": "zz"}, {"$tuple": [1], "x": 1},
])
def test_the_decoder_builds_nothing_but_plain_values(bad):
    with pytest.raises((ValueError, TypeError)):
        h.decode(bad)


def test_the_decoder_refuses_deep_nesting_and_json_constants():
    deep = [0]
    for _ in range(500):
        deep = [deep]
    with pytest.raises(ValueError, match="deeply"):
        h.decode(deep)
    with pytest.raises(ValueError):
        json.loads("[NaN]", parse_constant=h._no_constant)


# ----------------------------------------------------------------------------- which tests split

@pytest.mark.parametrize("code, check, names, modules", [
    ("assert add(1, 2) == 3\nassert add(0, 0) == 0", "outside", ["add"], []),
    ("def check(candidate):\n    assert candidate(1) == 2\n\ncheck(f)", "outside", ["f"], []),
    ("assert math.isclose(area(2), 12.56, rel_tol=0.01)", "outside", ["area"], ["math"]),
    ("import math\nassert math.isclose(area(2), 12.56, rel_tol=0.01)", "outside", ["area"], []),
    ("assert set(sim((3, 4), (4, 5))) == set((4,))", "outside", ["sim"], []),
    ("assert Pair(5, 24).a == 5", "outside", ["Pair"], []),
    ("s = Solution()\nassert s.twoSum([2, 7], 9) == [0, 1]", "outside", ["Solution"], []),
    ("for x, y in [(1, 2)]:\n    assert f(x) == y\nassert [f(i) for i in range(2)] == [0, 2]",
     "outside", ["f"], []),
    ("assert callable(add)", "in-process", [], []),
    ("assert PI == 3.14", "in-process", [], []),
    ("assert isinstance(make(), Node)", "in-process", [], []),
    ("assert eval('add(1, 2)') == 3", "in-process", [], []),
    ("assert getattr(m, 'x') == 1", "in-process", [], []),
    ("from main import *\nassert add(1, 2) == 3", "in-process", [], []),
    ("assert add(1, 2) == 3 +", "in-process", [], []),
    ("x = add\nassert x(1, 2) == 3", "in-process", [], []),
    ("assert sum([1, 2]) == 3", "outside", [], []),  # a built-in name is never the program's
])
def test_which_tests_are_checked_outside(code, check, names, modules):
    spec = assert_spec(code)
    assert spec["check"] == check, spec
    if check == "outside":
        assert spec["names"] == names and spec["modules"] == modules


# ----------------------------------------------------------------------------- through the stubs

PROGRAM = '''
class Node:
    def __init__(self, v):
        self.v = v
        self.next = None
    def total(self):
        return self.v + (self.next.total() if self.next else 0)

def link(a, b):
    a.next = b
    return a

def sort_in_place(xs):
    xs.sort()

def safe_sqrt(x, *, strict=False):
    if x < 0:
        if strict:
            raise ValueError("negative")
        return None
    return x ** 0.5

def same(x):
    return x

class Weird(Exception):
    pass

def weird():
    raise Weird("w")
'''

TESTS = [
    # exceptions of the program are built-in types by name, others ProgramError
    "try:\n    safe_sqrt(-1, strict=True)\n    raise AssertionError('no raise')\n"
    "except ValueError as e:\n    assert str(e) == 'negative'\n",
    "assert safe_sqrt(-1) is None and safe_sqrt(4.0) == 2.0",
    "try:\n    weird()\nexcept ValueError:\n    raise AssertionError('wrong type')\n"
    "except Exception as e:\n    assert str(e).endswith('w')\n",
    # a list changed in place by the program is changed for the tests too
    "xs = [3, 1, 2]\nsort_in_place(xs)\nassert xs == [1, 2, 3]",
    # objects of the program: handles passed back, attributes and methods asked for
    "n = link(Node(1), Node(2))\nassert n.total() == 3 and n.v == 1 and n.next.v == 2",
    # a structure built by the tests from the program's class (MBPP's tree tasks)
    "root = Node(1)\nroot.next = Node(2)\nroot.next.next = Node(3)\nassert root.total() == 6",
    # plain values keep their types; nan is not equal to itself
    "assert same((1, [2.5, 'x'], {3: b'y'})) == (1, [2.5, 'x'], {3: b'y'})",
    "assert type(same((1,))) is tuple and type(same(True)) is bool and same(1.0) == 1",
    "v = same(float('nan'))\nassert v != v",
]


@needs_sandbox
@pytest.mark.parametrize("tests", TESTS)
def test_tests_see_through_the_stubs_what_they_see_in_process(tests):
    spec = assert_spec(tests)
    assert spec["check"] == "outside", spec
    outside = grade_code(PROGRAM, spec, OPTS)
    inside = grade_code(PROGRAM, {**spec, "check": "in-process"}, OPTS)
    assert outside["correct"] and outside["check_mode"] == "outside", outside
    assert inside["correct"] and inside["check_mode"] == "in-process", inside


@needs_sandbox
def test_opaque_objects_equal_only_themselves():
    spec = assert_spec("assert Node(1) == 1")
    assert spec["check"] == "outside"
    assert not grade_code(PROGRAM, spec, OPTS)["correct"]
    cheat = "class A:\n    def __eq__(self, o):\n        return True\ndef f():\n    return A()\n"
    r = grade_code(cheat, "assert f() == 1\nassert not (f() != 1)", OPTS)
    assert not r["correct"] and r["check_mode"] == "outside"


@needs_sandbox
def test_tests_that_pass_non_data_fall_back_to_in_process():
    code = "def apply(f, x):\n    return f(x)\n"
    r = grade_code(code, "assert apply(lambda v: v + 1, 1) == 2", OPTS)
    assert r["correct"] and r["check_mode"] == "in-process", r
    r = grade_code(code.replace("f(x)", "f(x) + 1"), "assert apply(lambda v: v + 1, 1) == 2",
                   OPTS)
    assert not r["correct"] and r["check_mode"] == "in-process", r


@needs_sandbox
@pytest.mark.parametrize("garbage", [
    b"not json\n",
    b'{"ok": {"$eval": 1}, "mut": []}\n',
    b"[" * 100000 + b"\n",
    b'{"ok": ' + b"9" * 5000 + b', "mut": []}\n',
    b'{"ready": true}\n{"ok": 5, "mut": []}\n{"ok": 6, "mut": []}\n',
])
def test_a_program_that_answers_garbage_is_graded_wrong(garbage):
    # The program writes to every pipe it may write (its answer pipe among them) before
    # it has been asked anything; the answers are data at worst, never a verdict.
    prog = ("import fcntl, os, sys\nn = 0\nfor x in os.listdir('/proc/self/fd'):\n"
            "    fd = int(x)\n    try:\n"
            "        if fd > 2 and os.readlink(f'/proc/self/fd/{x}').startswith('pipe:') and "
            "fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:\n"
            "            os.set_blocking(fd, False)\n            n += 1\n"
            f"            os.write(fd, {garbage!r})\n"
            "    except OSError:\n        pass\nprint('wrote', n, file=sys.stderr)\n"
            "def add(a, b):\n    return a - b\n")
    cand, chk = run_split(prog, OPTS, tests="assert add(1, 2) == 3\nassert add(2, 2) == 4",
                          names=["add"])
    assert "wrote 2" in cand.stderr, cand  # its token pipe and its answer pipe
    assert chk.status == "failed" and not chk.completed, chk


@needs_sandbox
def test_a_program_that_fails_to_load_or_exits_is_graded_wrong():
    for prog in ("def add(a, b):\n    return a + b\nraise SystemExit(0)\n",
                 "def add(a, b):\n    import os\n    os._exit(0)\n",
                 "def add(a, b):\n    raise SystemExit(0)\n",
                 "def add(a, b)\n    return a + b\n"):
        r = grade_code(prog, "assert add(1, 2) == 3", OPTS)
        assert not r["correct"] and r["check_mode"] == "outside", (prog, r)
