"""Helpers of the watch tests: a verifier importable by name, and checkpoint folders."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path


def contains_gold(prompt: dict, text: str) -> bool:
    """The toy task's verifier: the completion contains the gold sum."""
    return str(prompt["gold"]) in re.findall(r"\d+", text)


def write_checkpoint(model, tok, folder: Path, step: int, *, marker: bool = True) -> Path:
    """Save an HF folder under a temporary name, then rename it (as trainers do)."""
    tmp = folder.with_name(folder.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if marker:
        (tmp / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    tmp.rename(folder)
    return folder
