"""Extrapolation validated on real data: predict pass@128 and k* of DeepScaleR from n = 16 or 32.

Run on demand, never under pytest::

    python benchmarks/extrapolation_study.py [--subsamples 50] [--sizes 16 32]

Data: the embedded DeepScaleR example (1,060 prompts, 128 samples per prompt
per model). For each subsample size ``m`` and each of ``--subsamples`` seeds
(``numpy.random.default_rng(seed)``, seeds 0, 1, ...), every prompt's count is
subsampled without replacement, ``c_m ~ Hypergeometric(128, c, m)``, which is
exactly the count of ``m`` of its 128 recorded samples drawn at random. From
the subsample alone we predict pass@128 of both models and ``k*`` (the first
integer ``k`` in 1..128 where the predicted RL-minus-base difference is
negative) with

- ``beta_mixture``: two beta-binomial components and an atom at rate 0;
- ``npmle``: the grid NPMLE of the rate distribution;
- ``power_law``: ``-log pass@k = A k^(-b)`` fitted per model to the unbiased
  pass@k at k = 1..m (Schaeffer et al. 2025, arXiv 2502.17578);
- ``plug-in``: ``1 - (1 - c/m)^k`` per prompt (the naive curve, for scale);
- ``passk_kernel`` (on request, ``--methods passk_kernel``): passk-inference's
  ``fit_kernel`` (joint grid NPMLE of both models' rates, 80 x 80, up to 4,000
  EM iterations), marginals read off its weights.

Truth: the full-data unbiased pass@128 (944/1060 and 923/1060) and k* = 22.
Printed: mean error (bias), mean absolute error and RMSE over subsamples for
each pass@128, and for k* the median prediction, the share with no crossing
up to 128, and the mean absolute error of log2 k* where defined.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rlvr_boundary.core import extrapolate as ex
from rlvr_boundary.core.passk import pass_at_k, pass_at_k_plugin
from rlvr_boundary.examples import example_files
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.formats import load_model_counts

KS = np.arange(1, 129)


def first_negative(diff) -> float:
    neg = np.flatnonzero(diff < 0)
    return float(KS[neg[0]]) if neg.size else np.inf


def predict(method: str, n, cb, cr) -> tuple[float, float, float]:
    m = int(n[0])
    if method in ("beta_mixture", "npmle"):
        fb, fr = ex._fit(method, n, cb), ex._fit(method, n, cr)
        pb, pr = ex.mixture_pass_at_k(fb, KS), ex.mixture_pass_at_k(fr, KS)
    elif method == "power_law":
        km = np.arange(1, m + 1)
        fb = ex.fit_power_law(km, pass_at_k(n, cb, km).mean(axis=0))
        fr = ex.fit_power_law(km, pass_at_k(n, cr, km).mean(axis=0))
        pb, pr = ex.power_law_pass_at_k(fb, KS), ex.power_law_pass_at_k(fr, KS)
    elif method == "passk_kernel":  # passk-inference's joint grid NPMLE of (base, RL) rates
        from passk_inference.kernel import fit_kernel

        fit = fit_kernel(cb, n, cr, n)
        wb, wr = fit["W"].sum(axis=1), fit["W"].sum(axis=0)
        pb = 1 - ((1 - fit["pg"][None, :]) ** KS[:, None]) @ wb
        pr = 1 - ((1 - fit["qg"][None, :]) ** KS[:, None]) @ wr
    else:  # plug-in
        pb = pass_at_k_plugin(cb / n, KS).mean(axis=0)
        pr = pass_at_k_plugin(cr / n, KS).mean(axis=0)
    return float(pb[-1]), float(pr[-1]), first_negative(pr - pb)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subsamples", type=int, default=50)
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--methods", nargs="+",
                    default=["beta_mixture", "npmle", "power_law", "plug-in"])
    args = ap.parse_args()
    exf = example_files("deepscaler32k")
    al = align([load_model_counts(exf["base"], label="base"),
                load_model_counts(exf["rl"], label="rl")])
    n_full, cb_full, cr_full = al.n[0], al.c[0], al.c[1]
    tb = float(pass_at_k(n_full, cb_full, [128]).mean())
    tr = float(pass_at_k(al.n[1], cr_full, [128]).mean())
    tk = first_negative(pass_at_k(al.n[1], cr_full, KS).mean(0) - pass_at_k(n_full, cb_full, KS).mean(0))
    print(f"truth (n = 128): pass@128 base {tb:.4f}, RL {tr:.4f}, k* {tk:.0f}")
    print(f"{'n':>3} {'method':<13} {'pass@128 base: bias / MAE / RMSE':>34} "
          f"{'pass@128 RL: bias / MAE / RMSE':>32} {'k*: median, none<=128, MAE log2':>34} {'s/fit':>6}")
    for m in args.sizes:
        subs = []
        for seed in range(args.subsamples):
            rng = np.random.default_rng(seed)
            cb = rng.hypergeometric(cb_full, n_full - cb_full, m)
            cr = rng.hypergeometric(cr_full, al.n[1] - cr_full, m)
            subs.append((cb, cr))
        n = np.full(n_full.size, m)
        for method in args.methods:
            t0 = time.perf_counter()
            res = np.array([predict(method, n, cb, cr) for cb, cr in subs])  # (S, 3)
            per_fit = (time.perf_counter() - t0) / (2 * len(subs))
            eb, er = res[:, 0] - tb, res[:, 1] - tr
            ks = res[:, 2]
            fin = np.isfinite(ks)
            mae_k = float(np.mean(np.abs(np.log2(ks[fin]) - np.log2(tk)))) if fin.any() else np.nan
            med = np.median(ks)
            print(f"{m:>3} {method:<13} {eb.mean():+.4f} / {np.abs(eb).mean():.4f} / "
                  f"{np.sqrt((eb**2).mean()):.4f}     {er.mean():+.4f} / {np.abs(er).mean():.4f} / "
                  f"{np.sqrt((er**2).mean()):.4f}     "
                  f"{'none' if not np.isfinite(med) else f'{med:.0f}':>5}, {1 - fin.mean():4.0%}, "
                  f"{mae_k:.2f}          {per_fit:5.2f}", flush=True)


if __name__ == "__main__":
    main()
