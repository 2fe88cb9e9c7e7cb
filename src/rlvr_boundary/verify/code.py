"""Grade a code completion against its tests, in the sandbox only.

The completion is model output: it is never imported or ``exec``'d here. This
module finds the program in the completion, reads the test specification of a
gold record, decides where each check is made, and hands the runs to
:mod:`rlvr_boundary.verify.sandbox`.

**Finding the program** (:func:`extract_code`): text after a closing
``</think>`` if there is one; then the last fenced block in Python (```python,
```py, ```python3 or a bare ```); then the last fenced block of any language;
then the whole text. This is the convention of the code evaluators of
LiveCodeBench and evalplus (the answer is the last code block), written anew.

**Test formats** (one gold record per prompt, :func:`code_spec`):

- ``assert``: Python statements run after the program (MBPP ``test_list``, with
  its ``test_imports`` and ``test_setup_code`` before them; plain ``tests``
  strings). With an ``entry_point`` field (HumanEval), the tests define
  ``check(candidate)`` and we append ``check(<entry_point>)``.
- ``call``: APPS call-based records (``input_output`` with ``fn_name``): each
  case's ``inputs`` are the arguments of ``fn_name`` (a global function of the
  program, else a method of ``Solution()``), and the value must equal the
  expected ``outputs`` entry (tuples read as lists; a one-element expected list
  also accepts its element).
- ``stdio``: a list of ``{"input": ..., "output": ...}`` cases, or the APPS form
  ``{"inputs": [...], "outputs": [...]}``; the program is run once per case
  with the input on stdin, and its stdout must equal the expected output
  token by token (whitespace-separated; the usual judge rule). Every case runs
  until the first that fails; there is no cap on their number or size (input
  and output go through files of the grader, not pipes).

**Where the verdict is made** (``check_mode`` of each result):

- ``outside``: the program's process never holds the verdict. Assert tests
  whose program names are only called (``f(...)``, ``f.attr``, or passed to a
  function of the tests, as HumanEval's ``check(f)``) and APPS call-based
  records run in a second sandbox that calls the program's functions through a
  pipe of plain data (:func:`rlvr_boundary.verify.sandbox.run_split`); stdio
  output is compared here.
- ``in-process``: tests that use a program name in another way (a constant, a
  class in ``isinstance``, ``eval``), tests that pass the program objects that
  are not data, and every assert record on a SandboxFusion server run in the
  program's own interpreter, which a program written against the harness can
  subvert. The verify summary counts them.

A completion is correct when every run passes: for ``assert``/``call`` the
checker (or, in-process, the harness) must report that the last test returned
(an exit status of 0 alone is not a pass); for ``stdio`` the program must end
normally (a ``SystemExit(0)`` included) and its output, compared here outside
the sandbox, must match. Status: ``timeout`` when a run hit its wall-clock
deadline, ``no_answer`` for an empty program, ``error`` when the sandbox itself
could not start, else ``ok`` (a crash, a failing assert or a memory-starved run
is a graded, incorrect answer).
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys

from rlvr_boundary.verify.sandbox import SandboxOptions, run_python, run_split

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)```", re.S)
PYTHON_TAGS = ("python", "py", "python3", "")
#: Gold fields read as stdio cases / as assert tests / as the HumanEval entry point.
STDIO_FIELDS = ("stdio", "test_cases", "input_output")
ASSERT_FIELDS = ("tests", "test", "test_code", "test_list")
ENTRY_FIELDS = ("entry_point",)
#: MBPP fields placed before the tests.
SETUP_FIELDS = ("test_imports", "test_setup_code")
#: Names whose use makes a test look names up at run time: such tests run in-process.
_DYNAMIC = {"eval", "exec", "globals", "locals", "vars", "__import__", "compile", "getattr",
            "setattr", "hasattr", "delattr", "dir"}
#: Bytes of stdout kept beyond twice the expected output (whitespace may differ).
STDOUT_SLACK = 1 << 20


def extract_code(text: str) -> str:
    """The program in a completion (see the module docstring for the order)."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    blocks = _FENCE.findall(text)
    if not blocks:
        return text
    py = [body for tag, body in blocks if tag.lower() in PYTHON_TAGS]
    return (py or [body for _, body in blocks])[-1]


def code_spec(rec: dict, field: str | None = None) -> dict:
    """The test specification of one gold record (JSON-serialisable).

    Parameters
    ----------
    rec
        A gold record (JSONL object or CSV row).
    field
        The field holding the tests; default: the first of
        ``stdio``/``test_cases``/``input_output``, then
        ``tests``/``test``/``test_code``/``test_list``.

    Returns
    -------
    dict
        ``{"kind": "assert", "code": str, "check": "outside" | "in-process",
        "names": [...], "modules": [...]}`` (see :func:`assert_spec`),
        ``{"kind": "call", "fn_name": str, "cases": [[args, expected], ...]}`` or
        ``{"kind": "stdio", "cases": [[in, out], ...]}`` (every case of the record).

    Raises
    ------
    ValueError
        When no usable test field is found (the message says what was tried).
    """
    names = (field,) if field else (*STDIO_FIELDS, *ASSERT_FIELDS)
    key = next((k for k in names if rec.get(k) not in (None, "", [])), None)
    if key is None:
        raise ValueError(f"no test field (tried {list(names)}; set --gold-field)")
    value = rec[key]
    if isinstance(value, str) and key in STDIO_FIELDS:
        try:
            value = json.loads(value)  # APPS stores input_output as a JSON string
        except json.JSONDecodeError:
            raise ValueError(f"field '{key}' is not JSON") from None
    if isinstance(value, dict) and value.get("fn_name") not in (None, ""):
        return _call_spec(value, key)
    cases = _stdio_cases(value)
    if cases is not None:
        if not cases:
            raise ValueError(f"field '{key}' has no test cases")
        return {"kind": "stdio", "cases": cases}
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        value = "\n".join(value)
    if not isinstance(value, str):
        raise ValueError(f"field '{key}' must be test code (a string or a list of strings) "
                         "or stdio cases")
    setup = []
    for k in SETUP_FIELDS:
        extra = rec.get(k)
        if isinstance(extra, list) and all(isinstance(x, str) for x in extra):
            extra = "\n".join(extra)
        if extra not in (None, ""):
            if not isinstance(extra, str):
                raise ValueError(f"field '{k}' must be code (a string or a list of strings)")
            setup.append(extra)
    value = "\n".join([*setup, value])
    entry = next((rec[k] for k in ENTRY_FIELDS if isinstance(rec.get(k), str) and rec[k]), None)
    if entry is not None:
        if not entry.isidentifier():
            raise ValueError(f"entry_point {entry!r} is not a Python identifier")
        value += f"\n\ncheck({entry})\n"
    return assert_spec(value)


def assert_spec(code: str) -> dict:
    """The specification of assert tests, and whether they can be checked outside.

    Parameters
    ----------
    code
        Test statements (with HumanEval's ``check(<entry point>)`` appended).

    Returns
    -------
    dict
        ``kind`` ``"assert"``, ``code``, ``check`` (``"outside"`` or
        ``"in-process"``), ``names`` (the program's names the tests use: bound to
        stubs in the checker) and ``modules`` (standard-library modules the tests
        use without importing them).

    Notes
    -----
    The free names of the tests (read, never bound in the tests, not built-ins)
    are the program's. The tests are checked outside when each use of such a
    name is a call (``f(...)``), an attribute (``f.x``) or an argument of a
    function the tests define (HumanEval's ``check(f)``), and no test looks names
    up at run time (``eval``, ``globals``, ``getattr``, ...). A test that cannot be
    parsed runs in-process, where it fails as it would anyway. Built-in names are
    never the program's: a program that redefines ``sum`` is checked against the
    built-in ``sum`` (in-process, tests would see the program's).
    """
    out = {"kind": "assert", "code": code, "check": "in-process", "names": [], "modules": []}
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    parent: dict = {}
    bound: set[str] = set()
    defined: set[str] = set()
    loads: list[ast.Name] = []
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else []).append(node)
            if not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                defined.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                return out  # names appear from nowhere
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    if any(n.id in _DYNAMIC for n in loads):
        return out
    free = {n.id for n in loads} - bound - set(dir(builtins))
    modules = sorted(m for m in free if m in sys.stdlib_module_names)
    names = sorted(free - set(modules))
    for n in loads:
        if n.id not in names:
            continue
        up = parent.get(n)
        called = isinstance(up, ast.Call) and up.func is n
        attribute = isinstance(up, ast.Attribute) and up.value is n
        handed = (isinstance(up, ast.Call) and n in up.args and isinstance(up.func, ast.Name)
                  and up.func.id in defined)
        if not (called or attribute or handed):
            return out
    return {**out, "check": "outside", "names": names, "modules": modules}


def _call_spec(value: dict, key: str) -> dict:
    fn = value["fn_name"]
    if not isinstance(fn, str) or not fn.isidentifier():
        raise ValueError(f"field '{key}': fn_name {fn!r} is not a Python identifier")
    ins, outs = value.get("inputs"), value.get("outputs")
    if not isinstance(ins, list) or not isinstance(outs, list) or len(ins) != len(outs):
        raise ValueError(f"field '{key}': 'inputs' and 'outputs' must be lists of equal length")
    if not ins:
        raise ValueError(f"field '{key}' has no test cases")
    return {"kind": "call", "fn_name": fn, "cases": [[i, o] for i, o in zip(ins, outs)]}


def _stdio_cases(value) -> list[list[str]] | None:
    if isinstance(value, dict) and "inputs" in value and "outputs" in value:
        ins, outs = value["inputs"], value["outputs"]
        if isinstance(ins, list) and isinstance(outs, list) and len(ins) == len(outs):
            return [[_as_io(i), _as_io(o)] for i, o in zip(ins, outs)]
        raise ValueError("'inputs' and 'outputs' must be lists of equal length")
    if isinstance(value, list) and value and all(isinstance(c, dict) for c in value):
        if all("input" in c and "output" in c for c in value):
            return [[_as_io(c["input"]), _as_io(c["output"])] for c in value]
        raise ValueError("every stdio case needs 'input' and 'output'")
    return None


def _as_io(x) -> str:
    if isinstance(x, list):
        return "\n".join(map(str, x))
    return str(x)


def _same_output(got: str, want: str) -> bool:
    """Token-by-token equality (whitespace-separated), without building token lists."""
    tok = re.compile(r"\S+")
    a, b = tok.finditer(got), tok.finditer(want)
    for x in a:
        y = next(b, None)
        if y is None or x.group() != y.group():
            return False
    return next(b, None) is None


def grade_code(completion: str, spec: dict | str, opts: SandboxOptions | None = None) -> dict:
    """Run the program of ``completion`` against ``spec`` in the sandbox.

    Parameters
    ----------
    completion
        The model's completion (prose and fenced code allowed).
    spec
        From :func:`code_spec`, or a string of assert tests.
    opts
        Sandbox limits; ``timeout`` applies to each run (to each call of a
        call-based record).

    Returns
    -------
    dict
        ``answer`` (None), ``correct``, ``verify_status``, ``detail`` (the
        sandbox status and the tail of stderr), ``isolation`` and
        ``check_mode`` (``outside`` or ``in-process``; see the module docstring).
    """
    opts = opts or SandboxOptions()
    if isinstance(spec, str):
        spec = assert_spec(spec)
    elif spec["kind"] == "assert" and "check" not in spec:  # {"kind", "code"} by hand
        spec = assert_spec(spec["code"])
    program = extract_code(completion or "")
    if spec["kind"] == "stdio":
        mode = "outside"
    elif opts.fusion_url:
        mode = "in-process"  # one program per request: no second sandbox to check from
    else:
        mode = spec.get("check", "outside")
    if not program.strip():
        return _out(False, "no_answer", "no program in the completion", None, mode)
    if spec["kind"] == "stdio":
        return _grade_stdio(program, spec["cases"], opts)
    if mode == "outside":
        if spec["kind"] == "call":
            cases = spec["cases"]
            cand, chk = run_split(program, opts, apps={"fn_name": spec["fn_name"],
                                                       "cases": cases},
                                  timeout=opts.timeout * (len(cases) + 1))
        else:
            cand, chk = run_split(program, opts, tests=spec["code"], names=spec["names"],
                                  modules=spec["modules"])
        if not chk.marker.startswith("unsplittable"):
            return _from_split(cand, chk)
    tests = spec["code"] if spec["kind"] == "assert" else _call_tests(spec)
    res = run_python(program, opts, tests=tests)
    return _from_run(res, res.status == "ok" and res.completed, mode="in-process")


def _grade_stdio(program: str, cases: list, opts: SandboxOptions) -> dict:
    res = None
    for k, (stdin, want) in enumerate(cases):
        limit = max(opts.max_output, 2 * len(want.encode("utf-8")) + STDOUT_SLACK)
        res = run_python(program, opts, stdin=stdin, stdout_limit=limit)
        passed = (res.status == "ok" and res.completed and not res.output_cut
                  and _same_output(res.stdout, want))
        if not passed:
            if res.status != "ok":
                detail = None
            elif res.output_cut:
                detail = f"case {k}: output longer than {limit} bytes"
            else:
                detail = f"case {k}: wrong output"
            return _from_run(res, False, detail, mode="outside")
    return _out(True, "ok", f"ok ({len(cases)} cases)", res.isolation, "outside")


def _from_split(cand, chk) -> dict:
    """The verdict of a check made outside the program: the checker's run decides."""
    correct = chk.status == "ok" and chk.completed
    runs = (cand, chk)
    if any(r.status == "timeout" for r in runs) and not correct:
        status = "timeout"
    elif any(r.status == "error" for r in runs) and not correct:
        status = "error"
    else:
        status = "ok"
    if correct:
        detail = "ok"
    else:
        detail = f"{chk.status}: {chk.stderr[-400:]}"
        if cand.stderr.strip():
            detail += f" | program ({cand.status}): {cand.stderr[-300:]}"
    return _out(correct, status, detail, chk.isolation, "outside")


def _call_tests(spec: dict) -> str:
    """In-process test code for a call-based record (a SandboxFusion server)."""
    cases = json.dumps(spec["cases"])
    fn = spec["fn_name"]
    return (f"import json as _json\n_cases = _json.loads({cases!r})\n"
            f"_f = globals().get({fn!r}) or getattr(Solution(), {fn!r})\n"
            "def _lists(v):\n"
            "    if type(v) in (list, tuple):\n        return [_lists(x) for x in v]\n"
            "    if type(v) is dict:\n        return {k: _lists(x) for k, x in v.items()}\n"
            "    return v\n"
            "for _k, (_a, _w) in enumerate(_cases):\n"
            "    _g = _lists(_f(*_a) if type(_a) is list else _f(_a))\n"
            "    assert _g == _w or (type(_w) is list and len(_w) == 1 and _g == _w[0]), "
            "f'case {_k}: wrong value'\n")


def _from_run(res, correct: bool, detail: str | None = None, *, mode: str) -> dict:
    status = {"timeout": "timeout", "error": "error"}.get(res.status, "ok")
    if detail is None:
        detail = "ok" if correct else f"{res.status}: {res.stderr[-500:]}"
    return _out(correct, status, detail, res.isolation, mode)


def _out(correct, status, detail, isolation, mode) -> dict:
    return {"answer": None, "correct": bool(correct), "verify_status": status,
            "detail": detail, "isolation": isolation, "check_mode": mode}
