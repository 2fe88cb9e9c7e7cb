"""``rlvr-boundary rft-select``: pick RFT training data that keeps pass@k (RUC report recipe)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rft-select",
        help="select rejection-sampling fine-tuning data: rule filters + 5%% negatives + high RBF",
        description="Applies the rule filters of the RUC report (a boxed answer, a digit, text "
                    "cut after the answer, 3-gram redundancy <= 0.31) to a rollout table, then "
                    "selects BUDGET samples: a share of random negatives and positives ranked "
                    "by mean RBF (or mean entropy, or at random). Writes the selected rows "
                    "(text cut after the answer) and a JSON summary counting every drop reason.")
    p.add_argument("rollouts", metavar="ROLLOUTS", help="rollout table (Parquet, JSONL or shards)")
    p.add_argument("--budget", type=int, default=1100, help="samples to select (default 1100)")
    p.add_argument("--neg-frac", type=float, default=0.05,
                   help="share of the budget for incorrect samples (default 0.05)")
    p.add_argument("--by", choices=["rbf", "entropy", "random"], default="rbf",
                   help="rank positives by mean RBF (default), mean entropy, or at random")
    p.add_argument("--max-redundancy", type=float, default=0.31,
                   help="drop samples with 3-gram redundancy above this (default 0.31)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random draws (default 0)")
    p.add_argument("--out", metavar="OUT",
                   help="selected table, .parquet or .jsonl (default: ROLLOUTS.rft.parquet)")
    p.add_argument("--summary", metavar="JSON",
                   help="summary result file (default: OUT with .summary.json)")
    p.set_defaults(func=run)


def default_out(path: Path) -> Path:
    name = path.name
    for suffix in (".parquet", ".jsonl.gz", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return path.with_name(name + ".rft.parquet")


def summary_path_for(out: Path) -> Path:
    name = out.name
    for suffix in (".parquet", ".jsonl.gz", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return out.with_name(name + ".summary.json")


def run(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.rollouts import read_manifest, table_columns, write_rollouts
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.shaping.rft import STRATEGY_COLUMNS, RftOptions, apply_rules, choose_rft

    try:
        opts = RftOptions(budget=args.budget, neg_frac=args.neg_frac, by=args.by,
                          max_redundancy=args.max_redundancy, seed=args.seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    src = Path(args.rollouts)
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.schema import manifest_path_for

    out_ = Path(args.out) if args.out else default_out(src)
    check_outputs({"--out": out_, "--out (its manifest)": manifest_path_for(out_),
                   "--summary": Path(args.summary) if args.summary else summary_path_for(out_)},
                  [src, manifest_path_for(src)], suffixes={"--out": (".parquet", ".jsonl")})
    need = ["text", "correct"] + ([STRATEGY_COLUMNS[opts.by]] if STRATEGY_COLUMNS[opts.by] else [])
    have = set(table_columns(src))
    for col in need:
        if col not in have:
            if col == STRATEGY_COLUMNS[opts.by]:
                why = f"strategy --by {opts.by} ranks samples by it"
                fix = "use --by random or add the token summaries"
            else:
                why, fix = "the rule filters read it", "the table must hold completions"
            raise InputError(f"column '{col}' is missing ({why}); {fix}", path=src, field=col)
    import numpy as np

    from rlvr_boundary.io.rollouts import iter_rollout_batches, take_rows
    from rlvr_boundary.verify import quality

    # Two passes over the table, never holding it: the rules need each text once, the
    # strategy only each row's outcome, verdict and score; the chosen rows are read again.
    score_col = STRATEGY_COLUMNS[opts.by]
    reasons: list = []
    correct, scores = [], []
    for batch in iter_rollout_batches(src, need):
        reasons += apply_rules(batch.column("text").to_pylist(), opts.max_redundancy, quality)[1]
        correct.append(batch.column("correct").to_numpy(zero_copy_only=False))
        if score_col is not None:
            scores.append(batch.column(score_col).to_numpy(zero_copy_only=False).astype(float))
    sel = choose_rft(reasons, np.concatenate(correct),
                     np.concatenate(scores) if score_col is not None else None, opts)
    n_input = len(reasons)

    out = Path(args.out) if args.out else default_out(src)
    chosen = take_rows(src, sel.indices)
    sel.texts = [quality.cut_after_answer(t) for t in chosen.column("text").to_pylist()]
    chosen = chosen.set_column(chosen.column_names.index("text"), "text",
                               pa.array(sel.texts, type=pa.string()))
    manifest = dict(read_manifest(src) or {})
    manifest.pop("schema_version", None)
    manifest.pop("tool_version", None)
    manifest["rft_select"] = {"source": str(src), "budget": opts.budget,
                              "neg_frac": opts.neg_frac, "by": opts.by,
                              "max_redundancy": opts.max_redundancy, "seed": opts.seed}
    write_rollouts(chosen, out, manifest=manifest)

    drops = sel.drop_counts()
    payload = {
        "input": str(src),
        "output": str(out),
        "n_input": n_input,
        "n_selected": int(sel.indices.size),
        "n_positive_selected": sel.n_positive,
        "n_negative_selected": sel.n_negative,
        "shortfall": sel.shortfall,
        "drops": drops,
        "rank_column": score_col,
    }
    summary = Path(args.summary) if args.summary else summary_path_for(out)
    write_result(summary, "rft-select", opts, payload)
    console.print(f"{n_input} samples -> {sel.indices.size} selected "
                  f"({sel.n_positive} correct, {sel.n_negative} incorrect)"
                  + (f"; {sel.shortfall} short of the budget" if sel.shortfall else ""))
    console.print("dropped: " + ", ".join(f"{k} {v}" for k, v in drops.items()))
    console.print(f"wrote {out} and {summary}")
    return 0
