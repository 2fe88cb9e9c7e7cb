"""The calibration suite: every coverage and power figure we publish, rerun from fixed seeds.

One command regenerates the table in docs/statistics.md (between the
``calibration:begin`` and ``calibration:end`` markers, never edited by hand) and
the measured figures the tool itself quotes in its warnings
(``src/rlvr_boundary/analysis/calibration_data.py``)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/calibration.py            # full: see the docs for the CPU time
    OPENBLAS_NUM_THREADS=1 python benchmarks/calibration.py --quick    # smoke test, writes nothing
    python benchmarks/calibration.py --parts band --no-write           # one part, print only

Every row states its truth, its size, the number of replications and the
Monte Carlo standard error of each share, ``sqrt(p (1 - p) / reps)``.
Replication ``r`` of row ``name`` draws from ``numpy.random.default_rng([row
seed, r])``; rows are independent tasks spread over at most ``--workers``
processes (2 by default), so the figures do not depend on the number of
workers.

Truths:

- **DeepScaleR population**: the embedded DeepScaleR counts (1,060 prompts,
  n = 128 per model) are fitted with the NPMLE of each model's success rates
  (:func:`rlvr_boundary.core.extrapolate.fit_npmle`); each prompt's pair of
  true rates is its posterior mean under those fits. A replication draws ``P``
  prompts with replacement and ``c ~ Binomial(n, p)`` per model; the target is
  the population's D(k).
- **smooth**: base rates Beta(0.6, 0.9), the trained model's 0.12 higher
  (clipped), n = 16.
- **sparse loss**: base rates Beta(0.4, 1.2); the trained model raises every
  rate to the power 0.7 except on 10% of prompts, where it keeps 5% of it:
  a gain at k = 1 and a loss at large k carried by a few prompts, n = 32.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "statistics.md"
DATA = ROOT / "src" / "rlvr_boundary" / "analysis" / "calibration_data.py"
BEGIN, END = "<!-- calibration:begin -->", "<!-- calibration:end -->"
LEVEL = 0.95


# ----------------------------------------------------------------------------- truths


def deepscaler_counts():
    """``(n, c_base, c_rl)`` of the embedded DeepScaleR example, aligned."""
    from rlvr_boundary.examples import example_files
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.io.formats import load_model_counts

    ex = example_files("deepscaler32k")
    al = align([load_model_counts(ex["base"], label="base"),
                load_model_counts(ex["rl"], label="rl")])
    return al.n[0], al.c[0], al.c[1]


def deepscaler_truth() -> tuple[np.ndarray, np.ndarray, int]:
    """``(1060,)`` posterior-mean rates of base and RL under each model's NPMLE, and n = 128."""
    from rlvr_boundary.core.extrapolate import _log_binom, fit_npmle

    n, cb, cr = deepscaler_counts()
    out = []
    for c in (cb, cr):
        fit = fit_npmle(n, c)
        ll = _log_binom(n, c, fit["grid"])  # (P, L)
        post = np.exp(ll - ll.max(axis=1, keepdims=True)) * fit["weights"]  # (P, L)
        out.append((post @ fit["grid"]) / post.sum(axis=1))
    return out[0], out[1], 128


def synthetic_truth(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """A 5,000-prompt population of rate pairs and its n (see the module docstring)."""
    rng = np.random.default_rng({"smooth": 5, "sparse loss": 6}[name])
    if name == "smooth":
        pb = rng.beta(0.6, 0.9, 5000)
        return pb, np.clip(pb + 0.12, 0, 1), 16
    pb = rng.beta(0.4, 1.2, 5000)
    return pb, np.where(rng.random(5000) < 0.1, pb * 0.05, pb**0.7), 32


def truth(name: str):
    return deepscaler_truth() if name == "DeepScaleR" else synthetic_truth(name)


def curve(p, ks) -> np.ndarray:
    """``(..., K)`` true pass@k ``1 - (1 - p)^k``."""
    return 1.0 - np.exp(np.multiply.outer(np.log1p(-np.clip(p, 0, 1 - 1e-16)), ks))


def shift(p, s):
    """Rates moved by ``s`` on the logit scale."""
    with np.errstate(divide="ignore"):
        return 1.0 / (1.0 + np.exp(-(np.log(p) - np.log1p(-p) + s)))


def gauss_hermite(nodes: int, sd: float):
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return x * sd, w / w.sum()


def share(hits: int, reps: int) -> dict:
    p = hits / reps
    return {"value": p, "mc_se": float(np.sqrt(max(p * (1 - p), 0.0) / reps)), "reps": reps}


# ----------------------------------------------------------------------------- band rows


def covered(band, target) -> bool:
    return bool(np.all((band["lower"] <= target) & (target <= band["upper"])))


def band_independent(truth_name: str, P: int, reps: int, B: int) -> dict:
    """Coverage of the plain band as compare draws it, and of the Gaussian band alone."""
    from rlvr_boundary.core import compare as cc
    from rlvr_boundary.core.passk import pass_at_k

    pb, pr, n = truth(truth_name)
    ks = np.arange(1, n + 1)
    target = (curve(pr, ks) - curve(pb, ks)).mean(axis=0)
    table = pass_at_k(np.full(n + 1, n), np.arange(n + 1), ks)  # (n + 1, K): pass@k of count c
    hits = gauss = 0
    for r in range(reps):
        rng = np.random.default_rng([11, P, r])
        idx = rng.integers(0, pb.size, P)
        d = table[rng.binomial(n, pr[idx])] - table[rng.binomial(n, pb[idx])]  # (P, K)
        hits += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r), target)
        gauss += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r, small_sample=False),
                         target)
    return {"truth": truth_name, "prompts": P, "n": n, "coverage": share(hits, reps),
            "gaussian": share(gauss, reps)}


def band_clustered(G: int, reps: int, B: int, m: int = 5, su: float = 1.0,
                   sw: float = 0.5) -> dict:
    """G clusters of m prompts: cluster logit shifts N(0, su^2) shared, N(0, sw^2) RL only."""
    from rlvr_boundary.core import compare as cc
    from rlvr_boundary.core.passk import pass_at_k

    pb, pr, n = deepscaler_truth()
    ks = np.arange(1, n + 1)
    xu, wu = gauss_hermite(12, su)
    xw, ww = gauss_hermite(8, sw)
    tb = sum(a * curve(shift(pb, u), ks).mean(axis=0) for u, a in zip(xu, wu))
    tr = sum(a * b * curve(shift(pr, u + w), ks).mean(axis=0)
             for u, a in zip(xu, wu) for w, b in zip(xw, ww))
    target = tr - tb
    P = G * m
    g = np.repeat(np.arange(G), m)
    plain = clu = 0
    for r in range(reps):
        rng = np.random.default_rng([12, G, r])
        idx = rng.integers(0, pb.size, P)
        u, w = rng.normal(0, su, G)[g], rng.normal(0, sw, G)[g]
        cb, cr = rng.binomial(n, shift(pb[idx], u)), rng.binomial(n, shift(pr[idx], u + w))
        nn = np.full(P, n)
        d = pass_at_k(nn, cr, ks) - pass_at_k(nn, cb, ks)
        plain += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r), target)
        clu += covered(cc.simultaneous_band(d, n_multipliers=B, seed=r, groups=g, df=G - 1),
                       target)
    return {"clusters": G, "size": m, "prompts": P, "plain": share(plain, reps),
            "clustered": share(clu, reps)}


def band_runs(P: int, R: int, reps: int, B: int, tau: float = 0.3) -> dict:
    """R runs of the trained model, each shifting every logit by N(0, tau^2)."""
    from rlvr_boundary.core import compare as cc
    from rlvr_boundary.core.passk import pass_at_k

    pb, pr, n = deepscaler_truth()
    ks = np.arange(1, n + 1)
    xv, wv = gauss_hermite(16, tau)
    target = (sum(a * curve(shift(pr, v), ks).mean(axis=0) for v, a in zip(xv, wv))
              - curve(pb, ks).mean(axis=0))
    table = pass_at_k(np.full(n + 1, n), np.arange(n + 1), ks)
    plain = runs = 0
    for r in range(reps):
        rng = np.random.default_rng([13, P, R, r])
        idx = rng.integers(0, pb.size, P)
        v = rng.normal(0, tau, R)
        cb = rng.binomial(n, pb[idx])
        curves_r = np.stack([table[rng.binomial(n, shift(pr[idx], v[j]))] for j in range(R)])
        curves_b = table[cb][None]  # (1, P, K)
        plain += covered(cc.simultaneous_band(curves_r.mean(axis=0) - curves_b[0],
                                              n_multipliers=B, seed=r), target)
        mean, H, df = cc.run_influence(curves_r, curves_b)
        runs += covered(cc.simultaneous_band(mean, influence=H, df=df, n_multipliers=B, seed=r),
                        target)
    return {"prompts": P, "runs": R, "plain": share(plain, reps), "with_runs": share(runs, reps)}


def band_verifier_error(P: int, fp: float, fn: float, reps: int, n_boot: int) -> dict:
    """The band under known verifier error rates: coverage of the true D(k), k = 1..n."""
    from rlvr_boundary.core.verifier_error import verifier_error_band

    pb, pr, _ = deepscaler_truth()
    n = 32
    ks = np.arange(1, n + 1)
    target = (curve(pr, ks) - curve(pb, ks)).mean(axis=0)
    hits = 0
    for r in range(reps):
        rng = np.random.default_rng([14, P, r])
        idx = rng.integers(0, pb.size, P)
        nn = np.full(P, n)
        cb = rng.binomial(nn, fp + pb[idx] * (1 - fp - fn))
        cr = rng.binomial(nn, fp + pr[idx] * (1 - fp - fn))
        band = verifier_error_band(nn, cb, nn, cr, ks, fp=fp, fn=fn, n_boot=n_boot, seed=r)
        hits += covered(band, target)
    return {"prompts": P, "n": n, "fp": fp, "fn": fn, "refits": n_boot,
            "coverage": share(hits, reps)}


def band_tiny(reps: int) -> dict:
    """Inputs where no budget may be supported: zero variance and too few prompts.

    Two fixed cases (3 prompts at n = 1, base 0/1 and RL 1/1 on each; 4 prompts
    at n = 8, base 4/8 and RL 1/8 on each), then ``reps`` random inputs of 2-5
    prompts (n = 1-8, any counts) and ``reps`` inputs of 6-40 prompts whose
    per-prompt differences are all equal at some budgets. Counted: budgets
    supported where the band has zero width or fewer prompts than
    ``min_prompts`` (must be 0), through the same analysis as ``compare``.
    """
    from rlvr_boundary.analysis.aligned import Aligned
    from rlvr_boundary.pipelines.compare import CompareOptions
    from rlvr_boundary.analysis.pairwise import compare_aligned

    def run(cb, cr, n):
        P = len(cb)
        al = Aligned(models=["b", "r"], prompt_ids=np.array([f"q{i}" for i in range(P)]),
                     n=np.array([n, n]), c=np.array([cb, cr]))
        res = compare_aligned(al, "b", "r", CompareOptions(bootstrap=500))
        supported = set(res["gain_budgets"]) | set(res["loss_budgets"])
        if P < 6:
            return len(supported), len(res["ks"])
        deg = [k for k, g in zip(res["ks"], res["degenerate"]) if g]
        return len(supported & set(deg)), len(deg)

    bad, checked = 0, 0
    for cb, cr, n in (([0, 0, 0], [1, 1, 1], [1, 1, 1]), ([4] * 4, [1] * 4, [8] * 4)):
        b, c = run(np.array(cb), np.array(cr), np.array(n))
        bad, checked = bad + b, checked + c
    rng = np.random.default_rng(15)
    for _ in range(reps):
        P, n = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        b, c = run(rng.integers(0, n + 1, P), rng.integers(0, n + 1, P), np.full(P, n))
        bad, checked = bad + b, checked + c
    for _ in range(reps):
        P, n = int(rng.integers(6, 41)), int(rng.integers(2, 9))
        cb = np.full(P, int(rng.integers(0, n + 1)))
        cr = np.full(P, int(rng.integers(0, n + 1)))
        cr[: int(rng.integers(0, 2))] = int(rng.integers(0, n + 1))  # at most one prompt differs
        b, c = run(cb, cr, np.full(P, n))
        bad, checked = bad + b, checked + c
    return {"inputs": 2 + 2 * reps, "budgets_checked": checked, "supported": bad}


def power_crossing(P: int, reps: int, B: int) -> dict:
    """Power to certify the crossing (a supported gain before a supported loss), ours and
    passk-inference's band and certify on the same pass@k rows (the peer if installed)."""
    from rlvr_boundary.core import compare as cc
    from rlvr_boundary.core.passk import pass_at_k

    try:
        from passk_inference.core import certify
        from passk_inference.core import simultaneous_band as peer_band
    except ImportError:
        peer_band = None
    pb, pr, n = deepscaler_truth()
    ks = np.arange(1, n + 1)
    table = pass_at_k(np.full(n + 1, n), np.arange(n + 1), ks)
    ours = theirs = 0
    t_ours = t_peer = 0.0
    for r in range(reps):
        rng = np.random.default_rng([16, P, r])
        idx = rng.integers(0, pb.size, P)
        t0 = time.process_time()
        d = table[rng.binomial(n, pr[idx])] - table[rng.binomial(n, pb[idx])]
        band = cc.simultaneous_band(d, n_multipliers=B, seed=r)
        ours += cc.classify_budgets(ks, band["lower"], band["upper"])["certified_crossing"]
        t_ours += time.process_time() - t0
        if peer_band is not None:
            t0 = time.process_time()
            pk = peer_band(d, bootstrap=B, alpha=1 - LEVEL, seed=r)
            lo, hi = pk["lower"].copy(), pk["upper"].copy()
            lo[pk["degenerate_columns"]], hi[pk["degenerate_columns"]] = -1.0, 1.0
            theirs += bool(certify(ks, lo, hi)["certified_crossing"])
            t_peer += time.process_time() - t0
    return {"prompts": P, "ours": share(ours, reps),
            "peer": share(theirs, reps) if peer_band is not None else None,
            "cpu_ours": t_ours, "cpu_peer": t_peer if peer_band is not None else None}


# ----------------------------------------------------------------------------- extrapolation rows


def _score(out, truths: dict, ks, n_obs) -> dict:
    """Per predicted budget (k > n): covered / given for base, RL and D; not calibrated counts."""
    pred = np.asarray(ks) > n_obs
    res = {}
    for q, key in (("base", "pass_base"), ("rl", "pass_rl"), ("diff", "diff")):
        lo = np.array([np.nan if v is None else v for v in out[f"{key}_lower"]], float)
        hi = np.array([np.nan if v is None else v for v in out[f"{key}_upper"]], float)
        given = np.isfinite(lo) & np.isfinite(hi)
        cov = given & (lo <= truths[q] + 1e-12) & (truths[q] <= hi + 1e-12)
        res[q] = {"given": given[pred].astype(int), "covered": cov[pred].astype(int),
                  "width": np.where(given, hi - lo, 0.0)[pred]}
    return res


def _k_star_covered(kset, k_true: float) -> bool | None:
    """Does the k* set contain the true k* (inf: no crossing)? None when no set was given."""
    if kset is None:
        return not np.isfinite(k_true)
    lo, hi = kset
    return bool(lo <= k_true and (hi is None or k_true <= hi))


def extrapolation_deepscaler(m: int, subsamples: int, prompts: int | None) -> dict:
    """Subsamples of m of DeepScaleR's 128 samples per prompt: predict up to k = 128."""
    from rlvr_boundary.analysis.extrapolation import extrapolation_result
    from rlvr_boundary.core.passk import pass_at_k

    n, cb_full, cr_full = deepscaler_counts()
    ks_all = np.arange(1, 129)
    acc = None
    kstar_hits = kstar_given = 0
    errors, zero = [], []
    for s in range(subsamples):
        rng = np.random.default_rng([21, m, prompts or 0, s])
        idx = np.arange(n.size) if prompts is None else np.sort(
            rng.choice(n.size, prompts, replace=False))
        tb = pass_at_k(n[idx], cb_full[idx], ks_all).mean(axis=0)  # the full data: the truth
        tr = pass_at_k(n[idx], cr_full[idx], ks_all).mean(axis=0)
        neg = np.flatnonzero(tr - tb < 0)
        k_true = float(ks_all[neg[0]]) if neg.size else np.inf
        cb = rng.hypergeometric(cb_full[idx], n[idx] - cb_full[idx], m)
        cr = rng.hypergeometric(cr_full[idx], n[idx] - cr_full[idx], m)
        nn = np.full(idx.size, m)
        zero.append(max(np.mean(cb == 0), np.mean(cr == 0)))
        out = extrapolation_result(nn, cb, nn, cr, 128)
        ks = np.asarray(out["ks"])
        sc = _score(out, {"base": tb[ks - 1], "rl": tr[ks - 1], "diff": (tr - tb)[ks - 1]}, ks, m)
        if acc is None:
            acc = {q: {k: np.zeros_like(v, float) for k, v in d.items()} for q, d in sc.items()}
        for q in sc:
            for key in sc[q]:
                acc[q][key] += sc[q][key]
        hit = _k_star_covered(out["k_star_set"], k_true)
        kstar_given += out["k_star_set"] is not None or any(out["calibrated"])
        kstar_hits += bool(hit)
        errors.append((out["pass_base"][-1] - tb[-1], out["pass_rl"][-1] - tr[-1]))
    ks_pred = [int(k) for k in ks if k > m]
    errors = np.array(errors)
    return {"truth": "DeepScaleR", "m": m, "prompts": prompts or int(n.size), "k_max": 128,
            "subsamples": subsamples, "ks": ks_pred, **_summary(acc, subsamples),
            "zero_share": [float(np.min(zero)), float(np.max(zero))],
            "k_star": {"covered": kstar_hits, "of": subsamples},
            "point_error_128": {"base_bias": float(errors[:, 0].mean()),
                                "base_mae": float(np.abs(errors[:, 0]).mean()),
                                "rl_bias": float(errors[:, 1].mean()),
                                "rl_mae": float(np.abs(errors[:, 1]).mean())}}


def _summary(acc: dict, reps: int) -> dict:
    out = {}
    for q, d in acc.items():
        given, cov = d["given"], d["covered"]
        share = np.where(given > 0, cov / np.maximum(given, 1), np.nan)
        out[q] = {"covered_last": int(cov[-1]), "given_last": int(given[-1]),
                  "not_calibrated_last": int(reps - given[-1]),
                  "coverage_last": share_or_none(cov[-1], given[-1]),
                  "min_coverage": float(np.nanmin(share)) if np.isfinite(share).any() else None,
                  "width_last": float(d["width"][-1] / max(given[-1], 1)),
                  "given_total": int(given.sum()), "covered_total": int(cov.sum())}
    return out


def share_or_none(hits, reps):
    return share(int(hits), int(reps)) if reps else None


def heavy_tail_truth(P: int, tail: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Base: a share ``tail`` of prompts with rates uniform in [0.0005, 0.005], the rest
    Beta(0.6, 0.9); trained model: 1.5 times the share with rates uniform in [0.0001, 0.002],
    the rest Beta(1.2, 0.7)."""
    pb = np.where(rng.random(P) < tail, rng.uniform(0.0005, 0.005, P), rng.beta(0.6, 0.9, P))
    pr = np.where(rng.random(P) < 1.5 * tail, rng.uniform(0.0001, 0.002, P),
                  rng.beta(1.2, 0.7, P))
    return pb, pr


def extrapolation_heavy(P: int, n: int, tail: float, k_max: int, sims: int) -> dict:
    """Simulated truths with a heavy left tail: predict up to k_max from n samples."""
    from rlvr_boundary.analysis.extrapolation import extrapolation_result

    acc = None
    kstar_hits = 0
    zero = []
    for s in range(sims):
        rng = np.random.default_rng([22, P, n, int(tail * 100), s])
        pb, pr = heavy_tail_truth(P, tail, rng)
        nn = np.full(P, n)
        cb, cr = rng.binomial(nn, pb), rng.binomial(nn, pr)
        zero.append(max(np.mean(cb == 0), np.mean(cr == 0)))
        out = extrapolation_result(nn, cb, nn, cr, k_max)
        ks = np.asarray(out["ks"])
        tb, tr = curve(pb, ks).mean(axis=0), curve(pr, ks).mean(axis=0)  # these prompts' truth
        sc = _score(out, {"base": tb, "rl": tr, "diff": tr - tb}, ks, n)
        if acc is None:
            acc = {q: {k: np.zeros_like(v, float) for k, v in d.items()} for q, d in sc.items()}
        for q in sc:
            for key in sc[q]:
                acc[q][key] += sc[q][key]
        ks_fine = np.arange(1, k_max + 1)
        dt = (curve(pr, ks_fine) - curve(pb, ks_fine)).mean(axis=0)
        neg = np.flatnonzero(dt < 0)
        kstar_hits += bool(_k_star_covered(out["k_star_set"],
                                           float(ks_fine[neg[0]]) if neg.size else np.inf))
    return {"truth": f"heavy tail {tail:.0%}", "prompts": P, "m": n, "k_max": k_max,
            "subsamples": sims, "ks": [int(k) for k in ks if k > n],
            "zero_share": [float(np.min(zero)), float(np.max(zero))],
            **_summary(acc, sims), "k_star": {"covered": kstar_hits, "of": sims}}


def extrapolation_seeds(m: int) -> dict:
    """The same subsample with seeds 0-4: the predictions and intervals must be identical."""
    from rlvr_boundary.analysis.extrapolation import extrapolation_result

    n, cb_full, cr_full = deepscaler_counts()
    rng = np.random.default_rng([23, m])
    cb = rng.hypergeometric(cb_full, n - cb_full, m)
    cr = rng.hypergeometric(cr_full, n - cr_full, m)
    nn = np.full(n.size, m)
    outs = [extrapolation_result(nn, cb, nn, cr, 128, seed=seed) for seed in range(5)]
    keys = ("pass_base", "pass_rl", "diff", "diff_lower", "diff_upper", "pass_base_lower",
            "pass_base_upper", "k_star", "k_star_set")
    def as_json(v):
        return json.dumps(v, default=lambda a: np.asarray(a, float).tolist())

    same = all(as_json(o[k]) == as_json(outs[0][k]) for o in outs for k in keys)
    return {"m": m, "seeds": 5, "identical": same,
            "pass_128": [outs[0]["pass_base"][-1], outs[0]["pass_rl"][-1]],
            "k_star": outs[0]["k_star"]}


# ----------------------------------------------------------------------------- plan rows


def plan_truth(name: str):
    """``(p_base, p_rl, P, pilot n, claims)`` of a plan scenario (fixed prompts)."""
    if name == "gain":
        rng = np.random.default_rng(31)
        pb = rng.beta(0.6, 0.9, 300)
        return pb, np.clip(pb + 0.12, 0, 1), 16, {"gain_at": 1}
    rng = np.random.default_rng(32)
    pb = rng.beta(0.5, 1.0, 500)
    hard = pb < 0.2
    pr = np.where(hard, np.where(rng.random(500) < 0.15, 0.0, pb), np.minimum(1.0, 1.3 * pb))
    claims = {"loss_at": 32} if name == "loss" else {"gain_at": 1, "loss_at": 32}
    return pb, pr, 32, claims


def realised_power(pb, pr, n_design, claims: dict, studies: int, seed: int) -> dict:
    """Power of a design re-simulated from the true rates: fresh counts, the band, the claims."""
    from rlvr_boundary.core.compare import classify_budgets, simultaneous_band
    from rlvr_boundary.core.passk import pass_at_k

    K = max(claims.values())
    ks = np.arange(1, K + 1)
    nn = np.broadcast_to(np.asarray(n_design), pb.shape)
    hits = 0
    for r in range(studies):
        rng = np.random.default_rng([seed, r])
        d = pass_at_k(nn, rng.binomial(nn, pr), ks) - pass_at_k(nn, rng.binomial(nn, pb), ks)
        band = simultaneous_band(d, n_multipliers=500, seed=r)
        cls = classify_budgets(ks, band["lower"], band["upper"])
        hits += (claims.get("gain_at") is None or claims["gain_at"] in cls["gain"]) and \
            (claims.get("loss_at") is None or claims["loss_at"] in cls["loss"])
    return share(hits, studies)


def plan_scenario(name: str, pilots: int, sims: int, studies: int) -> dict:
    """Pilots of one truth; for each, plan's recommendation and its power re-simulated."""
    from rlvr_boundary.analysis import plan as pl

    pb, pr, n0, claims = plan_truth(name)
    P = pb.size
    rows = []
    for j in range(pilots):
        rng = np.random.default_rng([33, j])
        nn = np.full(P, n0)
        cb, cr = rng.binomial(nn, pb), rng.binomial(nn, pr)
        opts = pl.PlanOptions(power=0.8, sims=sims, seed=j, **claims)
        res = pl.plan_design(nn, cb, nn, cr, opts)
        rec = res["recommended"]
        row = {"pilot": j, "recommended": rec, "unlimited": res["unlimited"]["power"],
               "designs": [(d["n"], d["uniform"]["power"], d["allocated"]["power"],
                            d["allocated_offered"]) for d in res["designs"]]}
        if rec is not None:
            n_design = rec["n"] if rec["design"] == "uniform" else \
                np.asarray(res["allocation_by_prompt"])
            row["realised"] = realised_power(pb, pr, n_design, claims, studies, seed=34 + j)
            # Uniform at the same n, for the allocated-vs-uniform check on the truth.
            row["realised_uniform"] = (row["realised"] if rec["design"] == "uniform" else
                                       realised_power(pb, pr, rec["n"], claims, studies,
                                                      seed=34 + j))
        rows.append(row)
    return {"scenario": name, "prompts": P, "pilot_n": n0, "claims": claims, "rows": rows,
            "sims": sims, "studies": studies}


# ----------------------------------------------------------------------------- tasks


# ----------------------------------------------------------------------------- sets rows


def _cover_truth(p, n: int, taus) -> tuple[np.ndarray, np.ndarray]:
    """``(T,)`` population cover measured with n samples, G_n, and the infinite-sample G."""
    from scipy.stats import binom

    t = np.asarray(taus, float)
    need = np.ceil(t * n - 1e-9)  # c >= tau n in integers, as the tool counts
    g_n = binom.sf(need[None, :] - 1, n, p[:, None]).mean(axis=0)  # (T,)
    return g_n, (p[:, None] >= t[None, :]).mean(axis=0)


def sets_cover(truth_name: str, P: int, reps: int) -> dict:
    """Coverage of the cover@tau DKW bands (each model, and RL - base) at every tau at once."""
    from rlvr_boundary.core.cover import TAU_GRID, cover_band, cover_difference_band

    pb, pr, n = truth(truth_name)
    gb_n, gb = _cover_truth(pb, n, TAU_GRID)
    gr_n, gr = _cover_truth(pr, n, TAU_GRID)
    hits = {"base_n": 0, "rl_n": 0, "diff_n": 0, "base_inf": 0, "diff_inf": 0}
    seed = {"DeepScaleR": 71, "smooth": 72, "sparse loss": 73}[truth_name]
    nn = np.full(P, n)
    for r in range(reps):
        rng = np.random.default_rng([seed, P, r])
        i = rng.integers(0, pb.size, P)
        cb, cr = rng.binomial(n, pb[i]), rng.binomial(n, pr[i])
        b, rl = cover_band(nn, cb), cover_band(nn, cr)
        d = cover_difference_band(nn, cb, nn, cr)
        hits["base_n"] += covered(b, gb_n)
        hits["rl_n"] += covered(rl, gr_n)
        hits["diff_n"] += covered(d, gr_n - gb_n)
        hits["base_inf"] += covered(b, gb)
        hits["diff_inf"] += covered(d, gr - gb)
    return {"truth": truth_name, "prompts": P, "n": n,
            **{k: share(v, reps) for k, v in hits.items()}}


def sets_frontier(truth_name: str, P: int, reps: int) -> dict:
    """Coverage of the hard frontier's 95% Wilson intervals (solved at K = n: c >= 1)."""
    from rlvr_boundary.core.frontier_sets import frontier_shares

    pb, pr, n = truth(truth_name)
    fb, fr = (1 - pb) ** n, (1 - pr) ** n  # P(no correct sample among n), per prompt
    target = {"unsolved": float(np.mean(fb * fr)), "gained": float(np.mean(fb * (1 - fr))),
              "lost": float(np.mean((1 - fb) * fr))}
    hits = dict.fromkeys(target, 0)
    seed = {"DeepScaleR": 81, "smooth": 82, "sparse loss": 83}[truth_name]
    for r in range(reps):
        rng = np.random.default_rng([seed, P, r])
        i = rng.integers(0, pb.size, P)
        sb, sr = rng.binomial(n, pb[i]) > 0, rng.binomial(n, pr[i]) > 0
        got = frontier_shares(P, {"unsolved": int(np.sum(~sb & ~sr)),
                                  "gained": int(np.sum(~sb & sr)),
                                  "lost": int(np.sum(sb & ~sr))})
        for name, t in target.items():
            lo, hi = got[name]["ci"]
            hits[name] += lo <= t <= hi
    return {"truth": truth_name, "prompts": P, "n": n, "target": target,
            **{k: share(v, reps) for k, v in hits.items()}}


def sets_tasks(quick: bool) -> list[tuple]:
    reps = 100 if quick else 1000
    cases = [("DeepScaleR", 100), ("DeepScaleR", 1060)] if quick else [
        ("DeepScaleR", 50), ("DeepScaleR", 200), ("DeepScaleR", 1060),
        ("smooth", 50), ("smooth", 500), ("sparse loss", 200)]
    return ([("sets", "cover", (t, P, reps)) for t, P in cases]
            + [("sets", "frontier", (t, P, reps)) for t, P in cases])


def sets_table(rows: list) -> list[str]:
    out = ["### cover@tau bands and the hard frontier", "",
           "cover@tau (`cover` in compare and report results): coverage of the DKW band at "
           f"every tau in 0.01, 0.02, ..., 1 at once, nominal {LEVEL:.2f}, of each model's "
           "cover measured with n samples per problem (G_n, what the band is for) and of the "
           "difference RL - base (union-bound band); and, for comparison, of the "
           "infinite-sample cover G (the band does not claim it). Problems drawn with "
           "replacement from the truth's population.", "",
           "| truth | size | base, G_n | RL, G_n | RL - base, G_n | base, G | RL - base, G | "
           "replications |", "|---|---|---|---|---|---|---|---|"]
    for name, args, r in rows:
        if name == "cover":
            out.append(f"| {r['truth']} (n = {r['n']}) | P = {r['prompts']:,} | "
                       f"{fmt(r['base_n'])} | {fmt(r['rl_n'])} | {fmt(r['diff_n'])} | "
                       f"{fmt(r['base_inf'])} | {fmt(r['diff_inf'])} | "
                       f"{r['base_n']['reps']:,} |")
    out += ["", "The hard frontier (`frontier` in report results): coverage of each 95% "
            "Wilson interval of the population share of problems solved by neither model at "
            "K = n (unsolved), by RL only (gained) and by the base only (lost), where solved "
            "means at least one correct sample among n.", "",
            "| truth | size | unsolved | gained | lost | replications |", "|---|---|---|---|---|---|"]
    for name, args, r in rows:
        if name == "frontier":
            out.append(f"| {r['truth']} (n = {r['n']}) | P = {r['prompts']:,} | "
                       f"{fmt(r['unsolved'])} | {fmt(r['gained'])} | {fmt(r['lost'])} | "
                       f"{r['unsolved']['reps']:,} |")
    return out


def band_tasks(quick: bool) -> list[tuple]:
    reps = 60 if quick else 1000
    B = 300 if quick else 1000
    sizes = [50, 200] if quick else [30, 50, 100, 200, 1000]
    tasks = [("band", "independent", ("DeepScaleR", P, reps, B)) for P in sizes]
    if not quick:
        tasks += [("band", "independent", (t, 50, reps, B)) for t in ("smooth", "sparse loss")]
    tasks += [("band", "clustered", (G, reps, B)) for G in ([20] if quick else [20, 50])]
    tasks += [("band", "runs", (200, 3, reps, B))]
    tasks += [("band", "verifier", (300, 0.02, 0.05, 8 if quick else 200, 20 if quick else 100))]
    tasks += [("band", "tiny", (20 if quick else 300,))]
    tasks += [("band", "power", (P, 40 if quick else 1000, B))
              for P in ([200] if quick else [50, 100, 200, 1060])]
    return tasks


def extrapolation_tasks(quick: bool, subs: int = 200) -> list[tuple]:
    subs = 3 if quick else subs
    sizes = [16] if quick else [8, 16, 32]
    tasks = [("extrapolation", "deepscaler", (m, subs, None)) for m in sizes]
    tasks += [("extrapolation", "deepscaler", (16, subs, 100))]
    tasks += [("extrapolation", "heavy", (500, 16, 0.2, 1024, 2 if quick else subs))]
    if not quick:
        tasks += [("extrapolation", "heavy", (300, 8, 0.25, 512, subs))]
    tasks += [("extrapolation", "seeds", (16,))]
    return tasks


def plan_tasks(quick: bool, pilots: int = 5, studies: int = 400) -> list[tuple]:
    pilots, sims, studies = (1, 60, 60) if quick else (pilots, studies, studies)
    return [("plan", "scenario", (name, pilots, sims, studies))
            for name in ("gain", "loss", "both")]


FUNCS = {("band", "independent"): band_independent, ("band", "clustered"): band_clustered,
         ("band", "runs"): band_runs, ("band", "verifier"): band_verifier_error,
         ("band", "tiny"): band_tiny, ("band", "power"): power_crossing,
         ("extrapolation", "deepscaler"): extrapolation_deepscaler,
         ("extrapolation", "heavy"): extrapolation_heavy,
         ("extrapolation", "seeds"): extrapolation_seeds,
         ("plan", "scenario"): plan_scenario,
         ("sets", "cover"): sets_cover, ("sets", "frontier"): sets_frontier}


def run_task(task):
    part, name, args = task
    t0 = time.process_time()
    out = FUNCS[(part, name)](*args)
    out["cpu_s"] = time.process_time() - t0
    print(f"  {part}/{name}{args}: {out['cpu_s']:.0f} s CPU", flush=True)
    return part, name, args, out


# ----------------------------------------------------------------------------- tables


def fmt(s: dict | None, digits: int = 3) -> str:
    if s is None:
        return "-"
    return f"{s['value']:.{digits}f} ± {s['mc_se']:.{digits}f}"


def band_table(rows: list) -> list[str]:
    out = ["### The simultaneous band", "",
           f"Simultaneous coverage of the true D(k) at every k at once, nominal {LEVEL:.2f}; "
           "`compare` is the band as the tool draws it (the kurtosis-matched t correction "
           "below 200 independent prompts), `Gaussian` the same band without it. "
           "Share ± Monte Carlo s.e. (replications in the last column).", "",
           "| design | truth | size | band | coverage | replications |", "|---|---|---|---|---|---|"]
    for name, args, r in rows:
        if name == "independent":
            out.append(f"| independent prompts | {r['truth']} (n = {r['n']}) | "
                       f"P = {r['prompts']:,} | `compare` | {fmt(r['coverage'])} | "
                       f"{r['coverage']['reps']:,} |")
            out.append(f"| | | | Gaussian only | {fmt(r['gaussian'])} | |")
    for name, args, r in rows:
        if name == "clustered":
            out.append(f"| clusters of {r['size']} (logit shifts N(0, 1) shared, N(0, 0.5²) RL "
                       f"only) | DeepScaleR | G = {r['clusters']} | plain | {fmt(r['plain'])} | "
                       f"{r['plain']['reps']:,} |")
            out.append(f"| | | | `--cluster-by` | {fmt(r['clustered'])} | |")
    for name, args, r in rows:
        if name == "runs":
            out.append(f"| {r['runs']} RL runs (run logit shift N(0, 0.3²)) | DeepScaleR | "
                       f"P = {r['prompts']} | plain (runs pooled) | {fmt(r['plain'])} | "
                       f"{r['plain']['reps']:,} |")
            out.append(f"| | | | `--rl-run` | {fmt(r['with_runs'])} | |")
    for name, args, r in rows:
        if name == "verifier":
            out.append(f"| verifier error FP = {r['fp']}, FN = {r['fn']} ({r['refits']} refits) | "
                       f"DeepScaleR (n = {r['n']}) | P = {r['prompts']} | `--verifier-error` | "
                       f"{fmt(r['coverage'])} | {r['coverage']['reps']:,} |")
    for name, args, r in rows:
        if name == "tiny":
            out += ["", f"Zero-width bands and too few prompts: {r['inputs']:,} inputs "
                    f"(the two cases of 3 prompts at n = 1 and 4 prompts at n = 8 with identical "
                    f"per-prompt differences, random inputs of 2-5 prompts, and inputs of 6-40 "
                    f"prompts with equal differences at some budgets), {r['budgets_checked']:,} "
                    f"budgets checked: **{r['supported']} supported**."]
    power = [r for name, args, r in rows if name == "power"]
    if power:
        out += ["", "Power to certify the crossing on the DeepScaleR population (a supported "
                "gain at a smaller budget than a supported loss), ours against "
                "passk-inference's band and `certify` on the same pass@k rows "
                "(CPU seconds for all replications: ours includes the pass@k rows):", "",
                "| prompts | power, rlvr-boundary | power, passk-inference | CPU ours / peer |",
                "|---|---|---|---|"]
        for r in power:
            peer = fmt(r["peer"]) if r["peer"] else "not installed"
            cpu = f"{r['cpu_ours']:.0f} s / " + (f"{r['cpu_peer']:.0f} s" if r["cpu_peer"]
                                                  is not None else "-")
            out.append(f"| {r['prompts']:,} | {fmt(r['ours'])} | {peer} | {cpu} |")
    return out


def _cov_cell(d: dict) -> str:
    c = d["coverage_last"]
    cell = "-" if c is None else f"{c['value']:.3f} ± {c['mc_se']:.3f}"
    nc = d["not_calibrated_last"]
    return cell + (f" ({nc} not calibrated)" if nc else "")


def extrapolation_table(rows: list) -> list[str]:
    out = ["### Extrapolation beyond n (`--extrapolate`)", "",
           "Each case predicts pass@k of both models and D(k) from m samples per prompt. "
           "DeepScaleR: random subsets of m of the 128 recorded samples of every prompt "
           "(hypergeometric), the truth being the full data's unbiased pass@k on the same "
           "prompts (k* = first k with D < 0, 22 on all 1,060 prompts); heavy tail: simulated "
           "truths whose stated share of base prompts has rates in [0.0005, 0.005] (the trained "
           "model 1.5 times that share in [0.0001, 0.002]), the truth being those prompts' "
           "pass@k. Coverage of the 95% intervals at the largest predicted budget, among the "
           "cases where the tool gave one (the rest are marked not calibrated and counted); "
           "`min over k` is the lowest coverage at any predicted budget; `k* set` the share "
           "of cases whose set of possible first-loss budgets holds the true k*.", "",
           "| truth | prompts | m | predict to | cases | base | RL | D | min over k (base / RL / D) "
           "| mean width of D | k* set | beta mixture at k_max: bias base / RL |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, args, r in rows:
        if name in ("deepscaler", "heavy"):
            mins = " / ".join("-" if r[q]["min_coverage"] is None else f"{r[q]['min_coverage']:.3f}"
                              for q in ("base", "rl", "diff"))
            pe = r.get("point_error_128")
            bias = f"{pe['base_bias']:+.3f} / {pe['rl_bias']:+.3f}" if pe else "-"
            out.append(f"| {r['truth']} | {r['prompts']:,} | {r['m']} | {r['k_max']:,} | "
                       f"{r['subsamples']} | {_cov_cell(r['base'])} | {_cov_cell(r['rl'])} | "
                       f"{_cov_cell(r['diff'])} | {mins} | {r['diff']['width_last']:.3f} | "
                       f"{r['k_star']['covered'] / r['k_star']['of']:.3f} | {bias} |")
    for name, args, r in rows:
        if name == "seeds":
            out += ["", f"The same subsample (m = {r['m']}) with seeds 0-4: predictions, intervals "
                    f"and k* {'identical' if r['identical'] else 'NOT identical'} (pass@128 "
                    f"{r['pass_128'][0]:.4f} base, {r['pass_128'][1]:.4f} RL)."]
    return out


def plan_table(rows: list) -> list[str]:
    out = ["### Planning a study (`plan`)", "",
           "Scenarios with fixed true rates (the planned study samples the same prompts): "
           "**gain**: 300 prompts, base rates Beta(0.6, 0.9), the trained model 0.12 higher, "
           "pilot n = 16, claim a gain at k = 1; **loss** and **both**: 500 prompts, base rates "
           "Beta(0.5, 1.0), the trained model 1.3 times the base rate where it is at least 0.2 "
           "and on the others the base rate, except 15% of them it never solves; pilot n = 32; "
           "claim a loss at k = 32 (loss) or a gain at k = 1 and a loss at k = 32 (both). "
           "Per pilot: the recommended design, plan's stated power and the power of that design "
           "re-simulated from the true rates.", "",
           "| scenario | pilot | recommended | stated power | realised power | difference |",
           "|---|---|---|---|---|---|"]
    for name, args, r in rows:
        for row in r["rows"]:
            rec = row["recommended"]
            if rec is None:
                out.append(f"| {r['scenario']} | {row['pilot']} | none (unlimited n: "
                           f"{row['unlimited']:.2f}) | - | - | - |")
                continue
            real = row["realised"]
            out.append(f"| {r['scenario']} | {row['pilot']} | {rec['design']} n = {rec['n']} | "
                       f"{rec['power']:.3f} ± {rec['mc_se']:.3f} | {real['value']:.3f} ± "
                       f"{real['mc_se']:.3f} | {rec['power'] - real['value']:+.3f} |")
        recs = [row for row in r["rows"] if row["recommended"] is not None]
        if recs:
            st = np.mean([row["recommended"]["power"] for row in recs])
            re_ = np.mean([row["realised"]["value"] for row in recs])
            out.append(f"| {r['scenario']} | mean of {len(recs)} | | {st:.3f} | {re_:.3f} | "
                       f"{st - re_:+.3f} |")
    out += ["", f"Stated powers from {rows[0][2]['sims']} simulated studies, realised from "
            f"{rows[0][2]['studies']} studies each."] if rows else []
    return out


def data_module(results: dict, meta: dict) -> str:
    """The generated module: the figures the tool quotes (warnings, reach)."""
    band = {int(r["prompts"]): {"coverage": round(r["coverage"]["value"], 4),
                                "mc_se": round(r["coverage"]["mc_se"], 4),
                                "reps": r["coverage"]["reps"]}
            for name, args, r in results.get("band", []) if name == "independent"
            and r["truth"] == "DeepScaleR"}
    ext = []
    for name, args, r in results.get("extrapolation", []):
        if name in ("deepscaler", "heavy"):
            ext.append({"truth": r["truth"], "prompts": r["prompts"], "m": r["m"],
                        "k_max": r["k_max"],
                        "coverage": {q: (None if r[q]["coverage_last"] is None else
                                         round(r[q]["coverage_last"]["value"], 4))
                                     for q in ("base", "rl", "diff")},
                        "min_coverage": {q: (None if r[q]["min_coverage"] is None else
                                             round(r[q]["min_coverage"], 4))
                                         for q in ("base", "rl", "diff")},
                        "cases": r["subsamples"],
                        "zero_share": r.get("zero_share")})
    ver = next(({"level": LEVEL, "coverage": round(r["coverage"]["value"], 4),
                 "mc_se": round(r["coverage"]["mc_se"], 4), "reps": r["coverage"]["reps"],
                 "prompts": r["prompts"], "n": r["n"], "fp": r["fp"], "fn": r["fn"],
                 "refits": r["refits"]}
                for name, args, r in results.get("band", []) if name == "verifier"), None)
    lines = ['"""Measured figures the tool quotes, written by benchmarks/calibration.py: do not edit.',
             "", "Regenerate with ``python benchmarks/calibration.py`` (see docs/statistics.md).",
             '"""', "", f"GENERATED = {json.dumps(meta, sort_keys=True)}",
             "", "#: Coverage of the plain band as compare draws it, by prompts (DeepScaleR population).",
             f"BAND = {{\"level\": {LEVEL}, \"independent\": {json.dumps(band, sort_keys=True)}}}",
             "", "#: Coverage of the extrapolation intervals at the largest predicted budget, by case.",
             f"EXTRAPOLATION = {json.dumps(ext)}",
             "", "#: Coverage of the band under verifier error (compare --verifier-error).",
             f"VERIFIER = {json.dumps(ver, sort_keys=True)}", ""]
    text = "\n".join(lines)
    text = re.sub(r'"(\d+)":', r"\1:", text)
    return text.replace("null", "None").replace("true", "True").replace("false", "False")


def write_docs(table: list[str], meta: dict) -> None:
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else f"{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOCS} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    body = "\n".join([BEGIN, "", f"_Generated by `{meta['command']}` on {meta['date']} "
                      f"({meta['cpu_s']:.0f} s CPU in {meta['workers']} processes, "
                      f"{meta['machine']}); do not edit by hand._", "", *table, "", END])
    tmp = DOCS.with_suffix(".md.tmp")
    tmp.write_text(head + body + tail, encoding="utf-8")
    os.replace(tmp, DOCS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test with few replications; writes nothing unless --docs/--data")
    ap.add_argument("--parts", nargs="+", default=["band", "extrapolation", "plan", "sets"],
                    choices=["band", "extrapolation", "plan", "sets"])
    ap.add_argument("--workers", type=int, default=2, help="processes (at most 2 on this machine)")
    ap.add_argument("--subsamples", type=int, default=200,
                    help="extrapolation cases per row (200; fewer widen every share's Monte "
                         "Carlo error, which the table prints)")
    ap.add_argument("--pilots", type=int, default=5, help="plan: pilots per scenario (5)")
    ap.add_argument("--studies", type=int, default=400,
                    help="plan: simulated studies behind each stated and realised power (400)")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    ap.add_argument("--docs", type=Path, help="write the table into this file instead")
    ap.add_argument("--data", type=Path, help="write the data module to this file instead")
    args = ap.parse_args(argv)
    global DOCS, DATA
    write = not args.no_write and (not args.quick or args.docs or args.data)
    DOCS, DATA = args.docs or DOCS, args.data or DATA
    tasks = []
    if args.data is None and not args.quick and not args.no_write and \
            set(args.parts) != {"band", "extrapolation", "plan", "sets"}:
        raise SystemExit("the data module holds every part: run them all, or pass --no-write")
    if "extrapolation" in args.parts:  # the longest tasks first, so two workers end together
        tasks += extrapolation_tasks(args.quick, args.subsamples)
    if "plan" in args.parts:
        tasks += plan_tasks(args.quick, args.pilots, args.studies)
    if "band" in args.parts:
        tasks += band_tasks(args.quick)
    if "sets" in args.parts:
        tasks += sets_tasks(args.quick)
    t0, c0 = time.perf_counter(), time.process_time()
    print(f"{len(tasks)} tasks on {args.workers} processes", flush=True)
    if args.workers > 1:
        with get_context("spawn").Pool(min(args.workers, 2)) as pool:
            done = pool.map(run_task, tasks, chunksize=1)
    else:
        done = [run_task(t) for t in tasks]
    cpu = time.process_time() - c0 + sum(out["cpu_s"] for *_, out in done) * (args.workers > 1)
    results: dict = {}
    for part, name, targs, out in done:
        results.setdefault(part, []).append((name, targs, out))
    table = []
    if "band" in results:
        table += band_table(results["band"])
    if "extrapolation" in results:
        table += [""] + extrapolation_table(results["extrapolation"])
    if "plan" in results:
        table += [""] + plan_table(results["plan"])
    if "sets" in results:
        table += [""] + sets_table(results["sets"])
    print("\n".join(table))
    sizes = [f"--{k} {v}" for k, v, d in (("subsamples", args.subsamples, 200),
                                          ("pilots", args.pilots, 5),
                                          ("studies", args.studies, 400)) if v != d]
    meta = {"command": " ".join(["python benchmarks/calibration.py",
                                 *(["--quick"] if args.quick else []), *sizes]),
            "date": _dt.date.today().isoformat(), "cpu_s": round(cpu), "workers": args.workers,
            "machine": f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
                       f"numpy {np.__version__}"}
    print(f"\n{cpu:.0f} s CPU, {time.perf_counter() - t0:.0f} s wall")
    if write:
        write_docs(table, meta)
        DATA.write_text(data_module(results, meta), encoding="utf-8")
        print(f"wrote {DOCS} and {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
