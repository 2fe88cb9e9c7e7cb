"""Output-quality flags of a completion (SPEC section 2; RUC report, seed 000).

Pure Python on strings, no dependencies: used by the verifier (to fill the
``q_*`` columns), by the report, and by RFT selection (:mod:`rlvr_audit.shaping.rft`).

- ``q_no_boxed`` / ``q_multi_boxed``: no / several ``\\boxed{}`` (or ``\\fbox{}``);
- ``q_text_after_answer``: non-trivial text after the last boxed answer;
- ``q_cjk_share``: share of CJK characters among letters;
- ``q_language_mix``: CJK text in an answer to a non-CJK prompt, or the reverse;
- ``q_redundancy3``: ``1 - unique 3-grams / all 3-grams`` over whitespace tokens.
"""

from __future__ import annotations

import re

BOX_COMMANDS = ("\\boxed", "\\fbox")
#: Text after the last box shorter than this (after stripping) is not flagged:
#: closing "$", ".", "\\]" or a short sign-off is normal.
AFTER_ANSWER_MIN_CHARS = 20
#: Above this CJK share an answer is "CJK"; below LANG_MIX_LOW it is not.
LANG_MIX_HIGH = 0.3
LANG_MIX_LOW = 0.02

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]")
_TRIVIAL_TAIL = re.compile(r"^[\s$\\\].)}>,;:!]*$")


def _box_spans(text: str) -> list[tuple[int, int, int]]:
    """(start of command, start of content, end of content) of every balanced box.

    Braces are matched with a counter, so nested braces (``\\boxed{\\frac{1}{2}}``)
    stay inside; escaped braces ``\\{`` ``\\}`` do not count. An unclosed box is
    ignored. ``\\boxed 5`` (a box without braces, one token) is accepted too.
    """
    spans = []
    i = 0
    n = len(text)
    while True:
        hits = [(text.find(cmd, i), cmd) for cmd in BOX_COMMANDS]
        hits = [(h, c) for h, c in hits if h >= 0]
        if not hits:
            return spans
        start, cmd = min(hits)
        j = start + len(cmd)
        if j < n and text[j] == "{":
            depth, k = 0, j
            while k < n:
                ch = text[k]
                if ch == "\\" and k + 1 < n and text[k + 1] in "{}":
                    k += 2
                    continue
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        spans.append((start, j + 1, k))
                        break
                k += 1
            i = k + 1 if k < n else n
            if k >= n:
                return spans  # unclosed: nothing further can close it
        elif j < n and text[j] == " ":
            m = re.match(r" +([^\s$]+)", text[j:])
            if m:
                spans.append((start, j + m.start(1), j + m.end(1)))
            i = j + 1
        else:
            i = j
        if i >= n:
            return spans


def boxed_answers(text: str) -> list[str]:
    """Contents of every balanced ``\\boxed{...}`` / ``\\fbox{...}``, in order."""
    return [text[a:b] for _, a, b in _box_spans(text)]


def last_boxed(text: str) -> str | None:
    """Content of the last boxed answer, or None when there is none."""
    spans = _box_spans(text)
    if not spans:
        return None
    _, a, b = spans[-1]
    return text[a:b]


def cut_after_answer(text: str) -> str:
    """The text up to and including the end of the last boxed answer (whole text if none)."""
    spans = _box_spans(text)
    if not spans:
        return text
    end = spans[-1][2]
    return text[: end + 1] if end < len(text) and text[end] == "}" else text[:end]


def text_after_answer(text: str) -> str:
    """What follows the last boxed answer ("" if there is no box)."""
    spans = _box_spans(text)
    return text[len(cut_after_answer(text)):] if spans else ""


def redundancy3(text: str) -> float:
    """``1 - unique 3-grams / all 3-grams`` over whitespace tokens (0 for < 3 tokens)."""
    toks = text.split()
    if len(toks) < 3:
        return 0.0
    grams = list(zip(toks, toks[1:], toks[2:]))
    return 1.0 - len(set(grams)) / len(grams)


def cjk_share(text: str) -> float:
    """Share of CJK characters among letters (0 when there are no letters)."""
    letters = len(_LETTER.findall(text))
    return len(_CJK.findall(text)) / letters if letters else 0.0


def language_mix(text: str, prompt: str | None) -> bool:
    """CJK answer to a non-CJK prompt or the reverse; without a prompt: mixed text."""
    share = cjk_share(text)
    if prompt is None:
        return LANG_MIX_LOW < share < 1 - LANG_MIX_LOW
    prompt_cjk = cjk_share(prompt) > LANG_MIX_HIGH
    return share < LANG_MIX_HIGH if prompt_cjk else share > LANG_MIX_LOW


def quality_flags(text: str, prompt: str | None = None) -> dict:
    """Every flag of one completion, keyed by its rollout column name."""
    n_boxes = len(_box_spans(text))
    tail = text_after_answer(text).strip()
    return {
        "q_no_boxed": n_boxes == 0,
        "q_multi_boxed": n_boxes > 1,
        "q_text_after_answer": bool(n_boxes) and len(tail) >= AFTER_ANSWER_MIN_CHARS
        and not _TRIVIAL_TAIL.match(tail),
        "q_cjk_share": cjk_share(text),
        "q_language_mix": language_mix(text, prompt),
        "q_redundancy3": redundancy3(text),
    }
