"""One look of the monitor, from counts: the numbers of a ``monitor-step`` result.

:func:`assess` takes the base's and the current policy's per-prompt counts on the
held-out prompts and returns every number the monitor logs: the pairwise
comparison exactly as ``rlvr-boundary compare`` computes it
(:func:`rlvr_boundary.analysis.pairwise.compare_aligned`, at the plain level
``alpha``: the one-look statement), the band again at the look's corrected
level ``alpha_j`` (the one the rules read, :mod:`rlvr_boundary.monitor.rules`),
coverage and support at the budget K, the share of zero-variance groups and the
mean token entropy. :func:`scalars` flattens a result into the
``boundary/...`` metrics the trainer integrations log.

No sampling, no files: the monitor, the benchmark of false alarms and the verl
hook all call this same function.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.pipelines.compare import CompareOptions
from rlvr_boundary.analysis.pairwise import compare_aligned, parse_ks
from rlvr_boundary.analysis.structure import structured_band
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core import coverage as cv
from rlvr_boundary.core import support as sp
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError
from rlvr_boundary.monitor.options import MonitorOptions
from rlvr_boundary.monitor.rules import look_alpha, rule_fires

__all__ = ["assess", "rule_band", "scalars", "compare_options", "NAMESPACE"]

#: Prefix of every logged metric.
NAMESPACE = "boundary"


def compare_options(opts: MonitorOptions) -> CompareOptions:
    """The ``compare`` options a look's comparison uses (so an offline compare can repeat it)."""
    return CompareOptions(ks=opts.ks, bootstrap=opts.bootstrap, alpha=opts.alpha, seed=opts.seed)


def assess(aligned: Aligned, base: str, policy: str, opts: MonitorOptions, *, step: int,
           look: int, entropy: float | None = None, full: bool | None = None) -> dict:
    """Every number of one look, JSON-ready.

    Parameters
    ----------
    aligned
        Counts of the base and the policy on the held-out prompts (``(2, P)``).
    base, policy
        Their labels in ``aligned.models``.
    opts
        Monitor options (grid, band, correction, rules, K).
    step
        Training step of the look.
    look
        1-based index of the look (its corrected level depends on it).
    entropy
        Mean token entropy of the policy's samples (nats), if known.
    full
        Compute compare's paired-bootstrap intervals (default ``opts.full_compare``).

    Returns
    -------
    dict
        ``step``, ``look``, ``labels``, ``comparison`` (compare's payload),
        ``rule_band`` (the band at ``alpha_j`` with its supported gains and
        losses), ``rules`` (each rule and whether it fired), ``coverage``,
        ``support``, ``zero_variance_share``, ``entropy_mean``.

    Notes
    -----
    ``alpha_j`` is :func:`rlvr_boundary.monitor.rules.look_alpha` of this look.
    The rule band's critical value is at least the plain band's, so it is never
    narrower: a loss it supports the plain band supports too. The zero-variance share is the share of held-out prompts
    whose n samples are all correct or all wrong (a group of n with equal
    rewards, which gives a group-relative advantage no signal).
    """
    copts = compare_options(opts)
    if full is None:
        full = opts.full_compare
    ib, ir = aligned.models.index(base), aligned.models.index(policy)
    nb, cb, nr, cr = aligned.n[ib], aligned.c[ib], aligned.n[ir], aligned.c[ir]  # (P,) each
    ks = parse_ks(copts.grid, int(min(nb.min(), nr.min())))
    curves = {base: pass_at_k(nb, cb, ks), policy: pass_at_k(nr, cr, ks)}  # (P, K) each
    cmp_ = compare_aligned(aligned, base, policy, copts, curves=curves)
    if not full:
        cmp_.pop("bootstrap_ci", None)
    try:
        alpha_j = look_alpha(opts.alpha, opts.correction, look, opts.looks)
    except InputError:
        if opts.rules:
            raise
        alpha_j = None  # no rules, no schedule given: nothing reads a corrected level
    plain_c = (cmp_.get("band") or {}).get("critical_value")
    rband = None if alpha_j is None else rule_band(
        curves[base], curves[policy], ks, np.asarray(cmp_["diff"]), alpha_j, plain_c, opts)
    k_star = cmp_["k_star"]
    rules = [{"rule": r.describe(), "action": r.action,
              "fired": bool(rband is not None and rule_fires(r, rband["loss_budgets"], k_star)
                            if r.loss_at is not None else rule_fires(r, [], k_star))}
             for r in opts.rules]
    K = min(opts.budget_K, int(min(nb.min(), nr.min())))
    support = sp.problem_support(nb, cb, nr, cr, K, zeta=opts.zeta)
    support.pop("region")
    solved = cv.solved_at_k(aligned.n[[ib, ir]], aligned.c[[ib, ir]], K, tau=1 - opts.zeta)
    zero_var = float(np.mean((cr == 0) | (cr == nr)))
    return {
        "step": int(step), "look": int(look),
        "labels": {"base": base, "policy": policy},
        "n_prompts": int(nb.size),
        "comparison": cmp_,
        "alpha_look": alpha_j,
        "correction": opts.correction,
        "looks": opts.looks,
        "rule_band": rband,
        "rules": rules,
        "fired": [r for r in rules if r["fired"]],
        "coverage": {"K": K, "tau": 1 - opts.zeta, "base": int(solved[0].sum()),
                     "policy": int(solved[1].sum()), "both": int((solved[0] & solved[1]).sum()),
                     "share_policy": float(solved[1].mean()),
                     "share_base": float(solved[0].mean())},
        "support": support,
        "zero_variance_share": zero_var,
        "entropy_mean": None if entropy is None else float(entropy),
    }


#: At least this many multiplier draws beyond the look's quantile (B * alpha_j), so the
#: Monte Carlo quantile is resolved; above MAX_RULE_MULTIPLIERS draws the union bound is used.
MIN_TAIL_DRAWS = 50
MAX_RULE_MULTIPLIERS = 200_000


def rule_band(curves_b: np.ndarray, curves_r: np.ndarray, ks: np.ndarray, diff: np.ndarray,
               alpha_j: float, plain_c: float | None, opts: MonitorOptions) -> dict | None:
    """The band at the look's corrected level, with compare's handling of no-variance budgets.

    A corrected level is small (``alpha / L`` and less), and the ``1 - alpha_j``
    quantile of B multiplier maxima is only resolved when ``B alpha_j`` is well
    above 1 (otherwise it is just the largest draw, and the band too narrow). So
    the draws are raised to ``MIN_TAIL_DRAWS / alpha_j``; when that exceeds
    ``MAX_RULE_MULTIPLIERS`` the critical value is the union bound over the K
    budgets, ``Phi^{-1}(1 - alpha_j / (2K))``, which holds whatever the
    correlation between budgets (conservative). The critical value is never
    below the plain band's.
    """
    from scipy.stats import norm

    if curves_b.shape[0] < 2:
        return None
    if alpha_j <= 0:
        return {"alpha": 0.0, "level": 1.0, "lower": None, "upper": None, "loss_budgets": [],
                "gain_budgets": [], "critical_value": None, "method": "no level left",
                "note": "no level left for this look (past the scheduled looks)"}
    need = int(np.ceil(MIN_TAIL_DRAWS / alpha_j))
    B = max(opts.bootstrap, need)
    method = "Gaussian multipliers"
    if B > MAX_RULE_MULTIPLIERS:
        B, method = opts.bootstrap, "union bound over budgets"
    band = structured_band(curves_b[None], curves_r[None], n_multipliers=B, alpha=alpha_j,
                           seed=opts.seed)
    mean, se = np.asarray(band["mean"], float), np.asarray(band["se"], float)
    degenerate = np.ptp(curves_r - curves_b, axis=0) <= 1e-12  # (K,)
    live = ~degenerate & (se > 0)
    crit = float(band["critical_value"]) if method == "Gaussian multipliers" else \
        float(norm.isf(alpha_j / (2 * max(1, int(live.sum())))))
    if plain_c is not None:
        crit = max(crit, float(plain_c))
    lower, upper = mean - crit * se, mean + crit * se
    lower[degenerate] = upper[degenerate] = diff[degenerate]
    lower[~live & ~degenerate], upper[~live & ~degenerate] = -1.0, 1.0
    cls = cc.classify_budgets(ks, lower, upper)
    return {"alpha": float(alpha_j), "level": 1 - float(alpha_j), "lower": lower, "upper": upper,
            "critical_value": crit, "method": method, "n_multipliers": int(B),
            "loss_budgets": cls["loss"], "gain_budgets": cls["gain"]}


def _f(x) -> float | None:
    return None if x is None else float(x)


def scalars(result: dict, opts: MonitorOptions) -> dict[str, float]:
    """The ``boundary/...`` metrics of one look (a flat dict of floats).

    Per logged budget k (:meth:`MonitorOptions.logged_budgets`): ``pass@k/k``
    (the policy), ``base_pass@k/k``, ``D/k``, ``band_lower/k``, ``band_upper/k``
    (the plain one-look band). Then ``k_star`` (only when D goes negative),
    ``price``, ``price_k``, ``gain_budgets`` and ``loss_budgets`` (counts of
    budgets with a supported gain / loss), ``first_supported_loss`` (when
    any), ``coverage`` (share of prompts the policy solves at K), ``SRR``,
    ``NDR``, ``entropy`` (when known), ``zero_variance_share``,
    ``alpha_look`` and ``alarm`` (1 when a rule fired at this look, else 0).
    """
    c = result["comparison"]
    ns = NAMESPACE
    ks = [int(k) for k in c["ks"]]
    base, pol = result["labels"]["base"], result["labels"]["policy"]
    out: dict[str, float] = {}
    band = c.get("band") or {}
    for k in opts.logged_budgets(ks):
        j = ks.index(k)
        out[f"{ns}/pass@k/{k}"] = float(c["pass_at_k"][pol][j])
        out[f"{ns}/base_pass@k/{k}"] = float(c["pass_at_k"][base][j])
        out[f"{ns}/D/{k}"] = float(c["diff"][j])
        if band:
            out[f"{ns}/band_lower/{k}"] = float(band["lower"][j])
            out[f"{ns}/band_upper/{k}"] = float(band["upper"][j])
    if c.get("k_star") is not None:
        out[f"{ns}/k_star"] = float(c["k_star"])
    out[f"{ns}/price"] = float(c["price"])
    if c.get("price_k") is not None:
        out[f"{ns}/price_k"] = float(c["price_k"])
    out[f"{ns}/gain_budgets"] = float(len(c.get("gain_budgets") or []))
    out[f"{ns}/loss_budgets"] = float(len(c.get("loss_budgets") or []))
    if c.get("loss_budgets"):
        out[f"{ns}/first_supported_loss"] = float(min(c["loss_budgets"]))
    out[f"{ns}/coverage"] = float(result["coverage"]["share_policy"])
    for key in ("SRR", "NDR"):
        v = result["support"].get(key)
        if v is not None and np.isfinite(v):
            out[f"{ns}/{key}"] = float(v)
    if result.get("entropy_mean") is not None:
        out[f"{ns}/entropy"] = float(result["entropy_mean"])
    out[f"{ns}/zero_variance_share"] = float(result["zero_variance_share"])
    if result.get("alpha_look") is not None:
        out[f"{ns}/alpha_look"] = float(result["alpha_look"])
    out[f"{ns}/alarm"] = float(bool(result["fired"]))
    return out
