"""Compare a trained checkpoint with its base end to end: options in, result dict out.

This is the orchestration behind ``rlvr-boundary compare`` and the pairwise part
of ``rlvr-boundary report``. It takes aligned per-prompt counts, calls the numeric
core (:mod:`rlvr_boundary.core.passk`, :mod:`rlvr_boundary.core.compare`) and returns
a JSON-ready payload; reading files and printing live in the CLI verb.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_boundary.analysis.extrapolation import extrapolation_result, metrics_block
from rlvr_boundary.analysis.structure import run_curves, structured_band, verifier_error_block
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import passk_within_prompt_variance
from rlvr_boundary.io.counts import Aligned


@dataclass
class CompareOptions:
    """Options of a base-vs-RL comparison (recorded in every result file)."""

    ks: str | None = None
    """Budget grid, e.g. "1-128" or "1,2,4,8"; default every k from 1 to the smallest n."""
    bootstrap: int = 4000
    """Gaussian multipliers for the simultaneous band, and paired-bootstrap resamples."""
    alpha: float = 0.05
    """1 - confidence level of the band and of the bootstrap intervals."""
    seed: int = 0
    """Seed of the multiplier and bootstrap draws."""
    K_se: int | None = None
    """Base budget K of Delta_SE = pass@K_B - pass@1_R; default 256, or the largest k if n < 256."""
    intersect: bool = False
    """Compare on the common prompts when the models' prompt sets differ (else an error)."""
    format: str = "auto"
    """Input format name, or auto-detection."""
    cluster_by: str | None = None
    """Draw band multipliers (and bootstrap resamples) per cluster: an input field, or id-prefix:SEP."""
    rl_runs: tuple[str, ...] = ()
    """Further runs of the trained model (files); the band then covers run-to-run variance."""
    base_runs: tuple[str, ...] = ()
    """Further runs of the base model (files)."""
    extrapolate: int | None = None
    """Predict pass@k and D(k) up to this budget from a fitted rate distribution (model-based)."""
    extrapolate_method: str = "beta_mixture"
    """Rate distribution for the prediction: beta_mixture or npmle."""
    verifier_error: tuple[float, float] | None = None
    """Verifier false-positive and false-negative rates; the band is then also drawn under them."""


def parse_ks(spec: str | None, n_min: int) -> np.ndarray:
    """Parse a budget grid: "1-128", "1,2,4,8", "1-16,32,64", or "pow2" (1, 2, 4, ... <= n)."""
    from rlvr_boundary.errors import InputError

    if spec is None or spec == "":
        return np.arange(1, n_min + 1)
    if spec == "pow2":
        return 2 ** np.arange(int(np.log2(n_min)) + 1)
    ks: set[int] = set()
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                ks.update(range(lo, hi + 1))
            else:
                ks.add(int(part))
    except ValueError:
        raise InputError(f"cannot parse budget grid {spec!r}; use e.g. 1-128 or 1,2,4,8",
                         field="ks") from None
    arr = np.array(sorted(ks))
    if arr.size == 0 or arr[0] < 1:
        raise InputError("budgets must be integers >= 1", field="ks")
    if arr[-1] > n_min:
        raise InputError(f"k = {arr[-1]} exceeds the smallest number of samples n = {n_min}: "
                         "pass@k has no unbiased estimate for k > n", field="ks")
    return arr


def compare_aligned(aligned: Aligned, base: str, rl: str, opts: CompareOptions, *,
                    groups=None, runs: dict | None = None) -> dict:
    """Every number of the pairwise comparison, as a JSON-ready dict.

    Parameters
    ----------
    aligned
        Counts of at least the two models on a common prompt set.
    base, rl
        Labels of the base and the trained model in ``aligned.models``.
    opts
        Options.
    groups
        ``(P,)`` cluster labels (see :mod:`rlvr_boundary.analysis.structure`), or None.
    runs
        ``{"base": [labels], "rl": [labels]}``: further runs of each model in
        ``aligned``; pass@k curves, D(k), the band and the bootstrap use the
        run averages, while the count summaries (``solved_at_n``, the crossing
        bound, the within-prompt standard errors, ``metrics``) describe the
        first run of each model.
    """
    ib, ir = aligned.models.index(base), aligned.models.index(rl)
    nb, cb = aligned.n[ib], aligned.c[ib]  # (P,)
    nr, cr = aligned.n[ir], aligned.c[ir]  # (P,)
    n_min = int(min(nb.min(), nr.min()))
    ks = parse_ks(opts.ks, n_min)
    runs = runs or {}
    rows_b = [ib, *(aligned.models.index(m) for m in runs.get("base", ()))]
    rows_r = [ir, *(aligned.models.index(m) for m in runs.get("rl", ()))]
    curves_b = run_curves(aligned.n[rows_b], aligned.c[rows_b], ks)  # (R', P, K)
    curves_r = run_curves(aligned.n[rows_r], aligned.c[rows_r], ks)  # (R, P, K)
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
    if nb.size >= 2:
        band = structured_band(curves_b, curves_r, groups=groups, n_multipliers=opts.bootstrap,
                               alpha=opts.alpha, seed=opts.seed)
        cls = cc.classify_budgets(ks, band["lower"], band["upper"])
        result["band"] = {"lower": band["lower"], "upper": band["upper"], "se": band["se"],
                          "critical_value": band["critical_value"],
                          "critical_values": band["critical_values"],
                          "degenerate_budgets": ks[band["degenerate"]].tolist(),
                          "method": "Gaussian-multiplier sup-t simultaneous band over ks, "
                                    f"multipliers drawn over {band['unit']}",
                          "unit": band["unit"], "n_clusters": band["n_clusters"],
                          "n_runs": band["n_runs"],
                          "level": 1 - opts.alpha}
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
    if opts.verifier_error is not None and result["band"] is not None:
        result["verifier_error"] = verifier_error_block(
            nb, cb, nr, cr, ks, result, opts.verifier_error, n_boot=min(opts.bootstrap, 100),
            alpha=opts.alpha, seed=opts.seed, groups=groups)
    if opts.extrapolate is not None:
        result["extrapolation"] = extrapolation_result(
            nb, cb, nr, cr, opts.extrapolate, method=opts.extrapolate_method,
            n_boot=min(opts.bootstrap, 50), alpha=opts.alpha, seed=opts.seed)
    return result


def _n_summary(n: np.ndarray) -> dict:
    return {"min": int(n.min()), "max": int(n.max()), "total": int(n.sum())}


def gain_run_end(res: dict) -> int | None:
    """Last budget of the run of supported gains that starts at the first budget, or None."""
    ks = list(res["ks"])
    gains = res.get("gain_budgets") or []
    if not gains or gains[0] != ks[0]:
        return None
    end = gains[0]
    for k in gains[1:]:
        if ks.index(k) != ks.index(end) + 1:
            break
        end = k
    return end


def format_ranges(ks: list[int], dash: str = "-") -> str:
    """Compress a budget list into ranges: [1, 2, 3, 7] -> '1-3, 7' ('none' if empty)."""
    if not ks:
        return "none"
    out, start, prev = [], ks[0], ks[0]
    for k in [*ks[1:], None]:
        if k is not None and k == prev + 1:
            prev = k
            continue
        out.append(str(start) if start == prev else f"{start}{dash}{prev}")
        if k is not None:
            start = prev = k
    return ", ".join(out)


def verdict(res: dict) -> str:
    """One plain-words sentence summarising a comparison result."""
    base, rl = res["models"]["base"], res["models"]["rl"]
    parts = []
    d1 = res["diff"][0]
    parts.append(f"{rl} {'gains' if d1 > 0 else 'loses'} {abs(d1) * 100:.2f} points of pass@1 "
                 f"over {base}")
    losses = res.get("loss_budgets") or []
    run_end = gain_run_end(res)
    if run_end is not None:
        parts.append(f"the gain is supported up to k = {run_end}")
    if losses:
        parts.append(f"a loss is supported from k = {losses[0]}")
    if res["k_star"] is not None:
        parts.append(f"the curves cross at k* = {res['k_star']}")
    else:
        parts.append("the difference never turns negative on the grid")
    if res["price"] > 0:
        parts.append(f"price {res['price'] * 100:.2f} points at k = {res['price_k']}")
    return "; ".join(parts) + "."
