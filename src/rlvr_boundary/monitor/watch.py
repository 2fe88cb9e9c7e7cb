"""Follow a training run's checkpoint folder and audit each new checkpoint as it appears.

The library part of ``rlvr-boundary watch``: find checkpoints, tell when one is
completely written, and look at each new one with a :class:`BoundaryMonitor`
(which keeps its samples and results, so a restarted watcher skips what it
already audited and samples nothing twice).

Checkpoints are the subfolders of the run folder named ``checkpoint-N``
(Hugging Face ``Trainer``, TRL), ``step-N`` (the RLVR lab) or ``global_step_N``
(verl). The model is the first Hugging Face folder (``config.json`` and
``*.safetensors`` or ``*.bin`` weights) among the subfolder itself,
``actor/huggingface``, ``huggingface`` and ``actor``: verl writes loadable
weights there only when it saves ``hf_model`` (``checkpoint.save_contents``) or
after ``python -m verl.model_merger merge``; a ``global_step_N`` holding only
FSDP shards is reported as not loadable and skipped.

A checkpoint is ready when a completion marker exists (``trainer_state.json``,
which the ``Trainer`` writes after the weights, or the lab's ``LAB_COMPLETE``),
or else when none of its files changed for ``settle`` seconds. Folders being
written under a temporary name (``step-N.tmp``) do not match the names above.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError

__all__ = ["Checkpoint", "find_checkpoints", "is_ready", "read_heldout", "Watcher"]

_NAME = re.compile(r"^(?:checkpoint-|step-|global_step_)(\d+)$")
_MODEL_PLACES = (".", "actor/huggingface", "huggingface", "actor")
MARKERS = ("trainer_state.json", "LAB_COMPLETE")


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the run folder."""

    step: int
    """Training step, from the folder name."""
    folder: Path
    """The checkpoint folder (``checkpoint-N``, ``step-N``, ``global_step_N``)."""
    model: Path | None
    """The Hugging Face model folder inside it, or None when there is none (yet)."""


def _model_dir(folder: Path) -> Path | None:
    for place in _MODEL_PLACES:
        d = (folder / place).resolve() if place != "." else folder
        if (d / "config.json").is_file() and (any(d.glob("*.safetensors"))
                                              or any(d.glob("*.bin"))):
            return d
    return None


def find_checkpoints(root: str | Path) -> list[Checkpoint]:
    """Checkpoints of the run folder ``root``, in step order."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("not a folder of checkpoints", path=root)
    out = []
    for child in root.iterdir():
        m = _NAME.match(child.name)
        if m and child.is_dir():
            out.append(Checkpoint(int(m.group(1)), child, _model_dir(child)))
    steps = [c.step for c in out]
    dup = sorted({s for s in steps if steps.count(s) > 1})
    if dup:
        raise InputError(f"several checkpoints of step {dup[0]} "
                         f"({', '.join(c.folder.name for c in out if c.step == dup[0])})",
                         path=root)
    return sorted(out, key=lambda c: c.step)


def is_ready(ckpt: Checkpoint, settle: float, now: float | None = None) -> bool:
    """Whether the checkpoint is completely written (module docstring)."""
    if ckpt.model is None:
        return False
    if any((ckpt.folder / m).exists() or (ckpt.model / m).exists() for m in MARKERS):
        return True
    now = time.time() if now is None else now
    newest = max((f.stat().st_mtime for f in ckpt.folder.rglob("*") if f.is_file()), default=now)
    return now - newest >= settle


def read_heldout(path: str | Path, *, gold: str | Path | None = None,
                 need_gold: bool = False, template: str = "plain") -> list[dict]:
    """Held-out prompts ``[{"prompt_id", "prompt" | "messages", "gold"?}]`` from JSONL or CSV.

    Ids and texts are read as ``rlvr-boundary sample`` reads prompts (the
    ``question`` is rendered with ``template``); gold answers as ``rlvr-boundary
    verify`` reads them, from ``gold`` or else from the prompt file itself.
    Every prompt needs one when ``need_gold``.
    """
    from rlvr_boundary.backends.base import render_prompt
    from rlvr_boundary.io.prompts import read_prompts

    from rlvr_boundary.pipelines.verify import VerifyOptions, read_gold

    prompts = read_prompts(Path(path))
    golds: dict = {}
    if gold is not None or need_gold:
        golds = read_gold(Path(gold if gold is not None else path), VerifyOptions())
    else:  # gold answers in the prompt file are passed on to a verifier function, if present
        try:
            golds = read_gold(Path(path), VerifyOptions())
        except InputError:
            golds = {}
    missing = [p["prompt_id"] for p in prompts if p["prompt_id"] not in golds]
    if need_gold and missing:
        raise InputError(f"no gold answer for {len(missing)} prompt(s), e.g. "
                         f"{', '.join(missing[:5])}", path=gold or path)
    return [{"prompt_id": p["prompt_id"], **render_prompt(template, p["question"]),
             **({"gold": golds[p["prompt_id"]]} if p["prompt_id"] in golds else {})}
            for p in prompts]


class Watcher:
    """Audit every ready checkpoint of ``root`` that ``monitor`` has not looked at yet.

    Parameters
    ----------
    root
        The run folder.
    monitor
        A :class:`rlvr_boundary.monitor.BoundaryMonitor` with its base known.
    settle
        Seconds without a file change after which a checkpoint without a
        completion marker counts as written.
    """

    def __init__(self, root: str | Path, monitor, *, settle: float = 30.0) -> None:
        self.root = Path(root)
        self.monitor = monitor
        self.settle = float(settle)

    def pending(self) -> list[Checkpoint]:
        """Ready checkpoints not audited yet, in step order."""
        return [c for c in find_checkpoints(self.root)
                if c.step not in self.monitor.history and is_ready(c, self.settle)]

    def unloadable(self) -> list[Checkpoint]:
        """Checkpoint folders with no Hugging Face model inside (e.g. verl FSDP shards only)."""
        return [c for c in find_checkpoints(self.root)
                if c.model is None and c.step not in self.monitor.history]

    def poll(self, on_look=None) -> list[dict]:
        """Audit the pending checkpoints; ``on_look(checkpoint, result)`` after each."""
        done = []
        for c in self.pending():
            doc = self.monitor.step(c.step, c.model)
            done.append(doc)
            if on_look is not None:
                on_look(c, doc)
        return done
