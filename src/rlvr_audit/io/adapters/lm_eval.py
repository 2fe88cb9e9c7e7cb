"""lm-evaluation-harness ``--log_samples`` JSONL (``samples_<task>_<timestamp>.jsonl``).

Layout (lm_eval/evaluator.py, v0.4.x): one JSON object per document with
``doc_id``, ``doc``, ``target``, ``arguments``, ``resps`` (raw generations per
request), ``filtered_resps`` (what the metric saw after the task's filter),
``filter``, ``metrics`` (names) and one key per metric with the document's
score. The harness stores no per-sample verdicts, so we read counts: ``n`` is
the number of filtered responses the metric scored (1 after the default
``take_first`` filter; the repeats when a filter keeps them all) and ``c`` is
the metric times ``n``, refused unless it is a whole number (see
:func:`rlvr_audit.io.adapters._common.count_from_metric`).
"""

from __future__ import annotations

import re
from pathlib import Path

from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters._common import count_from_metric, count_table, first_json
from rlvr_audit.io.rollouts import iter_json_lines

NAME = "lm-eval"
PREFERRED = ("exact_match", "acc", "pass@1", "math_verify", "correct", "em")
_TIMESTAMP = re.compile(r"_\d{4}-\d{2}-\d{2}T[\d\-.:]+$")


def sniff(path: Path) -> bool:
    obj = first_json(path)
    return obj is not None and {"doc_id", "resps", "filtered_resps"} <= set(obj)


def task_name(path: Path) -> str:
    stem = path.name.split(".jsonl")[0]
    stem = stem[len("samples_"):] if stem.startswith("samples_") else stem
    return _TIMESTAMP.sub("", stem)


def _n_scored(filtered, path: Path, line: int) -> int:
    if not isinstance(filtered, list) or not filtered:
        raise InputError("filtered_resps must be a non-empty list", path=path, line=line,
                         field="filtered_resps")
    first = filtered[0]
    return len(first) if isinstance(first, list) and first else 1


def _metric(obj: dict, path: Path, line: int) -> str:
    names = [m for m in obj.get("metrics", []) if m in obj] or [m for m in PREFERRED if m in obj]
    for m in PREFERRED:
        if m in names:
            return m
    for m in names:
        if isinstance(obj[m], (int, float)):
            return m
    raise InputError(f"no numeric per-document metric found (metrics: {obj.get('metrics')})",
                     path=path, line=line, field="metrics")


def read(path: Path, model: str | None = None):
    task = task_name(path)
    ids, ns, cs = [], [], []
    metric = None
    for line, obj in iter_json_lines(path):
        for f in ("doc_id", "filtered_resps"):
            if f not in obj:
                raise InputError(f"missing field '{f}' (not an lm-eval samples file?)", path=path,
                                 line=line, field=f)
        metric = metric or _metric(obj, path, line)
        if metric not in obj:
            raise InputError(f"missing metric '{metric}'", path=path, line=line, field=metric)
        n = _n_scored(obj["filtered_resps"], path, line)
        ids.append(f"{task}/{obj['doc_id']}")
        ns.append(n)
        cs.append(count_from_metric(obj[metric], n, path=path, line=line, field=metric))
    if not ids:
        raise InputError("file has no records", path=path)
    return count_table(ids, ns, cs, model or task)
