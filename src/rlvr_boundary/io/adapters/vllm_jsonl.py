"""Generations JSONL in the shape of vLLM ``RequestOutput`` or an OpenAI batch output.

Two line shapes are read, one JSON object per request (prompt) with its n samples:

``RequestOutput``-like (``vllm/outputs.py``: ``RequestOutput`` with ``request_id``,
``prompt`` and ``outputs``, a list of ``CompletionOutput`` with ``index``,
``text``, ``token_ids``, ``cumulative_logprob``, ``finish_reason``,
``stop_reason``). vLLM has no serialiser of its own; this is the natural
``json.dumps`` of those fields. The prompt id is ``prompt_id``, else ``id``,
else ``request_id``.

OpenAI batch output (vLLM ``run_batch``, ``vllm/entrypoints/openai/protocol.py``:
``BatchRequestOutput`` = ``id``, ``custom_id``, ``response`` = ``{status_code,
request_id, body}``, ``error``), where ``body`` is a chat or text completion
with ``choices`` (``message.content`` or ``text``, ``finish_reason``). The
prompt id is ``custom_id``; a line with an ``error`` or a status other than 200
is refused.

Verdicts: neither engine grades, so a verdict must be added per sample, as
``correct`` (boolean or 0/1) on each output/choice, or as a request-level list
``correct`` (or ``score`` of 0/1 verdicts) in output order. Without verdicts
:func:`read` refuses with a pointer to ``rlvr-boundary verify``;
:func:`read_generations` returns the table without ``correct`` for grading.
``finish_reason`` and ``truncated`` (finish reason ``length``) and
``num_tokens`` (length of ``token_ids``, or ``usage.completion_tokens`` when
n = 1) are kept.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters._common import TableBuilder, as_text, first_json
from rlvr_boundary.io.rollouts import iter_json_lines, path_stem

#: Its rollout rows can be streamed to a consumer (:func:`~._common.streaming`).
STREAMS = True
NAME = "vllm-jsonl"
_ID_KEYS = ("prompt_id", "id", "request_id")


def _shape(obj: dict | None) -> str | None:
    if obj is None:
        return None
    if "custom_id" in obj and "response" in obj:
        return "batch"
    outs = obj.get("outputs")
    if isinstance(outs, list) and outs and isinstance(outs[0], dict) and "text" in outs[0]:
        return "request"
    return None


def sniff(path: Path) -> bool:
    return path.is_file() and _shape(first_json(path)) is not None


def _samples(obj: dict, path: Path, line: int) -> tuple[str, list[dict], str | None, dict]:
    """(prompt id, list of sample dicts with text/finish_reason/..., prompt, usage)."""
    shape = _shape(obj)
    if shape == "batch":
        if obj.get("error"):
            raise InputError(f"request failed: {as_text(obj['error'])[:200]}", path=path,
                             line=line, field="error")
        resp = _obj(obj.get("response") or {}, path, line, "response")
        if resp.get("status_code", 200) != 200:
            raise InputError(f"request failed with HTTP status {resp.get('status_code')}",
                             path=path, line=line, field="response")
        body = _obj(resp.get("body") or {}, path, line, "response.body")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            raise InputError("response.body.choices must be a non-empty list", path=path,
                             line=line, field="response")
        outs = []
        for ch in choices:
            _obj(ch, path, line, "response.body.choices[]")
        for ch in sorted(choices, key=lambda c: _index(c, path, line, "choices[].index")):
            msg = _obj(ch.get("message") or {}, path, line, "message")
            outs.append({**ch, "text": ch.get("text", msg.get("content"))})
        usage = body.get("usage") or {}
        return (_id(obj["custom_id"], path, line, "custom_id"), outs, None,
                usage if isinstance(usage, dict) else {})
    if shape == "request":
        key = next((k for k in _ID_KEYS if obj.get(k) not in (None, "")), None)
        if key is None:
            raise InputError("missing prompt id (prompt_id, id or request_id)", path=path,
                             line=line, field="prompt_id")
        outs = obj["outputs"]
        if not all(isinstance(o, dict) and "text" in o for o in outs):
            raise InputError("every output must be an object with 'text'", path=path, line=line,
                             field="outputs")
        outs = sorted(outs, key=lambda o: _index(o, path, line, "outputs[].index"))
        return _id(obj[key], path, line, key), outs, as_text(obj.get("prompt")), {}
    raise InputError("neither a RequestOutput-like line (outputs[].text) nor an OpenAI batch "
                     "output line (custom_id, response)", path=path, line=line)


def _obj(v, path: Path, line: int, field: str) -> dict:
    """``v`` if it is a JSON object, else an error naming the field."""
    if not isinstance(v, dict):
        raise InputError(f"expected an object, found {str(v)[:60]!r}", path=path, line=line,
                         field=field)
    return v


def _index(o: dict, path: Path, line: int, field: str) -> int:
    i = o.get("index", 0)
    if isinstance(i, bool) or not isinstance(i, int):
        raise InputError(f"expected an integer index, found {str(i)[:60]!r}", path=path,
                         line=line, field=field)
    return i


def _id(v, path: Path, line: int, field: str) -> str:
    """A prompt id: a string or an integer (objects, lists and booleans are refused)."""
    if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
        raise InputError(f"expected a string or integer id, found {str(v)[:60]!r}", path=path,
                         line=line, field=field)
    return str(v)


def _verdict(v, path: Path, line: int, field: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    raise InputError(f"expected a boolean verdict (or 0/1), found {v!r}", path=path, line=line,
                     field=field)


NO_VERDICTS = ("the generations carry no verdicts ('correct' per output, or a 'correct'/'score' "
               "list per line); grade them first: write them as a rollout table (prompt_id, "
               "model, sample_idx, text) and run `rlvr-boundary verify`")


def read_generations(path: Path, model: str | None = None, *,
                     require_verdicts: bool = False) -> pa.Table:
    """Rollout table of the generations; ``correct`` only if every sample carries a verdict.

    ``require_verdicts`` refuses a file whose first sample has no verdict at once,
    before any row is handed to a streaming consumer.
    """
    path = Path(path)
    label = model or path_stem(path)
    rows = TableBuilder(("prompt_id", "model", "sample_idx", "text", "correct", "finish_reason",
                         "truncated", "num_tokens", "prompt"))
    seen: dict[str, int] = {}
    graded = None
    for line, obj in iter_json_lines(path):
        pid, outs, prompt, usage = _samples(obj, path, line)
        if pid in seen:
            raise InputError(f"duplicate prompt id {pid!r} (first on line {seen[pid]})",
                             path=path, line=line, field="prompt_id")
        seen[pid] = line
        lst_key = "correct" if isinstance(obj.get("correct"), list) else (
            "score" if isinstance(obj.get("score"), list) else None)
        if lst_key is not None and len(obj[lst_key]) != len(outs):
            raise InputError(f"{lst_key} must be a list as long as the outputs ({len(outs)})",
                             path=path, line=line, field=lst_key)
        for i, o in enumerate(outs):
            if lst_key is not None:
                verdict = _verdict(obj[lst_key][i], path, line, lst_key)
            elif "correct" in o and o["correct"] is not None:
                verdict = _verdict(o["correct"], path, line, "correct")
            else:
                verdict = None
            if graded is None:
                graded = verdict is not None
                if require_verdicts and not graded:
                    raise InputError(NO_VERDICTS, path=path, field="correct")
            elif graded != (verdict is not None):
                raise InputError("some samples carry a verdict and others do not", path=path,
                                 line=line, field="correct")
            fr = o.get("finish_reason")
            toks = o.get("token_ids")
            ntok = len(toks) if isinstance(toks, list) else (
                usage.get("completion_tokens") if len(outs) == 1 else None)
            rows.add(prompt_id=pid, model=label, sample_idx=i, text=as_text(o.get("text")),
                     correct=verdict, finish_reason=as_text(fr),
                     truncated=None if fr is None else fr == "length",
                     num_tokens=ntok if isinstance(ntok, int) else None, prompt=prompt)
    if rows.rows == 0:
        raise InputError("file has no records", path=path)
    t = rows.table()
    return t if graded else t.drop_columns(["correct"])


def read(path: Path, model: str | None = None) -> pa.Table:
    """The graded generations as a rollout table (streamed to a consumer if one is set)."""
    t = read_generations(path, model, require_verdicts=True)
    if "correct" not in t.column_names:  # pragma: no cover - refused at the first sample
        raise InputError(NO_VERDICTS, path=path, field="correct")
    return t
