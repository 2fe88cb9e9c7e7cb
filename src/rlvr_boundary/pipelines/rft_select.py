"""The RFT selection workflow (RUC report recipe): rollouts in, the selected rows and ``rft-select`` out.

:func:`run` checks the outputs and the columns the rules need, reads the table,
applies the rule filters and the selection of
:func:`rlvr_boundary.shaping.rft.select_rft` with the verifiers' text rules
(:mod:`rlvr_boundary.verify.quality`), writes the selected rows (text cut after
the answer, the source manifest plus the selection) and the summary result.
"""

from __future__ import annotations

from pathlib import Path

from dataclasses import dataclass

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

__all__ = ["RftOptions", "STRATEGIES", "run", "default_out", "summary_path_for"]

#: Selection strategies of the positives: name -> (the column it ranks by, highest first, or
#: None for a seeded uniform draw; one line of help).
STRATEGIES = {"rbf": ("rbf_mean", "highest mean rollout branching factor (the report's recipe)"),
              "entropy": ("entropy_mean", "highest mean token entropy"),
              "random": (None, "a seeded uniform draw")}


@dataclass
class RftOptions:
    """Options of ``rlvr-boundary rft-select`` (each field is its flag)."""

    budget: int = option(1100, low=1, high=100_000_000,
                         help="samples to select (the report's 1.1k per round)")
    neg_frac: float = option(0.05, low=0, high=1,
                             help="share of the budget for incorrect samples, drawn at random")
    by: str = option("rbf", choices=tuple(STRATEGIES),
                     help="how positives are chosen: " + "; ".join(
                         f"{k}: {h}" for k, (_, h) in STRATEGIES.items()))
    max_redundancy: float = option(0.31, low=0, high=1,
                                   help="drop samples with 3-gram redundancy above this")
    seed: int = option(0, low=0, high=2**63 - 1, what="an integer from 0 to 2**63 - 1",
                       help="seed of the random draws (negatives; positives under random)")

    def __post_init__(self) -> None:
        check(self)

_SUFFIXES = (".parquet", ".jsonl.gz", ".jsonl", ".json")


def _stem(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def default_out(path: Path) -> Path:
    """``ROLLOUTS.rft.parquet`` beside the input."""
    return path.with_name(_stem(path.name) + ".rft.parquet")


def summary_path_for(out: Path) -> Path:
    """``OUT.summary.json`` beside the selected table."""
    return out.with_name(_stem(out.name) + ".summary.json")


def run(rollouts: str | Path, opts: RftOptions, *, out: str | Path | None = None,
        summary: str | Path | None = None) -> dict:
    """Select RFT data from ``rollouts``; write it and the ``rft-select`` document; return it."""
    import pyarrow as pa

    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc
    from rlvr_boundary.io.rollouts import (iter_rollout_batches, read_manifest, table_columns,
                                           take_rows, write_rollouts)
    from rlvr_boundary.io.schema import manifest_path_for
    from rlvr_boundary.shaping.rft import apply_rules, choose_rft
    from rlvr_boundary.verify import quality

    src = Path(rollouts)
    out = Path(out) if out else default_out(src)
    summary = Path(summary) if summary else summary_path_for(out)
    check_outputs({"--out": out, "--out (its manifest)": manifest_path_for(out),
                   "--summary": summary}, [src, manifest_path_for(src)],
                  suffixes={"--out": (".parquet", ".jsonl")})
    score_col = STRATEGIES[opts.by][0]
    have = set(table_columns(src))
    for col in ["text", "correct"] + ([score_col] if score_col else []):
        if col not in have:
            if col == score_col:
                why = f"strategy --by {opts.by} ranks samples by it"
                fix = "use --by random or add the token summaries"
            else:
                why, fix = "the rule filters read it", "the table must hold completions"
            raise InputError(f"column '{col}' is missing ({why}); {fix}", path=src, field=col)
    import numpy as np

    # Two passes over the table, never holding it: the rules need each text once, the
    # strategy only each row's outcome, verdict and score; the chosen rows are read again.
    reasons: list = []
    correct, scores = [], []
    for batch in iter_rollout_batches(src, ["text", "correct"] + ([score_col] if score_col
                                                                   else [])):
        reasons += apply_rules(batch.column("text").to_pylist(), opts.max_redundancy, quality)[1]
        correct.append(batch.column("correct").to_numpy(zero_copy_only=False))
        if score_col is not None:
            scores.append(batch.column(score_col).to_numpy(zero_copy_only=False).astype(float))
    correct = np.concatenate(correct) if correct else np.zeros(0, bool)  # (N,)
    score = None if score_col is None else np.concatenate([np.zeros(0), *scores])  # (N,)
    sel = choose_rft(reasons, correct, score, opts)
    n_input = len(reasons)
    chosen = take_rows(src, sel.indices)
    texts = [quality.cut_after_answer(t) for t in chosen.column("text").to_pylist()]
    chosen = chosen.set_column(chosen.column_names.index("text"), "text",
                               pa.array(texts, type=pa.string()))
    manifest = dict(read_manifest(src) or {})
    manifest.pop("schema_version", None)
    manifest.pop("tool_version", None)
    manifest["rft_select"] = {"source": str(src), "budget": opts.budget,
                              "neg_frac": opts.neg_frac, "by": opts.by,
                              "max_redundancy": opts.max_redundancy, "seed": opts.seed}
    write_rollouts(chosen, out, manifest=manifest)
    doc = envelope("rft-select", opts, {
        "input": str(src), "output": str(out), "n_input": n_input,
        "n_selected": int(sel.indices.size), "n_positive_selected": sel.n_positive,
        "n_negative_selected": sel.n_negative, "shortfall": sel.shortfall,
        "drops": sel.drop_counts(), "rank_column": score_col})
    write_doc(summary, doc)
    return doc
