"""Benchmark: grading 10,000 math completions on 2 workers vs sequential math-verify.

Items: the 500 official MATH500 solutions, each graded against its own gold
answer and against 19 other problems' answers (10,000 items, ~5% correct).
Ours: ``TimeoutPool`` with 2 worker processes, each item under a hard timeout,
a memory limit, JSON over the pipe (what ``rlvr-boundary verify`` runs). Peer, in the same run: a plain loop calling
``math_verify.parse`` on gold and completion and ``math_verify.verify`` per item
in one process -- how most evaluation scripts call it (no hard timeout: a hung
item would stop the loop).

Run:  python benchmarks/bench_verify.py [--items 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from rlvr_boundary.examples import example_dir
from rlvr_boundary.verify.math import MathOptions, grade_math_job, options_to_json
from rlvr_boundary.verify.pool import TimeoutPool


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    rows = [json.loads(x) for x in (example_dir("math500") / "test.jsonl").read_text().splitlines()]
    opts = options_to_json(MathOptions(backend="math-verify", inner_timeout=9))
    items = []
    k = 0
    while len(items) < args.items:
        for i, r in enumerate(rows):
            gold = rows[(i + k * 7) % len(rows)]["answer"]
            items.append((gold, r["solution"], opts))
            if len(items) == args.items:
                break
        k += 1

    from math_verify import parse, verify

    t0 = time.perf_counter()
    with TimeoutPool(grade_math_job, workers=args.workers, timeout=10.0,
                     preload=("rlvr_boundary.verify.math", "math_verify", "sympy")) as pool:
        ours = dict(pool.map(items))
    t_ours = time.perf_counter() - t0

    t0 = time.perf_counter()
    peer = []
    for gold, text, _ in items:
        peer.append(bool(verify(parse(f"${gold}$"), parse(text))))
    t_peer = time.perf_counter() - t0

    from rlvr_boundary.verify.math import grade_math

    canon_opts = MathOptions(backend="canonical")
    t0 = time.perf_counter()
    canon = [grade_math(gold, text, canon_opts)["correct"] for gold, text, _ in items]
    t_canon = time.perf_counter() - t0

    agree = sum(ours[i]["correct"] == peer[i] for i in range(len(items))) / len(items)
    agree_canon = sum(ours[i]["correct"] == canon[i] for i in range(len(items))) / len(items)
    statuses = {}
    for r in ours.values():
        statuses[r["verify_status"]] = statuses.get(r["verify_status"], 0) + 1
    from importlib.metadata import version

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
          f"Python {platform.python_version()}, math-verify {version('math-verify')}")
    print(f"{len(items):,} items; ours: {args.workers} workers with a hard timeout per item")
    print(f"{'':44s} {'seconds':>8s} {'items/s':>8s}")
    print(f"{'rlvr-boundary TimeoutPool (2 workers)':44s} {t_ours:8.1f} {len(items) / t_ours:8.0f}")
    print(f"{'sequential math_verify parse+verify (peer)':44s} {t_peer:8.1f} {len(items) / t_peer:8.0f}")
    print(f"{'canonical backend, in-process, sequential':44s} {t_canon:8.1f} {len(items) / t_canon:8.0f}")
    print(f"speed-up {t_peer / t_ours:.2f}x; verdict agreement {agree:.4f} (peer), "
          f"{agree_canon:.4f} (canonical); statuses {statuses}; "
          f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":  # required: the pool's forkserver re-imports this module
    main()
