"""Grade a math completion against its gold answer.

Extraction (:mod:`.extract`) finds the final answer; equivalence is decided by
``math-verify`` (the ``math`` extra, pinned) with the gold answer parsed first,
as its documentation requires (``verify(gold, answer)`` is not symmetric), or,
without it, by comparing canonical forms (:mod:`.canonical`) and numeric values.
One item never raises: every failure becomes a ``verify_status``:

- ``ok``: graded (``correct`` says how);
- ``no_answer``: nothing could be extracted;
- ``parse_fail``: the answer (or the gold) could not be parsed;
- ``timeout``: set by the worker pool when the item ran out of time;
- ``error``: anything else (kept with its message in ``detail``).

Anything but ``ok`` counts as incorrect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr_audit.verify.canonical import canonical_answer
from rlvr_audit.verify.extract import ExtractOptions, extract_answer


@dataclass
class MathOptions:
    """How math completions are graded."""

    backend: str = "auto"
    """'math-verify', 'canonical', or 'auto' (math-verify when installed)."""
    extract: ExtractOptions = field(default_factory=ExtractOptions)
    """Answer extraction."""
    float_rounding: int = 6
    """Decimal places math-verify rounds floats to before comparing."""


def backend_name(opts: MathOptions) -> str:
    """The backend that will actually run, with its version (for the manifest)."""
    if opts.backend in ("auto", "math-verify"):
        try:
            from importlib.metadata import version

            import math_verify  # noqa: F401

            return f"math-verify {version('math-verify')}"
        except ImportError:
            if opts.backend == "math-verify":
                from rlvr_audit.errors import MissingExtraError

                raise MissingExtraError("math_verify", "math", "math answer verification") from None
    return "canonical (rlvr-audit)"


def _as_text(text) -> str:
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    # Lone surrogates (from JSON "\udcff" escapes) cannot be encoded: replace them.
    return text.encode("utf-8", errors="replace").decode("utf-8")


def grade_math(gold: str, text, opts: MathOptions | None = None) -> dict:
    """Verdict of one completion.

    Returns
    -------
    dict
        ``answer`` (canonical extracted answer or None), ``correct`` (bool),
        ``verify_status``, ``method`` (extraction method), ``detail``.
    """
    opts = opts or MathOptions()
    try:
        text = _as_text(text)
        gold = _as_text(gold)
        ans, method = extract_answer(text, opts.extract)
        if ans is None:
            return _out(None, False, "no_answer", None, "no answer found")
        canon = canonical_answer(ans)
        use_mv = opts.backend == "math-verify" or (
            opts.backend == "auto" and backend_name(opts).startswith("math-verify"))
        if use_mv:
            return _grade_mv(gold, ans, canon, method, opts)
        g = canonical_answer(gold)
        return _out(canon, canon == g or _close(canon, g), "ok", method, "canonical")
    except RecursionError:
        return _out(None, False, "parse_fail", None, "expression nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one bad item must not stop a batch
        return _out(None, False, "error", None, f"{type(exc).__name__}: {exc}"[:300])


def _currency(s: str) -> str:
    # "\\$18.90" is a currency sign, not math mode; math-verify cannot parse it.
    return s.replace("\\$", "").replace("\\!", "")


def _grade_mv(gold: str, ans: str, canon, method, opts: MathOptions) -> dict:
    from math_verify import parse, verify

    gold, ans = _currency(gold), _currency(ans)
    gold_p = parse(gold if "$" in gold or "\\boxed" in gold else f"${gold}$")
    if not gold_p:
        return _out(canon, False, "parse_fail", method, "gold answer could not be parsed")
    pred_p = parse(f"\\boxed{{{ans}}}")
    if not pred_p:
        # Fall back to the canonical comparison before calling it a parse failure.
        if canon is not None and canon == canonical_answer(gold):
            return _out(canon, True, "ok", method, "canonical (math-verify could not parse)")
        return _out(canon, False, "parse_fail", method, "answer could not be parsed")
    ok = bool(verify(gold_p, pred_p, float_rounding=opts.float_rounding))
    return _out(canon, ok, "ok", method, "math-verify")


def _close(a: str | None, b: str | None) -> bool:
    from fractions import Fraction

    try:
        x, y = Fraction(a), Fraction(b)
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    return abs(x - y) <= Fraction(1, 10**6) * max(1, abs(y))


def _out(answer, correct, status, method, detail) -> dict:
    return {"answer": answer, "correct": bool(correct), "verify_status": status,
            "method": method, "detail": detail}
