"""lighteval ``--save_details`` Parquet (``details_<task>_<timestamp>.parquet``).

Two layouts exist. lighteval >= 0.9 writes columns ``doc`` (struct: ``query``,
``choices``, ``gold_index``, ...), ``model_response`` (struct with ``text``, the
list of generations) and ``metric`` (struct: metric name -> score). Earlier
versions wrote ``predictions`` (list of generations), ``gold`` and ``metrics``
(dict or JSON string). Either way a row is a document with a document-level
score, so we read counts as for lm-eval: ``n`` generations, ``c`` = score x n
when that is a whole number (sampling metrics such as ``math_pass@1:8_samples``
are means over the samples), refused otherwise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq

from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters._common import count_from_metric, count_table

NAME = "lighteval"
PREFERRED = ("extractive_match", "math_pass@1", "pass@1", "exact_match", "em", "acc",
             "quasi_exact_match")
_TIMESTAMP = re.compile(r"_\d{4}-\d{2}-\d{2}T[\d\-.:]+$")


def sniff(path: Path) -> bool:
    if not path.is_file() or path.suffix != ".parquet":
        return False
    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - unreadable means not ours
        return False
    return bool(({"model_response", "metric"} <= names) or ({"predictions", "metrics"} <= names))


def task_name(path: Path) -> str:
    stem = path.stem[len("details_"):] if path.stem.startswith("details_") else path.stem
    return _TIMESTAMP.sub("", stem)


def _pick(metrics: dict, path: Path, row: int) -> str:
    for want in PREFERRED:
        for name in metrics:
            if name == want or name.startswith(want + ":") or name.startswith(want + "_"):
                return name
    for name, v in metrics.items():
        if isinstance(v, (int, float)):
            return name
    raise InputError(f"no numeric metric in {sorted(metrics)}", path=path, line=row, field="metric")


def read(path: Path, model: str | None = None):
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
    task = task_name(path)
    ids, ns, cs = [], [], []
    metric = None
    for i, r in enumerate(rows, start=1):
        if "model_response" in r:
            gens = (r["model_response"] or {}).get("text") or []
            metrics = r.get("metric") or {}
        else:
            gens = r.get("predictions") or []
            metrics = r.get("metrics") or {}
        if isinstance(metrics, str):
            try:
                metrics = json.loads(metrics)
            except json.JSONDecodeError:
                raise InputError("metrics is not valid JSON", path=path, line=i,
                                 field="metrics") from None
        metrics = {k: v for k, v in metrics.items() if v is not None}
        if not gens:
            raise InputError("row has no generations", path=path, line=i, field="model_response")
        metric = metric or _pick(metrics, path, i)
        if metric not in metrics:
            raise InputError(f"missing metric '{metric}'", path=path, line=i, field="metric")
        doc = r.get("doc") or {}
        pid = doc.get("id") if isinstance(doc, dict) and doc.get("id") not in (None, "") else i - 1
        ids.append(f"{task}/{pid}")
        ns.append(len(gens))
        cs.append(count_from_metric(metrics[metric], len(gens), path=path, line=i, field=metric))
    if not ids:
        raise InputError("table has no rows", path=path)
    return count_table(ids, ns, cs, model or task)
