"""``rlvr-audit verify``: grade raw completions (math answers or code tests)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify",
        help="grade completions: adds answer, correct, verify_status and quality flags",
        description="Grades every completion of a rollout table against a gold file, in worker "
                    "processes with a hard timeout per item (math) or in the sandbox (code). "
                    "Resumable: rerun the same command after an interruption.")
    p.add_argument("rollouts", metavar="ROLLOUTS", help="rollout table with a 'text' column")
    p.add_argument("--task", choices=["math", "code"], default="math")
    p.add_argument("--gold", required=True, metavar="FILE",
                   help="JSONL/CSV: prompt id and gold answer (math) or test code (code)")
    p.add_argument("--gold-id", metavar="FIELD", help="id field of the gold file")
    p.add_argument("--gold-field", metavar="FIELD", help="answer/tests field of the gold file")
    p.add_argument("--out", metavar="DIR", help="output shard directory (default ROLLOUTS.verified)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    p.add_argument("--timeout", type=float, default=10.0, help="hard seconds per item (10)")
    p.add_argument("--backend", choices=["auto", "math-verify", "canonical"], default="auto",
                   help="math equivalence backend (auto: math-verify when installed)")
    p.add_argument("--extract", default="boxed,answer_is,last_number",
                   help="answer extraction methods in order (boxed,answer_is,last_number)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_audit.console import console, progress
    from rlvr_audit.errors import InputError
    from rlvr_audit.verify.extract import ExtractOptions
    from rlvr_audit.verify.math import MathOptions
    from rlvr_audit.verify.run import VerifyOptions, verify_table

    if args.workers < 1 or args.timeout <= 0:
        raise InputError("--workers must be >= 1 and --timeout > 0", field="workers")
    methods = tuple(m.strip() for m in args.extract.split(",") if m.strip())
    try:
        extract = ExtractOptions(fallbacks=methods)
        from rlvr_audit.verify.extract import extract_answer

        extract_answer("", extract)  # validates the method names
    except ValueError as exc:
        raise InputError(str(exc), field="extract") from None
    opts = VerifyOptions(task=args.task, workers=args.workers, timeout=args.timeout,
                         gold_id=args.gold_id, gold_field=args.gold_field,
                         math=MathOptions(backend=args.backend, extract=extract))
    src = Path(args.rollouts)
    out = Path(args.out) if args.out else src.with_name(src.name.split(".")[0] + ".verified")
    with progress() as bar:
        task = bar.add_task("grading", total=None)
        summary = verify_table(src, Path(args.gold), out, opts,
                               progress=lambda k: bar.advance(task, k))
    console.print(f"graded {summary['rows']} samples with {summary['verifier']}; statuses: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
    console.print(f"wrote {out}/")
    return 0
