"""Check ``plan`` against its own claim: simulate its recommended design and compare powers.

Run on demand, never under pytest::

    python benchmarks/plan_check.py [--sims 200] [--checks 400]

Two checks, fixed seeds.

1. Synthetic truth (known rates): 300 prompts, base rates Beta(0.6, 0.9), the
   trained model's 0.12 higher (clipped); pilot n = 16 per prompt. Claim: a
   gain at k = 1, power 0.8, candidates n = 1, 2, 4, 8. The recommended design is
   then simulated ``--checks`` times (a) from the pilot's fitted rates with
   fresh seeds and (b) from the true rates.
2. DeepScaleR (real samples): pilot = a random 16 of each prompt's 128 recorded
   samples (hypergeometric, seed 0), 1,060 prompts. Claim: a gain at k = 1 and
   a loss at k = 64, power 0.8, candidates n = 64, 128. The recommended
   uniform n (if at most 128) is checked on the real data: ``--checks`` random
   subsamples of n of the 128 recorded samples per prompt, band over k = 1..64,
   share certifying both claims (the prompt set is fixed here, so this is the
   power conditional on these prompts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rlvr_boundary.analysis import plan as pl
from rlvr_boundary.core.compare import classify_budgets, simultaneous_band
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.examples import example_files
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.formats import load_model_counts


def synthetic(sims: int, checks: int) -> None:
    rng = np.random.default_rng(3)
    P = 300
    pb = rng.beta(0.6, 0.9, P)
    pr = np.clip(pb + 0.12, 0, 1)
    n0 = np.full(P, 16)
    cb, cr = rng.binomial(16, pb), rng.binomial(16, pr)
    opts = pl.PlanOptions(gain_at=1, power=0.8, budgets=(1, 2, 4, 8), sims=sims, seed=0)
    res = pl.plan_design(n0, cb, n0, cr, opts)
    for row in res["designs"]:
        print(f"  n = {row['n']}: uniform {row['uniform']['power']:.3f}, allocated "
              f"{row['allocated']['power']:.3f}")
    rec = res["recommended"]
    print(f"  recommended: {rec}")
    check = pl.PlanOptions(gain_at=1, power=0.8, budgets=(1, 2, 4, 8), sims=checks, seed=0)
    again = pl.simulate_power(pl.posterior_sampler(n0, cb), pl.posterior_sampler(n0, cr),
                              rec["n"], check, seed=777, prompts=P)
    eye = np.eye(P)
    truth = pl.simulate_power((pb, eye), (pr, eye), rec["n"], check, seed=778, prompts=P)
    print(f"  re-simulated from the fit ({checks} studies): {again['power']:.3f} +- "
          f"{again['mc_se']:.3f}; from the true rates: {truth['power']:.3f} +- "
          f"{truth['mc_se']:.3f}")


def deepscaler(sims: int, checks: int) -> None:
    ex = example_files("deepscaler32k")
    al = align([load_model_counts(ex["base"], label="base"),
                load_model_counts(ex["rl"], label="rl")])
    N, cb_full, cr_full = al.n[0], al.c[0], al.c[1]
    rng = np.random.default_rng(0)
    cb16 = rng.hypergeometric(cb_full, N - cb_full, 16)
    cr16 = rng.hypergeometric(cr_full, N - cr_full, 16)
    n16 = np.full(N.size, 16)
    opts = pl.PlanOptions(gain_at=1, loss_at=64, power=0.8, budgets=(64, 128), sims=sims,
                          seed=0)
    res = pl.plan_design(n16, cb16, n16, cr16, opts)
    for row in res["designs"]:
        print(f"  n = {row['n']}: uniform {row['uniform']['power']:.3f} +- "
              f"{row['uniform']['mc_se']:.3f}, allocated {row['allocated']['power']:.3f}")
    print(f"  recommended: {res['recommended']}")
    ks = np.arange(1, 65)
    for n in (64,):
        hits = 0
        for r in range(checks):
            g = np.random.default_rng([9, r])
            cb = g.hypergeometric(cb_full, N - cb_full, n)
            cr = g.hypergeometric(cr_full, N - cr_full, n)
            nn = np.full(N.size, n)
            band = simultaneous_band(pass_at_k(nn, cr, ks) - pass_at_k(nn, cb, ks),
                                     n_multipliers=500, seed=r)
            cls = classify_budgets(ks, band["lower"], band["upper"])
            hits += 1 in cls["gain"] and 64 in cls["loss"]
        p = hits / checks
        print(f"  real data, n = {n} of the 128 recorded samples ({checks} subsamples): "
              f"{p:.3f} +- {np.sqrt(p * (1 - p) / checks):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--checks", type=int, default=400)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print("1. synthetic truth")
    synthetic(args.sims, args.checks)
    print("2. DeepScaleR pilot (16 of 128 samples)")
    deepscaler(args.sims, args.checks)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
