"""The limit-of-RLVR / Qwen2.5-Math evaluator JSONL.

Layout (QwenLM/Qwen2.5-Math, evaluation/math_eval.py, also used by
LeapLabTHU/limit-of-RLVR): one JSON object per problem with ``idx``,
``question``, ``gt`` (gold answer), and per-sample lists of equal length:
``code`` (the completions), ``pred`` (extracted answers) and ``score``
(booleans from the evaluator's grader), plus ``report`` and timing fields.

We read a rollout table: one row per sample, ``text`` from ``code``,
``answer`` from ``pred``, ``correct`` from ``score``.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters._common import as_text, first_json
from rlvr_audit.io.rollouts import iter_json_lines

NAME = "limit-of-rlvr"


def sniff(path: Path) -> bool:
    obj = first_json(path)
    return obj is not None and isinstance(obj.get("score"), list) and (
        "code" in obj or "pred" in obj)


def read(path: Path, model: str | None = None):
    label = model or path.name.split(".jsonl")[0]
    cols: dict[str, list] = {k: [] for k in ("prompt_id", "model", "sample_idx", "text", "answer",
                                             "correct")}
    seen: set[str] = set()
    for line, obj in iter_json_lines(path):
        scores = obj.get("score")
        if not isinstance(scores, list) or not scores:
            raise InputError("score must be a non-empty list of verdicts", path=path, line=line,
                             field="score")
        n = len(scores)
        texts = obj.get("code", [None] * n)
        preds = obj.get("pred", [None] * n)
        for f, v in (("code", texts), ("pred", preds)):
            if not isinstance(v, list) or len(v) != n:
                raise InputError(f"{f} must be a list as long as score ({n})", path=path,
                                 line=line, field=f)
        pid = str(obj.get("idx", line))
        if pid in seen:
            raise InputError(f"duplicate problem idx {pid}", path=path, line=line, field="idx")
        seen.add(pid)
        for i, (s, t, p) in enumerate(zip(scores, texts, preds)):
            if not isinstance(s, (bool, int)) or (not isinstance(s, bool) and s not in (0, 1)):
                raise InputError(f"score[{i}] must be a boolean, found {s!r}", path=path,
                                 line=line, field="score")
            cols["prompt_id"].append(pid)
            cols["model"].append(label)
            cols["sample_idx"].append(i)
            cols["text"].append(as_text(t))
            cols["answer"].append(as_text(p))
            cols["correct"].append(bool(s))
    if not cols["prompt_id"]:
        raise InputError("file has no records", path=path)
    types = {"sample_idx": pa.int64(), "correct": pa.bool_()}
    return pa.table({k: pa.array(v, types.get(k, pa.string())) for k, v in cols.items()})
