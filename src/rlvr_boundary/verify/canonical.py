"""Canonical answer strings: one class per mathematically equal answer, as far as cheap.

Used for the ``answer`` column, answer-level diversity, majority voting (maj@k)
and per-answer support, where thousands of answers per prompt must be grouped
fast, in-process and without sympy (which can hang on hostile input). It is
deliberately conservative: two strings get the same canonical form only when a
rule below proves them equal, so classes may be split (``x^2+2x+1`` vs
``(x+1)^2``) but never wrongly merged. Grading against the gold answer uses
math-verify instead (:mod:`.math`).

Rules, in order:

1. strip ``$``, ``\\(\\)``, ``\\[\\]``, spacing commands, ``\\left``/``\\right``,
   ``\\displaystyle``; ``\\dfrac``/``\\tfrac`` -> ``\\frac``; ``\\cdot``/``\\times``
   -> ``*``; drop ``\\text{...}`` units after a number, degree signs, a currency
   ``\\$``, a trailing period, ``x \\in`` before an interval; ``x = 3`` -> ``3`` for a single-letter left side
   and a right side without variables (``y = 2x + 3`` stays an equation);
   ``{{a}}`` -> ``{a}``; ``e^2`` -> ``e^{2}`` (one-character exponents only:
   ``2^10`` stays ambiguous); a base subscript ``1011_2`` -> ``1011_{2}``;
   any matrix environment -> ``pmatrix``;
2. tuples, sets and intervals element by element (set elements sorted);
3. a mixed number, an integer followed by a proper fraction (``1\\frac{4}{5}``,
   ``137 \\frac{1}{2}``, ``-2\\frac13``), is their sum (MATH writes mixed numbers
   so): ``9/5``, ``275/2``, ``-7/3``. Anywhere else an integer directly
   followed by a numeric ``\\frac`` (``1\\frac{1}{2}+1``, ``2\\frac{5}{3}``) is
   ambiguous between a sum and a product and is not evaluated;
4. plain numbers (integers, thousands separators, decimals, ``a/b``,
   percentages as the number) -> reduced fraction ``p/q`` or integer;
5. otherwise, numeric expressions built from numbers, ``+ - * /``, ``\\frac``,
   ``\\sqrt`` (square roots only), integer powers and factorials are evaluated exactly in
   Q(sqrt 2, sqrt 3, ...): a value is a finite sum of rational multiples of
   square roots of squarefree integers, which is a unique normal form, so
   ``2^{10}`` = ``1024``, ``\\sqrt{8}`` = ``2\\sqrt{2}`` and
   ``\\frac{1}{\\sqrt2}`` = ``\\frac{\\sqrt2}{2}``. Sizes are bounded (input
   length, nesting, exponent, number of terms, bits), so ``9^{9^{9^9}}`` is
   refused in microseconds and falls back to the normalised string. A value
   whose canonical string would be longer than ``MAX_CANON_CHARS`` (``2^{1000}``,
   ``100!``) keeps its normalised string as its class (equal values may split,
   never merge); :func:`exact_value` still gives the value;
6. anything else: the normalised string.

Where the verdict is concerned (:func:`answers_match`), a decimal with at
least ``ROUNDED_PLACES`` places (``0.333333``) matches a gold value that
rounds to it and has no exact decimal of that length (``\\frac13``); shorter
decimals (``0.33``) and gold values that are exact decimals (``0.125``) must
match exactly. No other tolerance: ``10000001`` is not ``10000000``.

Nothing here calls ``eval`` or sympy.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_SPACING = re.compile(r"(?<!\\)\\[,;:! ]|\\quad|\\qquad|\\displaystyle|\\left|\\right|~")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"^\\frac\{(-?\d+)\}\{(-?\d+)\}$|^\\frac(\d)(\d)$")
_NUM = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$", re.I)

#: Bounds of the exact evaluator (rule 4).
MAX_EXPR_CHARS = 300
MAX_DEPTH = 40
MAX_TERMS = 16
MAX_EXPONENT = 10_000
MAX_BITS = 32_768
MAX_RADICAND = 10**12
MAX_FACTORIAL = 3_000
#: Longer canonical strings of exact values are not used as classes (rule 5).
MAX_CANON_CHARS = 120
#: A decimal with at least this many places may be a rounded value (answers_match).
ROUNDED_PLACES = 6

_MIXED = re.compile(r"^([-+]?)(\d+)\\frac\{(\d+)\}\{(\d+)\}$")
_BASE = re.compile(r"(?<=[0-9A-Za-z])_(\d)(?![\d}])")


def _strip_wrappers(s: str) -> str:
    s = s.strip()
    for a, b in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if s.startswith(a) and s.endswith(b) and len(s) >= len(a) + len(b):
            s = s[len(a):len(s) - len(b)].strip()
    return s


def _number(s: str) -> Fraction | None:
    s = s.replace("{,}", "").replace("\\%", "").replace("%", "")
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    m = _FRAC.match(s)
    if m:
        a, b = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        return Fraction(int(a), int(b)) if int(b) != 0 else None
    if s.startswith("-") and s[1:].startswith("\\frac"):
        f = _number(s[1:])
        return -f if f is not None else None
    if re.fullmatch(r"-?\d+/\d+", s) and len(s) < 60:
        a, b = s.split("/")
        return Fraction(int(a), int(b)) if int(b) != 0 else None
    if _NUM.match(s) and len(s) < 60:
        try:
            f = Fraction(s)
        except (ValueError, ZeroDivisionError):
            return None
        return f if f.numerator.bit_length() < MAX_BITS and f.denominator.bit_length() < MAX_BITS \
            else None
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


def _normalise(ans: str) -> str:
    s = _strip_wrappers(ans)
    s = _SPACING.sub("", s).replace("\\$", "")
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = s.replace("\\cdot", "*").replace("\\times", "*")
    m = re.match(r"^\\?[A-Za-z]\s*=(?!=)\s*", s)
    if m and not re.search(r"[A-Za-z]", s[m.end():].replace("\\frac", "").replace("\\sqrt", "")):
        s = s[m.end():]  # x = 3 -> 3; not y = 2x + 3 (an equation stays an equation)
    # \text{cm} after a number is a unit; \text{...} alone is text content.
    s = re.sub(r"(?<=[\d}])\s*\\(?:text|mathrm|mbox)\s*\{[^{}]*\}(?:\^\{?[23]\}?)?\s*$", "", s)
    s = re.sub(r"^\\?[A-Za-z]\s*\\in\s*(?=[\[(])", "", s)  # x \in [-2,7] -> [-2,7]
    s = _TEXT.sub(lambda m: m.group(1), s)
    s = s.replace("^\\circ", "").replace("^{\\circ}", "").replace("°", "")
    s = re.sub(r"\s+", "", s).rstrip(".")
    s = re.sub(r"\{\{([^{}]*)\}\}", r"{\1}", s)                 # \frac{{a}}{{b}}
    s = re.sub(r"\^([A-Za-z0-9])(?![A-Za-z0-9])", r"^{\1}", s)    # e^2 -> e^{2}, not 2^10
    s = _BASE.sub(r"_{\1}", s)                                    # 1011_2 -> 1011_{2}
    return re.sub(r"\{[bB]?matrix\}", "{pmatrix}", s)  # bracket style (vmatrix is a determinant)


def canonical_answer(ans: str | None) -> str | None:
    """Canonical form of an extracted answer (None stays None).

    Parameters
    ----------
    ans
        An extracted final answer (LaTeX or plain text).

    Returns
    -------
    str or None
        Equal strings for answers the rules prove equal (see the module
        docstring); ``p/q`` or an integer for rational values.

    Examples
    --------
    >>> canonical_answer(r"\\dfrac{6}{8}"), canonical_answer("0.75"), canonical_answer(r"\\sqrt{8}")
    ('3/4', '3/4', '2\\\\sqrt{2}')
    """
    if ans is None:
        return None
    s = _normalise(ans)
    if len(s) >= 2 and s[0] in "([{" and s[-1] in ")]}" or s.startswith("\\{") and s.endswith("\\}"):
        open_, close = (s[:2], s[-2:]) if s.startswith("\\{") else (s[0], s[-1])
        inner = s[len(open_):-len(close)]
        if "," in inner:
            items = [canonical_answer(x) or "" for x in _split_top(inner)]
            if open_ in ("\\{", "{"):
                items = sorted(items)  # a set: order does not matter
            return open_ + ",".join(items) + close
    f = _mixed(s)
    if f is None:
        f = _number(s)
    if f is not None:
        return _fmt_fraction(f) if _short({1: f}) else s
    v = evaluate_surd(s)
    if v is not None and _short(v):
        return format_surd(v)
    return s


def _short(v: dict) -> bool:
    """The value's string fits MAX_CANON_CHARS (checked on bit sizes before formatting)."""
    bits = sum(c.numerator.bit_length() + c.denominator.bit_length() + m.bit_length()
               for m, c in v.items())
    return bits <= 3 * MAX_CANON_CHARS  # a decimal digit is 3.32 bits


def _mixed(s: str) -> Fraction | None:
    """Value of a whole-answer mixed number ``a\\frac{p}{q}`` with ``0 < p < q``."""
    s = re.sub(r"\\frac(\d)(\d)$", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac\{(\d+)\}(\d)$", r"\\frac{\1}{\2}", s)
    m = _MIXED.match(s)
    if not m or len(s) > 60:
        return None
    sign, a, p, q = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    if not 0 < p < q:
        return None  # 2\frac{5}{3}: not a mixed number, ambiguous
    v = a + Fraction(p, q)
    return -v if sign == "-" else v


def exact_value(ans: str | None) -> dict | None:
    """Exact value of a numeric answer as ``{m: c}`` (sum of c*sqrt(m)), or None.

    The value behind :func:`canonical_answer` (rules 1, 3-5), without the
    length cap on the string: ``\\frac{1}{2004!}`` and ``\\frac{1}{2006!}`` get
    different values. None for anything that is not a numeric expression
    (variables, pi, text, tuples, percentages, base subscripts).
    """
    if ans is None or "%" in ans:
        return None
    s = _normalise(ans)
    f = _mixed(s)
    if f is None:
        f = _number(s)
    if f is not None:
        return {1: f} if f != 0 else {}
    return evaluate_surd(s)


def answers_match(answer: str | None, gold: str | None) -> bool:
    """The canonical backend's verdict: ``answer`` equals ``gold``.

    Parameters
    ----------
    answer, gold
        Extracted answer and gold answer (LaTeX or plain text).

    Returns
    -------
    bool
        True when the canonical forms are equal, or when ``answer`` is a
        decimal of at least ``ROUNDED_PLACES`` places that ``gold``'s exact
        rational value rounds to, and ``gold`` has no exact decimal form of
        that many places (module docstring).
    """
    ca, cg = canonical_answer(answer), canonical_answer(gold)
    if ca is None or cg is None:
        return False
    va, vg = _lhs_variable(answer), _lhs_variable(gold)
    if va and vg and va != vg:
        return False  # x = 5 is not y = 5
    return ca == cg or rounded_match(answer, gold)


def _lhs_variable(s: str) -> str | None:
    m = re.match(r"^\s*\$?\s*(\\?[A-Za-z])\s*=(?!=)", s)
    return m.group(1) if m else None


_DECIMAL = re.compile(r"^-?\d*\.(\d+)$")


def rounded_match(answer: str, gold: str) -> bool:
    """``answer`` is a decimal of >= ROUNDED_PLACES places and ``gold`` rounds to it.

    ``0.333333`` for ``\\frac13`` (math-verify's default ``float_rounding`` is 6);
    not ``0.33``, and not ``0.1234568`` for the exact decimal ``0.1234567``.
    """
    m = _DECIMAL.match(_normalise(answer))
    if not m or len(m.group(1)) < ROUNDED_PLACES:
        return False
    k = len(m.group(1))
    g = exact_value(gold)
    if g is None or set(g) - {1}:
        return False
    gv = g.get(1, Fraction(0))
    if (gv * 10 ** k).denominator == 1:
        return False  # the gold value is itself a decimal of <= k places: exact match only
    return abs(Fraction(_normalise(answer)) - gv) * 2 * 10 ** k <= 1


def _fmt_fraction(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


# ----------------------------------------------------------------------------- exact surds
# A value is a dict {m: c}: sum of c * sqrt(m), m squarefree >= 1, c a nonzero Fraction.

class _Refuse(Exception):
    """The expression is outside what the exact evaluator handles."""


_TOKEN = re.compile(r"\d+\.\d+|\d+|\\frac|\\sqrt|[-+*/^(){}\[\]!]")
# An integer directly followed by a numeric fraction: a mixed number or a product?
_AMBIGUOUS_MIXED = re.compile(r"(?<![\d^_.])\d+\\frac\{\d+\}\{\d+\}")


def _tokens(s: str) -> list[str]:
    # \frac12 -> \frac{1}{2}, \sqrt2 -> \sqrt{2}: one-digit arguments without braces.
    s = re.sub(r"\\frac(\d)(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac\{([^{}]*)\}(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac(\d)(?=\{)", r"\\frac{\1}", s)  # \frac9{19}
    s = re.sub(r"\\sqrt(\d)", r"\\sqrt{\1}", s)
    if _AMBIGUOUS_MIXED.search(s):
        raise _Refuse("integer followed by a fraction: mixed number or product")
    out, pos = [], 0
    for m in _TOKEN.finditer(s):
        if m.start() != pos:
            raise _Refuse(s[pos:m.start()])
        out.append(m.group())
        pos = m.end()
    if pos != len(s):
        raise _Refuse(s[pos:])
    return out


def _check(v: dict) -> dict:
    v = {m: c for m, c in v.items() if c != 0}
    if len(v) > MAX_TERMS:
        raise _Refuse("too many terms")
    for c in v.values():
        if c.numerator.bit_length() > MAX_BITS or c.denominator.bit_length() > MAX_BITS:
            raise _Refuse("number too large")
    return v


def _add(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + sign * c
    return _check(out)


def _mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            g = math.gcd(m1, m2)
            r = (m1 // g) * (m2 // g)  # sqrt(m1 m2) = g sqrt(r), both squarefree
            out[r] = out.get(r, Fraction(0)) + c1 * c2 * g
    return _check(out)


def _inv(a: dict) -> dict:
    if not a:
        raise _Refuse("division by zero")
    if len(a) == 1:
        (m, c), = a.items()
        return _check({m: 1 / (c * m)})
    if len(a) == 2 and 1 in a:
        # 1 / (p + q sqrt m) = (p - q sqrt m) / (p^2 - q^2 m)
        (m, q), = ((k, v) for k, v in a.items() if k != 1)
        p = a[1]
        den = p * p - q * q * m
        return _check({1: p / den, m: -q / den})
    raise _Refuse("cannot rationalise")


def _squarefree(n: int) -> tuple[int, int]:
    """``n = g^2 * r`` with r squarefree; exact for n < MAX_RADICAND."""
    if n >= MAX_RADICAND:
        raise _Refuse("radicand too large")
    g, r, p = 1, n, 2
    while p * p <= r and p <= 10**4:
        while r % (p * p) == 0:
            r //= p * p
            g *= p
        if r % p == 0:
            r //= p
            g2, r2 = _squarefree(r)  # p divides once: keep it aside
            return g * g2, r2 * p
        p += 1
    # Every prime factor of r left is > 10^4 and r < 10^12: r is 1, p, pq or p^2.
    s = math.isqrt(r)
    if s > 1 and s * s == r:
        return g * s, 1
    return g, r


def _sqrt(a: dict) -> dict:
    if not a:
        return {}
    if set(a) != {1}:
        raise _Refuse("nested radical")
    c = a[1]
    if c < 0:
        raise _Refuse("square root of a negative number")
    g, r = _squarefree(c.numerator * c.denominator)
    return _check({r: Fraction(g, c.denominator)})


def _pow(a: dict, e: dict) -> dict:
    if set(e) - {1}:
        raise _Refuse("irrational exponent")
    k = e.get(1, Fraction(0))
    if k.denominator != 1 or abs(k) > MAX_EXPONENT:
        raise _Refuse("exponent not a small integer")
    k = int(k)
    base = _inv(a) if k < 0 else a
    out: dict = {1: Fraction(1)}
    k = abs(k)
    while k:  # square and multiply; _check bounds every intermediate size
        if k & 1:
            out = _mul(out, base)
        k >>= 1
        if k:
            base = _mul(base, base)
    return out


def _factorial(a: dict) -> dict:
    if set(a) - {1}:
        raise _Refuse("factorial of an irrational number")
    n = a.get(1, Fraction(0))
    if n.denominator != 1 or n < 0 or n > MAX_FACTORIAL:
        raise _Refuse("factorial not of a small natural number")
    return _check({1: Fraction(math.factorial(int(n)))})


class _Parser:
    def __init__(self, toks: list[str]) -> None:
        self.t, self.i, self.depth = toks, 0, 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise _Refuse(f"expected {want}")
        self.i += 1
        return tok

    def expr(self) -> dict:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refuse("nested too deeply")
        v = self.term()
        while self.peek() in ("+", "-"):
            sign = 1 if self.take() == "+" else -1
            v = _add(v, self.term(), sign)
        self.depth -= 1
        return v

    def term(self) -> dict:
        v = self.unary()
        while True:
            tok = self.peek()
            if tok == "*":
                self.take()
                v = _mul(v, self.unary())
            elif tok == "/":
                self.take()
                v = _mul(v, _inv(self.unary()))
            elif tok is not None and (tok[0].isdigit() or tok in ("(", "{", "\\frac", "\\sqrt")):
                v = _mul(v, self.power())  # implicit product: 2\sqrt{3}, (1)(2)
            else:
                return v

    def unary(self) -> dict:
        if self.peek() in ("-", "+"):
            sign = -1 if self.take() == "-" else 1
            v = self.unary()
            return {m: sign * c for m, c in v.items()}
        return self.power()

    def power(self) -> dict:
        v = self.atom()
        while self.peek() == "!":
            self.take()
            v = _factorial(v)
        if self.peek() == "^":
            self.take()
            tok = self.peek()
            if tok is not None and tok[0].isdigit():
                if len(tok) != 1:
                    raise _Refuse("ambiguous bare exponent")  # 2^10 renders as 2^1 0
                e = self.atom()
            elif tok == "{":
                e = self.atom()
            else:
                raise _Refuse("exponent")
            if self.peek() == "^":
                raise _Refuse("double exponent")
            v = _pow(v, e)
        return v

    def group(self) -> dict:
        self.take("{")
        v = self.expr()
        self.take("}")
        return v

    def atom(self) -> dict:
        tok = self.take()
        if tok[0].isdigit():
            if len(tok) > 60:
                raise _Refuse("number too long")
            return _check({1: Fraction(tok)})
        if tok == "(":
            v = self.expr()
            self.take(")")
            return v
        if tok == "{":
            self.i -= 1
            return self.group()
        if tok == "\\frac":
            return _mul(self.group(), _inv(self.group()))
        if tok == "\\sqrt":
            return _sqrt(self.group())
        raise _Refuse(tok)


def evaluate_surd(s: str) -> dict | None:
    """Exact value of a numeric expression as ``{m: c}`` (sum of c*sqrt(m)), or None.

    ``s`` is a normalised answer (no spaces). None when the expression uses
    anything but numbers, ``+ - * /``, ``\\frac``, ``\\sqrt{}``, integer powers
    and brackets, or exceeds the size bounds.
    """
    if not s or len(s) > MAX_EXPR_CHARS:
        return None
    try:
        p = _Parser(_tokens(s))
        v = p.expr()
        if p.peek() is not None:
            return None
        return v
    except (_Refuse, ZeroDivisionError, RecursionError):
        return None


def format_surd(v: dict) -> str:
    """Unique string of an exact value: ``3/4``, ``2\\sqrt{2}``, ``1-\\sqrt{3}/2``."""
    if not v:
        return "0"
    parts = []
    for m in sorted(v):
        c = v[m]
        if m == 1:
            body = _fmt_fraction(abs(c))
        else:
            num = "" if abs(c.numerator) == 1 else str(abs(c.numerator))
            body = f"{num}\\sqrt{{{m}}}" + ("" if c.denominator == 1 else f"/{c.denominator}")
        parts.append(("-" if c < 0 else "+") + body)
    out = "".join(parts)
    return out[1:] if out.startswith("+") else out


# ----------------------------------------------------------------------------- answer types
#: The answer types of MATH500's gold answers, in the order they are tested.
ANSWER_TYPES = ("matrix", "base_n", "pm", "interval", "set_tuple", "equation", "degree",
                "percent", "units", "text", "pi", "complex", "radical", "mixed_number",
                "fraction", "decimal", "integer", "expression")

_UNIT_AFTER_NUMBER = re.compile(r"[\d}]\s*\\(?:text|mbox|mathrm)\s*\{[^{}]*\}|\\\$|dollars|cents")


def answer_type(gold: str) -> str:
    """The kind of a gold answer, for agreement tables (first rule that applies).

    Parameters
    ----------
    gold
        A gold answer (LaTeX).

    Returns
    -------
    str
        One of :data:`ANSWER_TYPES`: ``matrix`` (any matrix environment),
        ``base_n`` (``1011_2``), ``pm`` (``\\pm``), ``interval`` (``\\infty``,
        ``\\cup``, ``\\in`` or a half-open or closed bracket pair), ``set_tuple``
        (``\\{...\\}``, ``(a,b)`` or a comma list), ``equation`` (``=``),
        ``degree``, ``percent``, ``units`` (a ``\\text{}`` unit after a number, a
        currency), ``text`` (``\\text{}`` alone), ``pi``, ``complex`` (``i``),
        ``radical``, ``mixed_number``, ``fraction``, ``decimal``, ``integer``,
        else ``expression`` (variables, functions).
    """
    s = _strip_wrappers(gold).strip()
    flat = re.sub(r"\s+", "", s)
    if re.search(r"\\begin\{[a-zA-Z]*matrix\}", s):
        return "matrix"
    if re.search(r"[0-9A-Za-z]_\{?\d+\}?", flat) and not re.search(r"\\(?:log|sum|lim)", s):
        return "base_n"
    if "\\pm" in s or "\\mp" in s:
        return "pm"
    if re.search(r"\\infty|\\cup|\\in\b", s) or re.fullmatch(
            r"(?:\\left)?(?:\[[^\[\]]*,[^\[\]]*[\])]|\([^()]*,[^()]*\])(?:\\right)?", flat):
        return "interval"
    if flat.startswith("\\{") or "," in _split_top(_normalise(s))[0] or len(_split_top(
            re.sub(r"\{,\}|,\\!|,(?=\d{3}(?!\d))", "", _normalise(s)))) > 1 or re.fullmatch(
            r"(?:\\left)?\(.*,.*\)(?:\\right)?", flat):
        return "set_tuple"
    if _is_eq(s):
        return "equation"
    if "\\circ" in s or "°" in s or "degree" in s:
        return "degree"
    if "%" in s:
        return "percent"
    if _UNIT_AFTER_NUMBER.search(s):
        return "units"
    if re.search(r"\\(?:text|mbox|textbf)\{", s) or re.fullmatch(r"[A-Za-z ]{2,}", s):
        return "text"
    if "\\pi" in s:
        return "pi"
    if re.search(r"(?<![A-Za-z\\])i(?![A-Za-z])", s) and not re.search(r"[a-hj-zA-Z]", s.replace(
            "\\frac", "").replace("\\sqrt", "")):
        return "complex"
    if "\\sqrt" in s:
        return "radical"
    n = _normalise(s)
    if _mixed(n) is not None:
        return "mixed_number"
    if "\\frac" in n or re.fullmatch(r"-?\d+/\d+", n):
        return "fraction" if exact_value(s) is not None else "expression"
    if re.fullmatch(r"-?\d*\.\d+", n):
        return "decimal"
    if _number(n) is not None:
        return "integer"
    return "expression"


def _is_eq(s: str) -> bool:
    t = re.sub(r"\\[lg]eq?|\\neq?|[<>!]=", "", s)
    return "=" in t
