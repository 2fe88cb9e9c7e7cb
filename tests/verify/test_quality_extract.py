"""Quality flags, answer extraction and canonical answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr_audit.verify.canonical import canonical_answer
from rlvr_audit.verify.extract import ExtractOptions, extract_answer
from rlvr_audit.verify.quality import (
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
