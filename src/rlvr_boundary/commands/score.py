"""``rlvr-boundary score``: log-PPL and token entropy of each completion under another model."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from rlvr_boundary.commands.sample import add_backend_args

    p = sub.add_parser(
        "score", help="score every completion of a rollout table under a model (log-PPL, entropy)",
        description="Teacher-forces every completion of ROLLOUTS through MODEL and adds "
                    "score_log_ppl, score_entropy_mean, score_rbf_mean, score_inv_simpson_mean, "
                    "score_entropy_bins and score_num_tokens (exact, from the full logits). Scoring "
                    "RL samples under the base model gives the cross-model perplexity of Yue et "
                    "al., 'Does Reinforcement Learning Really Incentivize Reasoning Capacity in "
                    "LLMs Beyond the Base Model?' (arXiv 2504.13837), Figure 6. Resumable.")
    p.add_argument("rollouts", metavar="ROLLOUTS", help="rollout table with a 'text' column")
    p.add_argument("--model", required=True, metavar="PATH", help="Hugging Face model folder")
    p.add_argument("--out", metavar="DIR",
                   help="output shard directory (default ROLLOUTS.scored-LABEL/)")
    p.add_argument("--label", default=None,
                   help="value of the score_model column (default: the model folder's name)")
    p.add_argument("--prompts", metavar="FILE", default=None,
                   help="prompt file (default: the table's 'prompt' column)")
    p.add_argument("--template", choices=["plain", "chat", "qwen-boxed"], default=None,
                   help="template the samples were drawn with (default: from the manifest, else plain)")
    p.add_argument("--position-bins", type=int, default=10, help="(10)")
    p.add_argument("--shard-rows", type=int, default=256, help="rows per output shard (256)")
    w = p.add_argument_group("where learning landed")
    w.add_argument("--before", metavar="PATH", default=None,
                   help="checkpoint before RL (same tokenizer): also score the texts under it and "
                        "compare token by token with --model (the checkpoint after)")
    w.add_argument("--learning", metavar="FILE", default=None,
                   help="result JSON of the comparison (default LEARNING.json beside --out)")
    w.add_argument("--learning-rows", type=int, default=2000,
                   help="texts compared, the first N of the table (2000)")
    add_backend_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.backends.runner import ScoreOptions, read_prompts, score_run
    from rlvr_boundary.commands._progress import sample_progress
    from rlvr_boundary.commands.sample import build_backend
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.rollouts import read_manifest

    if args.backend not in ("transformers",):
        raise InputError("scoring needs full logits: use --backend transformers", field="backend")
    src = Path(args.rollouts)
    label = args.label or Path(str(args.model).rstrip("/")).name
    template = args.template
    if template is None:
        man = read_manifest(src) or {}
        template = man.get("template") or "plain"
    opts = ScoreOptions(label=label, template=template, position_bins=args.position_bins,
                        shard_rows=args.shard_rows)
    prompts = None
    if args.prompts:
        prompts = {p["prompt_id"]: p["question"] for p in read_prompts(args.prompts)}
    out = Path(args.out) if args.out else src.with_name(src.name.split(".")[0] + f".scored-{label}")
    from rlvr_boundary.io.outputs import check_outputs

    learning = None if not args.before else (
        Path(args.learning) if args.learning else out.with_name(out.name + ".learning.json"))
    check_outputs({"--learning": learning}, [src, args.prompts], folders={"--out": out},
                  stdout=("--learning",))
    from rlvr_boundary.io.rollouts import table_columns

    table_columns(src)  # a missing or unreadable table is said before the model loads
    backend = build_backend(args)
    with sample_progress(f"scoring under {label}", "rows") as (advance, _):
        summary = score_run(backend, src, out, opts, prompts=prompts, progress=advance)
    console.print(f"scored {summary['rows']} completions under {label} in "
                  f"{summary['seconds']:.1f} s")
    console.print(f"wrote {out}/")
    if args.before:
        _learning(args, backend, src, prompts, template, label, out)
    return 0


def _learning(args, after, src, prompts, template, label, out) -> None:
    from pathlib import Path

    from rlvr_boundary.backends import get_backend
    from rlvr_boundary.backends.base import render_prompt
    from rlvr_boundary.backends.runner import learning_run
    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    rows: list[dict] = []
    for t in iter_rollout_batches(src, None, required=("prompt_id", "model", "sample_idx")):
        rows += t.to_pylist()
        if len(rows) >= args.learning_rows:
            break
    rows = rows[:args.learning_rows]
    qs = prompts or {str(r["prompt_id"]): r.get("prompt") for r in rows}
    if any(q is None for q in qs.values()):
        raise InputError("no prompts: give --prompts or a table with a 'prompt' column", path=src)
    plist = [{"prompt_id": p, **render_prompt(template, q)} for p, q in qs.items()]
    comps = [{"prompt_id": str(r["prompt_id"]), "text": r.get("text") or ""} for r in rows]
    before = get_backend("transformers", model=args.before, device=args.device, dtype=args.dtype,
                         batch_size=args.batch_size, num_threads=args.threads)
    before_label = Path(str(args.before).rstrip("/")).name
    res = learning_run(before, after, plist, comps, labels=(before_label, label))
    path = Path(args.learning) if args.learning else out.with_name(out.name + ".learning.json")
    write_result(path, "learning_landed", {"before": args.before, "after": args.model,
                                           "template": template, "rows": len(rows)}, res)
    console.print(f"where learning landed: {res['barely_moved']['0.05']:.1%} of {res['tokens']} tokens "
                  f"moved by at most 0.05 in probability; wrote {path}")
