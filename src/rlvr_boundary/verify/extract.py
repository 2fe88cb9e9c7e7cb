"""Final-answer extraction from a completion, with configurable fallbacks.

Default order (the convention of the limit-of-RLVR / Qwen2.5-Math evaluators
and of math-verify's boxed-first extraction):

1. ``boxed``: the last balanced ``\\boxed{}`` or ``\\fbox{}``;
2. ``answer_is``: the last answer phrase or sign-off, taking the *whole*
   answer after it: "the answer is X", "the final answer is X", "Final Answer:
   X", "Answer: X" (also in bold, ``**Answer:** X``), and the Minerva sign-off
   "Final Answer: The final answer is $X$. I hope it is correct." (Lewkowycz et
   al., "Solving Quantitative Reasoning Problems with Language Models", arXiv
   2206.14858). X is the content of the ``$...$`` (or ``\\(...\\)``,
   ``\\[...\\]``) that follows, else the rest of the sentence: decimals, signs
   and fractions stay whole (``4.6667``, ``-3/4``), a sentence-ending period
   is removed;
3. ``last_number``: the last number in the text (thousands groups and
   decimals kept: ``1,000``, ``-2.5``, ``3/4``).

Each step can be switched off or reordered (``ExtractOptions.fallbacks``, CLI
``--extract``): research that counts a completion without a box as wrong uses
``fallbacks=("boxed",)``. Only the last 5,000 characters are searched by steps
2 and 3 (a final answer is at the end; scanning stays linear).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr_boundary.verify.quality import last_boxed
from rlvr_boundary.verify.registry import EXTRACT_METHODS

#: The extraction methods (:data:`rlvr_boundary.verify.registry.EXTRACT_METHODS`).
FALLBACKS = EXTRACT_METHODS
TAIL_CHARS = 5000

# The phrases, longest first so "the final answer is" wins over "answer is".
_PHRASE = re.compile(
    r"(?:the\s+final\s+answer\s+is|final\s+answer\s*(?:is)?\s*:?|the\s+answer\s+is"
    r"|\banswer\s+is\b|\banswer\s*:)", re.IGNORECASE)
_LEAD = re.compile(r"^(?:[\s:*]|is\b)*", re.IGNORECASE)
_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
# A sentence ends at ". " / "." at the end, not at a decimal point (4.6667).
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\n|(?i:\s+I\s+hope\b)|(?i:\s+(?:because|since)\b)")
_INLINE_MATH = re.compile(r"(?<!\\)\$((?:\\\$|[^$])+)(?<!\\)\$")
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?|\.\d+)(?:/\d+)?")


@dataclass
class ExtractOptions:
    """How to find the final answer in a completion."""

    fallbacks: tuple[str, ...] = FALLBACKS
    """Methods tried in order: 'boxed', 'answer_is', 'last_number'."""
    max_answer_chars: int = 2000
    """Longer extracted answers are cut (a runaway box is not an answer)."""

    def __post_init__(self) -> None:
        self.fallbacks = tuple(self.fallbacks)
        unknown = sorted(set(self.fallbacks) - set(FALLBACKS))
        if unknown or not self.fallbacks:
            raise ValueError(f"unknown extraction methods {unknown} or none given; "
                             f"known: {list(FALLBACKS)}")
        if self.max_answer_chars < 1:
            raise ValueError("max_answer_chars must be >= 1")


def _delimited(rest: str) -> str | None:
    """Content of the math delimiters ``rest`` starts with, or None."""
    for a, b in _DELIMS:
        if rest.startswith(a):
            end = rest.find(b, len(a))
            while a == "$" and end > 0 and rest[end - 1] == "\\":  # \$ is a dollar sign
                end = rest.find(b, end + 1)
            return rest[len(a):end] if end >= 0 else None
    return None


def answer_after_phrase(text: str) -> str | None:
    """The whole answer after the last answer phrase or sign-off (None if none).

    Parameters
    ----------
    text
        A completion.

    Returns
    -------
    str or None
        The answer with its math delimiters and a sentence-ending period
        removed.

    Examples
    --------
    >>> answer_after_phrase("The answer is 4.6667")
    '4.6667'
    >>> answer_after_phrase("Final Answer: The final answer is $0.25$. I hope it is correct.")
    '0.25'
    """
    tail = text[-TAIL_CHARS:]
    last = None
    for last in _PHRASE.finditer(tail):
        pass
    if last is None:
        return None
    rest = tail[last.end():]
    rest = rest[_LEAD.match(rest).end():]
    ans = _delimited(rest)
    if ans is None:
        m = _SENTENCE_END.search(rest)
        sentence = rest[:m.start()] if m else rest
        inline = _INLINE_MATH.search(sentence)
        ans = inline.group(1) if inline else sentence
    ans = ans.strip().rstrip("*").strip()
    while ans.endswith("."):  # "is 12." -> 12; a decimal point inside stays
        ans = ans[:-1].rstrip()
    return ans or None


def last_number(text: str) -> str | None:
    """The last number in ``text`` (thousands commas removed), or None."""
    hits = _NUMBER.findall(text[-TAIL_CHARS:])
    return hits[-1].replace(",", "") if hits else None


def extract_answer(text: str, opts: ExtractOptions | None = None) -> tuple[str | None, str | None]:
    """The final answer of ``text`` and the method that found it.

    Parameters
    ----------
    text
        A completion.
    opts
        The methods to try, in order (see the module docstring).

    Returns
    -------
    (str or None, str or None)
        The answer (at most ``max_answer_chars`` characters) and the name of
        the method that found it; ``(None, None)`` when no method finds one.
    """
    opts = opts or ExtractOptions()
    for method in opts.fallbacks:
        if method == "boxed":
            ans = last_boxed(text)
        elif method == "answer_is":
            ans = answer_after_phrase(text)
        else:
            ans = last_number(text)
        if ans is not None and ans.strip():
            return ans.strip()[: opts.max_answer_chars], method
    return None, None
