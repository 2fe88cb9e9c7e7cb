"""Peak memory of rlvr-boundary on hostile and very large inputs (VmHWM of the child).

What is measured: each command runs in a child process (``python -c`` calling
``rlvr_boundary.cli.main``) that prints its own ``VmHWM`` (peak resident set
size, from ``/proc/self/status``) as it exits; we also record its exit code and
wall time. The target is a peak below 1 GB for every case. The peer, measured in
the same run, is a bare ``python -c "import rlvr_boundary.cli"`` (the cost of the
interpreter and imports), so the ratio shows what reading the input added.

Cases:

* a 2 GB file with no newline, once per input format: counts JSONL, count table
  CSV, rollout JSONL, a Parquet-named file, every JSONL adapter (lm-eval, verl,
  limit-of-RLVR, vLLM), the lighteval Parquet adapter, the theory matrix CSV and
  ``price``; each must end with exit code 2 (a line over the limit, or not
  Parquet), never a traceback or a kill;
* ``price`` on a 2 GB CSV of valid success rates (streamed: exit 0);
* ``compare`` on the largest grid accepted (prompts x budgets = 10^7 cells)
  and with the largest bootstrap count accepted (10^6).

Files are made in a temporary folder under /tmp and deleted afterwards.

Usage::

    python benchmarks/bench_memory.py            # everything, about 15 minutes
    python benchmarks/bench_memory.py --quick    # 200 MB files instead of 2 GB
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import sys
from rlvr_boundary.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
finally:
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
    sys.stderr.write(f"\nVMHWM_KB {hwm}\n")
sys.exit(code)
"""
LIMIT_MB = 1024


def show(r: dict, peer: float | None) -> None:
    ok = r["peak_mb"] is not None and r["peak_mb"] < LIMIT_MB and not r["traceback"]
    print(f"{r['case'][:60]:60s} {r['code']:>4} {r['peak_mb'] or float('nan'):8.0f} "
          f"{(r['peak_mb'] or 0) / (peer or r['peak_mb'] or 1):7.1f} {r['seconds']:6.1f}  "
          f"{'' if ok else 'OVER LIMIT/TRACEBACK '}{r['message']}", flush=True)


def run(argv: list[str], cwd: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, *argv], cwd=cwd, env=env,
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    kb = [int(ln.split()[1]) for ln in p.stderr.splitlines() if ln.startswith("VMHWM_KB")]
    msg = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    return {"argv": " ".join(argv), "code": p.returncode, "peak_mb": kb[0] / 1024 if kb else None,
            "seconds": round(secs, 1), "message": (msg[0][:140] if msg else ""),
            "traceback": "Traceback" in p.stderr}


def no_newline_file(path: Path, size: int) -> None:
    block = b"a" * (64 << 20)
    with open(path, "wb") as fh:
        fh.write(b'{"id": "')
        left = size - 8
        while left > 0:
            fh.write(block[:min(left, len(block))])
            left -= len(block)


def rates_csv(path: Path, size: int) -> int:
    import numpy as np

    # One block of 2^20 random rows, written again and again: a valid table of any size
    # in seconds (the reader cannot tell; its histograms just count each row).
    rng = np.random.default_rng(0)
    text = [f"{c / 64:.6f}" for c in range(65)]  # plug-in rates c/64
    c = rng.integers(0, 65, size=(1 << 20, 2))
    block = "".join(f"{text[a]},{text[b]}\n" for a, b in c.tolist()).encode()
    rows = 0
    with open(path, "wb") as fh:
        fh.write(b"base,rl\n")
        while fh.tell() < size:
            fh.write(block)
            rows += 1 << 20
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="200 MB files")
    ap.add_argument("--only", default="", help="comma-separated case groups: nl,price,grid")
    ap.add_argument("--case", default="", help="run only no-newline cases whose name has this")
    ap.add_argument("--json", help="write the rows as JSON")
    args = ap.parse_args()
    size = (200 << 20) if args.quick else (2 << 30)
    groups = set(args.only.split(",")) if args.only else {"nl", "price", "grid"}
    tmp = Path(tempfile.mkdtemp(prefix="rlvr-mem-", dir="/tmp"))
    rows = []
    try:
        small = tmp / "small.jsonl"
        small.write_text('{"id": "a", "n": 4, "c": 1}\n')
        (tmp / "rs.jsonl").write_text("".join(  # a small rollout table: base and rl
            json.dumps({"prompt_id": f"p{i}", "model": m, "sample_idx": j,
                        "correct": (i + j) % 2 == 0}) + "\n"
            for m in ("base", "rl") for i in range(3) for j in range(2)))
        print(f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
              f"limit {LIMIT_MB} MB")
        print(f"{'case':60s} {'exit':>4s} {'peak MB':>8s} {'x peer':>7s} {'s':>6s}  message")
        rows.append({"case": "peer: interpreter + imports",
                     **run(["--version"], tmp)})
        show(rows[-1], None)
        if "nl" in groups:
            big = tmp / "big.bin"
            no_newline_file(big, size)
            cases = [
                ("counts JSONL", "big.jsonl", ["compare", "--base", "big.jsonl", "--rl",
                                               "small.jsonl"]),
                ("count table CSV", "big.csv", ["report", "big.csv", "--no-figures"]),
                ("count table TSV", "big.tsv", ["report", "big.tsv", "--no-figures"]),
                ("rollout JSONL", "roll.jsonl", ["report", "roll.jsonl", "--format",
                                                 "rollouts", "--no-figures"]),
                ("Parquet", "big.parquet", ["report", "big.parquet", "--no-figures"]),
                ("lm-eval", "samples_t_x.jsonl", ["compare", "--base", "samples_t_x.jsonl",
                                                  "--rl", "small.jsonl", "--format", "lm-eval"]),
                ("verl", "10.jsonl", ["compare", "--base", "10.jsonl", "--rl", "small.jsonl",
                                      "--format", "verl"]),
                ("limit-of-RLVR", "seed1.jsonl", ["compare", "--base", "seed1.jsonl", "--rl",
                                                  "small.jsonl", "--format", "limit-of-rlvr"]),
                ("vLLM JSONL", "gen.jsonl", ["compare", "--base", "gen.jsonl", "--rl",
                                             "small.jsonl", "--format", "vllm-jsonl"]),
                ("lighteval Parquet", "details_t_x.parquet",
                 ["compare", "--base", "details_t_x.parquet", "--rl", "small.jsonl",
                  "--format", "lighteval"]),
                ("theory matrix CSV", "m.csv", ["theory", "diagnose", "m.csv"]),
                ("price CSV", "p.csv", ["price", "p.csv"]),
                ("rft-select JSONL", "r.jsonl", ["rft-select", "r.jsonl", "--by", "random"]),
                ("report --from result JSON", "res.json", ["report", "--from", "res.json",
                                                           "--out", "x.html"]),
                ("rollout manifest JSON", "rs.manifest.json",
                 ["report", "rs.jsonl", "--no-figures"]),
            ]
            for what, name, argv in cases:
                if args.case and args.case not in what:
                    continue
                os.link(big, tmp / name)
                rows.append({"case": f"2 GB, no newline: {what}" if not args.quick else
                             f"{size >> 20} MB, no newline: {what}", **run(argv, tmp)})
                show(rows[-1], rows[0]["peak_mb"])
                (tmp / name).unlink()
            big.unlink()
        if "price" in groups:
            n = rates_csv(tmp / "rates.csv", size)
            mb = (tmp / "rates.csv").stat().st_size / 2**20
            rows.append({"case": f"price on a {mb:,.0f} MB CSV ({n:,} rows)",
                         **run(["price", "rates.csv", "--json", "p.json"], tmp)})
            show(rows[-1], rows[0]["peak_mb"])
            (tmp / "rates.csv").unlink()
        if "grid" in groups:
            P, n = 100, 100_000
            with open(tmp / "a.jsonl", "w") as fa, open(tmp / "b.jsonl", "w") as fb:
                for i in range(P):
                    fa.write(json.dumps({"id": f"p{i}", "n": n, "c": (i * 997) % n}) + "\n")
                    fb.write(json.dumps({"id": f"p{i}", "n": n, "c": (i * 991) % n}) + "\n")
            rows.append({"case": "compare, largest grid: 100 prompts x 100,000 budgets",
                         **run(["compare", "--base", "a.jsonl", "--rl", "b.jsonl", "--ks",
                                "1-100000", "--bootstrap", "20"], tmp)})
            show(rows[-1], rows[0]["peak_mb"])
            rows.append({"case": "compare, largest bootstrap: 10^6 draws, 100 prompts x 8",
                         **run(["compare", "--base", "a.jsonl", "--rl", "b.jsonl", "--ks",
                                "1-8", "--bootstrap", "1000000"], tmp)})
            show(rows[-1], rows[0]["peak_mb"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    met = all(r["peak_mb"] is not None and r["peak_mb"] < LIMIT_MB and not r["traceback"]
              for r in rows)
    print(f"target (peak < {LIMIT_MB} MB, no traceback): {'met' if met else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
