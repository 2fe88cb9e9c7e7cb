"""``rlvr-boundary verify``: grade raw completions (math answers or code tests)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify",
        help="grade completions: adds answer, correct, verify_status and quality flags",
        description="Grades every completion of a rollout table against a gold file: math "
                    "answers in worker processes with a hard timeout per item, code in the "
                    "sandbox. Resumable: rerun the same command after an interruption.")
    p.add_argument("rollouts", metavar="ROLLOUTS",
                   help="rollout table (Parquet, JSONL or shard directory) with a 'text' "
                        "(or 'completion') column")
    p.add_argument("--task", choices=["math", "code"], default="math",
                   help="math: answer equivalence; code: run tests in the sandbox (math)")
    p.add_argument("--gold", required=True, metavar="FILE",
                   help="JSONL/CSV: prompt id and gold answer (math) or tests (code)")
    p.add_argument("--out", metavar="PATH",
                   help="output: a directory of shards (default ROLLOUTS.verified/) or a "
                        ".parquet/.jsonl file (assembled atomically at the end)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="hard wall-clock seconds per item, or per sandboxed run for code (10)")
    p.add_argument("--json", metavar="FILE", help="also write the summary as a result JSON")
    g = p.add_argument_group("input fields")
    g.add_argument("--text-field", metavar="COL", help="completion column (text, else completion)")
    g.add_argument("--gold-id", metavar="FIELD", help="id field of the gold file")
    g.add_argument("--gold-field", metavar="FIELD", help="answer/tests field of the gold file")
    m = p.add_argument_group("math")
    m.add_argument("--backend", choices=["math-verify", "canonical"], default="math-verify",
                   help="equivalence backend (math-verify; canonical: exact, no sympy)")
    m.add_argument("--extract", default="boxed,answer_is,last_number",
                   help="answer extraction methods in order (boxed,answer_is,last_number)")
    m.add_argument("--memory-mb", type=int, default=2048,
                   help="extra address space per math worker, MB (2048)")
    c = p.add_argument_group("code")
    c.add_argument("--sandbox-memory-mb", type=int, default=1024,
                   help="address space per sandboxed process, MB (1024)")
    c.add_argument("--isolation", choices=["auto", "namespaces", "rlimits"], default="auto",
                   help="auto: bubblewrap or unshare when available, else rlimits only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console, progress
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.verify.extract import FALLBACKS, ExtractOptions
    from rlvr_boundary.verify.math import MathOptions
    from rlvr_boundary.verify.run import VerifyOptions, verify_table
    from rlvr_boundary.verify.sandbox import SandboxOptions

    if args.workers < 1:
        raise InputError("--workers must be >= 1", field="workers")
    if not args.timeout > 0:
        raise InputError("--timeout must be > 0", field="timeout")
    methods = tuple(x.strip() for x in args.extract.split(",") if x.strip())
    unknown = sorted(set(methods) - set(FALLBACKS))
    if unknown or not methods:
        raise InputError(f"--extract: unknown or no methods {unknown}; known: {list(FALLBACKS)}",
                         field="extract")
    opts = VerifyOptions(
        task=args.task, workers=args.workers, timeout=args.timeout, memory_mb=args.memory_mb,
        text_field=args.text_field, gold_id=args.gold_id, gold_field=args.gold_field,
        math=MathOptions(backend=args.backend, extract=ExtractOptions(fallbacks=methods),
                         inner_timeout=max(1, int(args.timeout) - 1)),
        sandbox=SandboxOptions(memory_mb=args.sandbox_memory_mb, isolation=args.isolation))
    src = Path(args.rollouts)
    out = Path(args.out) if args.out else src.with_name(src.name.split(".")[0] + ".verified")
    with progress() as bar:
        task = bar.add_task(f"grading ({args.task})", total=None)
        summary = verify_table(src, Path(args.gold), out, opts,
                               progress=lambda k: bar.advance(task, k),
                               total=lambda n: bar.update(task, total=n))
    console.print(f"graded {summary['rows']} samples with {summary['verifier']} in "
                  f"{summary['seconds']:.1f} s: {summary['correct']} correct; statuses: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
    console.print(f"wrote {out}{'/' if out.is_dir() else ''}")
    if args.json:
        from rlvr_boundary.io.results import write_result

        write_result(args.json, "verify", opts, summary)
        console.print(f"wrote {args.json}")
    return 0
