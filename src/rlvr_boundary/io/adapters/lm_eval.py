"""lm-evaluation-harness ``--log_samples`` JSONL (``samples_<task>_<timestamp>.jsonl``).

Layout (EleutherAI/lm-evaluation-harness v0.4.x: ``lm_eval/evaluator.py`` builds
the record, ``lm_eval/loggers/evaluation_tracker.py::save_results_samples``
writes it; fields documented in ``lm_eval/result_schema.py``): one JSON object
per (document, filter) with ``doc_id``, ``doc``, ``target``, ``arguments``
(``{"gen_args_0": {"arg_0": prompt, "arg_1": gen_kwargs}}``; a list of
argument lists in early 0.4 releases), ``resps`` (requests x repeats of raw
outputs), ``filtered_resps`` (per request, what the metric saw), ``filter``,
``metrics`` (names) and one key per metric with the document's score.

Decisions, and where we depart from the obvious reading:

- The harness stores no per-sample verdicts, only a per-document score. ``n`` is
  the number of responses the metric scored: the filtered list's length when a
  generation task's filter keeps every repeat (``repeats: N`` with a
  ``take_all``-like or custom filter), else 1. ``c`` is score x n, refused
  unless whole (:func:`~rlvr_boundary.io.adapters._common.count_from_metric`).
  Multiple-choice and loglikelihood tasks have several requests per document
  and one 0/1 verdict: n = 1.
- A task with several filters (gsm8k: ``strict-match`` and ``flexible-extract``)
  logs every document once per filter in the same file. We read one filter:
  the first in the file unless ``filter=`` names another. Majority-vote filters
  (``maj@...``, ``majority_vote``) are skipped by default: their 0/1 score is a
  vote over the repeats, not the verdict of one sample, so reading it as n = 1
  would mislabel the curve.
- When every document has n = 1 we return a rollout table (raw generation as
  ``text``, filtered answer as ``answer``, ``target`` as ``gold``, the prompt as
  ``prompt``) so the report can show texts; otherwise a count table.
- Prompt ids are ``<task>/<doc_id>``. The model label is ``model_name`` from the
  ``results_<timestamp>.json`` the harness writes beside the samples, else the
  task name (a directory input: the directory name, which the harness sets to
  the sanitized model name).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters._common import (
    Documents,
    TableBuilder,
    as_text,
    count_from_metric,
    first_json,
    latest_per_task,
    split_timestamp,
)
from rlvr_boundary.io.rollouts import iter_json_lines, path_stem

log = logging.getLogger(__name__)

#: Its single-sample rows can be streamed to a consumer (:func:`~._common.streaming`).
STREAMS = True
NAME = "lm-eval"
#: Per-document metrics that are a verdict (n = 1) or a mean over samples, in order of preference.
PREFERRED = ("exact_match", "acc", "pass@1", "math_verify", "correct", "em", "acc_norm")
_KEYS = {"doc_id", "resps", "filtered_resps"}


def sniff(path: Path) -> bool:
    if path.is_dir():
        files = sorted(path.glob("samples_*.jsonl*"))
        return bool(files) and sniff(files[0])
    obj = first_json(path)
    return obj is not None and _KEYS <= set(obj)


def is_majority(filter_name: str) -> bool:
    f = filter_name.lower()
    return f.startswith("maj") or "majority" in f


def _args(obj: dict) -> list:
    """The per-request argument lists, from either serialisation of ``arguments``."""
    a = obj.get("arguments")
    if isinstance(a, dict):
        def order(key: str) -> int:
            tail = key.rsplit("_", 1)[-1]
            return int(tail) if tail.isdigit() else 0

        return [[v[k] for k in sorted(v, key=order)] if isinstance(v, dict) else v
                for _, v in sorted(a.items(), key=lambda kv: order(kv[0]))]
    return a if isinstance(a, list) else []


def _is_generation(args: list) -> bool:
    """generate_until requests carry ``(prompt, gen_kwargs dict)``; loglikelihood ones strings."""
    return (len(args) == 1 and isinstance(args[0], list) and len(args[0]) >= 2
            and isinstance(args[0][1], dict))


def _choose_metric(obj: dict, path: Path, line: int) -> str:
    listed = obj.get("metrics")
    listed = listed if isinstance(listed, list) else []
    names = [m for m in listed if isinstance(m, str) and m in obj] or [m for m in PREFERRED if m in obj]
    for m in PREFERRED:
        if m in names:
            return m
    for m in names:
        if isinstance(obj[m], (int, float)) and not m.startswith("maj"):
            return m
    raise InputError(f"no numeric per-document metric found (metrics: {obj.get('metrics')})",
                     path=path, line=line, field="metrics")


def _label_from_results(path: Path) -> str | None:
    """``model_name`` of the aggregated results file written in the same run, if present."""
    _, stamp = split_timestamp(path_stem(path), "samples_")
    if stamp is None:
        return None
    for cand in (path.with_name(f"results_{stamp}.json"), *path.parent.glob(f"*_{stamp}.json")):
        if cand.is_file() and cand.stat().st_size < (64 << 20):  # results files are small
            try:
                doc = json.loads(cand.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            name = doc.get("model_name") if isinstance(doc, dict) else None
            if isinstance(name, str) and name:
                return name
    return None


class _State:
    """Rows gathered over one or several task files (streamed when a sink is set)."""

    def __init__(self) -> None:
        self.rows = TableBuilder(("prompt_id", "model", "sample_idx", "text", "answer", "correct",
                                  "prompt", "gold"))
        self.docs = Documents(self.rows)


def _read_file(path: Path, task: str, label: str, st: _State, filter: str | None,
               metric: str | None) -> None:
    chosen, skipped, used = filter, set(), 0
    seen: dict[str, int] = {}
    for line, obj in iter_json_lines(path):
        for f in ("doc_id", "filtered_resps"):
            if f not in obj:
                raise InputError(f"missing field '{f}' (not an lm-eval samples file?)", path=path,
                                 line=line, field=f)
        fname = str(obj.get("filter", "none"))
        if chosen is None and not is_majority(fname):
            chosen = fname
        if fname != chosen:
            skipped.add(fname)
            continue
        metric = metric or _choose_metric(obj, path, line)
        if metric not in obj:
            raise InputError(f"missing metric '{metric}'", path=path, line=line, field=metric)
        filtered = obj["filtered_resps"]
        if not isinstance(filtered, list) or not filtered:
            raise InputError("filtered_resps must be a non-empty list", path=path, line=line,
                             field="filtered_resps")
        args = _args(obj)
        gen = _is_generation(args)
        n = len(filtered[0]) if gen and len(filtered) == 1 and isinstance(filtered[0], list) \
            and filtered[0] else 1
        c = count_from_metric(obj[metric], n, path=path, line=line, field=metric)
        if isinstance(obj["doc_id"], bool) or not isinstance(obj["doc_id"], (int, str)):
            raise InputError(f"doc_id must be an integer or string, found "
                             f"{str(obj['doc_id'])[:60]!r}", path=path, line=line, field="doc_id")
        pid = f"{task}/{obj['doc_id']}"
        if pid in seen:
            raise InputError(f"document {obj['doc_id']} appears twice for filter '{fname}' "
                             f"(first on line {seen[pid]})", path=path, line=line, field="doc_id")
        seen[pid] = line
        used += 1
        if st.docs.add(pid, n, c):
            resps = obj.get("resps")
            raw = resps[0][0] if gen and isinstance(resps, list) and resps and isinstance(
                resps[0], list) and resps[0] else None
            st.rows.add(prompt_id=pid, model=label, sample_idx=0, correct=bool(c),
                        text=raw if isinstance(raw, str) else None,
                        answer=filtered[0] if gen and isinstance(filtered[0], str) else None,
                        gold=as_text(obj.get("target")),
                        prompt=args[0][0] if gen and isinstance(args[0][0], str) else None)
    if chosen is None and skipped:
        raise InputError(f"only majority-vote filters in the file ({', '.join(sorted(skipped))}): "
                         "their score is a vote over the repeats, not a per-sample verdict",
                         path=path, field="filter")
    if used == 0:
        raise InputError(f"file has no records{f' for filter {chosen!r}' if chosen else ''}",
                         path=path)
    if skipped:
        log.warning("%s: read filter '%s'; ignored filter(s) %s", path, chosen,
                    ", ".join(sorted(skipped)))


def read(path: Path, model: str | None = None, *, filter: str | None = None,
         metric: str | None = None):
    """Read a samples file (or a directory of them: latest run of each task).

    Parameters
    ----------
    path
        ``samples_<task>_<timestamp>.jsonl`` or the folder the harness wrote it to.
    model
        Model label; default ``model_name`` from the run's results file.
    filter
        Filter to read (default: the first non-majority filter in the file).
    metric
        Per-document metric to read (default: first of :data:`PREFERRED` present).

    Returns
    -------
    pyarrow.Table
        A rollout table when every document was scored on one response, else a
        count table ``(prompt_id, model, n, c)``.
    """
    path = Path(path)
    st = _State()
    if path.is_dir():
        files = latest_per_task(sorted(path.glob("samples_*.jsonl*")), "samples_")
        if not files:
            raise InputError("no samples_<task>_<timestamp>.jsonl files in the directory",
                             path=path)
        label = model or _label_from_results(files[0][1]) or path.name
        for task, f in files:
            _read_file(f, task, label, st, filter, metric)
    else:
        task, _ = split_timestamp(path_stem(path), "samples_")
        label = model or _label_from_results(path) or task
        _read_file(path, task, label, st, filter, metric)
    return st.docs.table(label)
