"""Benchmark: the audit report on a 2-million-row rollout table.

500 prompts x 4 models (base and three checkpoints) x n = 1,024 samples, written as
one Parquet file with text, answer, verdict, token summaries and quality flags.
Target: the report in under 60 s with peak memory under 2 GB.

Peer, measured in the same run: pandas reading the same table and computing only
the per-(prompt, model) counts with ``groupby`` -- the first step of a home-made
script, without any of the report.

Run:  python benchmarks/bench_report.py [--prompts 500] [--n 1024]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def make_table(path: Path, prompts: int, n: int, models: list[str], seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(0.6, 0.6, prompts)
    writer = None
    rows = 0
    for mi, m in enumerate(models):
        # Checkpoints sharpen: solvable problems get easier, the rarest are lost.
        rate = np.where(difficulty > 0.02, difficulty ** (1 / (1 + 0.3 * mi)), difficulty * 0.5 ** mi)
        ok = rng.random((prompts, n)) < rate[:, None]  # (P, n)
        wrong = rng.integers(0, 6, (prompts, n))
        answer = np.where(ok, "42", wrong.astype(str)).astype(object)
        answer[(~ok) & (rng.random((prompts, n)) < 0.05)] = None
        P = prompts * n
        text = np.char.add("Step by step reasoning ... the answer is \\boxed{",
                           np.where(ok, "42", wrong.astype(str)).ravel())
        t = pa.table({
            "prompt_id": np.repeat([f"q{p:04d}" for p in range(prompts)], n),
            "model": np.full(P, m),
            "sample_idx": np.tile(np.arange(n), prompts),
            "text": np.char.add(text, "}."),
            "answer": pa.array(answer.ravel(), pa.string()),
            "correct": ok.ravel(),
            "num_tokens": rng.integers(100, 4000, P),
            "entropy_mean": rng.gamma(2, 0.2, P),
            "q_no_boxed": answer.ravel() == None,  # noqa: E711 - elementwise on object array
            "q_redundancy3": rng.uniform(0, 0.3, P),
        })
        if writer is None:
            writer = pq.ParquetWriter(path, t.schema, compression="zstd")
        writer.write_table(t, row_group_size=256_000)
        rows += t.num_rows
    writer.close()
    return rows


def run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints JSON; add its peak RSS (MB)."""
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across execve, so a child would
    # report this (large) parent's peak.
    wrapped = (code + "\nimport json as _j, re as _re\n"
               "_s = open('/proc/self/status').read()\n"
               "_r['peak_mb'] = int(_re.search(r'VmHWM:\\s+(\\d+)', _s).group(1)) / 1024\n"
               "print(_j.dumps(_r))")
    out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True,
                         env=dict(os.environ, CI="true"))
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=500)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    models = ["base", "step-100", "step-200", "step-300"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollouts.parquet"
        t0 = time.perf_counter()
        rows = make_table(path, args.prompts, args.n, models)
        print(f"table: {rows:,} rows, {path.stat().st_size / 1e6:.0f} MB Parquet, "
              f"written in {time.perf_counter() - t0:.1f} s")
        out = Path(tmp) / "report.html"
        ours = run_child(
            "import time; t0 = time.perf_counter()\n"
            "from rlvr_boundary.cli import main\n"
            f"code = main(['report', {str(path)!r}, '--out', {str(out)!r}, '--base', 'base'])\n"
            "_r = {'seconds': time.perf_counter() - t0, 'code': code}")
        assert ours["code"] == 0
        peer = run_child(
            "import time; t0 = time.perf_counter()\n"
            "import pandas as pd\n"
            f"df = pd.read_parquet({str(path)!r})\n"
            "g = df.groupby(['prompt_id', 'model'])['correct'].agg(['sum', 'count'])\n"
            "_r = {'seconds': time.perf_counter() - t0, 'groups': len(g)}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}, pyarrow {pa.__version__}")
    print(f"{'':38s} {'seconds':>8s} {'peak MB':>8s}")
    print(f"{'rlvr-boundary report (whole report)':38s} {ours['seconds']:8.1f} {ours['peak_mb']:8.0f}")
    print(f"{'pandas read + groupby counts (peer)':38s} {peer['seconds']:8.1f} {peer['peak_mb']:8.0f}")
    print(f"ratio report / peer: time {ours['seconds'] / peer['seconds']:.2f}x, "
          f"memory {ours['peak_mb'] / peer['peak_mb']:.2f}x")
    ok = ours["seconds"] < 60 and ours["peak_mb"] < 2048
    print(f"target (< 60 s, < 2 GB): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
