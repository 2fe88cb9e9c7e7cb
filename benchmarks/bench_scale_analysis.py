"""Benchmark: the one-machine end of a 10^9-completion audit, ``compare`` on counts.

Two count files (base and RL) of ``--prompts`` prompts with ``--n`` samples each,
per-prompt success rates drawn from Beta(0.4, 0.6) (RL: a sharpened version, so
that gains and losses both exist), written as count JSONL; then ``rlvr-boundary
compare --base B --rl R --json OUT`` runs as a fresh process (budgets ``--ks pow2``,
default bootstrap and band). Prints wall and CPU seconds and the child's peak RSS: what
the analysis of 10^5 prompts x 10^4 samples (10^9 graded completions per model,
reduced to counts) costs on one machine.

Run:  python benchmarks/bench_scale_analysis.py [--prompts 100000] [--n 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ks", default="pow2", help="budget grid (the default all-k grid is "
                    "refused at 10^5 prompts x 10^4 budgets: 10^9 values in memory)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    p = rng.beta(0.4, 0.6, args.prompts)
    q = np.clip(np.where(p > 0.3, p ** 0.5, p * 0.5), 0, 1)  # RL: up where easy, down where hard
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        for name, rate in (("base", p), ("rl", q)):
            c = rng.binomial(args.n, rate)
            with (tmp / f"{name}.jsonl").open("w") as fh:
                for i, ci in enumerate(c):
                    fh.write(json.dumps({"id": f"p{i}", "n": args.n, "c": int(ci)}) + "\n")
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([sys.executable, "-m", "rlvr_boundary.cli", "compare", "--base",
                               str(tmp / "base.jsonl"), "--rl", str(tmp / "rl.jsonl"),
                               "--ks", args.ks, "--json", str(tmp / "out.json")],
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            raise SystemExit(proc.returncode)
        doc = json.loads((tmp / "out.json").read_text())
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        ks = doc.get("ks") or doc.get("curves", {}).get("ks")
        print(f"{args.prompts:,} prompts x n = {args.n:,} per model (counts of "
              f"{2 * args.prompts * args.n:.2e} completions); compare --ks {args.ks}, "
              "default bootstrap and band")
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {r1.ru_maxrss / 1024:.0f} MB; "
              f"load average before {load0[0]:.1f}, after {os.getloadavg()[0]:.1f}; "
              f"budgets: {len(ks) if ks else '?'}; result keys: {sorted(doc)[:12]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
