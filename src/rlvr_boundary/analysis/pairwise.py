"""Compare a trained checkpoint with its base end to end: options in, result dict out.

This is the orchestration behind ``rlvr-boundary compare`` and the pairwise part
of ``rlvr-boundary report``. It takes aligned per-prompt counts, calls the numeric
core (:mod:`rlvr_boundary.core.passk`, :mod:`rlvr_boundary.core.compare`) and returns
a JSON-ready payload; reading files and printing live in the CLI verb.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k, passk_within_prompt_variance
from rlvr_boundary.errors import InputError


@dataclass
class CompareOptions:
    """Options of a base-vs-RL comparison (``rlvr-boundary compare``; recorded in every result).

    Validated once here; ``grid`` is derived from ``ks``. The input fields
    (format, labels, adapter choices) say how the files were read, so a result
    records everything needed to reproduce it.
    """

    ks: str | None = None
    """Budget grid, e.g. "1-128", "1,2,4,8" or "pow2"; default every k from 1 to the smallest n."""
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
    labels: dict = field(default_factory=dict)
    """Model label of single-model input files, ``{path: label}``."""
    lm_eval_filter: str | None = None
    """lm-evaluation-harness filter to read (default: the first non-majority filter)."""
    lm_eval_metric: str | None = None
    """lm-evaluation-harness per-document metric (default: the first verdict-like one)."""
    lighteval_metric: str | None = None
    """lighteval metric (default: a sampling metric such as avg@n, else a 0/1 match)."""
    verl_step: int | None = None
    """verl validation step to read from a directory of dumps (default: every step)."""
    grid: list | str | None = field(init=False, default=None)
    """Derived: the parsed ``ks`` (a sorted list, "pow2", or None for 1..n)."""

    def __post_init__(self) -> None:
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, int) \
                or not 2 <= self.bootstrap <= MAX_BOOTSTRAP:
            raise InputError(f"--bootstrap must be an integer >= 2 and at most "
                             f"{MAX_BOOTSTRAP:,}, got {self.bootstrap!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed < 2**63:
            raise InputError(f"--seed must be an integer from 0 to 2**63 - 1, got {self.seed!r}")
        if not 0 < self.alpha < 1:
            raise InputError(f"--alpha must lie strictly between 0 and 1, got {self.alpha!r}")
        if self.K_se is not None and self.K_se < 1:
            raise InputError(f"--K-se must be >= 1, got {self.K_se!r}")
        if self.verl_step is not None and self.verl_step < 0:
            raise InputError(f"--verl-step must be >= 0, got {self.verl_step!r}")
        self.labels = dict(self.labels or {})
        self.grid = parse_grid(self.ks)

    def adapter_choices(self) -> dict[str, dict]:
        """Keyword arguments of each adapter's ``read``, by format name."""
        return {"lm-eval": {"filter": self.lm_eval_filter, "metric": self.lm_eval_metric},
                "lighteval": {"metric": self.lighteval_metric},
                "verl": {"step": self.verl_step}}


#: Largest bootstrap / multiplier count accepted (its arrays take 8 bytes per draw).
MAX_BOOTSTRAP = 1_000_000
#: Most budgets a grid may hold, and the largest budget (checked before the grid is built).
MAX_BUDGETS = 100_000
MAX_K = 10**9
#: Most (prompt, budget) cells of per-prompt pass@k curves held at once, per model;
#: the analysis keeps a few arrays of this size (8 bytes a cell), so this bounds memory.
MAX_CELLS = 10_000_000


def check_cells(n_prompts: int, n_budgets: int, what: str = "prompts") -> None:
    """Refuse a grid whose per-prompt curves would exceed :data:`MAX_CELLS` (before building)."""
    if n_prompts * n_budgets > MAX_CELLS:
        raise InputError(
            f"{n_prompts:,} {what} x {n_budgets:,} budgets is more than the "
            f"{MAX_CELLS:,} per-prompt pass@k values held in memory; choose a smaller "
            "grid with --ks (e.g. pow2 or 1-64,128,256)", field="ks")


def parse_grid(spec: str | None) -> list | str | None:
    """Parse a budget grid spec: "1-128", "1,2,4,8", "1-16,32,64", "pow2", or None (1..n)."""
    if spec is None or spec == "":
        return None
    if spec == "pow2":
        return "pow2"
    ks: set[int] = set()
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (_ascii_int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                if hi > MAX_K or hi - lo + 1 + len(ks) > MAX_BUDGETS:
                    raise InputError(f"--ks {spec!r}: a grid holds at most {MAX_BUDGETS:,} "
                                     f"budgets, each at most {MAX_K:,}", field="ks")
                ks.update(range(lo, hi + 1))
            else:
                ks.add(_ascii_int(part))
                if max(ks) > MAX_K or len(ks) > MAX_BUDGETS:
                    raise InputError(f"--ks {spec!r}: a grid holds at most {MAX_BUDGETS:,} "
                                     f"budgets, each at most {MAX_K:,}", field="ks")
    except InputError:
        raise
    except ValueError:
        raise InputError(f"--ks: cannot parse the budget grid {spec!r}; use e.g. 1-128, "
                         "1,2,4,8 or pow2") from None
    out = sorted(ks)
    if not out or out[0] < 1:
        raise InputError(f"--ks: budgets must be integers >= 1, got {spec!r}")
    return out


def _ascii_int(text: str) -> int:
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(text)
    return int(text)


def parse_ks(spec: str | list | None, n_min: int) -> np.ndarray:
    """The budget grid on data whose smallest sample count is ``n_min``.

    ``spec`` is a grid spec string or an already parsed grid (:func:`parse_grid`).
    k > n_min is refused: pass@k has no unbiased estimate for k > n.
    """
    grid = spec if not isinstance(spec, str) or spec == "pow2" else parse_grid(spec)
    if grid is None:
        if n_min > MAX_BUDGETS:
            raise InputError(f"the default grid 1..n has {n_min:,} budgets, more than "
                             f"{MAX_BUDGETS:,}; choose one with --ks (e.g. pow2)", field="ks")
        return np.arange(1, n_min + 1)
    if grid == "pow2":
        return 2 ** np.arange(int(np.log2(n_min)) + 1)
    arr = np.array(grid)
    if arr[-1] > n_min:
        raise InputError(f"k = {arr[-1]} exceeds the smallest number of samples n = {n_min}: "
                         "pass@k has no unbiased estimate for k > n (choose a smaller --ks)")
    return arr


def compare_aligned(aligned: Aligned, base: str, rl: str, opts: CompareOptions, *,
                    curves: dict | None = None) -> dict:
    """Every number of the pairwise comparison, as a JSON-ready dict.

    Parameters
    ----------
    aligned
        Counts of at least the two models on a common prompt set.
    base, rl
        Labels of the base and the trained model in ``aligned.models``.
    opts
        Options.
    curves
        Optional ``{label: (P, K) per-prompt pass@k}`` already computed on this
        grid (the audit computes the base's once for every checkpoint).

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
    pb = curves[base] if base in curves else pass_at_k(nb, cb, ks)  # (P, K)
    pr = curves[rl] if rl in curves else pass_at_k(nr, cr, ks)  # (P, K)
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
    # A budget with no spread of the per-prompt differences (every prompt solved, or
    # none, by both models) has no uncertainty to draw: it is marked, and its band is
    # the point D(k) itself (a tie when D(k) = 0), not the [-1, 1] placeholder.
    degenerate = np.ptp(contrib, axis=0) <= 1e-12  # (K,)
    result["degenerate"] = degenerate
    if nb.size >= 2:
        band = cc.simultaneous_band(contrib, n_multipliers=opts.bootstrap, alpha=opts.alpha,
                                    seed=opts.seed)
        lower, upper = np.array(band["lower"], float), np.array(band["upper"], float)
        lower[degenerate] = upper[degenerate] = diff[degenerate]
        cls = cc.classify_budgets(ks, lower, upper)
        result["band"] = {"lower": lower, "upper": upper, "se": band["se"],
                          "critical_value": band["critical_value"],
                          "method": "Gaussian-multiplier sup-t simultaneous band over ks, "
                                    "prompts as the sampling unit",
                          "level": 1 - opts.alpha}
        result.update({"gain_budgets": cls["gain"], "loss_budgets": cls["loss"],
                       "inconclusive_budgets": cls["inconclusive"],
                       "first_loss_set": cls["first_loss_set"],
                       "first_loss_scope": cls["first_loss_scope"]})
        if ks[0] == 1:
            result["bootstrap_ci"] = cc.paired_bootstrap(
                pb, pr, ks, K_se=result["delta_se_K"], n_boot=opts.bootstrap, alpha=opts.alpha,
                seed=opts.seed)
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
