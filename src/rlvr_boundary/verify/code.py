"""Grade a code completion against its tests, in the sandbox only.

The completion is model output: it is never imported or ``exec``'d here. This
module finds the program in the completion, builds the test program, and hands
it to :func:`rlvr_boundary.verify.sandbox.run_python`.

**Finding the program** (:func:`extract_code`): text after a closing
``</think>`` if there is one; then the last fenced block in Python (```python,
```py, ```python3 or a bare ```); then the last fenced block of any language;
then the whole text. This is the convention of the code evaluators of
LiveCodeBench and evalplus (the answer is the last code block), written anew.

**Test formats** (one gold record per prompt, :func:`code_spec`):

- ``assert``: Python statements run after the program (MBPP ``test_list``,
  joined with newlines; plain ``tests`` strings). With an ``entry_point`` field
  (HumanEval), the tests define ``check(candidate)`` and we append
  ``check(<entry_point>)``.
- ``stdio``: a list of ``{"input": ..., "output": ...}`` cases, or the APPS form
  ``{"inputs": [...], "outputs": [...]}``; the program is run once per case
  with the input on stdin, and its stdout must equal the expected output
  token by token (whitespace-separated; the usual judge rule). Runs stop at the
  first failing case.

A completion is correct when every run passes: for ``assert`` tests the
sandbox harness must report that the last test statement returned (an exit
status of 0 alone is not a pass: a program that calls ``sys.exit(0)`` or
``os._exit(0)`` before the tests fail is incorrect); for ``stdio`` the program
must end normally (a ``SystemExit(0)`` included) and its output, compared here
outside the sandbox, must match. Status: ``timeout`` when a run hit its
wall-clock deadline, ``no_answer`` for an empty program, ``error`` when the
sandbox itself could not start, else ``ok`` (a crash, a failing assert or a
memory-starved run is a graded, incorrect answer).
"""

from __future__ import annotations

import json
import re

from rlvr_boundary.verify.sandbox import SandboxOptions, run_python

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)```", re.S)
PYTHON_TAGS = ("python", "py", "python3", "")
#: Gold fields read as stdio cases / as assert tests / as the HumanEval entry point.
STDIO_FIELDS = ("stdio", "test_cases", "input_output")
ASSERT_FIELDS = ("tests", "test", "test_code", "test_list")
ENTRY_FIELDS = ("entry_point",)
MAX_CASES = 100


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
        ``{"kind": "assert", "code": str}`` or ``{"kind": "stdio", "cases": [[in, out], ...]}``.

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
    cases = _stdio_cases(value)
    if cases is not None:
        if not cases:
            raise ValueError(f"field '{key}' has no test cases")
        return {"kind": "stdio", "cases": cases[:MAX_CASES]}
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        value = "\n".join(value)
    if not isinstance(value, str):
        raise ValueError(f"field '{key}' must be test code (a string or a list of strings) "
                         "or stdio cases")
    entry = next((rec[k] for k in ENTRY_FIELDS if isinstance(rec.get(k), str) and rec[k]), None)
    if entry is not None:
        if not entry.isidentifier():
            raise ValueError(f"entry_point {entry!r} is not a Python identifier")
        value += f"\n\ncheck({entry})\n"
    return {"kind": "assert", "code": value}


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
    return got.split() == want.split()


def grade_code(completion: str, spec: dict | str, opts: SandboxOptions | None = None) -> dict:
    """Run the program of ``completion`` against ``spec`` in the sandbox.

    Parameters
    ----------
    completion
        The model's completion (prose and fenced code allowed).
    spec
        From :func:`code_spec`, or a string of assert tests.
    opts
        Sandbox limits; ``timeout`` applies to each run.

    Returns
    -------
    dict
        ``answer`` (None), ``correct``, ``verify_status``, ``detail`` (the
        sandbox status and the tail of stderr), ``isolation``.
    """
    opts = opts or SandboxOptions()
    if isinstance(spec, str):
        spec = {"kind": "assert", "code": spec}
    program = extract_code(completion or "")
    if not program.strip():
        return _out(False, "no_answer", "no program in the completion", None)
    if spec["kind"] == "assert":
        res = run_python(program, opts, tests=spec["code"])
        return _from_run(res, res.status == "ok" and res.completed)
    for k, (stdin, want) in enumerate(spec["cases"]):
        res = run_python(program, opts, stdin=stdin)
        passed = res.status == "ok" and res.completed and _same_output(res.stdout, want)
        if not passed:
            detail = None if res.status != "ok" else f"case {k}: wrong output"
            return _from_run(res, False, detail)
    return _out(True, "ok", f"ok ({len(spec['cases'])} cases)", res.isolation)


def _from_run(res, correct: bool, detail: str | None = None) -> dict:
    status = {"timeout": "timeout", "error": "error"}.get(res.status, "ok")
    if detail is None:
        detail = "ok" if correct else f"{res.status}: {res.stderr[-500:]}"
    return _out(correct, status, detail, res.isolation)


def _out(correct, status, detail, isolation) -> dict:
    return {"answer": None, "correct": bool(correct), "verify_status": status,
            "detail": detail, "isolation": isolation}
