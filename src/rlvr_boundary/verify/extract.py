"""Final-answer extraction from a completion, with configurable fallbacks.

Default order (the convention of the limit-of-RLVR / Qwen2.5-Math evaluators
and of math-verify's boxed-first extraction): the last balanced ``\\boxed{}``
or ``\\fbox{}``; then "the answer is X" / "Final Answer: X"; then the last
number in the text. Each step can be switched off: research that counts a
completion without a box as wrong uses ``fallbacks=("boxed",)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr_boundary.verify.quality import last_boxed

FALLBACKS = ("boxed", "answer_is", "last_number")

_ANSWER_IS = re.compile(
    r"(?:final answer|the answer is|answer\s*:)\s*(?:is\s*)?[:\s]*\$?([^\n$]+?)\$?\s*(?:\.|\n|$)",
    re.IGNORECASE)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?")


@dataclass
class ExtractOptions:
    """How to find the final answer in a completion."""

    fallbacks: tuple[str, ...] = FALLBACKS
    """Methods tried in order: 'boxed', 'answer_is', 'last_number'."""
    max_answer_chars: int = 2000
    """Longer extracted answers are cut (a runaway box is not an answer)."""


def extract_answer(text: str, opts: ExtractOptions | None = None) -> tuple[str | None, str | None]:
    """The final answer of ``text`` and the method that found it (None, None if none)."""
    opts = opts or ExtractOptions()
    unknown = set(opts.fallbacks) - set(FALLBACKS)
    if unknown:
        raise ValueError(f"unknown extraction methods {sorted(unknown)}; known: {FALLBACKS}")
    for method in opts.fallbacks:
        if method == "boxed":
            ans = last_boxed(text)
        elif method == "answer_is":
            hits = _ANSWER_IS.findall(text[-5000:])
            ans = hits[-1].strip() if hits else None
        else:
            hits = _NUMBER.findall(text[-5000:])
            ans = hits[-1].replace(",", "") if hits else None
        if ans is not None and ans.strip():
            return ans.strip()[: opts.max_answer_chars], method
    return None, None
