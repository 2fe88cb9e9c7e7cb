"""lighteval ``--save-details`` Parquet (``details_<task>_<timestamp>.parquet``).

lighteval writes
``<output_dir>/details/<model_name>/<timestamp>/details_<task>_<timestamp>.parquet``
(``src/lighteval/logging/evaluation_tracker.py::save_details``), one row per
document. Two layouts exist (``src/lighteval/logging/info_loggers.py``, class
``DetailsLogger.Detail``):

- lighteval >= 0.11: columns ``doc`` (struct of ``Doc``: ``query``, ``choices``,
  ``gold_index``, ``id`` = row index in the split, ...), ``model_response``
  (struct of ``ModelResponse``: ``text`` = list of generations, ``input``,
  ``logprobs``, ...) and ``metric`` (struct: metric name -> score).
- lighteval <= 0.10: flat columns ``example``, ``predictions`` (generations),
  ``gold``, ``choices``, ``gold_index``, ``metrics`` (struct or JSON string), ...

A row carries document-level scores only, so we read counts, choosing a metric
that is a share of correct samples:

- sampling metrics: ``avg@n:n=N`` and ``pass@k:k=1&n=N`` (>= 0.11; the unbiased
  pass@1 equals c/N), ``..._pass@1:N_samples`` (<= 0.10). ``n`` is the ``N`` in
  the name (the metric scores the first N generations, which may be fewer than
  stored), ``c`` = score x N;
- single-sample metrics (``extractive_match``, ``exact_match``, ``em``, ``qem``,
  ``acc``, ...) score the first generation: n = 1.

Majority votes (``maj@...``), pass@k with k > 1 and G-Pass@k are not shares and
are never chosen; forcing one with ``metric=`` still fails the whole-count check.
Rows are rollouts (n = 1, with ``text``, ``prompt`` and ``gold``) when the chosen
metric is a single-sample one, counts otherwise.

Prompt ids are ``<task>/<doc.id>`` (>= 0.11), ``<task>/<row>`` for the old layout,
which stores no id (rows follow the dataset order). The default model label is
the ``<model_name>`` part of the path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.outputs import note_input
from rlvr_boundary.io.adapters._common import (
    Documents,
    TableBuilder,
    as_text,
    count_from_metric,
    latest_per_task,
    split_timestamp,
)

#: Its single-sample rows can be streamed to a consumer (:func:`~._common.streaming`).
STREAMS = True
NAME = "lighteval"
#: Single-sample verdict metrics, in order of preference (n = 1).
SINGLE = ("extractive_match", "math_verify", "exact_match", "quasi_exact_match", "qem", "em",
          "prefix_exact_match", "acc", "acc_norm")
_NEW_SAMPLING = re.compile(r"^(avg@n|pass@k)[^:]*:(.*)$")
_OLD_SAMPLING = re.compile(r"(?:^|_)pass@1:(\d+)_samples$")
_NEW_COLS = {"doc", "model_response", "metric"}
#: Rows decoded from the Parquet file at a time (with the streamed rollout rows, what is held).
READ_ROWS = 4096
_OLD_COLS = {"predictions", "metrics"}


def _schema_names(path: Path) -> set[str]:
    try:
        return set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - unreadable means not ours
        return set()


def sniff(path: Path) -> bool:
    if path.is_dir():
        files = sorted(path.glob("details_*.parquet"))
        return bool(files) and sniff(files[0])
    if not path.is_file() or path.suffix != ".parquet":
        return False
    names = _schema_names(path)
    return _NEW_COLS <= names or _OLD_COLS <= names


def metric_samples(name: str) -> int | None:
    """``N`` if metric ``name`` is a mean over N samples, 1 for a single-sample verdict,
    None if it is not a share of correct samples (majority vote, pass@k with k > 1...)."""
    m = _NEW_SAMPLING.match(name)
    if m:
        params = dict(p.split("=", 1) for p in m.group(2).split("&") if "=" in p)
        if m.group(1) == "pass@k" and params.get("k") != "1":
            return None
        return int(params["n"]) if params.get("n", "").isdigit() else None
    m = _OLD_SAMPLING.search(name)
    if m:
        return int(m.group(1))
    base = name.split(":", 1)[0]
    return 1 if base in SINGLE else None


def choose_metric(metrics: dict, path: Path, row: int) -> str:
    """The sampling share with the most samples, else the first single-sample verdict."""
    sampling = [(metric_samples(k), k) for k in metrics if (metric_samples(k) or 0) > 1]
    if sampling:
        return max(sampling)[1]
    for want in SINGLE:
        for k in metrics:
            if k.split(":", 1)[0] == want:
                return k
    raise InputError(
        f"no metric that is a share of correct samples among {sorted(metrics)}; expected "
        "avg@n, pass@k with k=1, ..._pass@1:N_samples or a 0/1 match metric", path=path,
        line=row, field="metric")


def default_label(path: Path) -> str:
    """``details/<model_name>/<timestamp>/file`` -> ``<model_name>`` (may contain '/')."""
    parts = path.resolve().parts
    if "details" in parts:
        i = len(parts) - 1 - parts[::-1].index("details")
        inner = parts[i + 1:-2] if path.is_file() else parts[i + 1:-1]
        if inner:
            return "/".join(inner)
    return split_timestamp(path.stem, "details_")[0] if path.is_file() else path.name


def _row_view(r: dict, path: Path, row: int):
    """(doc id or None, generations, metrics dict, prompt, gold) of one row of either layout."""
    if "model_response" in r:
        doc = r.get("doc") or {}
        resp = r.get("model_response") or {}
        for name, v in (("doc", doc), ("model_response", resp)):
            if not isinstance(v, dict):
                raise InputError(f"{name} must be a struct, found {type(v).__name__}", path=path,
                                 line=row, field=name)
        gens = resp.get("text") or []
        metrics = r.get("metric") or {}
        pid = doc.get("id") if doc.get("id") not in (None, "") else None
        choices, gi = doc.get("choices") or [], doc.get("gold_index")
        gi = gi[0] if isinstance(gi, list) and gi else gi
        gold = choices[gi] if isinstance(gi, int) and 0 <= gi < len(choices) else None
        prompt = doc.get("query")
    else:
        gens = r.get("predictions") or []
        metrics = r.get("metrics") or {}
        pid = None
        golds = r.get("gold") or []
        gold = golds[0] if isinstance(golds, list) and golds else golds or None
        prompt = r.get("full_prompt") or r.get("example")
    if isinstance(metrics, str):
        try:
            metrics = json.loads(metrics)
        except json.JSONDecodeError:
            raise InputError("metrics is not valid JSON", path=path, line=row,
                             field="metrics") from None
    if not isinstance(metrics, dict):
        raise InputError(f"metrics must be a mapping, found {type(metrics).__name__}", path=path,
                         line=row, field="metric")
    gens = [g if isinstance(g, str) else as_text(g) for g in gens] if isinstance(gens, list) \
        else []
    return pid, gens, {k: v for k, v in metrics.items() if v is not None}, prompt, gold


def _read_file(path: Path, task: str, label: str, docs: Documents,
               metric: str | None) -> None:
    note_input(path)
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
    names = set(pf.schema_arrow.names)
    if not (_NEW_COLS <= names or _OLD_COLS <= names):
        raise InputError(f"not a lighteval details table: columns {sorted(names)[:10]}; expected "
                         "doc, model_response, metric (or predictions, metrics)", path=path)
    wanted = [c for c in ("doc", "model_response", "metric", "predictions", "metrics", "gold",
                          "example", "full_prompt") if c in names]
    row, seen = 0, {}
    for batch in pf.iter_batches(batch_size=READ_ROWS, columns=wanted):
        for r in batch.to_pylist():
            row += 1
            pid, gens, metrics, prompt, gold = _row_view(r, path, row)
            metric = metric or choose_metric(metrics, path, row)
            if metric not in metrics:
                raise InputError(f"missing metric '{metric}'", path=path, line=row, field="metric")
            n = metric_samples(metric) or 1
            if n > 1 and len(gens) < n:
                raise InputError(f"metric {metric} is over {n} samples but the row holds "
                                 f"{len(gens)} generations", path=path, line=row,
                                 field="model_response")
            c = count_from_metric(metrics[metric], n, path=path, line=row, field=metric)
            if pid is not None and (isinstance(pid, bool) or not isinstance(pid, (int, str))):
                raise InputError(f"document id must be a string or integer, found "
                                 f"{str(pid)[:60]!r}", path=path, line=row, field="doc.id")
            key = f"{task}/{pid if pid is not None else row - 1}"
            if key in seen:
                raise InputError(f"document id {key!r} appears twice (first on row {seen[key]})",
                                 path=path, line=row, field="doc")
            seen[key] = row
            if docs.add(key, n, c):
                docs.rows.add(prompt_id=key, model=label, sample_idx=0, correct=bool(c),
                              text=gens[0] if gens else None, prompt=as_text(prompt),
                              gold=as_text(gold))
    if row == 0:
        raise InputError("table has no rows", path=path)


def read(path: Path, model: str | None = None, *, metric: str | None = None):
    """Read one details file, or a details folder (latest run of each task).

    Returns a rollout table when the metric is a single-sample verdict, else a
    count table ``(prompt_id, model, n, c)``.
    """
    path = Path(path)
    docs = Documents(TableBuilder(("prompt_id", "model", "sample_idx", "text", "correct",
                                   "prompt", "gold")))
    label = model or default_label(path)
    if path.is_dir():
        files = latest_per_task(sorted(path.glob("details_*.parquet")), "details_")
        if not files:
            raise InputError("no details_<task>_<timestamp>.parquet files in the directory",
                             path=path)
    else:
        files = [(split_timestamp(path.stem, "details_")[0], path)]
    for task, f in files:
        _read_file(f, task, label, docs, metric)
    return docs.table(label)
