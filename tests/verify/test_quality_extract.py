"""Quality flags, answer extraction and canonical answers."""

from __future__ import annotations

import math
import re
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.verify.canonical import canonical_answer
from rlvr_boundary.verify.extract import ExtractOptions, extract_answer
from rlvr_boundary.verify.quality import (
    boxed_answers,
    cjk_share,
    cut_after_answer,
    last_boxed,
    quality_flags,
    redundancy3,
)


def test_boxes_with_nested_and_escaped_braces():
    t = r"a \boxed{\frac{1}{2}} b \fbox{x} c \boxed{\{1,2\}} d \boxed{unclosed"
    assert boxed_answers(t) == [r"\frac{1}{2}", "x", r"\{1,2\}"]
    assert last_boxed(t) == r"\{1,2\}"
    assert last_boxed("no box") is None
    assert last_boxed(r"\boxed 5$") == "5"
    assert cut_after_answer(r"so \boxed{3}. Then more") == r"so \boxed{3}"
    assert cut_after_answer("nothing") == "nothing"


def test_redundancy_and_cjk():
    assert redundancy3("a b c a b c a b c") == pytest.approx(1 - 3 / 7)
    assert redundancy3("one two") == 0.0
    assert cjk_share("答案是5 abc") == pytest.approx(3 / 6)
    assert cjk_share("12345") == 0.0


def test_quality_flags():
    f = quality_flags(r"I think \boxed{2} and also \boxed{3}. Let me now talk about something else entirely.")
    assert f["q_multi_boxed"] and not f["q_no_boxed"] and f["q_text_after_answer"]
    g = quality_flags(r"The answer is \boxed{2}.$")
    assert not g["q_text_after_answer"] and not g["q_multi_boxed"]
    assert quality_flags("no box")["q_no_boxed"]
    assert quality_flags("答案是五", prompt="What is 2+3?")["q_language_mix"]
    assert not quality_flags("The answer is five", prompt="What is 2+3?")["q_language_mix"]
    assert quality_flags("The answer is five", prompt="二加三等于几？")["q_language_mix"]


@given(st.text(max_size=300))
def test_flags_never_raise_and_stay_in_range(text):
    f = quality_flags(text)
    assert 0.0 <= f["q_cjk_share"] <= 1.0 and 0.0 <= f["q_redundancy3"] < 1.0
    assert f["q_no_boxed"] == (len(boxed_answers(text)) == 0)


def test_extraction_fallbacks():
    assert extract_answer(r"x \boxed{4} y") == ("4", "boxed")
    assert extract_answer("so the answer is 12.") == ("12", "answer_is")
    assert extract_answer("we get 3 and then 7") == ("7", "last_number")
    only_box = ExtractOptions(fallbacks=("boxed",))
    assert extract_answer("the answer is 12.", only_box) == (None, None)
    with pytest.raises(ValueError, match="unknown extraction"):
        extract_answer("x", ExtractOptions(fallbacks=("magic",)))


@pytest.mark.parametrize("a, b", [
    (r"\dfrac{1}{2}", "0.5"), ("1/2", r"\frac12"), ("x = 3", "3"), (r"10\text{ cm}", "10"),
    (r"90^\circ", "90"), (r"50\%", "50"), (r"\{3,1,2\}", r"\{1,2,3\}"), ("$4$", "4"),
    ("1,000", "1000"), (r"\left(1,2\right]", "(1, 2]"), (r"\$18.90", "18.9"),
])
def test_canonical_merges_equal_answers(a, b):
    assert canonical_answer(a) == canonical_answer(b)


@pytest.mark.parametrize("a, b", [
    ("(1,2)", "(2,1)"), ("(1,2)", "(1,2]"), ("0.33", r"\frac13"), (r"\sqrt2", "2"),
    ("-1/3", "1/3"),
])
def test_canonical_keeps_different_answers_apart(a, b):
    assert canonical_answer(a) != canonical_answer(b)


# ----------------------------------------------------------------------------- boxes vs a reference


def _reference_boxes(text: str) -> list[str]:
    """Brute force: scan from every box command, count braces char by char (quadratic)."""
    out, i, n = [], 0, len(text)
    while True:
        hits = [h for h in (text.find("\\boxed", i), text.find("\\fbox", i)) if h >= 0]
        if not hits:
            return out
        start = min(hits)
        j = start + (6 if text.startswith("\\boxed", start) else 5)
        if j < n and (text[j].isalpha()):
            i = j
            continue
        if j < n and text[j] == "{":
            depth, k = 0, j
            while k < n:
                if text[k] == "\\" and k + 1 < n and text[k + 1] in "{}\\":
                    k += 2
                    continue
                depth += text[k] == "{"
                depth -= text[k] == "}"
                if depth == 0:
                    break
                k += 1
            if k < n:
                out.append(text[j + 1:k])
                i = k + 1
            else:
                i = j + 1  # unclosed: skip this command only
        elif j < n and text[j] == " ":
            m = re.match(r" +([^\s$]+)", text[j:j + 200])
            if m:
                out.append(m.group(1))
                i = j + m.end(1)
            else:
                i = j
        else:
            i = j


@settings(max_examples=400)
@given(st.lists(st.sampled_from(["\\boxed", "\\fbox", "{", "}", "\\{", "\\}", "\\\\", "a", "1",
                                 " ", "$", "\\boxedx"]), max_size=40).map("".join))
def test_boxed_answers_match_a_brute_force_scan(text):
    assert boxed_answers(text) == _reference_boxes(text)


def test_unclosed_box_does_not_hide_later_boxes_and_scans_are_linear():
    assert last_boxed(r"We get \boxed{3 and then, no: \boxed{4}.") == "4"
    assert boxed_answers(r"\boxed{1 \\ {2}} \boxed{\{x\}}") == [r"1 \\ {2}", r"\{x\}"]
    big = "\\boxed{" * 200_000 + "\\boxed{5}"  # 1.4 MB of unclosed boxes
    t0 = time.monotonic()
    assert last_boxed(big) == "5" and quality_flags(big)["q_no_boxed"] is False
    assert time.monotonic() - t0 < 5


@given(st.lists(st.sampled_from(["a", "b", "c", "the", "\n", "  "]), max_size=60).map(" ".join))
def test_redundancy3_matches_a_counter(text):
    toks = text.split()
    grams = [tuple(toks[i:i + 3]) for i in range(len(toks) - 2)]
    want = 1 - len(Counter(grams)) / len(grams) if grams else 0.0
    assert redundancy3(text) == pytest.approx(want)


def test_quality_flag_keys_are_the_schema_columns():
    from rlvr_boundary.io.schema import ROLLOUT_BY_NAME

    f = quality_flags("x")
    assert set(f) == {c for c in ROLLOUT_BY_NAME if c.startswith("q_")}


def test_extraction_minerva_sign_off_and_dollar_boxes():
    assert extract_answer("Final Answer: The final answer is $5$. I hope it is correct.")[0] == "5"
    assert extract_answer(r"The answer is $\boxed{5}$.") == ("5", "boxed")


@pytest.mark.parametrize("text, want", [
    ("The answer is 4.6667", "4.6667"),
    ("Final Answer: The final answer is $0.25$. I hope it is correct.", "0.25"),
    ("Final Answer: The final answer is 0.25. I hope it is correct.", "0.25"),
    ("The final answer is $-\\frac{3}{4}$.", "-\\frac{3}{4}"),
    ("so the answer is -3/4.", "-3/4"),
    ("**Answer:** $1\\frac{4}{5}$", "1\\frac{4}{5}"),
    ("Answer: 137 \\frac{1}{2}", "137 \\frac{1}{2}"),
    ("The answer is \\(2\\sqrt{3}\\).", "2\\sqrt{3}"),
    ("The answer is $$x^2+1$$", "x^2+1"),
    ("Therefore, the answer is $\\frac{1}{2}$, since 2x = 1.", "\\frac{1}{2}"),
    ("The answer is 12. Then we check it.", "12"),
    ("The answer is: 1,000,000.", "1,000,000"),
    ("First the answer is 3. Wait. The answer is 5.", "5"),
    ("Answer: 0.5 because half of one is that", "0.5"),
    ("Final Answer: The final answer is $\\$32,\\!348$. I hope it is correct.", "\\$32,\\!348"),
    ("So the answer is then $\\$36$ for both.", "\\$36"),
])
def test_answer_phrases_take_the_whole_answer(text, want):
    assert extract_answer(text) == (want, "answer_is")


def test_last_number_keeps_decimals_signs_and_thousands():
    assert extract_answer("we get -2.75 in the end") == ("-2.75", "last_number")
    assert extract_answer("a total of 1,000 dollars") == ("1000", "last_number")
    assert extract_answer("the point (3,4)")[0] == "4"  # not "34"
    assert extract_answer("so 3/8 remain") == ("3/8", "last_number")


def test_extraction_order_is_configurable():
    text = "I think \\boxed{3}. The answer is 4."
    assert extract_answer(text)[0] == "3"
    assert extract_answer(text, ExtractOptions(fallbacks=("answer_is", "boxed"))) == ("4", "answer_is")
    assert extract_answer("The answer is 4.", ExtractOptions(fallbacks=("last_number",))) == \
        ("4", "last_number")
    with pytest.raises(ValueError, match="unknown extraction"):
        ExtractOptions(fallbacks=())


@pytest.mark.parametrize("mixed, value, product", [
    ("1\\frac{4}{5}", "1.8", "\\frac{4}{5}"), ("137 \\frac{1}{2}", "137.5", "68.5"),
    ("-2\\frac13", "-7/3", "-2/3"), ("3\\frac{1}{4}", "\\frac{13}{4}", "0.75"),
])
def test_mixed_numbers_are_their_sum(mixed, value, product):
    from rlvr_boundary.verify.canonical import answers_match

    assert canonical_answer(mixed) == canonical_answer(value)
    assert answers_match(value, mixed) and not answers_match(product, mixed)


@pytest.mark.parametrize("s", ["2\\frac{5}{3}", "1\\frac{1}{2}+1", "(2\\frac{1}{2})^{2}"])
def test_integer_before_a_fraction_elsewhere_is_not_evaluated(s):
    from rlvr_boundary.verify.canonical import exact_value

    assert exact_value(s) is None  # a sum or a product? neither is guessed


def test_no_tolerance_merges_different_numbers():
    from rlvr_boundary.verify.canonical import answers_match

    assert not answers_match("10000001", "10000000")
    assert not answers_match("11111111101", "11,\\! 111,\\! 111,\\! 100")
    assert answers_match("0.333333", "\\frac13") and answers_match("0.3333333", "\\frac13")
    assert not answers_match("0.33", "\\frac13") and not answers_match("0.333", "\\frac13")
    assert not answers_match("0.1234568", "0.1234567")  # an exact decimal gold: exact only
    assert not answers_match("0.1250001", "\\frac18")
    assert not answers_match("\\frac{1}{2006!}", "\\frac{1}{2004!}")
    assert not answers_match("2^{-99}", "2^{-98}")


# ----------------------------------------------------------------------------- exact canonical values


@pytest.mark.parametrize("a, b", [
    (r"\sqrt{8}", r"2\sqrt2"), (r"2^{10}", "1024"), (r"\frac{1}{\sqrt2}", r"\frac{\sqrt{2}}{2}"),
    (r"\sqrt{\frac12}", r"\frac{\sqrt2}{2}"), (r"\frac{1}{1+\sqrt2}", r"\sqrt2-1"),
    (r"1.5\times10^{3}", "1500"), (r"3\cdot 4", "12"), (r"2^{-3}", "0.125"),
    (r"\begin{bmatrix}1&0\\0&1\end{bmatrix}", r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}"),
    (r"\frac{{a}}{{b}}", r"\frac{a}{b}"), ("e^2", "e^{2}"), (r"10\,000", "10000"),
])
def test_canonical_merges_values_written_differently(a, b):
    assert canonical_answer(a) == canonical_answer(b)


@pytest.mark.parametrize("a, b", [
    ("2^10", "1024"),                     # LaTeX reads 2^1 0: ambiguous, kept apart
    (r"\begin{vmatrix}1&0\\0&1\end{vmatrix}", r"\begin{pmatrix}1&0\\0&1\end{pmatrix}"),
    (r"\sqrt{16}", r"4\sqrt{2}"), (r"\sqrt{2}+\sqrt{3}", r"\sqrt{5}"),
])
def test_canonical_keeps_apart_what_differs_or_is_ambiguous(a, b):
    assert canonical_answer(a) != canonical_answer(b)


def test_canonical_refuses_huge_work_fast():
    t0 = time.monotonic()
    for s in (r"9^{9^{9^{9}}}", r"2^{64}^{64}", "(" * 5000 + "1" + ")" * 5000,
              r"\sqrt{" * 2000 + "2" + "}" * 2000, "9" * 100_000, r"(1+\sqrt2)^{64}"):
        canonical_answer(s)
    assert time.monotonic() - t0 < 2
    assert canonical_answer(r"9^{9^{9^{9}}}") == r"9^{9^{9^{9}}}"  # left as a string


def test_squarefree_matches_brute_force():
    from rlvr_boundary.verify.canonical import _squarefree

    for n in list(range(1, 3000)) + [10007 ** 2, 10007 * 10009, 2 * 10007 ** 2, 999_983 ** 2]:
        g, r = _squarefree(n)
        assert g * g * r == n
        assert all(r % (p * p) for p in range(2, math.isqrt(r) + 1)), n


_leaf = st.integers(1, 12).map(lambda n: (str(n), float(n)))
_NAN = float("nan")


def _div(a, b):
    return a / b if b != 0 else _NAN


def _pw(a, k):
    try:
        return a ** k
    except OverflowError:
        return _NAN


def _expr():
    """(LaTeX, float value) pairs: the float arithmetic is the reference."""
    return st.recursive(
        _leaf, lambda kids: st.one_of(
            st.tuples(kids, kids).map(lambda t: (f"({t[0][0]}+{t[1][0]})", t[0][1] + t[1][1])),
            st.tuples(kids, kids).map(lambda t: (f"({t[0][0]}-{t[1][0]})", t[0][1] - t[1][1])),
            st.tuples(kids, kids).map(lambda t: (f"{{{t[0][0]}}}\\cdot{{{t[1][0]}}}",
                                                 t[0][1] * t[1][1])),
            st.tuples(kids, kids).map(lambda t: (f"\\frac{{{t[0][0]}}}{{{t[1][0]}}}",
                                                 _div(t[0][1], t[1][1]))),
            _leaf.map(lambda t: (f"\\sqrt{{{t[0]}}}", math.sqrt(t[1]))),
            st.tuples(kids, st.integers(0, 3)).map(lambda t: (f"{{{t[0][0]}}}^{{{t[1]}}}",
                                                              _pw(t[0][1], t[1]))),
        ), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(_expr(), _expr())
def test_surd_classes_are_sound(a, b):
    """The exact value agrees with float arithmetic; one class -> one value (no wrong merge)."""
    from rlvr_boundary.verify.canonical import evaluate_surd, format_surd

    (sa, fa), (sb, fb) = a, b
    ca, cb = canonical_answer(sa), canonical_answer(sb)
    va = evaluate_surd(sa)
    if va is not None and math.isfinite(fa):
        approx = sum(float(c) * math.sqrt(m) for m, c in va.items())
        assert approx == pytest.approx(fa, rel=1e-9, abs=1e-9)
        assert format_surd(va) == ca
    if ca == cb and math.isfinite(fa) and math.isfinite(fb):
        assert fa == pytest.approx(fb, rel=1e-9, abs=1e-9)


def test_rationalised_roots_fall_in_one_class():
    import random

    rng = random.Random(0)
    for _ in range(200):
        a, b = rng.randint(1, 50), rng.randint(1, 50)
        assert canonical_answer(f"\\frac{{\\sqrt{{{a * b * b}}}}}{{{b}}}") == \
            canonical_answer(f"\\sqrt{{{a}}}")
