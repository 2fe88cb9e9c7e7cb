"""``rlvr-boundary sample``: draw n samples per prompt from a checkpoint (resumable).

Parse -> :func:`rlvr_boundary.pipelines.sample.run` -> print. The flags of the
sampling options, the run options and the backend come from their dataclasses
(the backends' names and help from their registry).
"""

from __future__ import annotations

import argparse

from rlvr_boundary.backends import BackendOptions
from rlvr_boundary.backends.base import SamplingParams
from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.sample import SampleOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sample", help="draw n samples per prompt from a model (sharded, resumable)",
        description="Draws n samples per prompt with the chosen backend and writes them as a "
                    "directory of Parquet shards in the canonical rollout schema, with the token "
                    "summaries (entropy, branching factor, inverse Simpson, log-PPL, entropy by "
                    "position) and a manifest of every setting. Each sample has its own seed, "
                    "derived from --seed, the prompt id and the sample index, so rerunning the "
                    "same command after an interruption (even SIGKILL) finishes the run with no "
                    "duplicated and no lost samples.")
    p.add_argument("--model", required=True, metavar="PATH",
                   help="Hugging Face model folder (or the served model name with --backend openai)")
    p.add_argument("--prompts", required=True, metavar="FILE",
                   help="JSONL or CSV of prompts: an id (prompt_id, id, unique_id, ...) and a text "
                        "(prompt, problem, question, ...)")
    p.add_argument("--out", required=True, metavar="DIR", help="output shard directory")
    add_flags(p, SampleOptions)
    p.add_argument("--label", default=None,
                   help="value of the 'model' column (default: the model folder's name)")
    p.add_argument("--id-field", default=None, help="id field of the prompt file")
    p.add_argument("--prompt-field", default=None, help="text field of the prompt file")
    groups: dict = {}
    add_flags(p, SamplingParams, groups=groups)
    s = groups["sampling"]
    s.add_argument("--match-entropy-of", metavar="ROLLOUTS", default=None,
                   help="first find the temperature at which this model's mean token entropy on the "
                        "prompts equals the mean entropy_mean of ROLLOUTS (e.g. the RL model's "
                        "samples), then sample at it (--temperature is ignored)")
    s.add_argument("--match-n", type=int, default=4,
                   help="samples per prompt for each temperature probe (4)")
    add_flags(p, BackendOptions, groups=groups)
    p.add_argument("--json", metavar="FILE", help="also write the run summary as a result JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.commands._progress import sample_progress
    from rlvr_boundary.console import console
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import sample as P
    from rlvr_boundary.report import words as W

    label = args.label or Path(str(args.model).rstrip("/")).name
    opts = from_args(SampleOptions, args, params=from_args(SamplingParams, args), label=label)
    with sample_progress("sampling", "samples") as (advance, set_total):
        doc = P.run(args.model, args.prompts, args.out, opts, from_args(BackendOptions, args),
                    id_field=args.id_field, prompt_field=args.prompt_field,
                    match_entropy_of=args.match_entropy_of, match_n=args.match_n,
                    json_path=args.json, progress=advance, total=set_total,
                    say=lambda text: console.print(text, markup=False))
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    console.print(f"wrote {args.out}/", markup=False)
    if args.json:
        console.print(f"wrote {args.json}", markup=False)
    return 0
