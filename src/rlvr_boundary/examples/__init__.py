"""Real published data shipped with rlvr-boundary, for examples, tests and benchmarks.

``deepscaler32k``
    Per-prompt counts (n = 128) of DeepSeek-R1-Distill-Qwen-1.5B (base) and
    DeepScaleR-1.5B-Preview (RL) on 1,060 math prompts. From the
    ``passk-inference`` package (MIT licence, kept in the folder with its README
    and provenance metadata).
``math500``
    The 500-problem MATH test split with official solutions and gold answers
    (Hendrycks et al. 2021, MIT licence), as distributed with the limit-of-RLVR
    evaluation code: real gold answers for the verifiers.
``theory``
    The 3x3 counterexample of the No Free Lunch paper as a strategy matrix CSV
    (``three_by_three.csv``), the example of the theory lab in the CLI, the app
    and docs/theory.md.
``lab``
    Rollouts of the RLVR lab (``rlvr-boundary lab run --preset full``): a tiny
    model trained from scratch, its base and GRPO checkpoints on a synthetic
    task with three readable strategies; texts, answers, strategies and token
    summaries. Made by rlvr-boundary, no external data.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLES = {
    "deepscaler32k": {
        "base": "base.jsonl",
        "rl": "rl.jsonl",
        "base_label": "DeepSeek-R1-Distill-Qwen-1.5B",
        "rl_label": "DeepScaleR-1.5B-Preview",
    },
    "math500": {"problems": "test.jsonl"},
    # One shard directory holding every model (base and the step-N checkpoints).
    # _prompts.jsonl: each problem's text (the leading "_" keeps pyarrow from reading it
    # as part of the dataset).
    "lab": {"rollouts": ".", "base_label": "base", "prompts": "_prompts.jsonl"},
    "theory": {"matrix": "three_by_three.csv"},
}


def example_dir(name: str = "deepscaler32k") -> Path:
    """Folder of the embedded example ``name`` (README, licence, data files)."""
    if name not in EXAMPLES:
        raise KeyError(f"unknown example '{name}'; available: {', '.join(EXAMPLES)}")
    return Path(str(resources.files("rlvr_boundary.examples") / "data" / name))


def example_files(name: str = "deepscaler32k") -> dict:
    """Paths and model labels of the base and RL files of example ``name``."""
    meta = EXAMPLES[name] if name in EXAMPLES else None
    folder = example_dir(name)
    return {"base": folder / meta["base"], "rl": folder / meta["rl"],
            "base_label": meta["base_label"], "rl_label": meta["rl_label"]}


def example_note(name: str = "deepscaler32k") -> str:
    """Where example ``name``'s data comes from: its README's Source paragraph, on one line."""
    readme = (example_dir(name) / "README.md").read_text(encoding="utf-8")
    return " ".join(line.strip() for line in readme.split("Source:", 1)[-1].split("\n\n")[0]
                    .splitlines())
