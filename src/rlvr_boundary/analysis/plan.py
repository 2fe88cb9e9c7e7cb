"""How many samples per prompt a comparison needs: power by simulation from a pilot.

Input: pilot counts of the base and the trained model on the same prompts
(small ``n``). Output: the samples per prompt at which the simultaneous band
of ``compare`` (over ``k = 1..K``, ``K`` the largest budget named) certifies
every claim asked for (a gain at ``gain_at``, a loss at ``loss_at``) with the
asked power, or the statement that no design up to :data:`MAX_SAMPLES` does.

The simulation model, and why:

- **Joint rates.** The pairs ``(p_base, p_rl)`` of the prompts are fitted by
  the NPMLE on a product grid (:func:`pilot_model`), so the simulated truths
  keep how the two models' rates move together: a loss at large ``k`` lives in
  prompts one model solves rarely and the other never, and fitting the two
  models separately, then drawing their rates independently, blurs exactly
  those prompts (it gave powers near 0 where the truth had 0.8).
- **The pilot's uncertainty.** Each simulated study draws its truth in two
  stages: a rate distribution refitted to a Bayesian bootstrap of the pilot's
  prompts (Dirichlet(1, ..., 1) weights; D. B. Rubin, "The Bayesian
  Bootstrap", Ann. Statist. 9(1), 1981), then every prompt's rate pair from
  its posterior under that refit, given its pilot counts (for a study of
  another size, its prompts are drawn from the pilot's with replacement). The
  power is thus an average over the truths the pilot leaves plausible (a
  Bayesian "assurance"), not the power at one plug-in estimate. The refits
  matter: the NPMLE is a spiky distribution, and posteriors under it alone
  spread the simulated effect far less than the pilot's own standard error
  does; over the refits the spread is about the pilot's (a little more: the
  refits also carry the sampling of prompts, which a study of the same
  prompts does not redo, so the power errs on the low side). A pilot that
  cannot tell a loss of 1 point from one of 4 gives a power between theirs;
  a larger pilot sharpens it.
- **The same band.** Counts at the design's samples per prompt, the unbiased
  pass@k, and :func:`rlvr_boundary.core.compare.simultaneous_band` with the
  options ``compare`` uses (its small-sample correction included).

Search: ``n = K, 2K, 4K, ...`` until the power is reached (then one step
between the last two, at their geometric mean) or :data:`MAX_SAMPLES`. The
power with the exact pass@k of every prompt (``n`` unlimited) bounds every
design from above: when it is below the asked power, no ``n`` reaches it
with these prompts and the plan says so. Every design is simulated on the
same truths (common random numbers), so powers of two designs differ by
their design, not by their draws; the recommended design's power is then
estimated again on fresh draws, so the stated power is not the lucky draw
that picked it.

Designs: uniform (every prompt gets ``n``) and allocated (the same total,
spread in proportion to each prompt's standard deviation of the pass@k
difference at the named budgets under the pilot's posterior means, never
fewer than ``K`` so that pass@K stays exactly estimable: the Neyman
allocation of stratified sampling, J. Neyman, "On the Two Different Aspects
of the Representative Method", JRSS 97(4), 1934). Neyman allocation minimises
the variance of a mean at one budget; a simultaneous band over many budgets,
with a gain at one and a loss at another, can lose power to it. So the
allocated design is offered only where its simulated power, on the same
truths, is at least the uniform one's.

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
from rlvr_boundary.core.extrapolate import _log_binom, npmle_weights
from rlvr_boundary.core.passk import check_counts, pass_at_k

__all__ = ["PlanOptions", "pilot_model", "simulate_power", "allocation", "plan_design",
           "estimate_cost", "MAX_BUDGET", "MAX_PROMPTS", "MAX_SIMS", "MAX_SAMPLES",
           "MAX_MULTIPLIERS", "MAX_PILOT_PROMPTS", "MAX_PILOT_CELLS", "MAX_CELLS",
           "MAX_SECONDS"]

MAX_BUDGET = 4096
"""Largest budget k a claim may name (``--gain-at``, ``--loss-at``): the band spans 1..k."""
MAX_PROMPTS = 100_000
"""Most prompts in the planned study (``--prompts``)."""
MAX_SIMS = 20_000
"""Most simulated studies per design (``--sims``)."""
MAX_MULTIPLIERS = 20_000
"""Most Gaussian multipliers per simulated band (``multipliers``)."""
MAX_SAMPLES = 1 << 16
"""Largest samples per prompt the search considers (and ``--budgets`` may name)."""
MAX_PILOT_PROMPTS = 1_000_000
"""Most prompts in the pilot (its fit needs only the distinct count pairs, but reading does not)."""
MAX_PILOT_CELLS = 30_000_000
"""Most entries of the pilot's joint likelihood (distinct count pairs x 41 x 41 grid rates)."""
MAX_CELLS = 20_000_000
"""Most pass@k entries (prompts x budgets) in one simulated study: about 160 MB per array."""
MAX_SECONDS = 1800.0
"""Longest estimated run (:func:`estimate_cost`) plan starts; beyond it, it refuses with the estimate."""
_CELLS_PER_SECOND = 2.0e7
"""Pass@k entries simulated per second on one core of the reference machine (measured, rounded down)."""
_BAND_SECONDS = 2.0e-8
"""Seconds per multiplier and budget of one band (measured, rounded up)."""


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
    """Candidate samples per prompt; default a search K, 2K, 4K, ... up to MAX_SAMPLES."""
    prompts: int | None = None
    """Prompts in the planned study (default: the pilot's); drawn from the pilot's prompts."""
    sims: int = 400
    """Simulated studies per design (Monte Carlo s.e. of a power near 0.8: 0.02 at 400)."""
    multipliers: int = 500
    """Gaussian multipliers of each simulated band."""
    alpha: float = 0.05
    """1 - confidence level of the band."""
    seed: int = 0
    """Seed of the simulations."""
    pilot_draws: int = 20
    """Bayesian-bootstrap refits of the pilot's rate distribution the studies are spread over."""

    def __post_init__(self) -> None:
        from rlvr_boundary.errors import InputError

        if self.gain_at is None and self.loss_at is None:
            raise InputError("name a claim to certify: --gain-at K and/or --loss-at K")
        for name in ("gain_at", "loss_at"):
            v = getattr(self, name)
            if v is not None and not 1 <= v <= MAX_BUDGET:
                raise InputError(f"--{name.replace('_', '-')} must be between 1 and "
                                 f"{MAX_BUDGET:,} (the band spans every budget up to it)")
        if not 0 < self.power < 1:
            raise InputError("--power must lie in (0, 1)")
        if not 0 < self.alpha < 1:
            raise InputError("--alpha must lie in (0, 1)")
        if not 10 <= self.sims <= MAX_SIMS:
            raise InputError(f"--sims must be between 10 and {MAX_SIMS:,}")
        if not 50 <= self.multipliers <= MAX_MULTIPLIERS:
            raise InputError(f"multipliers must be between 50 and {MAX_MULTIPLIERS:,}")
        if not 1 <= self.pilot_draws <= 200:
            raise InputError("pilot_draws must be between 1 and 200")
        if self.prompts is not None and not 2 <= self.prompts <= MAX_PROMPTS:
            raise InputError(f"--prompts must be between 2 and {MAX_PROMPTS:,}")
        self.budgets = tuple(sorted({int(b) for b in self.budgets}))
        if self.budgets and self.budgets[0] < self.k_max:
            raise InputError(f"every candidate n must be >= the largest named budget {self.k_max}")
        if self.budgets and self.budgets[-1] > MAX_SAMPLES:
            raise InputError(f"candidate n above {MAX_SAMPLES:,} samples per prompt are not "
                             "simulated")
        if len(self.budgets) > 32:
            raise InputError("at most 32 candidate budgets")

    @property
    def k_max(self) -> int:
        return max(k for k in (self.gain_at, self.loss_at) if k is not None)


def estimate_cost(opts: PlanOptions, prompts: int) -> dict:
    """Peak memory and run time of a plan, estimated before it starts.

    Returns
    -------
    dict
        ``cells`` (pass@k entries of one simulated study), ``memory_mb`` (its
        peak arrays), ``seconds`` (every design simulated ``sims`` times, the
        search at its longest), ``designs``.

    Notes
    -----
    A study costs ``prompts * K`` pass@k entries plus a band of ``multipliers
    * K`` (after a ``K x K`` eigendecomposition); the search simulates at most
    ``log2(MAX_SAMPLES / K) + 3`` sample sizes (or the given budgets), each
    uniform and allocated, plus the unlimited-n bound and the confirmation.
    """
    K = opts.k_max
    cells = prompts * K
    n_sizes = len(opts.budgets) if opts.budgets else int(np.log2(MAX_SAMPLES / K)) + 2
    designs = 2 * n_sizes + 2
    per_study = cells / _CELLS_PER_SECOND + opts.multipliers * K * _BAND_SECONDS + K**3 * 1e-9
    return {"cells": int(cells), "memory_mb": float(cells * 8 * 6 / 2**20),
            "seconds": float(designs * opts.sims * per_study), "designs": designs}


def _check_cost(opts: PlanOptions, prompts: int) -> None:
    from rlvr_boundary.errors import InputError

    cost = estimate_cost(opts, prompts)
    if cost["cells"] > MAX_CELLS:
        raise InputError(f"one simulated study would hold {cost['cells']:,} pass@k values "
                         f"({prompts:,} prompts x {opts.k_max:,} budgets, about "
                         f"{cost['memory_mb']:,.0f} MB); the limit is {MAX_CELLS:,}: plan fewer "
                         "--prompts or a smaller budget")
    if cost["seconds"] > MAX_SECONDS:
        raise InputError(f"this plan would take about {cost['seconds']:,.0f} s "
                         f"({cost['designs']} designs x {opts.sims:,} simulated studies of "
                         f"{prompts:,} prompts x {opts.k_max:,} budgets); the limit is "
                         f"{MAX_SECONDS:,.0f} s: lower --sims, --prompts or the budget, or give "
                         "--budgets")


def _pilot_grid(size: int = 41) -> np.ndarray:
    """``(L,)`` rates of each axis of the joint grid: 0, 1 and a logistic grid between."""
    from scipy.special import expit

    return np.concatenate([[0.0], expit(np.linspace(-9.0, 9.0, size - 2)), [1.0]])


def pilot_model(nb, cb, nr, cr, *, draws: int = 20, seed: int = 0) -> dict:
    """The pilot's joint rate distribution, and ``draws`` Bayesian-bootstrap refits of it.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` pilot counts of base and trained model on the same prompts.
    draws
        Refits, each to the pilot's prompts weighted by Dirichlet(1, ..., 1).
    seed
        Seed of the Dirichlet weights.

    Returns
    -------
    dict
        ``grid`` ``(L,)`` (each axis); ``weights`` ``(L, L)``: the NPMLE of
        the pairs (``[i, j]`` for base rate ``grid[i]`` and trained rate
        ``grid[j]``); ``draws`` ``(R, L, L)`` the refits; ``lik_base``,
        ``lik_rl`` ``(U, L)`` likelihood of each distinct pilot observation
        (rows scaled), ``obs`` ``(P,)`` the observation of each prompt;
        ``posterior_mean`` ``(P, 2)`` under the full fit.

    Notes
    -----
    The NPMLE (:func:`rlvr_boundary.core.extrapolate.npmle_weights`) on the
    product of two 41-point grids (0, 1 and a logistic grid from 1.2e-4 to
    1 - 1.2e-4), with the likelihood
    :math:`\\mathrm{Bin}(c_B; n_B, p_B)\\,\\mathrm{Bin}(c_R; n_R, p_R)` of each
    prompt: the two models' rates are a pair per prompt, so what one model's
    counts say about a prompt informs the other's through the fitted joint law.
    """
    from rlvr_boundary.errors import InputError

    nb, cb = check_counts(nb, cb)
    nr, cr = check_counts(nr, cr)
    grid = _pilot_grid()
    L = grid.size
    keys, inv = np.unique(np.stack([nb, cb, nr, cr], axis=1), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    U = keys.shape[0]
    if U * L * L > MAX_PILOT_CELLS:
        raise InputError(f"the pilot has {U:,} distinct count pairs, too many for the joint fit "
                         f"(at most {MAX_PILOT_CELLS // (L * L):,}): plan from a random subset "
                         "of its prompts")
    lb = _log_binom(keys[:, 0], keys[:, 1], grid)  # (U, L)
    lr = _log_binom(keys[:, 2], keys[:, 3], grid)  # (U, L)
    lb = np.exp(lb - lb.max(axis=1, keepdims=True))
    lr = np.exp(lr - lr.max(axis=1, keepdims=True))
    lik = (lb[:, :, None] * lr[:, None, :]).reshape(U, L * L)  # (U, L*L)
    mult = np.bincount(inv, minlength=U).astype(float)
    full = npmle_weights(lik, mult)["weights"]
    rng = np.random.default_rng([seed, 7])
    refits = np.empty((draws, L * L))
    for r in range(draws):
        wts = np.bincount(inv, weights=rng.exponential(size=nb.size), minlength=U)
        refits[r] = npmle_weights(lik, wts * (nb.size / wts.sum()), init=full)["weights"]
    G = full.reshape(L, L)
    marg_b = lb * (lr @ G.T)  # (U, L): p(base rate i | obs) up to a constant
    marg_r = lr * (lb @ G)  # (U, L)
    mean = np.stack([(marg_b @ grid) / marg_b.sum(axis=1), (marg_r @ grid) / marg_r.sum(axis=1)],
                    axis=1)  # (U, 2)
    return {"grid": grid, "weights": G, "draws": refits.reshape(draws, L, L), "lik_base": lb, "lik_rl": lr, "obs": inv, "posterior_mean": mean[inv]}


def _truths(model: dict, sims: int, prompts: int, seed: int):
    """Yield ``(study, idx, p_base, p_rl)``: each study's prompts and true rate pairs.

    Study ``s`` uses refit ``s mod R``; its prompts are the pilot's (or, for a
    study of another size, drawn with replacement from them) and each
    prompt's rate pair is drawn from its posterior under that refit: the base
    rate from its marginal, then the trained model's given it. The same
    ``(seed, study)`` always gives the same truth, so every design is
    simulated on the same truths.
    """
    grid, lb, lr, obs = model["grid"], model["lik_base"], model["lik_rl"], model["obs"]
    draws = model["draws"]
    L, P0, R = grid.size, obs.size, draws.shape[0]
    for r in range(min(R, sims)):
        G = draws[r]  # (L, L)
        marg = lb * (lr @ G.T)  # (U, L): the base rate's posterior, up to a constant
        cdf_b = np.cumsum(marg, axis=1)
        cdf_b /= cdf_b[:, -1:]
        for s in range(r, sims, R):
            rng = np.random.default_rng([seed, 11, s])
            idx = np.arange(P0) if prompts == P0 else rng.integers(0, P0, prompts)
            o = obs[idx]
            i = np.minimum((cdf_b[o] < rng.random(idx.size)[:, None]).sum(axis=1), L - 1)
            cond = G[i] * lr[o]  # (P, L): the trained model's rate given the base's
            cdf_r = np.cumsum(cond, axis=1)
            j = np.minimum((cdf_r < rng.random(idx.size)[:, None] * cdf_r[:, -1:]).sum(axis=1),
                           L - 1)
            yield s, idx, grid[i], grid[j]


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


def _certifies(d, ks, opts: PlanOptions, seed: int) -> bool:
    band = simultaneous_band(d, n_multipliers=opts.multipliers, alpha=opts.alpha, seed=seed)
    cls = classify_budgets(ks, band["lower"], band["upper"])
    return bool((opts.gain_at is None or opts.gain_at in cls["gain"])
                and (opts.loss_at is None or opts.loss_at in cls["loss"]))


def simulate_power(model: dict, n_design, opts: PlanOptions, *, seed: int, prompts: int) -> dict:
    """Share of simulated studies that certify the claims, with its Monte Carlo s.e.

    Parameters
    ----------
    model
        :func:`pilot_model`.
    n_design
        Samples per prompt: a scalar (uniform), a ``(P0,)`` allocation over the
        pilot's prompts (a drawn prompt keeps its allocation), or None: the
        exact pass@k of every prompt (unlimited samples; the bound on every
        design).
    seed
        Seed of the truths (:func:`_truths`); the counts and multipliers of
        study ``s`` come from ``(seed, s)`` too.
    prompts
        Prompts per study.
    """
    ks = np.arange(1, opts.k_max + 1)
    hits = 0
    for s, idx, pb, pr in _truths(model, opts.sims, prompts, seed):
        rng = np.random.default_rng([seed, 13, s])
        if n_design is None:
            with np.errstate(divide="ignore"):  # q = 0 (rate 1): q^k = 0
                d = (np.exp(np.multiply.outer(np.log1p(-pb), ks))
                     - np.exp(np.multiply.outer(np.log1p(-pr), ks)))  # (P, K)
        else:
            n = (np.full(idx.size, int(n_design)) if np.ndim(n_design) == 0
                 else np.asarray(n_design)[idx])
            d = pass_at_k(n, rng.binomial(n, pr), ks) - pass_at_k(n, rng.binomial(n, pb), ks)
        hits += _certifies(d, ks, opts, int(rng.integers(2**31)))
    p = hits / opts.sims
    return {"power": p, "mc_se": float(np.sqrt(max(p * (1 - p), 0.0) / opts.sims))}


def plan_design(n_base, c_base, n_rl, c_rl, opts: PlanOptions) -> dict:
    """The samples per prompt that certify the claims with the asked power, or why none does.

    Returns
    -------
    dict
        ``designs``: one row per simulated ``n`` with ``uniform`` and
        ``allocated`` power (and Monte Carlo s.e.), ``allocated_offered``,
        ``total_samples``, ``allocated_n_range``; ``unlimited``: the power with
        exact per-prompt pass@k (the bound on every ``n``); ``recommended``: the
        smallest simulated ``n`` whose uniform (or, when offered and better,
        allocated) power reaches ``opts.power``, with the power re-estimated on
        fresh truths (``power``, ``mc_se``) and the search's own
        (``search_power``); None when no ``n`` up to ``searched_up_to`` does;
        ``reachable``: False when even unlimited samples fall short;
        ``cost``: :func:`estimate_cost`; the pilot's size and the claims.
    """
    from rlvr_boundary.errors import InputError

    nb, cb = check_counts(n_base, c_base)
    nr, cr = check_counts(n_rl, c_rl)
    if nb.shape != nr.shape:
        raise ValueError("the pilot's base and RL counts must be on the same prompts")
    P0 = nb.size
    if P0 > MAX_PILOT_PROMPTS:
        raise InputError(f"the pilot has {P0:,} prompts; plan reads at most "
                         f"{MAX_PILOT_PROMPTS:,} (a random subset plans as well)")
    prompts = opts.prompts or P0
    _check_cost(opts, prompts)
    model = pilot_model(nb, cb, nr, cr, draws=opts.pilot_draws, seed=opts.seed)
    mb, mr = model["posterior_mean"][:, 0], model["posterior_mean"][:, 1]  # (P0,)
    named = [k for k in (opts.gain_at, opts.loss_at) if k is not None]
    seed = opts.seed * 1000
    unlimited = simulate_power(model, None, opts, seed=seed, prompts=prompts)
    rows: list = []

    def evaluate(n: int) -> dict:
        uni = simulate_power(model, n, opts, seed=seed, prompts=prompts)
        alloc_n = allocation(mb, mr, named, n * P0, opts.k_max)
        alo = simulate_power(model, alloc_n, opts, seed=seed, prompts=prompts)
        row = {"n": int(n), "total_samples": int(n * prompts), "uniform": uni, "allocated": alo,
               "allocated_offered": alo["power"] >= uni["power"] and bool(np.ptp(alloc_n) > 0),
               "allocated_n_range": [int(alloc_n.min()), int(alloc_n.max())]}
        rows.append(row)
        return row

    def reaches(row: dict) -> str | None:
        if row["uniform"]["power"] >= opts.power:
            if row["allocated_offered"] and row["allocated"]["power"] > row["uniform"]["power"]:
                return "allocated"
            return "uniform"
        if row["allocated_offered"] and row["allocated"]["power"] >= opts.power:
            return "allocated"
        return None

    found = None
    if opts.budgets:
        for n in opts.budgets:
            row = evaluate(n)
            if found is None and reaches(row):
                found = row
        searched = opts.budgets[-1]
    else:
        n, prev = opts.k_max, None
        while n <= MAX_SAMPLES and unlimited["power"] >= opts.power:
            row = evaluate(n)
            if reaches(row):
                found = row
                if prev is not None:  # one step back, at the geometric mean
                    mid = int(round(np.sqrt(prev * n)))
                    if prev < mid < n:
                        row_mid = evaluate(mid)
                        if reaches(row_mid):
                            found = row_mid
                break
            prev, n = n, 2 * n
        searched = min(n, MAX_SAMPLES) if found is None else found["n"]
        rows.sort(key=lambda r: r["n"])
    rec = None
    if found is not None:
        design = reaches(found)
        n_design = (found["n"] if design == "uniform"
                    else allocation(mb, mr, named, found["n"] * P0, opts.k_max))
        confirm = simulate_power(model, n_design, opts, seed=seed + 1, prompts=prompts)
        rec = {"n": found["n"], "design": design, "power": confirm["power"],
               "mc_se": confirm["mc_se"], "search_power": found[design]["power"],
               "total_samples": found["total_samples"]}
    return {"pilot": {"prompts": P0, "n_base": int(nb.min()), "n_rl": int(nr.min())},
            "prompts": prompts, "claims": {"gain_at": opts.gain_at, "loss_at": opts.loss_at},
            "grid": [1, opts.k_max], "designs": rows, "recommended": rec,
            "unlimited": unlimited, "reachable": unlimited["power"] >= opts.power,
            "searched_up_to": int(searched), "cost": estimate_cost(opts, prompts),
            "allocation_by_prompt": allocation(mb, mr, named, rec["n"] * P0, opts.k_max).tolist()
            if rec and rec["design"] == "allocated" else None,
            "model": "joint NPMLE of the pilot's rate pairs; each study's truth drawn from a "
                     "Bayesian-bootstrap refit and each prompt's posterior under it",
            "note": "power by simulation from the pilot; run compare with --ks 1-K on the "
                    "stage-two samples only (the pilot only allocates, which keeps the "
                    "estimate unbiased)"}
