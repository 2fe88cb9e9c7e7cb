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

# ----------------------------------------------------------------------------- MATH500 answer types
# For every answer type of MATH500's gold answers (real gold strings, MIT licence, see
# examples/data/math500/README.md): the gold, an equivalent form written differently, and a
# near miss. The completion wraps the answer in a box, a sign-off or an answer phrase in turn.
WRAPS = (
    lambda a: f"Computing carefully, we get \\boxed{{{a}}}.",
    lambda a: f"Final Answer: The final answer is ${a}$. I hope it is correct.",
    lambda a: f"All cases checked.\n**Answer:** ${a}$",
    lambda a: f"So the answer is ${a}$.",
)
TYPED = {
    "integer": [("10,\\!080", "10080", "10081"), ("11,\\! 111,\\! 111,\\! 100", "11111111100",
                                                   "11111111101"),
                ("27648", "27,648", "27684"), ("-128", "-2^{7}", "128")],
    "decimal": [(".0000672", "6.72\\times10^{-5}", "0.000672"), (".35625", "0.35625", "0.3562"),
                ("326.5", "\\frac{653}{2}", "326"), ("0.15", "\\frac{3}{20}", "0.015"),
                ("3.21", "3.210", "3.12")],
    "fraction": [("\\frac 34", "0.75", "\\frac43"), ("\\frac9{19}", "\\dfrac{9}{19}", "\\frac{9}{91}"),
                 ("-\\frac{24}{25}", "-0.96", "\\frac{24}{25}"),
                 ("\\frac{448}{15625}", "0.028672", "0.0287"),
                 ("\\dfrac{33}{100}", "0.33", "\\frac{1}{3}")],
    "mixed_number": [("1\\frac{4}{5}", "1.8", "\\frac{4}{5}"), ("137 \\frac{1}{2}", "137.5", "68.5"),
                     ("1\\frac{4}{5}", "\\frac{9}{5}", "1.45"),
                     ("137 \\frac{1}{2}", "\\frac{275}{2}", "137\\frac{1}{3}")],
    "radical": [("11 \\sqrt{5} + 11", "11+11\\sqrt5", "11\\sqrt{5}-11"),
                ("2\\sqrt{113}", "\\sqrt{452}", "\\sqrt{226}"),
                ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt3}", "\\sqrt3"),
                ("11\\sqrt2", "\\sqrt{242}", "11\\sqrt3")],
    "pi": [("12\\pi", "12 \\pi", "12"), ("\\frac{20000}{\\pi}", "20000/\\pi", "20000\\pi"),
           ("18+2\\pi", "2\\pi+18", "18+\\pi"), ("-\\frac{\\pi}{6}", "-\\frac{1}{6}\\pi",
                                                 "\\frac{\\pi}{6}")],
    "interval": [("(-\\infty, 0]", "(-\\infty,0]", "(-\\infty,0)"),
                 ("(-\\infty, 2) \\cup (3, \\infty)", "(-\\infty,2)\\cup(3,\\infty)",
                  "(-\\infty,2]\\cup(3,\\infty)"),
                 ("x \\in [-2,7]", "[-2,7]", "[-2,7)"),
                 ("\\left(\\frac{3}{5},\\frac{8}{3}\\right]", "(0.6, \\frac{8}{3}]",
                  "(\\frac{3}{5},\\frac{8}{3})")],
    "set_tuple": [("(15,-29)", "(15, -29)", "(-29,15)"), ("3, 5, 7", "3,5,7", "3, 5"),
                  ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})", "(3,\\pi)"),
                  ("(1,-16,-4,43)", "(1, -16, -4, 43)", "(1,-16,4,43)")],
    "matrix": [("\\begin{pmatrix} 1/5 \\\\ -18/5 \\end{pmatrix}",
                "\\begin{pmatrix} 0.2 \\\\ -3.6 \\end{pmatrix}",
                "\\begin{pmatrix} 1/5 \\\\ 18/5 \\end{pmatrix}"),
               ("\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}",
                "\\begin{bmatrix}-1&0\\\\0&-1\\end{bmatrix}",
                "\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}")],
    "degree": [("106^\\circ", "106", "107^\\circ"),
               ("\\frac{270}7\\text{ degrees}", "\\frac{270}{7}", "38.57")],
    "units": [("15\\mbox{ cm}^2", "15", "16"), ("5.4 \\text{ cents}", "5.4", "54"),
              ("\\$18.90", "18.90", "\\$19.80"), ("864 \\mbox{ inches}^2", "864", "846")],
    "percent": [("25\\%", "25", "26\\%"), ("12.5\\%", "12.5", "1.25\\%")],
    "base_n": [("1011_2", "1011_{2}", "1101_2"), ("2516_8", "2516_{8}", "2561_8"),
               ("4210_{5}", "4210_5", "4201_5")],
    "pm": [("1 \\pm \\sqrt{19}", "1\\pm\\sqrt{19}", "1+\\sqrt{19}"),
           ("3 \\pm 2 \\sqrt{2}", "3\\pm2\\sqrt2", "3+2\\sqrt2")],
    "equation": [("y = 2x + 3", "y=3+2x", "y=2x-3"),
                 ("5x - 7y + 11z + 4 = 0", "5x-7y+11z+4=0", "5x - 7y + 11z - 4 = 0"),
                 ("x=5", "5", "x=6"), ("y = -2x", "y=-2x", "y=2x")],
    "text": [("\\text{Evelyn}", "\\text{Evelyn}", "\\text{Navin}"),
             ("\\text{(C)}", "\\text{(C)}", "\\text{(B)}"),
             ("\\text{even}", "\\text{ even}", "\\text{odd}")],
    "complex": [("-2 + 7i", "-2+7i", "-2-7i"), ("1 - 12i", "1-12i", "12i-1")],
    "expression": [("8n^2 + 4n + 1", "8n^2+4n+1", "8n^2+4n-1"),
                   ("(a+5)(b+2)", "ab+2a+5b+10", "(a+2)(b+5)"),
                   ("\\cot x", "\\frac{\\cos x}{\\sin x}", "\\tan x"), ("2k+2", "2(k+1)", "2k+1")],
}
w = 0
for ty, triples in TYPED.items():
    for gold, same, near in triples:
        for ans, ok in ((same, True), (near, False)):
            rows.append({"category": f"math500_{ty}", "gold": gold, "completion": WRAPS[w % 4](ans),
                         "expected": ok})
            w += 1

# False accepts reported against math-verify (Math-Verify issues 14 and 60 on GitHub) and
# one-side equation comparisons: every one must be rejected.
for gold, ans in [("\\frac{1}{2004!}", "\\frac{1}{2006!}"), ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}"),
                  ("\\frac{2^{2005}+1}{3 \\cdot 2^{2006}}", "\\frac{1}{3 \\cdot 2^{2006}}"),
                  ("\\pm 2021", "2021"), ("2021", "\\pm 2021"), ("x+y=5", "5"), ("5", "2x=5"),
                  ("5", "x+y=5"), ("3x-y+13=0", "3x+4y+14=0"), ("204_5", "204_6"),
                  ("10000000", "10000001"), ("1 - \\frac{1}{e}", "1 + \\frac{1}{e}"),
                  ("n=2, 3, 4", "n=1, 2, 3"), ("y=2x+3", "x=2x+3"), ("x=5", "y=5")]:
    add("known_false_positive", gold, ans, False)

# Whole answers after sign-offs and phrases (decimals, signs, mixed numbers).
for gold, text, ok in [
        ("4.6667", "The answer is 4.6667", True), ("\\frac{14}{3}", "The answer is 4.6667", False),
        ("\\frac{1}{4}", "Final Answer: The final answer is $0.25$. I hope it is correct.", True),
        ("0", "Final Answer: The final answer is $0.25$. I hope it is correct.", False),
        ("1.8", "Final Answer: The final answer is $1\\frac{4}{5}$. I hope it is correct.", True),
        ("-\\frac{3}{4}", "so the answer is -3/4.", True), ("\\frac{3}{4}", "so the answer is -3/4.", False),
        ("137.5", "Answer: 137 \\frac{1}{2}", True), ("68.5", "Answer: 137 \\frac{1}{2}", False),
        ("1000000", "The answer is: 1,000,000.", True), ("2.5", "We find x = 2.5 in the end", True)]:
    rows.append({"category": "sign_off", "gold": gold, "completion": text, "expected": ok})

if __name__ == "__main__":
    out = Path(__file__).with_name("grading_corpus.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} pairs to {out}")
