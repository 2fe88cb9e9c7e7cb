"""Coverage and power of the simultaneous band, by simulation from DeepScaleR-fitted truths.

Run on demand, never under pytest (several minutes on 2 cores)::

    pip install passk-inference==0.3.1      # the peer in the power table
    python benchmarks/coverage_study.py [--reps 1000] [--B 1000] [--parts independent clustered runs power]

Truth. The embedded DeepScaleR counts (1,060 prompts, n = 128 per model) are
fitted with the grid NPMLE of each model's success rates
(:func:`rlvr_boundary.core.extrapolate.fit_npmle`); each prompt's pair of true
rates is its posterior mean under those fits (empirical Bayes). The simulated
population is these 1,060 pairs; the true ``D(k)`` is their mean difference of
``1 - (1 - p)^k`` (k* of the truth is printed). A replication draws ``P``
prompts with replacement, then ``c ~ Binomial(128, p)`` for each model, and
computes the band over k = 1..128 with ``--B`` multipliers (1,000 by default,
a modest B to fit the 2-core budget: the Monte Carlo error of a critical value
is then about 0.05, which moves coverage by well under a point).

Designs:

- independent: prompts as above; P = 50, 100, 200, 1,060.
- clustered: G clusters of 5 prompts; a cluster shifts the logit of both
  models' rates by ``u_g ~ N(0, 1)`` and the trained model's by a further
  ``w_g ~ N(0, 0.5^2)``. Truth by Gauss-Hermite quadrature over (u, w).
  G = 20, 50, 200. Bands: plain (prompts independent) and ``groups`` (one
  multiplier per cluster, t correction).
- runs: R runs of the trained model; a run shifts the logit of its rates by
  ``v_r ~ N(0, 0.3^2)`` for every prompt. Truth integrates over v. P = 200 and
  1,060, R = 3 and 5. Bands: plain (pooled runs as one sample) and runs
  (multipliers per prompt and per run, Satterthwaite t correction).

Coverage: the share of replications whose band contains the true D(k) at
every k at once (budgets without variance count as covered, their band being
[-1, 1]). Power: the share of replications in which the band certifies the
crossing (a supported gain followed by a supported loss), ours and
passk-inference's band and ``certify`` (exactly what its ``compare`` does after
computing pass@k) on the same simulated pass@k rows, B and alpha. Times: ours
includes computing the pass@k rows, the peer's does not.
Seeds: replication ``r`` of design ``d`` uses ``numpy.random.default_rng([d, r])``
for the data and seed ``r`` for the multipliers.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.extrapolate import _log_binom, fit_npmle
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.examples import example_files
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.formats import load_model_counts

N, KS, ALPHA = 128, np.arange(1, 129), 0.05


def truth_population() -> tuple[np.ndarray, np.ndarray]:
    """``(1060,)`` posterior-mean rates of base and RL under each model's NPMLE."""
    ex = example_files("deepscaler32k")
    al = align([load_model_counts(ex["base"], label="base"),
                load_model_counts(ex["rl"], label="rl")])
    out = []
    for m in range(2):
        fit = fit_npmle(al.n[m], al.c[m])
        ll = _log_binom(al.n[m], al.c[m], fit["grid"])  # (P, L)
        post = np.exp(ll - ll.max(axis=1, keepdims=True)) * fit["weights"]  # (P, L)
        out.append((post @ fit["grid"]) / post.sum(axis=1))
    return out[0], out[1]


def curve(p) -> np.ndarray:
    """``(..., K)`` true pass@k of rates ``p``."""
    return 1.0 - np.exp(np.multiply.outer(np.log1p(-np.clip(p, 0, 1 - 1e-16)), KS))


def shift(p, s):
    return 1.0 / (1.0 + np.exp(-(np.log(p) - np.log1p(-p) + s)))


def gh(nodes: int, sd: float):
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return x * sd, w / w.sum()


def covered(band, truth) -> bool:
    return bool(np.all((band["lower"] <= truth) & (truth <= band["upper"])))


def certified(band) -> bool:
    """A supported gain before a supported loss (passk-inference's certified_crossing)."""
    cls = cc.classify_budgets(KS, band["lower"], band["upper"])
    return bool(cls["gain"] and cls["loss"] and min(cls["gain"]) < max(cls["loss"]))


def draw_counts(rng, p) -> np.ndarray:
    return rng.binomial(N, p)


def independent(pb, pr, reps, B, sizes):
    truth = (curve(pr) - curve(pb)).mean(axis=0)
    rows = []
    for P in sizes:
        hits = 0
        for r in range(reps):
            rng = np.random.default_rng([1, P, r])
            idx = rng.integers(0, pb.size, P)
            cb, cr = draw_counts(rng, pb[idx]), draw_counts(rng, pr[idx])
            n = np.full(P, N)
            d = pass_at_k(n, cr, KS) - pass_at_k(n, cb, KS)
            hits += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r), truth)
        rows.append(("independent", f"P = {P}", "plain", hits / reps))
        print(f"  independent P = {P}: coverage {hits / reps:.3f}", flush=True)
    return rows


def clustered(pb, pr, reps, B, groups_list, m=5, su=1.0, sw=0.5):
    xu, wu = gh(12, su)
    xw, ww = gh(8, sw)
    tb = sum(a * curve(shift(pb, u)).mean(axis=0) for u, a in zip(xu, wu))
    tr = sum(a * b * curve(shift(pr, u + w)).mean(axis=0)
             for u, a in zip(xu, wu) for w, b in zip(xw, ww))
    truth = tr - tb
    rows = []
    for G in groups_list:
        P = G * m
        hit_plain = hit_clu = 0
        for r in range(reps):
            rng = np.random.default_rng([2, G, r])
            idx = rng.integers(0, pb.size, P)
            g = np.repeat(np.arange(G), m)
            u, w = rng.normal(0, su, G)[g], rng.normal(0, sw, G)[g]
            cb, cr = draw_counts(rng, shift(pb[idx], u)), draw_counts(rng, shift(pr[idx], u + w))
            n = np.full(P, N)
            d = pass_at_k(n, cr, KS) - pass_at_k(n, cb, KS)
            hit_plain += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r), truth)
            hit_clu += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r, groups=g,
                                                    df=G - 1), truth)
        rows += [("clustered", f"G = {G} x 5", "plain", hit_plain / reps),
                 ("clustered", f"G = {G} x 5", "--cluster-by", hit_clu / reps)]
        print(f"  clustered G = {G}: plain {hit_plain / reps:.3f}, clustered {hit_clu / reps:.3f}",
              flush=True)
    return rows


def runs(pb, pr, reps, B, designs, tau=0.3):
    xv, wv = gh(16, tau)
    truth = sum(a * curve(shift(pr, v)).mean(axis=0) for v, a in zip(xv, wv)) \
        - curve(pb).mean(axis=0)
    rows = []
    for P, R in designs:
        hit_plain = hit_runs = 0
        for r in range(reps):
            rng = np.random.default_rng([3, P, R, r])
            idx = rng.integers(0, pb.size, P)
            v = rng.normal(0, tau, R)
            n = np.full(P, N)
            cb = draw_counts(rng, pb[idx])
            crs = [draw_counts(rng, shift(pr[idx], v[j])) for j in range(R)]
            curves_r = np.stack([pass_at_k(n, c, KS) for c in crs])  # (R, P, K)
            curves_b = pass_at_k(n, cb, KS)[None]  # (1, P, K)
            d = curves_r.mean(axis=0) - curves_b[0]
            hit_plain += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r), truth)
            mean, H, df = cc.run_influence(curves_r, curves_b)
            hit_runs += covered(cc.simultaneous_band(mean, influence=H, df=df, n_multipliers=B,
                                                     seed=r), truth)
        rows += [("runs", f"P = {P}, R = {R}", "plain", hit_plain / reps),
                 ("runs", f"P = {P}, R = {R}", "--rl-run", hit_runs / reps)]
        print(f"  runs P = {P}, R = {R}: plain {hit_plain / reps:.3f}, runs {hit_runs / reps:.3f}",
              flush=True)
    return rows


def peer_certified(d, B, seed) -> bool:
    """passk-inference's compare() on our pass@k rows: its band, [-1, 1] on degenerate
    columns, then its certify() (its own pass@k loop would only recompute the same rows,
    equal to ours to 1e-12, at ~0.5 s per replication)."""
    from passk_inference.core import certify, simultaneous_band as peer_band

    band = peer_band(d, bootstrap=B, alpha=ALPHA, seed=seed)
    lower, upper = band["lower"].copy(), band["upper"].copy()
    lower[band["degenerate_columns"]], upper[band["degenerate_columns"]] = -1.0, 1.0
    return bool(certify(KS, lower, upper)["certified_crossing"])


def power(pb, pr, reps, B, sizes):

    rows = []
    for P in sizes:
        ours = theirs = 0
        t_ours = t_peer = 0.0
        for r in range(reps):
            rng = np.random.default_rng([4, P, r])
            idx = rng.integers(0, pb.size, P)
            cb, cr = draw_counts(rng, pb[idx]), draw_counts(rng, pr[idx])
            n = np.full(P, N)
            t = time.perf_counter()
            d = pass_at_k(n, cr, KS) - pass_at_k(n, cb, KS)
            ours += certified(cc.simultaneous_band(d, n_multipliers=B, seed=r, alpha=ALPHA))
            t_ours += time.perf_counter() - t
            t = time.perf_counter()
            theirs += peer_certified(d, B, r)
            t_peer += time.perf_counter() - t
        rows.append((P, ours / reps, theirs / reps, t_ours, t_peer))
        print(f"  power P = {P}: ours {ours / reps:.3f} ({t_ours:.0f} s), passk-inference "
              f"{theirs / reps:.3f} ({t_peer:.0f} s)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--parts", nargs="+", default=["independent", "clustered", "runs", "power"])
    ap.add_argument("--power-reps", type=int, default=None,
                    help="replications of the power part (default --reps)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    pb, pr = truth_population()
    truth = (curve(pr) - curve(pb)).mean(axis=0)
    neg = np.flatnonzero(truth < 0)
    print(f"truth: D(1) = {truth[0]:+.4f}, D(128) = {truth[-1]:+.4f}, k* = "
          f"{KS[neg[0]] if neg.size else 'none'}; reps {args.reps}, B = {args.B}, alpha = {ALPHA}")
    rows = []
    if "independent" in args.parts:
        rows += independent(pb, pr, args.reps, args.B, [50, 100, 200, 1060])
    if "clustered" in args.parts:
        rows += clustered(pb, pr, args.reps, args.B, [20, 50, 200])
    if "runs" in args.parts:
        rows += runs(pb, pr, args.reps, args.B, [(200, 3), (200, 5), (1060, 3)])
    se = np.sqrt(0.95 * 0.05 / args.reps)
    print(f"\n| design | size | band | simultaneous coverage (target 0.95, MC s.e. {se:.3f}) |")
    print("|---|---|---|---|")
    for design, size, band, cov in rows:
        print(f"| {design} | {size} | {band} | {cov:.3f} |")
    if "power" in args.parts:
        pw = power(pb, pr, args.power_reps or args.reps, args.B, [50, 100, 200, 1060])
        print("\n| prompts | power, rlvr-boundary | power, passk-inference | time ours / peer |")
        print("|---|---|---|---|")
        for P, a, b, to, tp in pw:
            print(f"| {P} | {a:.3f} | {b:.3f} | {to:.0f} s / {tp:.0f} s |")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
