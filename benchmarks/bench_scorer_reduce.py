"""Benchmark: what reading several scorers' verdicts costs the loaders, same run.

Run on demand, never under pytest::

    python benchmarks/bench_scorer_reduce.py [ROWS]

Two Parquet tables of the same ``ROWS`` completions (default 2,000,000; 20,000
prompts of 100 samples, one model, a fixed seed): one with the ``correct``
column only, one that also carries what ``verify --backend math-verify,canonical``
writes (``correct__math_verify``, ``correct__canonical``, with 2% of the
verdicts differing; ``answer_type``, ``gold``, ``answer``). Each is reduced to
per-prompt counts by ``rlvr_boundary.io.rollouts.reduce_counts`` (the path of
``compare``); with the verdict columns that same pass also sums each scorer's
correct samples and tallies the verdict patterns by answer type with examples.
Printed: the best of three times of each and their ratio (the peer is the
single-verdict read, measured in the same run).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rlvr_boundary.io.rollouts import reduce_counts


def tables(d: Path, rows: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    P = max(1, rows // 100)
    pid = np.repeat(np.arange(P), 100)[:rows]
    idx = np.tile(np.arange(100), P)[:rows]
    a = rng.random(rows) < 0.5
    b = np.where(rng.random(rows) < 0.02, ~a, a)
    ids = pa.array(pid.astype(str))
    base = {"prompt_id": ids, "model": pa.array(["m"] * rows), "sample_idx": idx, "correct": a}
    one, two = d / "one.parquet", d / "two.parquet"
    pq.write_table(pa.table(base), one)
    types = np.array(["integer", "fraction", "expression", "pi"])[pid % 4]
    pq.write_table(pa.table({**base, "correct__math_verify": a, "correct__canonical": b,
                             "answer_type": types, "gold": ids, "answer": ids}), two)
    return one, two


def best(path: Path, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        reduce_counts(path)
        times.append(time.perf_counter() - t)
    return min(times)


def main(rows: int = 2_000_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        one, two = tables(Path(tmp), rows)
        t1, t2 = best(one), best(two)
        got = reduce_counts(two)["m"]
        assert set(got.scorers) == {"math_verify", "canonical"}
        print(f"{rows:,} rows: correct only {t1:.2f} s; with two scorers, the tally and the "
              f"example columns {t2:.2f} s; ratio {t2 / t1:.2f}x")


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:]))
