"""Grade a math completion against its gold answer, with one or several backends.

Extraction (:mod:`.extract`) finds the final answer; equivalence is decided by
a *backend*:

- ``math-verify`` (the default; a dependency, pinned to 0.9.0), with the gold
  answer parsed first, as its documentation requires (``verify(gold, answer)``
  is not symmetric);
- ``canonical``, an explicit choice: canonical forms compared exactly
  (:mod:`.canonical`: exact rational and surd arithmetic, never sympy). It
  may miss an equivalence but never accepts two different values.

``MathOptions.also`` grades the same extracted answer with further backends in
the same pass (scorer sensitivity); their verdicts come back under ``also``.
The ``answer`` (the canonical string of the extracted answer) is the same
whichever backend grades. One item never raises: every failure becomes a
``verify_status``:

- ``ok``: graded (``correct`` says how);
- ``no_answer``: nothing could be extracted;
- ``parse_fail``: the answer (or the gold) could not be parsed;
- ``timeout``: math-verify's own per-call timeout fired, or the worker pool
  killed the item at its hard deadline (:mod:`.pool`);
- ``error``: anything else (kept with its message in ``detail``).

Anything but ``ok`` counts as incorrect.

Where we deviate from calling ``math_verify.verify(parse(gold), parse(text))``
on the whole completion, and why:

- we extract the answer ourselves (the last box, configurable fallbacks) and
  hand math-verify only ``\\boxed{answer}``: the whole completion would let
  math-verify pick up an intermediate expression when there is no box, and the
  extracted string is what the ``answer`` column and maj@k need anyway;
- a currency ``\\$``, ``\\!`` and thin-space thousands separators are removed
  first, and the spaces of ``11,\\! 111,\\! 100`` (math-verify 0.9.0 cannot
  parse ``\\boxed{\\$18.90}``, three MATH500
  gold answers are written so, nor reads ``10\\,000`` as ten thousand);
- math-verify swallows its own timeouts (it logs a warning and answers
  ``False``); we listen to its logger and report ``timeout`` instead of a
  silent "incorrect";
- a rejection by math-verify is overturned when the canonical rules accept
  (they never accept a different value: ``12.5`` for ``12.5\\%``, which
  math-verify 0.9.0 rejects while it accepts ``25`` for ``25\\%``);
- an accept by math-verify is re-checked against three false accepts reported
  against it (Math-Verify issues 14 and 60 on GitHub) and rejected when
  ``MathOptions.guards`` is on: two numeric values that exact arithmetic tells
  apart (``\\frac{1}{2004!}`` vs ``\\frac{1}{2006!}``, ``2^{-99}`` vs
  ``2^{-98}``: math-verify compares floats); numbers in different bases
  (``204_5`` vs ``204_6``: it drops the subscript); an equation against a bare
  value whose left side is not a single variable (``x+y=5`` vs ``5``, ``5`` vs
  ``2x=5``: it compares one side only).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

from rlvr_boundary.verify.canonical import (
    answers_match,
    canonical_answer,
    exact_value,
    rounded_match,
)
from rlvr_boundary.verify.extract import ExtractOptions, extract_answer
from rlvr_boundary.verify.registry import MATH_BACKENDS

#: The math-verify version our dependency pins and the tests were run with.
MATH_VERIFY_VERSION = "0.9.0"
#: The math scorers, named in :data:`rlvr_boundary.verify.registry.MATH_BACKENDS`.
BACKENDS = MATH_BACKENDS

#: What each backend is known to get wrong (recorded in the manifest and summary;
#: every line is a test in tests/verify/test_math_grading.py).
KNOWN_LIMITS = {
    "math-verify": [
        "numbers are compared as floats rounded to float_rounding places; exact "
        "re-check only when both sides are plain numeric expressions (guards)",
        "accepts 15 and 0.15 alike for a gold 15%",
        "without guards: drops base subscripts (204_5 = 204_6) and compares an equation "
        "with a bare value on one side only (x+y=5 = 5)",
        "a base-n answer written without its subscript (204 for 204_5) is accepted",
    ],
    "canonical": [
        "no algebra: equal expressions written differently are not recognised "
        "((x+1)^2 vs x^2+2x+1, 3i+2 vs 2+3i, pi*2 vs 2pi)",
        "no pi, e, logs, trig, binomials: only numbers, + - * /, frac, sqrt, integer powers, "
        "factorials",
        "decimals with fewer than 6 places are not read as rounded values (0.33 is not 1/3)",
        "a percentage equals its number (15% = 15), not its fraction (0.15)",
        "base-n answers must carry the same subscript (204 is not 204_5)",
        "an integer directly followed by a fraction inside a larger expression is "
        "ambiguous and compared as a string",
    ],
}


@dataclass
class MathOptions:
    """How math completions are graded."""

    backend: str = "math-verify"
    """'math-verify' (default) or 'canonical' (an explicit choice: no sympy, exact only)."""
    also: tuple[str, ...] = ()
    """Further backends graded in the same pass (scorer sensitivity), e.g. ('canonical',)."""
    extract: ExtractOptions = field(default_factory=ExtractOptions)
    """Answer extraction."""
    float_rounding: int = 6
    """Decimal places math-verify rounds floats to before comparing."""
    inner_timeout: int | None = 5
    """math-verify's own signal-based timeout per parse/compare call, in whole
    seconds (None: off; it only works in a process's main thread). The worker
    pool's hard timeout is the backstop either way."""
    guards: bool = True
    """Re-check math-verify's accepts against its known false accepts (module docstring)."""

    def __post_init__(self) -> None:
        self.also = tuple(self.also)
        for b in (self.backend, *self.also):
            if b not in BACKENDS:
                hint = " (choose one explicitly)" if b == "auto" else ""
                raise ValueError(f"unknown math backend {b!r}{hint}; known: {list(BACKENDS)}")
        if self.backend in self.also or len(set(self.also)) != len(self.also):
            raise ValueError(f"each backend at most once: {[self.backend, *self.also]}")
        if isinstance(self.extract, dict):
            self.extract = ExtractOptions(**self.extract)

    @property
    def backends(self) -> tuple[str, ...]:
        """The primary backend, then the others."""
        return (self.backend, *self.also)


def options_to_json(opts: MathOptions) -> dict:
    """Plain-JSON form of the options (what crosses the worker pipe)."""
    return dataclasses.asdict(opts)


def options_from_json(d: dict) -> MathOptions:
    """Inverse of :func:`options_to_json`."""
    ex = dict(d.get("extract") or {})
    return MathOptions(**{**d, "extract": ExtractOptions(**ex)})


def backend_label(backend: str) -> str:
    """A backend with its version, as recorded in manifests: 'math-verify 0.9.0'."""
    if backend == "math-verify":
        found = _math_verify_version()
        if found is None:
            from rlvr_boundary.errors import MissingExtraError

            raise MissingExtraError("math_verify", "math", "math answer verification "
                                    "(or choose --backend canonical)")
        return f"math-verify {found}"
    if backend == "canonical":
        return "canonical (rlvr-boundary)"  # its version is the tool version in the manifest
    raise ValueError(f"unknown math backend {backend!r}; known: {list(BACKENDS)}")


def backend_name(opts: MathOptions) -> str:
    """The primary backend with its version (for the manifest)."""
    return backend_label(opts.backend)


@lru_cache(maxsize=1)
def _math_verify_version() -> str | None:
    try:
        from importlib.metadata import version

        import math_verify  # noqa: F401

        return version("math-verify")
    except ImportError:
        return None


def as_text(text) -> str:
    """A str that can always be encoded: invalid UTF-8 bytes and lone surrogates become U+FFFD."""
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8", errors="replace")
    return str(text).encode("utf-8", errors="replace").decode("utf-8")


def grade_math(gold, text, opts: MathOptions | None = None) -> dict:
    """Verdict of one completion against one gold answer.

    Parameters
    ----------
    gold
        Gold answer (LaTeX, without ``$``; a boxed solution works too).
    text
        The completion (str or bytes; invalid UTF-8 is replaced, not refused).
    opts
        Backends and extraction options.

    Returns
    -------
    dict
        ``answer`` (canonical extracted answer or None), ``correct`` (bool),
        ``verify_status``, ``method`` (extraction method), ``detail``: the
        primary backend's verdict; with ``opts.also``, ``also`` maps each
        further backend to its ``correct``, ``verify_status`` and ``detail``.
    """
    opts = opts or MathOptions()
    try:
        text = as_text(text)
        gold = as_text(gold)
        ans, method = extract_answer(text, opts.extract)
        if ans is None:
            res = _out(None, False, "no_answer", None, "no answer found")
            if opts.also:
                res["also"] = {b: _short(res) for b in opts.also}
            return res
        canon = canonical_answer(ans)
    except Exception as exc:  # noqa: BLE001 - one bad item must not stop a batch
        res = _failed(exc)
        if opts.also:
            res["also"] = {b: _short(res) for b in opts.also}
        return res
    res = _grade_one(opts.backend, gold, ans, canon, method, opts)
    if opts.also:
        res["also"] = {b: _short(_grade_one(b, gold, ans, canon, method, opts))
                       for b in opts.also}
    return res


def _short(res: dict) -> dict:
    return {k: res[k] for k in ("correct", "verify_status", "detail")}


def _failed(exc: BaseException) -> dict:
    if isinstance(exc, RecursionError):
        return _out(None, False, "parse_fail", None, "expression nested too deeply")
    if isinstance(exc, MemoryError):
        return _out(None, False, "error", None, "MemoryError")
    return _out(None, False, "error", None, f"{type(exc).__name__}: {exc}"[:300])


def _grade_one(backend: str, gold: str, ans: str, canon, method, opts: MathOptions) -> dict:
    try:
        if backend == "math-verify":
            backend_label(backend)  # a clear error when it is missing
            return _grade_mv(gold, ans, canon, method, opts)
        return _out(canon, answers_match(ans, gold), "ok", method, "canonical")
    except Exception as exc:  # noqa: BLE001 - one bad item must not stop a batch
        res = _failed(exc)
        res["answer"], res["method"] = canon, method
        return res


def grade_math_job(gold: str, text: str, options: dict) -> dict:
    """:func:`grade_math` with JSON options: the function the worker pool runs."""
    return grade_math(gold, text, options_from_json(options))


_THIN_THOUSANDS = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")


_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\s*\d{3})+(?:\.\d+)?")


def _premv(s: str) -> str:
    """What math-verify 0.9.0 cannot read: a currency ``\\$`` (``\\$18.90``), ``\\!``,
    a thin space as thousands separator (``10\\,000``), and a whole answer in
    thousands groups with spaces (``11,\\! 111,\\! 100``, read as a list otherwise)."""
    s = _THIN_THOUSANDS.sub("", s.replace("\\$", "").replace("\\!", ""))
    if _THOUSANDS.fullmatch(s.strip()):
        s = re.sub(r",\s*", "", s.strip())
    return s


class _TimeoutLog(logging.Handler):
    """Collects math-verify's "Timeout during ..." warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.fired = False

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Timeout during"):  # not "Timeout is disabled"
            self.fired = True


@contextmanager
def _watch_timeouts():
    log = logging.getLogger("math_verify")
    handler = _TimeoutLog()
    old = log.propagate
    log.addHandler(handler)
    log.propagate = False  # its warnings quote the whole (untrusted, maybe huge) input
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.propagate = old


def _grade_mv(gold: str, ans: str, canon, method, opts: MathOptions) -> dict:
    from math_verify import parse, verify

    t = opts.inner_timeout if opts.inner_timeout and opts.inner_timeout > 0 else None
    gold, ans = _premv(gold), _premv(ans)
    with _watch_timeouts() as watch:
        gold_p = parse(gold if "$" in gold or "\\boxed" in gold else f"${gold}$",
                       parsing_timeout=t)
        if watch.fired:
            return _out(canon, False, "timeout", method, "math-verify timed out parsing the gold")
        if not gold_p:
            return _out(canon, False, "parse_fail", method, "gold answer could not be parsed")
        pred_p = parse(f"\\boxed{{{ans}}}", parsing_timeout=t)
        if watch.fired:
            return _out(canon, False, "timeout", method, "math-verify timed out parsing the answer")
        if not pred_p:
            # Fall back to the canonical comparison before calling it a parse failure.
            if canon is not None and answers_match(ans, gold):
                return _out(canon, True, "ok", method, "canonical (math-verify could not parse)")
            return _out(canon, False, "parse_fail", method, "answer could not be parsed")
        ok = bool(verify(gold_p, pred_p, float_rounding=opts.float_rounding, timeout_seconds=t))
        if watch.fired and not ok:
            return _out(canon, False, "timeout", method, "math-verify timed out comparing")
    if ok and opts.guards:
        why = false_accept(gold, ans)
        if why:
            return _out(canon, False, "ok", method, f"math-verify accepted; rejected: {why}")
    if not ok and answers_match(ans, gold):
        # The canonical rules never accept a different value (exact arithmetic only), so
        # their accept stands: 12.5 for 12.5\%, 11111111100 for 11,\! 111,\! 111,\! 100.
        return _out(canon, True, "ok", method, "canonical (math-verify rejected)")
    return _out(canon, ok, "ok", method, "math-verify")


_BASE_SUB = re.compile(r"[0-9A-Za-z]_\{?(\d+)\}?")
_SINGLE_LHS = re.compile(r"^\s*(?:\\[A-Za-z]+|[A-Za-z])(?:_\{?\w+\}?)?(?:\([A-Za-z]\))?\s*=(?!=)")


def _is_equation(s: str) -> bool:
    t = re.sub(r"\\[lg]eq?|\\neq?|[<>]=|!=", "", s)
    return "=" in t


def false_accept(gold: str, ans: str) -> str | None:
    """Why an accept by math-verify is one of its known false accepts, or None.

    Parameters
    ----------
    gold, ans
        Gold answer and extracted answer (LaTeX).

    Returns
    -------
    str or None
        A short reason: different exact values, different bases, or an
        equation compared on one side only (module docstring).
    """
    vg, va = exact_value(gold), exact_value(ans)
    if vg is not None and va is not None and vg != va and not rounded_match(ans, gold):
        return "different exact values"
    bg, ba = _BASE_SUB.findall(gold), _BASE_SUB.findall(ans)
    if bg and ba and bg != ba:
        return "different bases"
    eg, ea = _is_equation(gold), _is_equation(ans)
    if eg != ea:
        eq = gold if eg else ans
        if not _SINGLE_LHS.match(eq) or eq.count("=") != 1:
            return "an equation compared with a value on one side only"
    return None


def _out(answer, correct, status, method, detail) -> dict:
    return {"answer": answer, "correct": bool(correct), "verify_status": status,
            "method": method, "detail": detail}
