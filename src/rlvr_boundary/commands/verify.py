"""``rlvr-boundary verify``: grade raw completions (math answers or code tests).

Parse -> :func:`rlvr_boundary.pipelines.verify.run` -> print. The workflow's
flags come from :class:`~rlvr_boundary.pipelines.verify.VerifyOptions`; the
math and code flags below set its nested grading options (the math backends'
and extraction methods' names from their registries).
"""

from __future__ import annotations

import argparse

from rlvr_boundary.options import add_flags
from rlvr_boundary.pipelines.verify import VerifyOptions


def register(sub: argparse._SubParsersAction) -> None:
    from rlvr_boundary.verify.registry import EXTRACT_METHODS as FALLBACKS
    from rlvr_boundary.verify.registry import MATH_BACKENDS as BACKENDS

    p = sub.add_parser(
        "verify",
        help="grade completions: adds answer, correct, verify_status and quality flags",
        description="Grades every completion of a rollout table against a gold file: math "
                    "answers in worker processes with a hard timeout per item, code in the "
                    "sandbox. Resumable: rerun the same command after an interruption.")
    p.add_argument("rollouts", metavar="ROLLOUTS",
                   help="rollout table (Parquet, JSONL or shard directory) with a 'text' "
                        "(or 'completion') column")
    p.add_argument("--gold", required=True, metavar="FILE",
                   help="JSONL/CSV: prompt id and gold answer (math) or tests (code)")
    p.add_argument("--out", metavar="PATH",
                   help="output: a .parquet/.jsonl file (default: ROLLOUTS.verified.parquet "
                        "beside the input; shards wait in a hidden .NAME.parts/ folder until "
                        "the end) or a directory of shards")
    p.add_argument("--json", metavar="FILE", help="also write the summary as a result JSON")
    groups = {"input fields": p.add_argument_group("input fields"),
              "math": p.add_argument_group("math"), "code": p.add_argument_group("code")}
    add_flags(p, VerifyOptions, groups=groups)
    m = groups["math"]
    m.add_argument("--backend", default="math-verify", metavar="NAME[,NAME]",
                   help="equivalence backend: " + "; ".join(f"{n}: {h}" for n, h in
                                                          BACKENDS.items())
                        + ". Several, comma-separated, grade in one pass and store each "
                        "verdict (the first fills 'correct'); 'ray' among them means "
                        "--runner ray")
    m.add_argument("--extract", default=",".join(FALLBACKS),
                   help=f"answer extraction methods in order ({','.join(FALLBACKS)})")
    c = groups["code"]
    c.add_argument("--sandbox-memory-mb", type=int, default=1024,
                   help="memory of one sandboxed run, all its processes together, MB (1024)")
    c.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run generated code even where no sandbox that holds is available "
                        "(bubblewrap and a cgroup are needed): it can then read and write "
                        "whatever this user can")
    c.add_argument("--sandbox-fusion-url", metavar="URL",
                   help="run the code on this SandboxFusion server (POST URL/run_code) "
                        "instead of the local sandbox; its isolation then applies")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console, progress
    from rlvr_boundary.options import from_args
    from rlvr_boundary.pipelines import verify as P
    from rlvr_boundary.report import words as W
    from rlvr_boundary.verify.sandbox import SandboxOptions

    sandbox = SandboxOptions(memory_mb=args.sandbox_memory_mb,
                             unsafe_no_isolation=args.unsafe_no_isolation,
                             fusion_url=args.sandbox_fusion_url)
    from dataclasses import replace

    opts = from_args(VerifyOptions, args, sandbox=sandbox)  # the bounds first (--timeout inf)
    names = [b.strip() for b in args.backend.split(",") if b.strip()]
    if "ray" in names:  # --backend ray: where the workers run, not a math backend
        names.remove("ray")
        opts = replace(opts, runner="ray")
    opts = replace(opts, math=P.math_options(names or "math-verify", args.extract, opts.timeout))
    with progress() as bar:
        task = bar.add_task(f"grading ({opts.task})", total=None)
        doc = P.run(args.rollouts, args.gold, opts, out=args.out, json_path=args.json,
                    progress=lambda k: bar.advance(task, k),
                    total=lambda n: bar.update(task, total=n))
    for item in W.console_lines(doc):
        console.print(item, markup=False)
    out = Path(doc["output"])
    if not doc.get("already_complete"):
        console.print(f"wrote {out}{'/' if out.is_dir() else ''}", markup=False)
    if args.json:
        console.print(f"wrote {args.json}", markup=False)
    return 0
