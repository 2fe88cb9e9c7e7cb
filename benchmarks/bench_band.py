"""Benchmark: the simultaneous band against passk-inference, on an idle and a loaded machine.

Run on demand, never under pytest::

    pip install passk-inference==0.3.1   # the peer; it does not change numpy or scipy
    python benchmarks/bench_band.py [--rounds 15] [--mc-seeds 20]

What is compared: ``rlvr_boundary.core.compare.simultaneous_band`` against
``passk_inference.core.simultaneous_band(rows, bootstrap=B, alpha=, seed=)``
(passk-inference 0.3.1) on the same ``(1060, 128)`` contributions of the
embedded DeepScaleR example (pass@k of RL minus base, k = 1..128), B = 4,000
Gaussian multipliers, alpha = 0.05, both with the BLAS library's default
thread count (no ``OPENBLAS_NUM_THREADS``).

Two conditions, measured in the same run:

- idle: nothing else started by the benchmark (the machine may still be shared);
- loaded: one busy-loop process per CPU core (``os.cpu_count()``), started
  before and stopped after the timed rounds, so that BLAS threads compete for
  every core.

Timings: ``time.perf_counter``, one warm-up call of each, then ``--rounds``
rounds that alternate ours and the peer (so load drift hits both); the best
and the median of each are printed, and the ratio of medians.

Then the published DeepScaleR figures (critical value ~2.556, supported gain
k = 1..10, supported loss k = 61..128, first-loss set [11, 61]): the critical
value and first-loss set of ours and the peer over ``--mc-seeds`` seeds at
B = 4,000, and of ours at B = 200,000 for 4 seeds.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import time
from importlib.metadata import version

import numpy as np

from rlvr_boundary.core.compare import classify_budgets, simultaneous_band
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.examples import example_files
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.formats import load_model_counts

B, ALPHA, K = 4000, 0.05, 128


def _busy(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def contributions() -> np.ndarray:
    ex = example_files("deepscaler32k")
    al = align([load_model_counts(ex["base"], label="base"),
                load_model_counts(ex["rl"], label="rl")])
    ks = np.arange(1, K + 1)
    return pass_at_k(al.n[1], al.c[1], ks) - pass_at_k(al.n[0], al.c[0], ks)  # (P, K)


def race(ours, peer, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    ours(), peer()  # warm-up
    to, tp = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        ours()
        to.append(time.perf_counter() - t)
        t = time.perf_counter()
        peer()
        tp.append(time.perf_counter() - t)
    return np.array(to), np.array(tp)


def timed(d, rounds: int, loaded: bool) -> tuple[np.ndarray, np.ndarray]:
    from passk_inference.core import simultaneous_band as peer_band

    procs, stop = [], None
    if loaded:
        stop = mp.Event()
        procs = [mp.Process(target=_busy, args=(stop,), daemon=True)
                 for _ in range(os.cpu_count() or 1)]
        for p in procs:
            p.start()
        time.sleep(0.5)
    try:
        return race(lambda: simultaneous_band(d, n_multipliers=B, alpha=ALPHA, seed=0),
                    lambda: peer_band(d, bootstrap=B, alpha=ALPHA, seed=0), rounds)
    finally:
        if stop is not None:
            stop.set()
            for p in procs:
                p.join(timeout=5)


def first_loss(band) -> tuple:
    cls = classify_budgets(np.arange(1, K + 1), band["lower"], band["upper"])
    return tuple(cls["first_loss_set"] or ()), (cls["gain"] or [None])[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--mc-seeds", type=int, default=20)
    args = ap.parse_args()
    from passk_inference.core import simultaneous_band as peer_band

    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__}; peer passk-inference "
          f"{version('passk-inference')}; BLAS threads: "
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'library default')}")
    d = contributions()
    print(f"DeepScaleR contributions {d.shape}, B = {B:,}, alpha = {ALPHA}\n")
    print(f"{'condition':<10} {'ours best/median':>18} {'peer best/median':>18} "
          f"{'ratio (medians)':>16} {'load':>6}")
    for loaded in (False, True):
        to, tp = timed(d, args.rounds, loaded)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{'loaded' if loaded else 'idle':<10} "
              f"{to.min() * 1e3:7.1f}/{np.median(to) * 1e3:6.1f} ms "
              f"{tp.min() * 1e3:7.1f}/{np.median(tp) * 1e3:6.1f} ms "
              f"{np.median(tp) / np.median(to):15.1f}x {load:6.1f}")

    print(f"\ncritical values and first-loss sets over {args.mc_seeds} seeds, B = {B:,}:")
    ours = [simultaneous_band(d, n_multipliers=B, seed=s) for s in range(args.mc_seeds)]
    peer = [peer_band(d, bootstrap=B, seed=s) for s in range(args.mc_seeds)]
    for name, bands in (("ours", ours), ("passk-inference", peer)):
        c = np.array([b["critical_value"] for b in bands])
        sets: dict = {}
        for b in bands:
            key = first_loss(b)
            sets[key] = sets.get(key, 0) + 1
        print(f"  {name:<16} crit mean {c.mean():.4f}, MC s.d. of one value {c.std(ddof=1):.4f}; "
              f"seed 0 {c[0]:.4f}; (first-loss set, last gain): "
              + ", ".join(f"{list(k[0])}, {k[1]}: {v}" for k, v in sorted(sets.items())))
    big = [simultaneous_band(d, n_multipliers=200_000, seed=s) for s in range(4)]
    print("  ours at B = 200,000, seeds 0-3: "
          + "; ".join(f"{b['critical_value']:.4f} {list(first_loss(b)[0])}" for b in big))


if __name__ == "__main__":
    main()
