"""Writes grading_corpus.jsonl: (gold, completion, expected verdict, category) pairs.

The expected verdicts are ours, written as a careful human grader of competition
math would decide them (the convention of the MATH / limit-of-RLVR evaluations:
the last boxed answer is the answer; units, degree signs and "x =" do not
matter; equal values written differently are equal; order matters in tuples and
intervals, not in sets). Regenerate with ``python tests/verify/make_corpus.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

rng = random.Random(20261203)
rows: list[dict] = []


def add(cat: str, gold: str, answer_text: str, expected: bool, boxed: bool = True) -> None:
    text = f"Let me work through this carefully. ... Therefore the answer is \\boxed{{{answer_text}}}." \
        if boxed else answer_text
    rows.append({"category": cat, "gold": gold, "completion": text, "expected": expected})


# integers
for _ in range(20):
    n = rng.randint(-500, 5000)
    add("integer", str(n), str(n), True)
    add("integer", str(n), f"{n}.0", True)
    add("integer", str(n), str(n + rng.choice([-7, -1, 1, 3, 10])), False)
# thousands separators
for n in (1000, 12345, 1000000, 2024):
    add("integer", str(n), f"{n:,}", True)
    add("integer", str(n), f"{n:,}".replace(",", "{,}"), True)
# fractions and \dfrac
for _ in range(18):
    a, b = rng.randint(1, 30), rng.randint(2, 31)
    if a % b == 0:
        continue
    g = f"\\frac{{{a}}}{{{b}}}"
    add("fraction", g, f"\\dfrac{{{a}}}{{{b}}}", True)
    add("fraction", g, f"{a}/{b}", True)
    add("fraction", g, f"\\frac{{{2 * a}}}{{{2 * b}}}", True)
    add("fraction", g, f"\\frac{{{b}}}{{{a}}}", a == b)
# decimals vs fractions
for g, t, e in [("\\frac{1}{4}", "0.25", True), ("\\frac{3}{8}", "0.375", True),
                ("\\frac{1}{2}", "0.5", True), ("0.2", "\\frac{1}{5}", True),
                ("\\frac{1}{3}", "0.33", False), ("\\frac{2}{5}", "0.4", True),
                ("1.5", "\\frac{3}{2}", True), ("1.5", "\\frac{2}{3}", False),
                ("\\frac{7}{4}", "1.75", True), ("0.125", "\\frac18", True),
                ("2.5", "\\frac{5}{2}", True), ("2.5", "2.25", False)]:
    add("decimal", g, t, e)
# percentages
for p in (5, 12, 25, 40, 75, 150):
    add("percent", f"{p}\\%", f"{p}\\%", True)
    add("percent", f"{p}\\%", f"{p}", True)
    add("percent", f"{p}", f"{p}\\%", True)
    add("percent", f"{p}\\%", f"{p + 1}\\%", False)
# degrees
for d in (30, 45, 60, 90, 120, 135):
    add("degree", f"{d}^\\circ", f"{d}", True)
    add("degree", f"{d}", f"{d}^\\circ", True)
    add("degree", f"{d}^\\circ", f"{d}^{{\\circ}}", True)
    add("degree", f"{d}^\\circ", f"{d + 15}^\\circ", False)
# units and \text{}
for v, u in ((10, "cm"), (7, "inches"), (3, "hours"), (250, "dollars"), (12, "meters"),
             (5, "units")):
    add("units", str(v), f"{v}\\text{{ {u}}}", True)
    add("units", str(v), f"{v} \\text{{{u}}}", True)
    add("units", f"{v}\\text{{ {u}}}", str(v), True)
    add("units", str(v), f"{v + 2}\\text{{ {u}}}", False)
# intervals
for lo, hi in ((1, 2), (-3, 5), (0, 10), (-1, 1)):
    add("interval", f"({lo},{hi}]", f"({lo}, {hi}]", True)
    add("interval", f"({lo},{hi}]", f"({lo},{hi})", False)
    add("interval", f"[{lo},{hi}]", f"[{lo}, {hi}]", True)
    add("interval", f"[{lo},{hi}]", f"({lo},{hi}]", False)
add("interval", "(-\\infty,3)", "(-\\infty, 3)", True)
add("interval", "(-\\infty,3)", "(-\\infty, 3]", False)
add("interval", "[2,\\infty)", "[2, \\infty)", True)
add("interval", "(-\\infty,-1)\\cup(1,\\infty)", "(-\\infty,-1) \\cup (1,\\infty)", True)
# sets and tuples
for a, b, c in ((1, 2, 3), (-1, 0, 4), (2, 5, 9)):
    add("set", f"\\{{{a},{b},{c}\\}}", f"\\{{{c},{a},{b}\\}}", True)
    add("set", f"\\{{{a},{b},{c}\\}}", f"\\{{{a},{b}\\}}", False)
    add("tuple", f"({a},{b})", f"({a}, {b})", True)
    add("tuple", f"({a},{b})", f"({b},{a})", a == b)
    add("tuple", f"({a},{b},{c})", f"({a},{b},{c + 1})", False)
# equations like x = 3
for v in (3, -2, 7, 12, 0):
    add("equation", str(v), f"x = {v}", True)
    add("equation", f"x={v}", f"{v}", True)
    add("equation", f"x={v}", f"x = {v + 1}", False)
add("equation", "y=2x+1", "y = 2x + 1", True)
add("equation", "y=2x+1", "y = 2x - 1", False)
add("equation", "y=-\\frac{1}{2}x+3", "y = 3 - \\frac{x}{2}", True)
# matrices
add("matrix", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", True)
add("matrix", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
    "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}", False)
add("matrix", "\\begin{pmatrix}2\\\\-1\\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ -1 \\end{pmatrix}", True)
add("matrix", "\\begin{pmatrix}2\\\\-1\\end{pmatrix}", "\\begin{pmatrix} -1 \\\\ 2 \\end{pmatrix}", False)
add("matrix", "\\begin{pmatrix}1&0\\\\0&1\\end{pmatrix}", "\\begin{bmatrix}1&0\\\\0&1\\end{bmatrix}", True)
# expressions and nested braces
for g, t, e in [("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{2}", True),
                ("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{2}}{2}", False),
                ("1024", "2^{10}", True), ("2\\sqrt{2}", "\\sqrt{8}", True),
                ("\\frac{\\sqrt{2}}{2}", "\\sqrt{\\frac{1}{2}}", True),
                ("\\pi", "3.14", False), ("2\\pi", "2 \\pi", True),
                ("x^2+2x+1", "(x+1)^2", True), ("x^2+2x+1", "(x-1)^2", False),
                ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", True),
                ("3\\sqrt{5}", "\\sqrt{45}", True), ("3\\sqrt{5}", "5\\sqrt{3}", False),
                ("\\frac{{a}}{{b}}", "\\frac{a}{b}", True),
                ("e^{2}", "e^2", True), ("\\log_2 8", "3", True),
                ("\\binom{5}{2}", "10", True), ("5!", "120", True), ("-\\frac{1}{3}", "-1/3", True),
                ("-\\frac{1}{3}", "\\frac{1}{3}", False), ("\\frac{-1}{3}", "-\\frac{1}{3}", True)]:
    add("expression", g, t, e)
# several boxed answers: the last one counts
for a, b in ((3, 4), (10, 12), (-1, 1), (7, 7)):
    rows.append({"category": "multi_boxed", "gold": str(b),
                 "completion": f"First guess \\boxed{{{a}}}. On reflection the answer is \\boxed{{{b}}}.",
                 "expected": True})
    rows.append({"category": "multi_boxed", "gold": str(a),
                 "completion": f"First guess \\boxed{{{a}}}. On reflection the answer is \\boxed{{{b}}}.",
                 "expected": a == b})
# no answer at all
for t in ("I am not sure how to solve this problem.", "Let us think step by step... (no conclusion)",
          "The problem is ill-posed.", "", "\\boxed{}", "Therefore \\boxed{"):
    rows.append({"category": "no_answer", "gold": "5", "completion": t, "expected": False})
# text after the box does not change the answer
for v in (5, 17, 2):
    rows.append({"category": "after_box", "gold": str(v),
                 "completion": f"So \\boxed{{{v}}}. Wait, maybe it is {v + 1}? No, I stay with it.",
                 "expected": True})
    rows.append({"category": "after_box", "gold": str(v + 1),
                 "completion": f"So \\boxed{{{v}}}. Wait, maybe it is {v + 1}? No, I stay with it.",
                 "expected": False})
# \fbox and answers without a box
rows.append({"category": "fbox", "gold": "6", "completion": "hence \\fbox{6}", "expected": True})
rows.append({"category": "fallback", "gold": "6", "completion": "The answer is 6.", "expected": True})
rows.append({"category": "fallback", "gold": "6", "completion": "Final Answer: 7", "expected": False})

# surds, powers and scientific notation (equal values written differently)
for g, t, e in [("2\\sqrt{3}", "\\sqrt{12}", True), ("2\\sqrt{3}", "3\\sqrt{2}", False),
                ("1+\\sqrt{2}", "\\sqrt2+1", True), ("\\frac{\\sqrt{6}}{3}", "\\sqrt{\\frac{2}{3}}", True),
                ("\\sqrt{2}-1", "\\frac{1}{1+\\sqrt{2}}", True), ("4\\sqrt{2}", "\\sqrt{32}", True),
                ("4\\sqrt{2}", "\\sqrt{16}", False), ("1024", "2^{11}", False),
                ("\\frac{1}{8}", "2^{-3}", True), ("1500", "1.5\\times10^{3}", True),
                ("1500", "1.5\\times10^{4}", False)]:
    add("surd_power", g, t, e)
# signs, complex numbers, text answers, pi
for g, t, e in [("-5", "-5", True), ("-5", "5", False), ("-\\frac{3}{4}", "-0.75", True),
                ("2+3i", "3i+2", True), ("2+3i", "2-3i", False), ("1-i", "-i+1", True),
                ("\\text{Monday}", "\\text{Monday}", True), ("\\text{Monday}", "\\text{Tuesday}", False),
                ("\\text{(C)}", "\\text{(C)}", True), ("\\text{(C)}", "\\text{(D)}", False),
                ("2\\pi", "\\pi \\cdot 2", True), ("\\frac{\\pi}{2}", "\\frac{1}{2}\\pi", True),
                ("\\frac{\\pi}{2}", "\\frac{\\pi}{3}", False), ("4\\pi", "12.566", False),
                ("\\frac{x+1}{2}", "\\frac{1}{2}x+\\frac{1}{2}", True), ("x^2-1", "(x-1)(x+1)", True),
                ("x^2-1", "(x-1)^2", False)]:
    add("sign_complex_text", g, t, e)
# lists, thousands with a thin space, rounding, currency, more nesting
for g, t, e in [("1, 2", "1, 2", True), ("-2, 1", "-2,1", True),
                ("10000", "10\\,000", True), ("10000", "10{,}001", False),
                ("\\frac{1}{3}", "0.333", False), ("\\frac{1}{3}", "0.3333333", True),
                ("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{{2}}", True),
                ("\\frac{1}{2}", "{\\frac{{1}}{{2}}}", True), ("\\frac{1}{2}", "{\\frac{{1}}{{3}}}", False),
                ("18.90", "\\$18.90", True), ("18.90", "\\$18.99", False),
                ("(0,\\infty)", "(0, \\infty)", True), ("(0,\\infty)", "[0, \\infty)", False),
                ("\\{-1,1\\}", "\\{1,-1\\}", True), ("\\{-1,1\\}", "\\{1\\}", False),
                ("5", "n=6", False),
                ("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", True),
                ("\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\\\4\\end{pmatrix}", False)]:
    add("misc", g, t, e)
# answers in $...$, the Minerva "Final Answer" sign-off, an unclosed box before a closed one
rows.append({"category": "fallback", "gold": "5", "completion": "The answer is $\\boxed{5}$.",
             "expected": True})
rows.append({"category": "fallback", "gold": "5", "expected": True,
             "completion": "Final Answer: The final answer is $5$. I hope it is correct."})
rows.append({"category": "fallback", "gold": "5", "expected": False,
             "completion": "Final Answer: The final answer is $6$. I hope it is correct."})
rows.append({"category": "multi_boxed", "gold": "4", "expected": True,
             "completion": "We get \\boxed{3 and then, no. Recomputing: \\boxed{4}."})

if __name__ == "__main__":
    out = Path(__file__).with_name("grading_corpus.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} pairs to {out}")
