"""Model-based pass@k beyond the samples drawn, and the other metrics, as JSON-ready blocks.

Everything here is a prediction from a fitted distribution of per-prompt
success rates (:mod:`rlvr_boundary.core.extrapolate`), not an estimate: the
block says so in ``model_based`` and ``note``, and shows the power-law view
beside the mixture so a reader can see how much the choice of model matters.

Intervals and their reach. Each predicted pass@k and D(k) carries the
profile-likelihood interval over every rate distribution on the grid
(:func:`rlvr_boundary.core.extrapolate.profile_interval`): the range of
predictions the data cannot reject, so model uncertainty included. Their
coverage was measured (docs/statistics.md, calibration table) on subsamples
of DeepScaleR's 128 samples per prompt and on simulated truths with a heavy
left tail. The intervals are given only inside that validated envelope
(:func:`reach`): budgets up to :data:`REACH_RATIO` times the smallest ``n``,
with at least :data:`REACH_MIN_PROMPTS` prompts, :data:`REACH_MIN_SAMPLES`
samples per prompt and at most :data:`REACH_ZERO_SHARE` of the prompts never
solved. Outside it the prediction is still shown, marked not calibrated,
without an interval, and the block says which condition failed. The console,
the report and the app all read ``calibrated`` and ``reach`` from this block.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core import extrapolate as ex
from rlvr_boundary.core import metrics as mt
from rlvr_boundary.core.passk import pass_at_k

__all__ = ["extrapolation_grid", "extrapolation_result", "metrics_block", "reach",
           "REACH_RATIO", "REACH_MIN_PROMPTS", "REACH_MIN_SAMPLES", "REACH_ZERO_SHARE"]

TAUS = (0.25, 0.5, 0.75, 1.0)
"""Thresholds of cover@tau and G-Pass@k_tau in result files (lighteval's, without 0)."""

REACH_RATIO = 64
"""Largest k / n at which the intervals were validated (1,024 from 16 samples per prompt)."""
REACH_MIN_PROMPTS = 100
"""Fewest prompts with which the intervals were validated."""
REACH_MIN_SAMPLES = 8
"""Fewest samples per prompt (the smallest n) with which the intervals were validated."""
REACH_ZERO_SHARE = 0.45
"""Largest share of prompts with no correct sample (either model) the validation covered."""
PER_DOUBLING = 4
"""Predicted budgets per doubling of k beyond n."""


def extrapolation_grid(n_min: int, k_max: int, per_doubling: int = PER_DOUBLING) -> np.ndarray:
    """Budgets: the powers of two up to ``n_min`` and ``n_min``, then ``per_doubling`` per doubling.

    The predicted budgets beyond ``n_min`` are ``n_min * 2^(j / per_doubling)``
    (rounded) and ``k_max``; with ``k_max <= n_min`` the powers of two up to
    ``k_max`` and ``k_max``. Each budget costs a profile-likelihood interval,
    so the grid is coarse; the exact curve covers every observed budget.
    """
    if k_max < 1:
        raise ValueError("the extrapolation budget must be >= 1")
    top = min(n_min, k_max)
    obs = [2**i for i in range(int(np.log2(top)) + 1)] + [top]
    if k_max <= n_min:
        return np.unique(np.array(obs, dtype=np.int64))
    steps = int(np.ceil(per_doubling * np.log2(k_max / n_min)))
    far = np.round(n_min * 2.0 ** (np.arange(1, steps + 1) / per_doubling)).astype(np.int64)
    return np.unique(np.concatenate([obs, far[far < k_max], [k_max]]).astype(np.int64))


def reach(nb, cb, nr, cr, ks, *, clustered: bool = False) -> dict:
    """Which predicted budgets lie inside the validated envelope of the intervals.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` counts.
    ks
        ``(K,)`` budgets.
    clustered
        The prompts come in clusters (``--cluster-by``): the intervals treat
        prompts as independent and were validated so, so none is calibrated.

    Returns
    -------
    dict
        ``calibrated`` (``(K,)`` bool), ``k_max_calibrated`` (largest calibrated
        budget, None if none), ``ratio`` (:data:`REACH_RATIO`), the measured
        conditions (``prompts``, ``n_min``, ``zero_share``) with their limits
        (``rule``), and ``reasons``: the conditions that fail (``"clusters"``,
        ``"prompts"``, ``"samples"``, ``"zero_share"``, ``"ratio"``), empty when
        every budget is calibrated.
    """
    ks = np.asarray(ks)
    P = int(nb.size)
    n_min = int(min(nb.min(), nr.min()))
    zero = float(max(np.mean(cb == 0), np.mean(cr == 0)))
    reasons = ["clusters"] if clustered else []
    if P < REACH_MIN_PROMPTS:
        reasons.append("prompts")
    if n_min < REACH_MIN_SAMPLES:
        reasons.append("samples")
    if zero > REACH_ZERO_SHARE:
        reasons.append("zero_share")
    ok = np.full(ks.size, not reasons)
    if ok.any() and np.any(ks > REACH_RATIO * n_min):
        reasons.append("ratio")
        ok &= ks <= REACH_RATIO * n_min
    return {"calibrated": ok.tolist(),
            "k_max_calibrated": int(ks[ok].max()) if ok.any() else None,
            "ratio": REACH_RATIO, "prompts": P, "n_min": n_min, "zero_share": zero,
            "rule": {"max_ratio": REACH_RATIO, "min_prompts": REACH_MIN_PROMPTS,
                     "min_samples": REACH_MIN_SAMPLES, "max_zero_share": REACH_ZERO_SHARE},
            "reasons": reasons}


def extrapolation_result(nb, cb, nr, cr, k_max: int, *, method: str = "beta_mixture",
                         n_boot: int = 0, alpha: float = 0.05, seed: int = 0,
                         clustered: bool = False) -> dict:
    """pass@k of both models and D(k) up to ``k_max``, with calibrated intervals where they hold.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` counts of base and trained model on the same prompts.
    k_max
        Largest budget to predict.
    method
        The point prediction: "beta_mixture" or "npmle" (see
        :mod:`rlvr_boundary.core.extrapolate`).
    n_boot, seed
        Kept for compatibility and ignored: the intervals are profile-likelihood
        intervals and the fits deterministic, so the block is the same for
        every seed.
    alpha
        1 - level of the pointwise intervals.
    clustered
        The prompts are clustered (see :func:`reach`).

    Returns
    -------
    dict
        The block of :func:`rlvr_boundary.core.extrapolate.extrapolate_pair`
        with the intervals set to None outside :func:`reach`, plus ``reach``,
        ``calibrated``, ``k_star_set`` (from the calibrated intervals only),
        ``observed_up_to``, ``k_max``, ``fit_summary``, ``note`` and the
        ``power_law`` view.
    """
    n_min = int(min(nb.min(), nr.min()))
    ks = extrapolation_grid(n_min, k_max)
    where = reach(nb, cb, nr, cr, ks, clustered=clustered)
    ok = np.asarray(where["calibrated"], bool)
    out = ex.extrapolate_pair(nb, cb, nr, cr, ks, method=method, alpha=alpha,
                              intervals=bool(ok.any()))
    for key in ("pass_base", "pass_rl", "diff"):
        for end in ("lower", "upper"):
            vals = out.get(f"{key}_{end}")
            out[f"{key}_{end}"] = [float(v) if good else None for v, good in
                                   zip(vals if vals is not None else [0.0] * ks.size, ok)]
    out["k_star_set"] = ex.k_star_set(ks, out["diff_lower"], out["diff_upper"]) \
        if ok.any() else None
    out.setdefault("interval", "profile likelihood")
    out.setdefault("level", 1.0 - alpha)
    obs = np.arange(1, n_min + 1)
    plb = ex.fit_power_law(obs, pass_at_k(nb, cb, obs).mean(axis=0))
    plr = ex.fit_power_law(obs, pass_at_k(nr, cr, obs).mean(axis=0))
    ppb, ppr = ex.power_law_pass_at_k(plb, ks), ex.power_law_pass_at_k(plr, ks)
    neg = np.flatnonzero(ppr - ppb < 0)
    fits = {k: {kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv)
                for kk, vv in f.items() if kk not in ("grid", "weights") or method != "npmle"}
            for k, f in out.pop("fits").items()}
    out.update({
        "observed_up_to": n_min, "k_max": int(k_max), "fit_summary": fits,
        "calibrated": where["calibrated"], "reach": where,
        "note": f"model-based prediction beyond k = {n_min}: fitted {method.replace('_', ' ')} "
                "of per-prompt success rates; each interval is the range of predictions of "
                "every rate distribution the data cannot reject (profile likelihood), given "
                "only where its coverage was validated",
        "power_law": {"base": plb, "rl": plr, "pass_base": ppb, "pass_rl": ppr,
                      "diff": ppr - ppb, "k_star": float(ks[neg[0]]) if neg.size else None},
    })
    return out


def metrics_block(counts: dict, alpha: float = 0.05) -> dict:
    """cover@tau, pass^k, G-Pass@k, mG-Pass@k and the Bayesian pass@k posterior per model.

    Parameters
    ----------
    counts
        ``{label: (n, c)}`` with ``(P,)`` arrays.
    alpha
        1 - credibility of the posterior interval.

    Returns
    -------
    dict
        ``{label: {...}}``; budgets are lighteval's defaults 4, 8, 16 (and 1)
        that do not exceed the smallest n. See :mod:`rlvr_boundary.core.metrics`.
    """
    out = {"taus": list(TAUS)}
    for label, (n, c) in counts.items():
        ks = [k for k in (1, 4, 8, 16) if k <= int(n.min())]
        out[label] = {
            "cover_at_tau": dict(zip(map(str, TAUS), mt.cover_at_tau(n, c, TAUS).tolist())),
            "pass_hat_k": {str(k): float(mt.pass_hat_k(n, c, k).mean()) for k in ks},
            "g_pass_at_k": {str(k): {str(t): float(mt.g_pass_at_k(n, c, k, t).mean())
                                     for t in TAUS} for k in ks},
            "mg_pass_at_k": {str(k): float(mt.mg_pass_at_k(n, c, k).mean()) for k in ks},
            "pass_at_k_posterior": {str(k): mt.passk_posterior(n, c, k, level=1 - alpha)
                                    for k in ks},
        }
    return out
