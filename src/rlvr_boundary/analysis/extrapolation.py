"""Model-based pass@k beyond the samples drawn, and the other metrics, as JSON-ready blocks.

Everything here is a prediction from a fitted distribution of per-prompt
success rates (:mod:`rlvr_boundary.core.extrapolate`), not an estimate: the
block says so in ``model_based`` and ``note``, and shows the power-law view
beside the mixture so a reader can see how much the choice of model matters.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core import extrapolate as ex
from rlvr_boundary.core import metrics as mt
from rlvr_boundary.core.passk import pass_at_k

__all__ = ["extrapolation_grid", "extrapolation_result", "metrics_block"]

TAUS = (0.25, 0.5, 0.75, 1.0)
"""Thresholds of cover@tau and G-Pass@k_tau in result files (lighteval's, without 0)."""


def extrapolation_grid(n_min: int, k_max: int) -> np.ndarray:
    """Budgets 1..n_min, then about 16 per doubling up to ``k_max`` (log spaced)."""
    if k_max < 1:
        raise ValueError("the extrapolation budget must be >= 1")
    obs = np.arange(1, min(n_min, k_max) + 1)
    if k_max <= n_min:
        return obs
    doublings = np.log2(k_max / n_min)
    far = np.unique(np.round(np.geomspace(n_min, k_max, int(16 * doublings) + 2)).astype(int))
    return np.unique(np.concatenate([obs, far]))


def extrapolation_result(nb, cb, nr, cr, k_max: int, *, method: str = "beta_mixture",
                         n_boot: int = 50, alpha: float = 0.05, seed: int = 0) -> dict:
    """pass@k of both models and D(k) up to ``k_max``, with a pointwise bootstrap band.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` counts of base and trained model on the same prompts.
    k_max
        Largest budget to predict.
    method
        "beta_mixture" or "npmle" (see :mod:`rlvr_boundary.core.extrapolate`).
    n_boot
        Paired prompt-bootstrap refits for the band.
    """
    n_min = int(min(nb.min(), nr.min()))
    ks = extrapolation_grid(n_min, k_max)
    out = ex.extrapolate_pair(nb, cb, nr, cr, ks, method=method, n_boot=n_boot, alpha=alpha,
                              seed=seed)
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
        "note": f"model-based prediction beyond k = {n_min}: fitted {method.replace('_', ' ')} "
                "of per-prompt success rates; the band covers prompt sampling under this "
                "model, not the choice of model",
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
