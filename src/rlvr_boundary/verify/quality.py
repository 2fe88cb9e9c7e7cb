"""Output-quality flags of a completion ("From Trial-and-Error to Improvement", arXiv 2508.07534).

Pure Python on strings, no dependencies: used by the verifier (to fill the
``q_*`` columns), by the report, and by RFT selection (:mod:`rlvr_boundary.shaping.rft`).

- ``q_no_boxed`` / ``q_multi_boxed``: no / several ``\\boxed{}`` (or ``\\fbox{}``);
- ``q_text_after_answer``: non-trivial text after the last boxed answer;
- ``q_cjk_share``: share of CJK characters among letters;
- ``q_language_mix``: CJK text in an answer to a non-CJK prompt, or the reverse;
- ``q_redundancy3``: ``1 - unique 3-grams / all 3-grams`` over whitespace tokens.
"""

from __future__ import annotations

import re

#: Text after the last box shorter than this (after stripping) is not flagged:
#: closing "$", ".", "\\]" or a short sign-off is normal.
AFTER_ANSWER_MIN_CHARS = 20
#: Above this CJK share an answer is "CJK"; below LANG_MIX_LOW it is not.
LANG_MIX_HIGH = 0.3
LANG_MIX_LOW = 0.02

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]")
_TRIVIAL_TAIL = re.compile(r"^[\s$\\\].)}>,;:!]*$")


_BRACE = re.compile(r"\\\\|\\[{}]|[{}]")  # \\ (a line break) is not an escape of {
_BOX_CMD = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")


def _closers(text: str) -> dict[int, int]:
    """Position of every ``{`` -> position of its matching ``}`` (one linear pass).

    Escaped braces ``\\{`` ``\\}`` do not count; an unmatched ``{`` is absent.
    """
    match: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE.finditer(text):
        tok = m.group()
        if len(tok) == 2:
            continue  # \{, \} or \\
        if tok == "{":
            stack.append(m.start())
        elif stack:
            match[stack.pop()] = m.start()
    return match


def _box_spans(text: str) -> list[tuple[int, int, int]]:
    """(start of command, start of content, end of content) of every balanced box.

    Braces are matched with a stack in one pass, so nested braces
    (``\\boxed{\\frac{1}{2}}``) stay inside, escaped braces do not count, and the
    cost is linear even for a megabyte of unclosed ``\\boxed{``. An unclosed box
    is ignored (boxes after it still count). ``\\boxed 5`` (a box without braces,
    one token) is accepted too. Boxes nested in a box are not separate answers.
    """
    spans: list[tuple[int, int, int]] = []
    closers: dict[int, int] | None = None
    n = len(text)
    end_of_last = -1
    for m in _BOX_CMD.finditer(text):
        start, j = m.start(), m.end()
        if start < end_of_last:
            continue  # inside the previous box
        if j < n and text[j] == "{":
            if closers is None:
                closers = _closers(text)
            k = closers.get(j)
            if k is not None:
                spans.append((start, j + 1, k))
                end_of_last = k
        elif j < n and text[j] == " ":
            t = re.match(r" +([^\s$]+)", text[j:j + 200])
            if t:
                spans.append((start, j + t.start(1), j + t.end(1)))
                end_of_last = j + t.end(1)
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


def _cut_end(text: str, spans) -> int:
    end = spans[-1][2]
    return end + 1 if end < len(text) and text[end] == "}" else end


def cut_after_answer(text: str) -> str:
    """The text up to and including the end of the last boxed answer (whole text if none)."""
    spans = _box_spans(text)
    return text[: _cut_end(text, spans)] if spans else text


def _tail(text: str, spans) -> str:
    return text[_cut_end(text, spans):] if spans else ""


def redundancy3(text: str) -> float:
    """``1 - unique 3-grams / all 3-grams`` over whitespace tokens (0 for < 3 tokens)."""
    toks = text.split()
    if len(toks) < 3:
        return 0.0
    grams = list(zip(toks, toks[1:], toks[2:]))
    return 1.0 - len(set(grams)) / len(grams)


def cjk_share(text: str) -> float:
    """Share of CJK characters among letters (0 when there are no letters)."""
    if text.isascii():  # no CJK character is ASCII; skips two regex scans of the text
        return 0.0
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
    """Every flag of one completion, keyed by its rollout column name.

    Parameters
    ----------
    text
        The completion.
    prompt
        The prompt, when known (decides the direction of language mixing).

    Returns
    -------
    dict
        ``q_no_boxed``, ``q_multi_boxed``, ``q_text_after_answer``,
        ``q_cjk_share``, ``q_language_mix``, ``q_redundancy3`` (the canonical
        columns of :mod:`rlvr_boundary.io.schema`).

    Notes
    -----
    Linear in the length of the text: it runs in the parent process, outside
    the worker pool's timeout.
    """
    spans = _box_spans(text)
    tail = _tail(text, spans).strip()
    return {
        "q_no_boxed": not spans,
        "q_multi_boxed": len(spans) > 1,
        "q_text_after_answer": bool(spans) and len(tail) >= AFTER_ANSWER_MIN_CHARS
        and not _TRIVIAL_TAIL.match(tail),
        "q_cjk_share": cjk_share(text),
        "q_language_mix": language_mix(text, prompt),
        "q_redundancy3": redundancy3(text),
    }
