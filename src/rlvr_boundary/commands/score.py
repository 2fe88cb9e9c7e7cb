"""``rlvr-boundary score``: log-PPL and token entropy of each completion under another model.

Parse -> :func:`rlvr_boundary.pipelines.score.run` -> print.
"""

from __future__ import annotations

import argparse

from rlvr_boundary.backends import BackendOptions
from rlvr_boundary.backends.base import TEMPLATES
from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.score import LearningOptions, ScoreOptions


def register(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--template", choices=TEMPLATES, default=None,
                   help="template the samples were drawn with (default: from the manifest, else plain)")
    add_flags(p, ScoreOptions)
    groups = {"where learning landed": p.add_argument_group("where learning landed")}
    w = groups["where learning landed"]
    w.add_argument("--before", metavar="PATH", default=None,
                   help="checkpoint before RL (same tokenizer): also score the texts under it and "
                        "compare token by token with --model (the checkpoint after)")
    w.add_argument("--learning", metavar="FILE", default=None,
                   help="result JSON of the comparison (default OUT.learning.json beside --out); "
                        "the scored rows still go to --out (default ROLLOUTS.scored-LABEL/)")
    add_flags(p, LearningOptions, groups=groups)
    add_flags(p, BackendOptions, groups={})
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.commands._progress import sample_progress
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import score as P
    from rlvr_boundary.report import words as W

    label = args.label or Path(str(args.model).rstrip("/")).name
    template = P.template_of(args.rollouts, args.template)
    opts = from_args(ScoreOptions, args, label=label, template=template)
    learning = (from_args(LearningOptions, args, before=args.before, after=args.model,
                          template=template) if args.before else None)
    with sample_progress(f"scoring under {label}", "rows") as (advance, _):
        got = P.run(args.rollouts, args.model, opts, from_args(BackendOptions, args),
                    out=args.out, prompts_path=args.prompts, progress=advance,
                    learning=learning, learning_json=args.learning)
    console.print(W.score_sentence(got["summary"], label), markup=False)
    if args.out:
        console.print(f"wrote {got['out']}/", markup=False)
    else:  # the default folder: say where it is and how to choose another
        console.print(f"wrote the scored rows to {got['out']}/ (the default beside ROLLOUTS; "
                      "choose the folder with --out)", markup=False)
    if got["learning"] is not None:
        for item in W.console_lines(got["learning"]):
            console.print(item, markup=False)
        console.print(f"wrote {got['learning_json']}", markup=False)
    return 0
