"""A realistic scorer-sensitivity case built from MATH500 (MIT licence, examples/data/math500).

Two simulated models answer MATH500 problems; every completion is the
problem's official solution with its final answer *rewritten*: into an equal
form (a decimal for a fraction, an improper fraction or a decimal for a mixed
number, a mixed number for an improper fraction, thousands separators, a sum
with its terms reversed) or a near miss (a decimal rounded to 2 places, the
product reading of a mixed number, off by one, a reciprocal, a sign flip,
another problem's answer), put in the solution's last box, or given after the
unboxed solution in the Minerva sign-off or an answer phrase
(:func:`in_solution`). The "base" model writes sign-offs and
alternative forms often (few-shot style), the "rl" model boxes its answers in
the gold's own form (the format a boxed-answer reward teaches) and solves
fewer problems more reliably. Which answers are right is known by
construction, so each scorer's verdicts can be checked, and the pass@k
comparison can be recomputed per scorer.

Each row also carries ``truth`` and, for contrast, ``correct__exact_match``
(a naive scorer: the extracted string equals the gold string), so ``report``
shows three scorers. Run ``python tests/verify/sensitivity_case.py OUT_DIR
[PROBLEMS N]`` to write the rollouts and gold file, grade them with ``verify
--backend math-verify,canonical``, run ``report`` on the graded table and
print the tables of docs/verifiers.md from the report's JSON.
"""

from __future__ import annotations

import json
import random
import sys
from fractions import Fraction
from pathlib import Path

from rlvr_boundary.verify.canonical import canonical_answer, exact_value

WRAPS = {
    "boxed": lambda a: f"Putting it together, the result is $\\boxed{{{a}}}$.",
    "sign_off": lambda a: f"Final Answer: The final answer is ${a}$. I hope it is correct.",
    "phrase": lambda a: f"Therefore, the answer is ${a}$.",
}


def in_solution(solution: str, ans: str, wrap: str) -> str:
    """The official solution ending in ``ans`` instead of its own answer.

    ``boxed``: ``ans`` replaces the content of the solution's last box.
    ``sign_off`` and ``phrase``: every box is opened (its content stays as text,
    since a box would take priority over a sign-off) and the sign-off or answer
    phrase with ``ans`` is appended. Without a box: the wrap alone.
    """
    from rlvr_boundary.verify.quality import _box_spans

    spans = _box_spans(solution)
    if not spans:
        return WRAPS[wrap](ans)

    def close(b: int) -> int:  # past the box's closing brace
        return b + 1 if b < len(solution) and solution[b] == "}" else b

    if wrap == "boxed":
        start, _, b = spans[-1]
        return solution[:start] + "\\boxed{" + ans + "}" + solution[close(b):]
    out, last = [], 0
    for start, a, b in spans:
        out += [solution[last:start], solution[a:b]]
        last = close(b)
    out.append(solution[last:])
    return "".join(out).rstrip() + "\n\n" + WRAPS[wrap](ans)


def _rational(gold: str) -> Fraction | None:
    v = exact_value(gold)
    if v is None or set(v) - {1}:
        return None
    return v.get(1, Fraction(0))


def _terminating(f: Fraction) -> bool:
    q = f.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _dec(f: Fraction, places: int | None = None) -> str:
    if places is None:
        s = f"{float(f):.12f}".rstrip("0").rstrip(".")
        return s
    return f"{float(f):.{places}f}"


def equal_forms(gold: str) -> list[str]:
    """Ways to write the gold answer that a careful grader accepts (the gold first)."""
    out = [gold]
    f = _rational(gold)
    if f is not None and "%" not in gold and "\\circ" not in gold and "_" not in gold:
        if f.denominator == 1:
            if abs(f) >= 1000:
                out.append(f"{int(f):,}")
        else:
            if _terminating(f):
                out.append(_dec(f))
            a, r = divmod(abs(f.numerator), f.denominator)
            sign = "-" if f < 0 else ""
            if a:
                out.append(f"{sign}{a}\\frac{{{r}}}{{{f.denominator}}}")  # mixed number
            out.append(f"{sign}\\frac{{{abs(f.numerator)}}}{{{f.denominator}}}")
    else:
        swapped = _reverse_terms(gold)
        if swapped:
            out.append(swapped)  # 2\\pi+18 for 18+2\\pi, 7i-2 for -2+7i: equal, reordered
        elif "=" not in gold and "," not in gold and "\\begin" not in gold and len(gold) < 25:
            out.append(gold.replace(" ", ""))
    seen, uniq = set(), []
    for x in out:
        if x not in seen:
            seen.add(x)
            uniq.append(x)
    return uniq


def _terms(gold: str) -> list[str] | None:
    """Top-level signed terms of a sum (None if it is not a plain sum of two or more)."""
    if any(x in gold for x in ("=", ",", "\\begin", "\\pm", "\\cup", "_", "\\in", "\\%", "\\circ")):
        return None
    s = gold.replace(" ", "")
    terms, depth, cur = [], 0, ""
    for i, ch in enumerate(s):
        depth += ch in "({[" 
        depth -= ch in ")}]"
        if ch in "+-" and depth == 0 and i > 0 and s[i - 1] not in "^{(":
            terms.append(cur)
            cur = ch
        else:
            cur += ch
    terms.append(cur)
    return terms if len(terms) >= 2 and all(t not in ("", "+", "-") for t in terms) else None


def _reverse_terms(gold: str) -> str | None:
    t = _terms(gold)
    if t is None:
        return None
    t = [x if x[0] in "+-" else "+" + x for x in reversed(t)]
    out = "".join(t)
    return out[1:] if out.startswith("+") else out


def near_misses(gold: str, other: str) -> list[str]:
    """Wrong answers that look right (every one differs from the gold in value)."""
    out = []
    f = _rational(gold)
    if f is not None and "%" not in gold and "_" not in gold and "\\circ" not in gold:
        if f.denominator == 1:
            out.append(str(int(f) + 1))
        else:
            if not _terminating(f * 100):
                out.append(_dec(f, 2))  # 0.33 for 1/3: rounded too early
            a, r = divmod(abs(f.numerator), f.denominator)
            if a and gold.strip().startswith(str(a)) and "\\frac" in gold:
                out.append(f"\\frac{{{a * r}}}{{{f.denominator}}}")  # the product reading
            if f.numerator != 0:
                out.append(f"\\frac{{{f.denominator}}}{{{f.numerator}}}")
        if f != 0:
            out.append(f"-{gold}" if not gold.startswith("-") else gold[1:])
    t = _terms(gold)
    if t is not None and f is None:
        last = t[-1]
        flipped = ("+" + last[1:]) if last.startswith("-") else ("-" + last.lstrip("+"))
        out.append("".join(t[:-1]) + flipped)  # one sign wrong
    if canonical_answer(other) != canonical_answer(gold):
        out.append(other)
    return [x for x in out if x]


def build(rows: list[dict], *, n: int = 16, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Rollouts of models 'base' and 'rl' and the gold file; ``truth`` marks right answers."""
    rng = random.Random(seed)
    out, gold = [], []
    for i, r in enumerate(rows):
        g = r["answer"]
        gold.append({"id": r["unique_id"], "answer": g})
        same = equal_forms(g)
        near = near_misses(g, rows[(i + 1) % len(rows)]["answer"]) or [rows[(i + 1) % len(rows)]["answer"]]
        p_base = rng.betavariate(0.7, 1.0)
        collapsed = rng.random() < 0.3
        p_rl = p_base * 0.1 if collapsed else p_base ** 0.35
        for model, p, alt, wraps in (("base", p_base, 0.6, ("sign_off", "phrase", "boxed")),
                                     ("rl", p_rl, 0.1, ("boxed", "boxed", "boxed", "sign_off"))):
            for j in range(n):
                right = rng.random() < p
                if right:
                    ans = rng.choice(same[1:]) if len(same) > 1 and rng.random() < alt else same[0]
                else:
                    ans = rng.choice(near)
                wrap = rng.choice(wraps)
                text = (in_solution(r["solution"], ans, wrap) if r.get("solution")
                        else WRAPS[wrap](ans))
                out.append({"prompt_id": r["unique_id"], "model": model, "sample_idx": j,
                            "text": text, "truth": right,
                            "correct__exact_match": exact_match(text, g)})
    return out, gold


def exact_match(text: str, gold: str) -> bool:
    """The naive scorer, for contrast: the extracted answer string equals the gold string
    (spaces removed), as a plain exact-match evaluation does."""
    from rlvr_boundary.verify.extract import extract_answer

    ans = extract_answer(text)[0]
    return ans is not None and ans.replace(" ", "") == gold.replace(" ", "")


def main(out_dir: str, problems: int = 250, n: int = 16, bootstrap: int = 4000) -> None:
    """Write the case, grade it with both backends, draw the report, print the tables."""
    from rlvr_boundary.cli import main as cli

    d = Path(out_dir)
    write_case(d, problems, n)
    code = cli(["verify", str(d / "rollouts.jsonl"), "--gold", str(d / "gold.jsonl"),
                "--backend", "math-verify,canonical", "--json", str(d / "verify.json")])
    if code:
        raise SystemExit(code)
    code = cli(["report", str(d / "rollouts.verified.parquet"), "--bootstrap", str(bootstrap),
                "--out", str(d / "report.html")])
    if code:
        raise SystemExit(code)
    print_tables(d)


def math500_rows(problems: int) -> list[dict]:
    """``problems`` MATH500 records, evenly spaced over the 500."""
    from rlvr_boundary.examples import example_dir

    rows = [json.loads(x) for x in
            (example_dir("math500") / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    return rows[::max(1, len(rows) // problems)][:problems]


def write_case(d: Path, problems: int, n: int) -> None:
    """``rollouts.jsonl`` and ``gold.jsonl`` of the case in ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    rollouts, gold = build(math500_rows(problems), n=n)
    (d / "rollouts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rollouts))
    (d / "gold.jsonl").write_text("".join(json.dumps(x) + "\n" for x in gold))


def print_tables(d: Path) -> None:
    """The tables of docs/verifiers.md, from the report's JSON (what the page shows)."""
    from rlvr_boundary.io.rollouts import read_rollouts

    doc = json.loads((d / "report.json").read_text(encoding="utf-8"))
    block = doc["scorers"]
    sens = block["comparisons"]["rl"]
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64) if k in sens["ks"]]
    print("| scorer | " + " | ".join(f"base / rl @{k}" for k in ks)
          + " | k* | price (points) | supported loss k |")
    print("|---|" + "---|" * (len(ks) + 3))
    for s, per in sens["per_scorer"].items():
        cells = [f"{per['pass_at_k']['base'][sens['ks'].index(k)]:.3f} / "
                 f"{per['pass_at_k']['rl'][sens['ks'].index(k)]:.3f}" for k in ks]
        loss = per["loss_budgets"]
        print(f"| {s} | " + " | ".join(cells) + f" | {per['k_star']} | {per['price'] * 100:.2f}"
              f" at k = {per['price_k']} | {(str(loss[0]) + '-' + str(loss[-1])) if loss else 'none'} |")
    print("robust:", json.dumps(sens["robust"]))
    dis = block["disagreement"]
    others = list(dis["overall"])
    print(f"\nreference: {dis['reference']}")
    print("| answer type | completions | " + " | ".join(
        f"{s} differs | only {dis['reference']} | only {s}" for s in others) + " |")
    print("|---|---|" + "---|---|---|" * len(others))
    for ty, st in sorted(dis["by_type"].items(), key=lambda kv: (-max(
            kv[1][s]["rate"] for s in others), kv[0])):
        print(f"| {ty} | {st[others[0]]['rows']} | " + " | ".join(
            f"{st[s]['disagree']} ({st[s]['rate']:.1%}) | {st[s]['only_reference']} | "
            f"{st[s]['only_other']}" for s in others) + " |")
    st = dis["overall"]
    print(f"| all | {st[others[0]]['rows']} | " + " | ".join(
        f"{st[s]['disagree']} ({st[s]['rate']:.1%}) | {st[s]['only_reference']} | "
        f"{st[s]['only_other']}" for s in others) + " |")
    t = read_rollouts(d / "rollouts.verified.parquet")
    truth = t["truth"].to_pylist()
    for s in block["scorers"]:
        v = t[f"correct__{s}"].to_pylist()
        fa = sum(a and not b for a, b in zip(v, truth))
        fr = sum(b and not a for a, b in zip(v, truth))
        print(f"{s}: false accepts {fa}, false rejects {fr} of {len(v)}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] == "--tables":  # tables of a graded run only
        print_tables(Path(sys.argv[1]))
    else:
        main(sys.argv[1], *(int(x) for x in sys.argv[2:]))
