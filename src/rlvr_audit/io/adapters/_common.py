"""Helpers shared by the adapters."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa

from rlvr_audit.errors import InputError
from rlvr_audit.io.rollouts import is_jsonl, iter_json_lines


def first_json(path: Path) -> dict | None:
    """The first JSON object of a JSONL file, or None if it is not one."""
    if not path.is_file() or not is_jsonl(path):
        return None
    for _, obj in iter_json_lines(path):
        return obj
    return None


def count_from_metric(value, n: int, *, path: Path, line: int, field: str) -> int:
    """Correct samples from a per-document metric that is a mean over ``n`` samples.

    A document-level metric is only usable as a count when ``value * n`` is a
    whole number in 0..n (accuracy averaged over the repeats, or a 0/1 verdict
    when n = 1). Anything else (a majority vote, a pass@k already estimated)
    cannot be turned back into a count: we refuse rather than guess.
    """
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"metric value must be a number, found {value!r}", path=path, line=line,
                         field=field)
    c = value * n
    if abs(c - round(c)) > 1e-6 * max(1, n) or not 0 <= round(c) <= n:
        raise InputError(
            f"metric {field} = {value!r} over {n} sample(s) is not a share of correct samples "
            f"(value x n = {c:g}); choose a per-sample accuracy metric with --metric",
            path=path, line=line, field=field)
    return int(round(c))


def count_table(ids: list[str], n: list[int], c: list[int], model: str) -> pa.Table:
    return pa.table({"prompt_id": pa.array(ids, pa.string()),
                     "model": pa.array([model] * len(ids), pa.string()),
                     "n": pa.array(n, pa.int64()), "c": pa.array(c, pa.int64())})


def as_text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
