"""The limit-of-RLVR / Qwen2.5-Math evaluator JSONL.

Layout (QwenLM/Qwen2.5-Math ``evaluation/math_eval.py`` writes it,
``evaluation/evaluate.py`` adds ``score``; LeapLabTHU/limit-of-RLVR
``math/examples/math_eval/`` is a copy that also stores ``finish_reason``):
the file ``<data_name>/<split>_<prompt_type>_<num>_seed<S>_t<T>_s<start>_e<end>.jsonl``
holds one JSON object per problem with ``idx``, ``question``, ``gt`` (gold
answer), ``gt_cot``, dataset fields (``level``, ``type``, ...), and per-sample
lists of one length n: ``code`` (the completions), ``pred`` (extracted
answers), ``report`` (executor reports), ``score`` (booleans from the
evaluator's grader) and, in limit-of-RLVR, ``finish_reason``.

We read a rollout table: one row per sample, ``text`` from ``code``,
``answer`` from ``pred``, ``correct`` from ``score``, ``finish_reason`` and
``truncated`` (finish reason ``length``) when stored, ``question`` as
``prompt`` and ``gt`` as ``gold``; prompt ids are ``idx``.

limit-of-RLVR reaches large n by running several seeds and pooling the score
lists per problem (``math/pass@k.py``). A directory of evaluator files is read
the same way: every ``*.jsonl`` in it (sorted by name; ``*_metrics.json`` is
not JSONL and is skipped) adds its samples to the problem's pool, numbered on
from the previous file's.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters._common import TableBuilder, as_text, first_json
from rlvr_boundary.io.rollouts import iter_json_lines, path_stem

#: Its rollout rows can be streamed to a consumer (:func:`~._common.streaming`).
STREAMS = True
NAME = "limit-of-rlvr"


def _is_eval_record(obj: dict | None) -> bool:
    return obj is not None and isinstance(obj.get("score"), list) and (
        "code" in obj or "pred" in obj)


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(".jsonl"))


def sniff(path: Path) -> bool:
    if path.is_dir():
        files = _files(path)
        return bool(files) and all(_is_eval_record(first_json(f)) for f in files)
    return _is_eval_record(first_json(path))


def _read_file(path: Path, label: str, rows: TableBuilder, offset: dict[str, int]) -> None:
    seen: dict[str, int] = {}
    for line, obj in iter_json_lines(path):
        scores = obj.get("score")
        if not isinstance(scores, list) or not scores:
            raise InputError("score must be a non-empty list of verdicts", path=path, line=line,
                             field="score")
        n = len(scores)
        lists = {}
        for f in ("code", "pred", "finish_reason"):
            v = obj.get(f, [None] * n)
            if not isinstance(v, list) or len(v) != n:
                raise InputError(f"{f} must be a list as long as score ({n})", path=path,
                                 line=line, field=f)
            lists[f] = v
        if "idx" not in obj:
            raise InputError("missing field 'idx'", path=path, line=line, field="idx")
        pid = obj["idx"]
        if isinstance(pid, bool) or not isinstance(pid, (str, int)):
            raise InputError(f"idx must be an integer or string, found {pid!r}", path=path,
                             line=line, field="idx")
        pid = str(pid)
        if pid in seen:
            raise InputError(f"duplicate problem idx {pid} (first on line {seen[pid]})",
                             path=path, line=line, field="idx")
        seen[pid] = line
        start = offset.get(pid, 0)
        offset[pid] = start + n
        bad = next((i for i, s in enumerate(scores) if not isinstance(s, bool)
                    and not (isinstance(s, int) and s in (0, 1))), None)
        if bad is not None:
            raise InputError(f"score[{bad}] must be a boolean, found {scores[bad]!r}", path=path,
                             line=line, field="score")
        frs = [as_text(fr) for fr in lists["finish_reason"]]
        rows.extend(n, prompt_id=pid, model=label, sample_idx=list(range(start, start + n)),
                    correct=[bool(s) for s in scores], text=[as_text(t) for t in lists["code"]],
                    answer=[as_text(p) for p in lists["pred"]], finish_reason=frs,
                    truncated=[None if fr is None else fr == "length" for fr in frs],
                    prompt=as_text(obj.get("question")), gold=as_text(obj.get("gt")))


def read(path: Path, model: str | None = None):
    """Read one evaluator file, or a directory of them pooled per problem (e.g. seeds)."""
    path = Path(path)
    rows = TableBuilder(("prompt_id", "model", "sample_idx", "text", "answer", "correct",
                         "finish_reason", "truncated", "prompt", "gold"))
    offset: dict[str, int] = {}
    if path.is_dir():
        files = _files(path)
        if not files:
            raise InputError("no evaluator *.jsonl files in the directory", path=path)
        label = model or path.name
    else:
        files = [path]
        label = model or path_stem(path)
    for f in files:
        _read_file(f, label, rows, offset)
    if rows.rows == 0:
        raise InputError("file has no records", path=path)
    return rows.table()
