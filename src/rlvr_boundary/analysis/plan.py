"""How many samples per prompt a comparison needs: power by simulation from a pilot.

Input: pilot counts of the base and the trained model on the same prompts
(small ``n``). The success rates are fitted by the grid NPMLE
(:func:`rlvr_boundary.core.extrapolate.fit_npmle`) of each model; a simulated
study draws, for every prompt, a pair of true rates from its posterior under
those fits (so the pilot's pairing of prompts is kept), then counts at the
design's samples per prompt, and runs the same simultaneous band as
``compare`` on the grid ``1..K`` (``K`` the largest budget named). Power is
the share of simulated studies in which the band certifies every claim asked
for: a gain at ``gain_at`` and/or a loss at ``loss_at``.

Designs: uniform (every prompt gets ``n``) and allocated (the same total,
spread in proportion to each prompt's standard deviation of the pass@k
difference at the named budgets under the pilot posterior, never fewer than
``K`` so that pass@K stays exactly estimable; the Neyman allocation of
stratified sampling, J. Neyman, "On the Two Different Aspects of the
Representative Method", JRSS 97(4), 1934).

Two stages. The pilot only allocates: the final estimate uses the stage-two
samples alone. Each prompt's estimate is then unbiased given its allocation,
which depends on the pilot only, so the mean over prompts is unbiased. Adding
the pilot samples back would make ``n_i`` depend on the same data and can
bias the estimate; we do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_boundary.core.compare import classify_budgets, simultaneous_band
from rlvr_boundary.core.extrapolate import _log_binom, fit_npmle
from rlvr_boundary.core.passk import check_counts, pass_at_k

__all__ = ["PlanOptions", "posterior_sampler", "simulate_power", "plan_design"]


@dataclass
class PlanOptions:
    """Options of ``rlvr-boundary plan`` (recorded in its result file)."""

    gain_at: int | None = None
    """Budget k at which a gain of the trained model must be certified (e.g. 1)."""
    loss_at: int | None = None
    """Budget k at which a loss must be certified (e.g. 64)."""
    power: float = 0.8
    """Required probability that the band certifies every claim."""
    budgets: tuple[int, ...] = ()
    """Candidate samples per prompt; default K, 2K, 4K, 8K with K the largest named budget."""
    prompts: int | None = None
    """Prompts in the planned study (default: the pilot's); drawn from the pilot's prompts."""
    sims: int = 200
    """Simulated studies per design."""
    multipliers: int = 500
    """Gaussian multipliers of each simulated band."""
    alpha: float = 0.05
    """1 - confidence level of the band."""
    seed: int = 0
    """Seed of the simulations."""

    def __post_init__(self) -> None:
        from rlvr_boundary.errors import InputError

        if self.gain_at is None and self.loss_at is None:
            raise InputError("name a claim to certify: --gain-at K and/or --loss-at K")
        for name in ("gain_at", "loss_at"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise InputError(f"--{name.replace('_', '-')} must be >= 1")
        if not 0 < self.power < 1:
            raise InputError("--power must lie in (0, 1)")
        if not 0 < self.alpha < 1:
            raise InputError("--alpha must lie in (0, 1)")
        if self.sims < 10 or self.multipliers < 50:
            raise InputError("need --sims >= 10 and --multipliers >= 50")
        if self.prompts is not None and self.prompts < 2:
            raise InputError("--prompts must be >= 2")
        self.budgets = tuple(sorted(int(b) for b in self.budgets))
        if self.budgets and self.budgets[0] < self.k_max:
            raise InputError(f"every candidate n must be >= the largest named budget {self.k_max}")
        if not self.budgets:
            self.budgets = tuple(self.k_max * m for m in (1, 2, 4, 8))

    @property
    def k_max(self) -> int:
        return max(k for k in (self.gain_at, self.loss_at) if k is not None)


def posterior_sampler(n, c):
    """Rate grid and ``(P, L)`` posterior weights of each prompt under the NPMLE fit."""
    fit = fit_npmle(n, c)
    ll = _log_binom(n, c, fit["grid"])  # (P, L)
    post = np.exp(ll - ll.max(axis=1, keepdims=True)) * fit["weights"]  # (P, L)
    post /= post.sum(axis=1, keepdims=True)
    return fit["grid"], post


def _draw_rates(rng, grid, post, idx) -> np.ndarray:
    """One rate per selected prompt, from its posterior (inverse-CDF on the grid)."""
    cdf = np.cumsum(post[idx], axis=1)  # (P', L)
    u = rng.random(len(idx))[:, None]
    j = np.minimum((cdf < u).sum(axis=1), grid.size - 1)
    return grid[j]


def allocation(pb, pr, ks, total: int, k_max: int) -> np.ndarray:
    """``(P,)`` samples per prompt proportional to the pass@k-difference s.d. (Neyman).

    Notes
    -----
    With one sample, the delta method gives the s.d. of pass@k of a prompt
    with rate p as :math:`k (1-p)^{k-1} \\sqrt{p(1-p)}`; the two models add in
    variance, and the largest over the named budgets is used. Every prompt
    gets at least ``k_max``; the rest is spread in proportion and rounded so
    the total is kept.
    """
    P = pb.size
    sd = np.zeros(P)
    for k in ks:
        vb = (k * (1 - pb) ** (k - 1)) ** 2 * pb * (1 - pb)
        vr = (k * (1 - pr) ** (k - 1)) ** 2 * pr * (1 - pr)
        sd = np.maximum(sd, np.sqrt(vb + vr))
    extra = total - k_max * P
    if extra <= 0 or sd.sum() == 0:
        return np.full(P, max(k_max, total // P))
    share = extra * sd / sd.sum()
    n = k_max + np.floor(share).astype(int)
    rest = extra - int(np.floor(share).sum())
    n[np.argsort(-(share - np.floor(share)))[:rest]] += 1
    return n


def simulate_power(sampler_b, sampler_r, n_design, opts: PlanOptions, *, seed: int,
                   prompts: int) -> dict:
    """Share of simulated studies that certify the claims, with its Monte Carlo s.e.

    Parameters
    ----------
    sampler_b, sampler_r
        ``(grid, post)`` of :func:`posterior_sampler` for base and trained model.
    n_design
        ``(P,)`` samples per prompt, or a scalar (uniform); with ``prompts`` >
        the pilot's, prompts are drawn with replacement and a per-prompt design
        follows its prompt.
    """
    grid_b, post_b = sampler_b
    grid_r, post_r = sampler_r
    P0 = post_b.shape[0]
    ks = np.arange(1, opts.k_max + 1)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(opts.sims):
        idx = np.arange(P0) if prompts == P0 else rng.integers(0, P0, prompts)
        pb = _draw_rates(rng, grid_b, post_b, idx)
        pr = _draw_rates(rng, grid_r, post_r, idx)
        n = np.broadcast_to(np.asarray(n_design), (P0,))[idx] if np.ndim(n_design) else \
            np.full(prompts, int(n_design))
        cb, cr = rng.binomial(n, pb), rng.binomial(n, pr)
        d = pass_at_k(n, cr, ks) - pass_at_k(n, cb, ks)  # (P, K)
        band = simultaneous_band(d, n_multipliers=opts.multipliers, alpha=opts.alpha,
                                 seed=int(rng.integers(2**31)))
        cls = classify_budgets(ks, band["lower"], band["upper"])
        ok = (opts.gain_at is None or opts.gain_at in cls["gain"]) and \
             (opts.loss_at is None or opts.loss_at in cls["loss"])
        hits += ok
    p = hits / opts.sims
    return {"power": p, "mc_se": float(np.sqrt(max(p * (1 - p), 1e-12) / opts.sims))}


def plan_design(n_base, c_base, n_rl, c_rl, opts: PlanOptions) -> dict:
    """Power of uniform and allocated designs at each candidate budget; the recommendation.

    Returns
    -------
    dict
        ``designs``: one row per candidate ``n`` with ``uniform`` and
        ``allocated`` power (and Monte Carlo s.e.), ``total_samples`` per model;
        ``recommended``: the smallest candidate whose uniform (or allocated)
        power reaches ``opts.power``, or None; the pilot's size and the claims.
    """
    nb, cb = check_counts(n_base, c_base)
    nr, cr = check_counts(n_rl, c_rl)
    if nb.shape != nr.shape:
        raise ValueError("the pilot's base and RL counts must be on the same prompts")
    P0 = nb.size
    prompts = opts.prompts or P0
    sb, sr = posterior_sampler(nb, cb), posterior_sampler(nr, cr)
    # Allocation from the pilot's posterior-mean rates (the pilot only allocates).
    mb, mr = sb[1] @ sb[0], sr[1] @ sr[0]  # (P0,)
    named = [k for k in (opts.gain_at, opts.loss_at) if k is not None]
    rows = []
    for j, n in enumerate(opts.budgets):
        uni = simulate_power(sb, sr, n, opts, seed=opts.seed * 1000 + 2 * j, prompts=prompts)
        alloc_n = allocation(mb, mr, named, n * P0, opts.k_max)
        alo = simulate_power(sb, sr, alloc_n, opts, seed=opts.seed * 1000 + 2 * j + 1,
                             prompts=prompts)
        rows.append({"n": int(n), "total_samples": int(n * prompts), "uniform": uni,
                     "allocated": alo, "allocated_n_range": [int(alloc_n.min()),
                                                             int(alloc_n.max())]})
    rec = None
    for row in rows:
        for design in ("uniform", "allocated"):
            if row[design]["power"] >= opts.power:
                rec = {"n": row["n"], "design": design, "power": row[design]["power"],
                       "mc_se": row[design]["mc_se"], "total_samples": row["total_samples"]}
                break
        if rec:
            break
    return {"pilot": {"prompts": P0, "n_base": int(nb.min()), "n_rl": int(nr.min())},
            "prompts": prompts, "claims": {"gain_at": opts.gain_at, "loss_at": opts.loss_at},
            "grid": [1, opts.k_max], "designs": rows, "recommended": rec,
            "allocation_by_prompt": allocation(mb, mr, named, rec["n"] * P0, opts.k_max).tolist()
            if rec and rec["design"] == "allocated" else None,
            "note": "power by simulation from the pilot's fitted success-rate distributions; "
                    "run compare with --ks 1-K on the stage-two samples only (the pilot only "
                    "allocates, which keeps the estimate unbiased)"}
