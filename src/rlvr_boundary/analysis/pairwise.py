"""Every number of a base-vs-RL comparison, from aligned counts: a JSON-ready payload.

The computation behind ``rlvr-boundary compare`` and the pairwise part of
``rlvr-boundary report``. It takes aligned per-prompt counts, calls the numeric
core (:mod:`rlvr_boundary.core.passk`, :mod:`rlvr_boundary.core.compare`) and returns
a JSON-ready payload; reading files, writing results and printing live in the
workflow (:mod:`rlvr_boundary.pipelines.compare`) and the words
(:mod:`rlvr_boundary.report.words`). Every number a sentence needs is computed
here (``gain_run_end`` for the headline, say), so the words only say them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.analysis.extrapolation import extrapolation_result, metrics_block
from rlvr_boundary.analysis.structure import (band_checks, run_curves, structured_band,
                                               verifier_error_block)
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core import grid as G
from rlvr_boundary.core.passk import passk_within_prompt_variance
from rlvr_boundary.errors import InputError
from rlvr_boundary.kinds import gain_run_end


class ComparisonSettings(Protocol):
    """What a comparison reads of its options (``CompareOptions`` of the compare workflow)."""

    grid: list | str | None
    K_se: int | None
    bootstrap: int
    alpha: float
    seed: int
    verifier_error: tuple[float, float] | None
    extrapolate: int | None
    extrapolate_method: str


def parse_ks(grid: list | str | None, n_min: int) -> np.ndarray:
    """``(K,)`` budgets of a parsed grid (:func:`rlvr_boundary.core.grid.parse_grid`) on data
    whose smallest sample count is ``n_min``; k > n_min is refused (no unbiased estimate)."""
    try:
        return G.budgets(grid, n_min)
    except G.GridError as exc:
        raise InputError(str(exc), field="ks") from None


def check_cells(rows: int, n_budgets: int, what: str = "prompts") -> None:
    """Refuse per-prompt curves beyond :data:`rlvr_boundary.core.grid.MAX_CELLS` values."""
    try:
        G.check_cells(rows, n_budgets, what=what)
    except G.GridError as exc:
        raise InputError(str(exc), field="ks") from None


def compare_aligned(aligned: Aligned, base: str, rl: str, opts: ComparisonSettings, *,
                    curves: dict | None = None, groups=None, runs: dict | None = None) -> dict:
    """Every number of the pairwise comparison, as a JSON-ready dict.

    Parameters
    ----------
    aligned
        Counts of at least the two models on a common prompt set.
    base, rl
        Labels of the base and the trained model in ``aligned.models``.
    opts
        The comparison's options (:class:`ComparisonSettings`: grid, bootstrap,
        alpha, seed, K_se, verifier error, extrapolation).
    curves
        Optional ``{label: (P, K) per-prompt pass@k}`` already computed on this
        grid (the audit computes the base's once for every checkpoint).
    groups
        ``(P,)`` cluster labels (see :mod:`rlvr_boundary.analysis.structure`), or None.
    runs
        ``{"base": [labels], "rl": [labels]}``: further runs of each model in
        ``aligned``; pass@k curves, D(k), the band and the bootstrap use the
        run averages, while the count summaries (``solved_at_n``, the crossing
        bound, the within-prompt standard errors, ``metrics``) describe the
        first run of each model.

    Returns
    -------
    dict
        JSON-ready payload. ``degenerate`` marks, per budget, a difference with
        no variance over prompts (every prompt solved, or none, by both): no band
        is drawn there and the budget is a tie, not a gain or a loss.
    """
    ib, ir = aligned.models.index(base), aligned.models.index(rl)
    nb, cb = aligned.n[ib], aligned.c[ib]  # (P,)
    nr, cr = aligned.n[ir], aligned.c[ir]  # (P,)
    n_min = int(min(nb.min(), nr.min()))
    ks = parse_ks(opts.grid, n_min)
    check_cells(nb.size, ks.size)
    if opts.K_se is not None and opts.K_se not in ks:
        raise InputError(f"--K-se {opts.K_se} is not a budget of the grid "
                         f"(k = {ks[0]}..{ks[-1]}, {ks.size} budgets)", field="K_se")
    # Reuse given curves only when they are on this grid (a pair's smallest n may
    # exceed the audit's, and with it the default grid).
    curves = {m: v for m, v in (curves or {}).items() if v.shape[1] == ks.size}
    runs = runs or {}
    rows_b = [ib, *(aligned.models.index(m) for m in runs.get("base", ()))]
    rows_r = [ir, *(aligned.models.index(m) for m in runs.get("rl", ()))]

    def per_run(label, rows):  # (R, P, K)
        if len(rows) == 1 and label in curves:
            return curves[label][None]
        return run_curves(aligned.n[rows], aligned.c[rows], ks)

    curves_b, curves_r = per_run(base, rows_b), per_run(rl, rows_r)
    pb, pr = curves_b.mean(axis=0), curves_r.mean(axis=0)  # (P, K), averaged over runs
    diff = cc.paired_difference(pr, pb)  # (K,)
    crossings = cc.grid_crossings(ks, diff)
    bound = cc.crossing_bound(cb / nb, cr / nr)
    k_star = cc.first_negative(ks, diff)
    price_v, price_k = cc.price(ks, diff)
    K_se = opts.K_se if opts.K_se is not None else (256 if 256 in ks else int(ks.max()))
    result: dict = {
        "models": {"base": base, "rl": rl},
        "n_prompts": int(nb.size),
        "n_samples": {base: _n_summary(nb), rl: _n_summary(nr)},
        "ks": ks,
        "pass_at_k": {base: pb.mean(axis=0), rl: pr.mean(axis=0)},
        "solved_at_n": {base: int(np.count_nonzero(cb > 0)), rl: int(np.count_nonzero(cr > 0))},
        "diff": diff,
        "crossings": crossings,
        "n_crossings": len(crossings),
        "crossing_bound": bound["bound"],
        "crossing_bound_V": bound["V"],
        "crossing_bound_note": (
            "bound on crossings of the plug-in curves 1-(1-c/n)^k (generalized Descartes rule); "
            "n_crossings counts sign changes of the unbiased finite-n curve, which is not an "
            "exponential sum, on the grid ks"),
        "gain_at_1": bool(diff[0] > 0) if ks[0] == 1 else None,
        "k_star": k_star,
        "k_star_continuous": crossings[0]["k_continuous"] if crossings and
        crossings[0]["direction"] == "gain_to_loss" else None,
        "price": price_v,
        "price_k": price_k,
    }
    if K_se in ks and ks[0] == 1:
        j = int(np.flatnonzero(ks == K_se)[0])
        result["delta_se"] = float(pb[:, j].mean() - pr[:, 0].mean())
        result["delta_se_K"] = int(K_se)
    else:
        result["delta_se"] = None
        result["delta_se_K"] = None
    contrib = pr - pb  # (P, K) per-prompt differences
    # A budget with no spread of the per-prompt differences has no uncertainty to draw: it
    # is marked. When D(k) = 0 (every prompt solved, or none, by both) it is a tie and its
    # band the point 0; a nonzero D(k) with no spread keeps the band's [-1, 1], so a
    # zero-width band never supports a gain or a loss.
    degenerate = np.ptp(contrib, axis=0) <= 1e-12  # (K,)
    result["degenerate"] = degenerate
    if nb.size >= 2:
        band = structured_band(curves_b, curves_r, groups=groups, n_multipliers=opts.bootstrap,
                               alpha=opts.alpha, seed=opts.seed)
        lower, upper = np.array(band["lower"], float), np.array(band["upper"], float)
        tie = degenerate & (np.abs(diff) <= 1e-12)
        lower[tie] = upper[tie] = diff[tie]
        cls = cc.classify_budgets(ks, lower, upper)
        result["band"] = {"lower": lower, "upper": upper, "se": band["se"],
                          "critical_value": band["critical_value"],
                          "critical_values": band["critical_values"],
                          "method": "Gaussian-multiplier sup-t simultaneous band over ks, "
                                    f"multipliers drawn over {band['unit']}",
                          "unit": band["unit"], "n_clusters": band["n_clusters"],
                          "n_runs": band["n_runs"],
                          "level": 1 - opts.alpha,
                          **band_checks(band, diff, degenerate, alpha=opts.alpha)}
        result.update({"gain_budgets": cls["gain"], "loss_budgets": cls["loss"],
                       "inconclusive_budgets": cls["inconclusive"],
                       "first_loss_set": cls["first_loss_set"],
                       "first_loss_scope": cls["first_loss_scope"],
                       "certified_crossing": cls["certified_crossing"]})
        if ks[0] == 1:
            result["bootstrap_ci"] = cc.paired_bootstrap(
                pb, pr, ks, K_se=result["delta_se_K"], n_boot=opts.bootstrap, alpha=opts.alpha,
                seed=opts.seed, groups=groups)
    else:
        result.update({"band": None, "gain_budgets": [], "loss_budgets": [],
                       "inconclusive_budgets": ks.tolist(), "first_loss_set": None})
    gains = set(result["gain_budgets"])
    losses = set(result["loss_budgets"])
    # Per budget: supported gain, supported loss, tie (no spread, D = 0) or inconclusive.
    result["verdict_per_k"] = [
        "gain" if k in gains else "loss" if k in losses
        else "tie" if deg and abs(d) <= 1e-12 else "inconclusive"
        for k, d, deg in zip(ks.tolist(), diff.tolist(), degenerate.tolist())]
    result["gain_run_end"] = gain_run_end(result)
    # Within-prompt (sampling) standard error of each mean curve where n >= 2k.
    within = {}
    for label, n_, c_ in ((base, nb, cb), (rl, nr, cr)):
        ok = 2 * ks <= n_.min()  # the analytic variance needs n >= 2k
        se = [None] * ks.size
        if ok.any():
            var = passk_within_prompt_variance(n_, c_, ks[ok]).sum(axis=0)  # (K_ok,)
            for j, v in zip(np.flatnonzero(ok), var):
                se[j] = float(np.sqrt(max(v, 0.0)) / n_.size)
        within[label] = se
    result["within_prompt_se"] = within
    result["metrics"] = metrics_block({base: (nb, cb), rl: (nr, cr)}, opts.alpha)
    result["cover"] = cover_curve_block(nb, cb, nr, cr, base, rl, opts.alpha,
                                        clustered=groups is not None)
    if opts.verifier_error is not None and result["band"] is not None:
        result["verifier_error"] = verifier_error_block(
            nb, cb, nr, cr, ks, result, opts.verifier_error, n_boot=min(opts.bootstrap, 100),
            alpha=opts.alpha, seed=opts.seed, groups=groups)
    if opts.extrapolate is not None:
        result["extrapolation"] = extrapolation_result(
            nb, cb, nr, cr, opts.extrapolate, method=opts.extrapolate_method,
            n_boot=min(opts.bootstrap, 50), alpha=opts.alpha, seed=opts.seed,
            clustered=groups is not None)
    return result


def _n_summary(n: np.ndarray) -> dict:
    return {"min": int(n.min()), "max": int(n.max()), "total": int(n.sum())}


def cover_curve_block(nb, cb, nr, cr, base: str, rl: str, alpha: float, *,
                      clustered: bool = False) -> dict:
    """cover@tau curves of base and RL with their DKW bands, and the difference.

    The bands assume independent problems (:mod:`rlvr_boundary.core.cover`): with prompts
    clustered (``--cluster-by``) the curves are drawn without a band and ``no_band`` says why.
    """
    from rlvr_boundary.core.cover import TAU_GRID, cover_band, cover_difference_band

    b, r = cover_band(nb, cb, TAU_GRID, alpha), cover_band(nr, cr, TAU_GRID, alpha)
    d = cover_difference_band(nb, cb, nr, cr, TAU_GRID, alpha)
    estimand = ("the cover measured with these n samples per problem, for problems drawn "
                "like these; not the cover of the infinite-sample success rates")
    if clustered:
        none = {"lower": None, "upper": None}
        return {"taus": b["taus"], "level": 1 - alpha, "halfwidth": None, "estimand": estimand,
                "calibrated": False,
                "no_band": "the prompts are clustered (--cluster-by): the band assumes "
                           "independent problems",
                "models": {base: {"cover": b["cover"], **none},
                           rl: {"cover": r["cover"], **none}},
                "diff": {"diff": d["diff"], **none, "verdict": None}}
    return {"taus": b["taus"], "level": 1 - alpha, "halfwidth": b["halfwidth"],
            "estimand": estimand, "calibrated": True, "no_band": None,
            "models": {base: {k: b[k] for k in ("cover", "lower", "upper")},
                       rl: {k: r[k] for k in ("cover", "lower", "upper")}},
            "diff": {k: d[k] for k in ("diff", "lower", "upper", "verdict")}}

