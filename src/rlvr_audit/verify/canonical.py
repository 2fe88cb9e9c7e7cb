"""Canonical answer strings: one class per mathematically equal answer, as far as cheap.

Used for answer-level diversity, majority voting (maj@k) and per-answer
support, where thousands of answers per prompt must be grouped fast and without
a worker pool. It is deliberately conservative: two strings get the same
canonical form only when a rule below says they are equal, so classes may be
split (``\\sqrt{2}/2`` vs ``\\frac{\\sqrt2}{2}``) but never wrongly merged.
Grading against the gold answer uses math-verify instead (:mod:`.math`).

Rules: strip ``$``, ``\\(\\)``, ``\\[\\]``, spacing commands, ``\\left``/``\\right``,
``\\displaystyle``; ``\\dfrac``/``\\tfrac`` -> ``\\frac``; drop ``\\text{...}``
units after a number, degree signs and a trailing period; ``x = 3`` -> ``3``
for a single-letter left side; numbers (integers, decimals, ``a/b``,
``\\frac{a}{b}``, percentages as the number) -> reduced fraction or integer;
the elements of tuples, sets and intervals one by one.
"""

from __future__ import annotations

import re
from fractions import Fraction

_SPACING = re.compile(r"\\[,;:!]|\\quad|\\qquad|\\displaystyle|\\left|\\right|~")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"^\\frac\{(-?\d+)\}\{(-?\d+)\}$|^\\frac(\d)(\d)$")
_NUM = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$", re.I)


def _strip_wrappers(s: str) -> str:
    s = s.strip()
    for a, b in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if s.startswith(a) and s.endswith(b) and len(s) >= len(a) + len(b):
            s = s[len(a):len(s) - len(b)].strip()
    return s


def _number(s: str) -> Fraction | None:
    s = s.replace("{,}", "").replace("\\%", "").replace("%", "")
    s = s.replace("^\\circ", "").replace("^{\\circ}", "").replace("°", "")
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    m = _FRAC.match(s)
    if m:
        a, b = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        return Fraction(int(a), int(b)) if int(b) != 0 else None
    neg = s.startswith("-") and s[1:].startswith("\\frac")
    if neg:
        f = _number(s[1:])
        return -f if f is not None else None
    if re.fullmatch(r"-?\d+/\d+", s):
        a, b = s.split("/")
        return Fraction(int(a), int(b)) if int(b) != 0 else None
    if _NUM.match(s) and len(s) < 60:
        try:
            return Fraction(s)
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def canonical_answer(ans: str | None) -> str | None:
    """Canonical form of an extracted answer (None stays None)."""
    if ans is None:
        return None
    s = _strip_wrappers(ans)
    s = _SPACING.sub("", s).replace("\\$", "")
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = re.sub(r"^(\\?[A-Za-z])\s*=\s*(?!=)", "", s) if re.match(r"^\\?[A-Za-z]\s*=[^=]", s) else s
    # \text{cm} after a number is a unit; \text{...} alone is text content.
    s = re.sub(r"(?<=[\d}])\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}\s*$", "", s)
    s = _TEXT.sub(lambda m: m.group(1), s)
    s = re.sub(r"\s+", "", s).rstrip(".")
    if len(s) >= 2 and s[0] in "([{" and s[-1] in ")]}" or s.startswith("\\{") and s.endswith("\\}"):
        open_, close = (s[:2], s[-2:]) if s.startswith("\\{") else (s[0], s[-1])
        inner = s[len(open_):-len(close)]
        if "," in inner:
            items = [canonical_answer(x) or "" for x in _split_top(inner)]
            if open_ in ("\\{", "{"):
                items = sorted(items)  # a set: order does not matter
            return open_ + ",".join(items) + close
    f = _number(s)
    if f is not None:
        return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    return s
