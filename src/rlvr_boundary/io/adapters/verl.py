"""verl validation generation dumps (``trainer.validation_data_dir``).

Layout (volcengine/verl, ``verl/trainer/ppo/ray_trainer.py``:
``RayPPOTrainer._validate`` collects the samples, ``_dump_generations`` writes
them): one file ``<global_step>.jsonl`` per validation run, one JSON object per
generated sample with ``input`` (prompt decoded with special tokens skipped),
``output`` (the completion), ``gts`` (ground truth, may be null), ``score`` (the
sequence reward), ``step``, and every key of the reward function's extra info
whose list has one entry per sample (``reward``, and for DAPO-style math
rewards ``acc`` and ``pred``). With ``val_kwargs.n > 1`` the batch is repeated
with ``interleave=True``, so a prompt's n samples are consecutive. The same
layout is written for training rollouts by ``trainer.rollout_data_dir``.

Decisions:

- verl stores no prompt id: samples are grouped by prompt text and the id is
  the first 16 hex digits of its SHA-1. Two runs share ids when their prompts
  (dataset and chat template) are identical.
- ``correct`` is the reward function's ``acc`` when present. Otherwise the
  score must be a verdict, one of 0/1 or -1/+1, and ``correct = score == 1``;
  a partial reward (format bonus 0.1, length penalties) cannot be told from a
  correct answer, so it is refused with the line named rather than thresholded.
- ``pred`` (when a string) becomes ``answer``, ``gts`` becomes ``gold`` and
  ``input`` becomes ``prompt``.
- A directory of step files becomes one model per step, ``step-<N>`` (prefixed
  by ``model``), so a report shows the training evolution directly.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters._common import TableBuilder, as_text, first_json, short_hash
from rlvr_boundary.io.rollouts import iter_json_lines, path_stem

#: Its rollout rows can be streamed to a consumer (:func:`~._common.streaming`).
STREAMS = True
NAME = "verl"
_STEP_FILE = re.compile(r"^(\d+)\.jsonl$")
_VERDICT_SCORES = (-1, 0, 1)


def _is_dump(obj: dict | None) -> bool:
    return obj is not None and {"input", "output", "score"} <= set(obj)


def step_files(path: Path) -> list[tuple[int, Path]]:
    return sorted((int(m.group(1)), p) for p in path.iterdir()
                  if p.is_file() and (m := _STEP_FILE.match(p.name)))


def sniff(path: Path) -> bool:
    if path.is_dir():
        files = step_files(path)
        return bool(files) and _is_dump(first_json(files[0][1]))
    return _is_dump(first_json(path))


def _verdict(obj: dict, path: Path, line: int) -> bool:
    acc = obj.get("acc")
    if acc is not None:
        if isinstance(acc, bool):
            return acc
        if isinstance(acc, (int, float)) and acc in (0, 1):
            return bool(acc)
        raise InputError(f"acc must be a boolean or 0/1, found {acc!r}", path=path, line=line,
                         field="acc")
    score = obj["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise InputError(f"score must be a number, found {score!r}", path=path, line=line,
                         field="score")
    if score not in _VERDICT_SCORES:
        raise InputError(
            f"score {score!r} is not a verdict (0/1 or -1/+1) and the line has no 'acc': a "
            "partial reward cannot be told from a correct answer; return an 'acc' key from "
            "the reward function's extra info", path=path, line=line, field="score")
    return score == 1


def _read_file(path: Path, label: str, rows: TableBuilder) -> None:
    next_idx: dict[str, int] = {}
    any_row = False
    last_prompt, last_pid = None, None  # samples of a prompt are consecutive: hash once
    for line, obj in iter_json_lines(path):
        any_row = True
        for f in ("input", "output", "score"):
            if f not in obj:
                raise InputError(f"missing field '{f}'", path=path, line=line, field=f)
        correct = _verdict(obj, path, line)
        prompt = as_text(obj["input"]) or ""
        if prompt != last_prompt:
            last_prompt, last_pid = prompt, short_hash(prompt)
        pid = last_pid
        idx = next_idx.get(pid, 0)
        next_idx[pid] = idx + 1
        pred = obj.get("pred")
        rows.add(prompt_id=pid, model=label, sample_idx=idx, correct=correct,
                 text=as_text(obj["output"]), answer=pred if isinstance(pred, str) else None,
                 prompt=prompt, gold=as_text(obj.get("gts")))
    if not any_row:
        raise InputError("file has no records", path=path)


def read(path: Path, model: str | None = None, *, step: int | None = None):
    """Read one ``<step>.jsonl`` dump or a directory of them (one model per step).

    ``step`` picks one validation step from a directory (an error lists the
    steps found when it is absent).
    """
    path = Path(path)
    rows = TableBuilder(("prompt_id", "model", "sample_idx", "text", "answer", "correct",
                         "prompt", "gold"))
    if path.is_dir():
        files = step_files(path)
        if not files:
            raise InputError("no <step>.jsonl files in the directory", path=path)
        if step is not None:
            chosen = [(s, f) for s, f in files if s == step]
            if not chosen:
                raise InputError(f"no dump of step {step}; the directory holds steps "
                                 f"{', '.join(str(s) for s, _ in files)}", path=path,
                                 field="verl_step")
            files = chosen
        for s, f in files:
            # One chosen step with a label given: the label names it as it is.
            label = model if (model and step is not None) else (
                f"{model}-step-{s}" if model else f"step-{s}")
            _read_file(f, label, rows)
    else:
        m = _STEP_FILE.match(path.name)
        default = f"step-{m.group(1)}" if m else path_stem(path)
        _read_file(path, model or default, rows)
    return rows.table()
