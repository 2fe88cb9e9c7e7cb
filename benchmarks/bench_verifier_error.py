"""Benchmark: the verifier-error band, batched bootstrap refits against one refit at a time.

Run on demand, never under pytest::

    python benchmarks/bench_verifier_error.py [--rounds 3] [--rates 0.02,0.05 0.001,0.001]

What is compared: ``rlvr_boundary.core.verifier_error.verifier_error_band``
(the bootstrap refits share one likelihood matrix of the distinct ``(n, c)``
pairs per model and start from the full-data fit) against
``verifier_error_band_reference`` (every refit a cold fit through
``corrected_fit``), on the embedded DeepScaleR counts (1,060 prompts,
n = 128), budgets k = 1..128, 100 refits (what ``compare`` and ``report`` use
with the default 4,000 multipliers), seed 0, with the BLAS library's default
thread count. Both stop at the same optimality certificate of
``npmle_weights`` (the constrained Newton method), so their bands agree to
the precision that certificate allows.

Timings: ``time.perf_counter`` (wall) and ``time.process_time`` (CPU of this
process), rounds alternating the two so load drift hits both; the medians and
their ratio are printed, with the largest difference of the band ends.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from rlvr_boundary.core.verifier_error import verifier_error_band, verifier_error_band_reference
from rlvr_boundary.examples import example_files


def _load(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    return (np.array([r["n"] for r in rows]), np.array([r["c"] for r in rows]),
            np.array([r["source"] for r in rows], dtype=object))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--boot", type=int, default=100)
    ap.add_argument("--rates", nargs="+", default=["0.02,0.05", "0.001,0.001"])
    ap.add_argument("--cluster", action="store_true", help="also clustered by source")
    args = ap.parse_args()
    ex = example_files("deepscaler32k")
    nb, cb, src = _load(ex["base"])
    nr, cr, _ = _load(ex["rl"])
    ks = np.arange(1, 129)
    cases = [(r, None) for r in args.rates] + ([(args.rates[0], src)] if args.cluster else [])
    for rates, groups in cases:
        fp, fn = (float(x) for x in rates.split(","))
        kw = dict(fp=fp, fn=fn, n_boot=args.boot, groups=groups)
        times = {"batched": [], "reference": []}
        out = {}
        for _ in range(args.rounds):
            for name, fn_ in (("batched", verifier_error_band),
                              ("reference", verifier_error_band_reference)):
                w, c = time.perf_counter(), time.process_time()
                out[name] = fn_(nb, cb, nr, cr, ks, **kw)
                times[name].append((time.perf_counter() - w, time.process_time() - c))
        med = {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v))
               for k, v in times.items()}
        gap = max(np.abs(out["batched"]["lower"] - out["reference"]["lower"]).max(),
                  np.abs(out["batched"]["upper"] - out["reference"]["upper"]).max())
        print(f"fp,fn = {rates}{' clustered' if groups is not None else ''}: "
              f"batched {med['batched'][0]:.2f} s wall / {med['batched'][1]:.2f} s CPU, "
              f"reference {med['reference'][0]:.2f} s / {med['reference'][1]:.2f} s; "
              f"ratio {med['reference'][0] / med['batched'][0]:.2f}x wall, "
              f"{med['reference'][1] / med['batched'][1]:.2f}x CPU; largest band-end "
              f"difference {gap:.1e}; same verdicts: "
              f"{out['batched']['gain'] == out['reference']['gain'] and out['batched']['loss'] == out['reference']['loss']}")


if __name__ == "__main__":
    main()
