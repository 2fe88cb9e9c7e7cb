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
                   help="output: a .parquet/.jsonl file (default: ROLLOUTS.verified.parquet "
                        "beside the input; shards wait in a hidden .NAME.parts/ folder until "
                        "the end) or a directory of shards")
    p.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="hard wall-clock seconds per item, or per sandboxed run for code (10)")
    p.add_argument("--json", metavar="FILE", help="also write the summary as a result JSON")
    g = p.add_argument_group("input fields")
    g.add_argument("--text-field", metavar="COL", help="completion column (text, else completion)")
    g.add_argument("--gold-id", metavar="FIELD", help="id field of the gold file")
    g.add_argument("--gold-field", metavar="FIELD", help="answer/tests field of the gold file")
    m = p.add_argument_group("math")
    m.add_argument("--backend", default="math-verify", metavar="NAME[,NAME]",
                   help="equivalence backend: math-verify (default) or canonical (exact, no "
                        "sympy; may miss an equivalence, never accepts a different value); "
                        "several, comma-separated, grade in one pass and store each verdict "
                        "(the first fills 'correct')")
    m.add_argument("--extract", default="boxed,answer_is,last_number",
                   help="answer extraction methods in order (boxed,answer_is,last_number)")
    m.add_argument("--memory-mb", type=int, default=2048,
                   help="extra address space per math worker, MB (2048)")
    c = p.add_argument_group("code")
    c.add_argument("--sandbox-memory-mb", type=int, default=1024,
                   help="memory of one sandboxed run, all its processes together, MB (1024)")
    c.add_argument("--unsafe-no-isolation", action="store_true",
                   help="run generated code even where no sandbox that holds is available "
                        "(bubblewrap and a cgroup are needed): it can then read and write "
                        "whatever this user can")
    c.add_argument("--sandbox-fusion-url", metavar="URL",
                   help="run the code on this SandboxFusion server (POST URL/run_code) "
                        "instead of the local sandbox; its isolation then applies")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.console import console, progress
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.verify.extract import FALLBACKS, ExtractOptions
    from rlvr_boundary.verify.math import BACKENDS, MathOptions
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
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    bad = sorted(set(backends) - set(BACKENDS))
    if bad or not backends or len(set(backends)) != len(backends):
        raise InputError(f"--backend: unknown, repeated or no backends {bad or backends}; "
                         f"known: {list(BACKENDS)}", field="backend")
    opts = VerifyOptions(
        task=args.task, workers=args.workers, timeout=args.timeout, memory_mb=args.memory_mb,
        text_field=args.text_field, gold_id=args.gold_id, gold_field=args.gold_field,
        math=MathOptions(backend=backends[0], also=tuple(backends[1:]),
                         extract=ExtractOptions(fallbacks=methods),
                         inner_timeout=max(1, int(args.timeout) - 1)),
        sandbox=SandboxOptions(memory_mb=args.sandbox_memory_mb,
                               unsafe_no_isolation=args.unsafe_no_isolation,
                               fusion_url=args.sandbox_fusion_url))
    src = Path(args.rollouts)
    out = Path(args.out) if args.out else src.with_name(
        src.name.split(".")[0] + ".verified.parquet")
    from rlvr_boundary.io.outputs import check_outputs

    single = out.suffix in (".parquet", ".jsonl") or out.name.endswith(".jsonl.gz")
    gold = Path(args.gold)  # a gold folder is refused by its reader, with its own message
    check_outputs({"--json": args.json, "--out": out if single else None},
                  [src] + ([] if gold.is_dir() else [gold]),
                  folders={"--out": None if single else out})
    with progress() as bar:
        task = bar.add_task(f"grading ({args.task})", total=None)
        summary = verify_table(src, Path(args.gold), out, opts,
                               progress=lambda k: bar.advance(task, k),
                               total=lambda n: bar.update(task, total=n))
    if summary.get("already_complete"):
        console.print(f"{out} is already complete ({summary['rows']} samples graded with "
                      f"{summary['verifier']}, {summary['correct']} correct): nothing to grade")
    else:
        console.print(f"graded {summary['rows']} samples with {summary['verifier']} in "
                      f"{summary['seconds']:.1f} s: {summary['correct']} correct; statuses: "
                      + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
        _print_limits_and_disagreement(console, summary)
        console.print(f"wrote {out}{'/' if out.is_dir() else ''}")
    if args.json:
        from rlvr_boundary.io.results import write_result

        write_result(args.json, "verify", opts, summary)
        console.print(f"wrote {args.json}")
    return 0


def _print_limits_and_disagreement(console, summary: dict) -> None:
    """Known limits of each backend, and per answer type how often the backends disagree."""
    from rich.table import Table

    for b, limits in (summary.get("known_limits") or {}).items():
        console.print(f"known limits of {b}: " + "; ".join(limits), style="dim")
    dis = summary.get("disagreement")
    if not dis:
        return
    ref = dis["reference"]
    for b, info in summary["backends"].items():
        console.print(f"{info['label']}: {info['correct']} correct")
    table = Table(title=f"disagreement with {ref} by answer type")
    others = list(dis["overall"])
    table.add_column("answer type")
    table.add_column("rows", justify="right")
    for b in others:
        table.add_column(f"{b} differs", justify="right")
        table.add_column(f"only {ref} / only {b}", justify="right")
    rows = [*dis["by_type"].items(), ("all", dis["overall"])]
    for ty, st in rows:
        cells = [ty, str(next(iter(st.values()))["rows"])]
        for b in others:
            x = st[b]
            cells += [f"{x['disagree']} ({x['rate']:.1%})",
                      f"{x['only_reference']} / {x['only_other']}"]
        table.add_row(*cells)
    console.print(table)
    for ty, per in dis["examples"].items():
        for b, exs in per.items():
            for e in exs[:2]:
                console.print(f"  {ty}: gold {e['gold']!r}, answer {e['answer']!r}: "
                              f"{ref} {e[ref]}, {b} {e[b]}", markup=False, highlight=False)
