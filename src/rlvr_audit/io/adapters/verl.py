"""verl validation generation dumps (``trainer.validation_data_dir``).

Layout (verl/trainer/ppo/ray_trainer.py, ``_dump_generations``): one file
``<global_step>.jsonl`` per validation run, one JSON object per generated
sample with ``input`` (the prompt text), ``output`` (the completion), ``score``
(the reward), ``step``, optionally ``gts`` (ground truth) and the reward
function's extra keys (for example ``acc``). With ``val_kwargs.n > 1`` a prompt
appears n times.

We read a rollout table: samples are grouped by prompt text (the id is a hash
of it, since verl stores none), ``correct`` is ``acc`` when present, else
``score > 0`` (math rewards are 1/0 or +1/-1). A directory of step files
becomes one model per step, labelled ``step-<N>`` (prefixed by ``model``), so a
report shows the training evolution directly.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pyarrow as pa

from rlvr_audit.errors import InputError
from rlvr_audit.io.adapters._common import as_text, first_json
from rlvr_audit.io.rollouts import iter_json_lines

NAME = "verl"
_STEP_FILE = re.compile(r"^(\d+)\.jsonl$")


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


def _read_file(path: Path, label: str, cols: dict) -> None:
    next_idx: dict[str, int] = {}
    any_row = False
    for line, obj in iter_json_lines(path):
        any_row = True
        for f in ("input", "output", "score"):
            if f not in obj:
                raise InputError(f"missing field '{f}'", path=path, line=line, field=f)
        if "acc" in obj and obj["acc"] is not None:
            if not isinstance(obj["acc"], (bool, int, float)):
                raise InputError(f"acc must be a boolean or number, found {obj['acc']!r}",
                                 path=path, line=line, field="acc")
            correct = bool(obj["acc"] > 0) if not isinstance(obj["acc"], bool) else obj["acc"]
        else:
            score = obj["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise InputError(f"score must be a number, found {score!r}", path=path,
                                 line=line, field="score")
            correct = score > 0
        prompt = as_text(obj["input"]) or ""
        pid = hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:16]
        idx = next_idx.get(pid, 0)
        next_idx[pid] = idx + 1
        cols["prompt_id"].append(pid)
        cols["model"].append(label)
        cols["sample_idx"].append(idx)
        cols["text"].append(as_text(obj["output"]))
        cols["correct"].append(bool(correct))
    if not any_row:
        raise InputError("file has no records", path=path)


def read(path: Path, model: str | None = None):
    cols: dict[str, list] = {k: [] for k in ("prompt_id", "model", "sample_idx", "text", "correct")}
    if path.is_dir():
        files = step_files(path)
        if not files:
            raise InputError("no <step>.jsonl files in the directory", path=path)
        for step, f in files:
            _read_file(f, f"{model}-step-{step}" if model else f"step-{step}", cols)
    else:
        m = _STEP_FILE.match(path.name)
        default = f"step-{m.group(1)}" if m else path.stem
        _read_file(path, model or default, cols)
    return pa.table({"prompt_id": pa.array(cols["prompt_id"], pa.string()),
                     "model": pa.array(cols["model"], pa.string()),
                     "sample_idx": pa.array(cols["sample_idx"], pa.int64()),
                     "text": pa.array(cols["text"], pa.string()),
                     "correct": pa.array(cols["correct"], pa.bool_())})
