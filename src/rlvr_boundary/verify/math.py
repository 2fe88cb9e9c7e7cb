"""Grade a math completion against its gold answer.

Extraction (:mod:`.extract`) finds the final answer; equivalence is decided by
``math-verify`` (the ``math`` extra, pinned to 0.9.0) with the gold answer
parsed first, as its documentation requires (``verify(gold, answer)`` is not
symmetric), or, without it, by comparing canonical forms (:mod:`.canonical`:
exact rational and surd arithmetic, never sympy). One item never raises: every
failure becomes a ``verify_status``:

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
  first (math-verify 0.9.0 cannot parse ``\\boxed{\\$18.90}``, three MATH500
  gold answers are written so, nor reads ``10\\,000`` as ten thousand);
- math-verify swallows its own timeouts (it logs a warning and answers
  ``False``); we listen to its logger and report ``timeout`` instead of a
  silent "incorrect".
"""

from __future__ import annotations

import dataclasses
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

from rlvr_boundary.verify.canonical import canonical_answer, equal_values
from rlvr_boundary.verify.extract import ExtractOptions, extract_answer

#: The math-verify version the ``math`` extra pins and the tests were run with.
MATH_VERIFY_VERSION = "0.9.0"
BACKENDS = ("auto", "math-verify", "canonical")


@dataclass
class MathOptions:
    """How math completions are graded."""

    backend: str = "auto"
    """'math-verify', 'canonical', or 'auto' (math-verify when installed)."""
    extract: ExtractOptions = field(default_factory=ExtractOptions)
    """Answer extraction."""
    float_rounding: int = 6
    """Decimal places math-verify rounds floats to before comparing."""
    inner_timeout: int | None = 5
    """math-verify's own signal-based timeout per parse/compare call, in whole
    seconds (None: off; it only works in a process's main thread). The worker
    pool's hard timeout is the backstop either way."""


def options_to_json(opts: MathOptions) -> dict:
    """Plain-JSON form of the options (what crosses the worker pipe)."""
    return dataclasses.asdict(opts)


def options_from_json(d: dict) -> MathOptions:
    """Inverse of :func:`options_to_json`."""
    ex = dict(d.get("extract") or {})
    if "fallbacks" in ex:
        ex["fallbacks"] = tuple(ex["fallbacks"])
    return MathOptions(**{**d, "extract": ExtractOptions(**ex)})


def backend_name(opts: MathOptions) -> str:
    """The backend that will actually run, with its version (for the manifest)."""
    if opts.backend not in BACKENDS:
        raise ValueError(f"unknown math backend {opts.backend!r}; known: {BACKENDS}")
    if opts.backend in ("auto", "math-verify"):
        found = _math_verify_version()
        if found is not None:
            return f"math-verify {found}"
        if opts.backend == "math-verify":
            from rlvr_boundary.errors import MissingExtraError

            raise MissingExtraError("math_verify", "math", "math answer verification")
    return "canonical (rlvr-boundary)"


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
        Backend and extraction options.

    Returns
    -------
    dict
        ``answer`` (canonical extracted answer or None), ``correct`` (bool),
        ``verify_status``, ``method`` (extraction method), ``detail``.
    """
    opts = opts or MathOptions()
    try:
        text = as_text(text)
        gold = as_text(gold)
        ans, method = extract_answer(text, opts.extract)
        if ans is None:
            return _out(None, False, "no_answer", None, "no answer found")
        canon = canonical_answer(ans)
        if backend_name(opts).startswith("math-verify"):
            return _grade_mv(gold, ans, canon, method, opts)
        g = canonical_answer(gold)
        return _out(canon, equal_values(canon, g), "ok", method, "canonical")
    except RecursionError:
        return _out(None, False, "parse_fail", None, "expression nested too deeply")
    except MemoryError:
        return _out(None, False, "error", None, "MemoryError")
    except Exception as exc:  # noqa: BLE001 - one bad item must not stop a batch
        return _out(None, False, "error", None, f"{type(exc).__name__}: {exc}"[:300])


def grade_math_job(gold: str, text: str, options: dict) -> dict:
    """:func:`grade_math` with JSON options: the function the worker pool runs."""
    return grade_math(gold, text, options_from_json(options))


_THIN_THOUSANDS = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")


def _premv(s: str) -> str:
    """What math-verify 0.9.0 cannot read: a currency ``\\$`` (``\\$18.90``), ``\\!``,
    and a thin space as thousands separator (``10\\,000``)."""
    return _THIN_THOUSANDS.sub("", s.replace("\\$", "").replace("\\!", ""))


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
            if canon is not None and equal_values(canon, canonical_answer(gold)):
                return _out(canon, True, "ok", method, "canonical (math-verify could not parse)")
            return _out(canon, False, "parse_fail", method, "answer could not be parsed")
        ok = bool(verify(gold_p, pred_p, float_rounding=opts.float_rounding, timeout_seconds=t))
        if watch.fired and not ok:
            return _out(canon, False, "timeout", method, "math-verify timed out comparing")
    return _out(canon, ok, "ok", method, "math-verify")


def _out(answer, correct, status, method, detail) -> dict:
    return {"answer": answer, "correct": bool(correct), "verify_status": status,
            "method": method, "detail": detail}
