"""Paired comparison of an RL checkpoint R against its base B on the same prompts.

Everything here takes per-prompt pass@k rows (``(P, K)`` arrays from
:func:`rlvr_boundary.core.passk.pass_at_k`) or per-prompt success rates and
returns arrays or small dicts; prompts are the sampling unit throughout.

Definitions:

- ``D(k) = mean_i [pass@k_R,i - pass@k_B,i]``.
- crossings: sign changes of D over the budget grid, zeros skipped; the
  continuous crossing interpolates linearly in ``log k`` between the two grid
  points that bracket a sign change.
- ``k*``: the first budget with ``D(k) < 0``. The papers define it for runs with
  ``D(1) > 0``; we report it whenever D goes negative and flag ``gain_at_1``.
- price: ``max_k max(0, -D(k))`` and where it occurs.
- ``Delta_SE = pass@K_B - pass@1_R`` (Yue et al. use K = 256).
- crossing bound: the generalized Descartes rule of signs on the exponential
  sum ``D(k) = sum_j a_j q_j^k`` built from success rates.
- uncertainty: a Gaussian-multiplier sup-t simultaneous band over the grid, and
  paired (prompt) bootstrap percentile intervals for ``k*``, price and Delta_SE.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "paired_difference",
    "sign_changes",
    "grid_crossings",
    "first_negative",
    "price",
    "delta_se",
    "crossing_bound",
    "cluster_influence",
    "run_influence",
    "satterthwaite_df",
    "kurtosis_df",
    "min_prompts",
    "SMALL_SAMPLE_PROMPTS",
    "simultaneous_band",
    "classify_budgets",
    "paired_bootstrap",
]


def paired_difference(pass_rl, pass_base, *, axis: int = 0) -> np.ndarray:
    """``D(k)``: mean over prompts of per-prompt pass@k differences, R minus B.

    Parameters
    ----------
    pass_rl, pass_base
        Per-prompt pass@k of the same prompts, e.g. ``(P, K)``.
    axis
        The prompt axis.
    """
    a, b = np.asarray(pass_rl, float), np.asarray(pass_base, float)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}; align the prompts first")
    return np.mean(a - b, axis=axis)


def sign_changes(values, *, axis: int = -1) -> np.ndarray | int:
    """Number of sign changes of a sequence, zeros skipped (Descartes' V).

    Parameters
    ----------
    values
        Array; sign changes are counted along ``axis``.

    Returns
    -------
    int or numpy.ndarray
        Count for each 1-D slice along ``axis``.
    """
    v = np.moveaxis(np.asarray(values, float), axis, -1)
    flat = v.reshape(-1, v.shape[-1]) if v.ndim else v.reshape(1, 1)
    out = np.empty(flat.shape[0], dtype=np.int64)
    for i, row in enumerate(flat):
        s = np.sign(row[row != 0])
        out[i] = int(np.count_nonzero(s[1:] != s[:-1]))
    if v.ndim <= 1:
        return int(out[0])
    return out.reshape(v.shape[:-1])


def grid_crossings(ks, diff) -> list[dict]:
    """Sign changes of ``D`` over the budget grid, with a continuous-k estimate each.

    Parameters
    ----------
    ks
        ``(K,)`` increasing budgets.
    diff
        ``(K,)`` ``D(k)`` on those budgets.

    Returns
    -------
    list of dict
        One entry per sign change: ``k_before`` and ``k_after`` (the bracketing
        grid budgets with nonzero D), ``direction`` ("gain_to_loss" or
        "loss_to_gain"), and ``k_continuous``, the zero of the straight line
        through ``(log k, D)`` at those two budgets.

    Notes
    -----
    Budgets where D is exactly 0 are skipped (a touch is not a crossing); a
    sign change across them is bracketed by the nonzero neighbours.
    """
    ks = np.asarray(ks, float)
    d = np.asarray(diff, float)
    nz = np.flatnonzero(d != 0)
    out = []
    for a, b in zip(nz[:-1], nz[1:]):
        if np.sign(d[a]) == np.sign(d[b]):
            continue
        la, lb = np.log(ks[a]), np.log(ks[b])
        t = d[a] / (d[a] - d[b])  # in (0, 1)
        out.append({
            "k_before": int(ks[a]) if ks[a].is_integer() else float(ks[a]),
            "k_after": int(ks[b]) if ks[b].is_integer() else float(ks[b]),
            "direction": "gain_to_loss" if d[a] > 0 else "loss_to_gain",
            "k_continuous": float(np.exp(la + t * (lb - la))),
        })
    return out


def first_negative(ks, diff, *, axis: int = -1):
    """First budget with ``D(k) < 0`` (``k*``), or None if D never goes negative.

    Works on a batch: ``diff`` of shape ``(..., K)`` gives an array of budgets
    with ``np.nan`` where there is none.
    """
    ks = np.asarray(ks)
    d = np.moveaxis(np.asarray(diff, float), axis, -1)
    neg = d < 0
    has = neg.any(axis=-1)
    idx = np.argmax(neg, axis=-1)
    if d.ndim == 1:
        return int(ks[idx]) if has else None
    return np.where(has, ks[idx].astype(float), np.nan)


def price(ks, diff, *, axis: int = -1):
    """The pass@k price: ``max_k max(0, -D(k))`` and the budget where it occurs.

    Returns
    -------
    tuple
        ``(price, k)``; ``k`` is None when the price is 0 (D never negative).
        Batched input ``(..., K)`` gives arrays (``k`` NaN where price is 0).
    """
    ks = np.asarray(ks)
    d = np.moveaxis(np.asarray(diff, float), axis, -1)
    loss = np.maximum(0.0, -d)
    idx = np.argmax(loss, axis=-1)
    value = np.take_along_axis(loss, idx[..., None], axis=-1)[..., 0]
    if d.ndim == 1:
        return float(value), (int(ks[idx]) if value > 0 else None)
    return value, np.where(value > 0, ks[idx].astype(float), np.nan)


def delta_se(pass_base_at_K, pass_rl_at_1) -> float:
    """Sampling-efficiency gap ``Delta_SE = pass@K_B - pass@1_R``.

    References
    ----------
    Yue et al., "Does Reinforcement Learning Really Incentivize Reasoning
    Capacity in LLMs Beyond the Base Model?", arXiv 2504.13837 (K = 256).
    """
    return np.asarray(pass_base_at_K, float) - np.asarray(pass_rl_at_1, float)


def crossing_bound(p_base, p_rl, *, decimals: int | None = None) -> dict:
    """Upper bound on the number of crossings of pass@k curves built from rates.

    Parameters
    ----------
    p_base, p_rl
        ``(P,)`` per-prompt success rates of B and R on the same prompts (true
        rates, or plug-in ``c/n``).
    decimals
        If given, rates are rounded to this many decimals before equal ``q`` are
        merged (for rates typed from a paper). By default equality is exact,
        which is right for plug-in rates: ``c/n`` is correctly rounded, so equal
        fractions give identical floats.

    Returns
    -------
    dict
        ``V`` (sign changes of the coefficient sequence: the paper's bound),
        ``bound`` (the sharper bound for k > 0), ``zero_at_k0`` (whether the
        coefficients of the ``q > 0`` terms sum to 0), and the exponential sum
        itself as ``q`` and ``a`` lists.

    Notes
    -----
    With ``q = 1 - p``, :math:`D(k) = \\frac1P\\sum_i (q_{B,i}^k - q_{R,i}^k)
    = \\sum_j a_j q_j^k`, where the ``q_j`` are the distinct values and
    :math:`a_j = (\\#\\{i: q_{B,i} = q_j\\} - \\#\\{i: q_{R,i} = q_j\\})/P`.
    Terms with ``q = 0`` vanish for k >= 1 and are dropped. Writing
    :math:`q^k = e^{k \\ln q}`, the generalized Descartes rule (Laguerre) bounds
    the number of real zeros of this exponential sum, counted with
    multiplicity, by ``V``, the number of sign changes of ``(a_j)`` ordered by
    ``q``. If the remaining :math:`a_j` sum to 0 then k = 0 is one of those
    zeros, so at most ``V - 1`` lie in k > 0.

    This bounds the curves from *rates*. The unbiased finite-n curve is not an
    exponential sum; report its observed crossings beside this bound.

    References
    ----------
    G. Pólya and G. Szegő, Problems and Theorems in Analysis II, Part V, Problem 80
    (Laguerre's rule of signs for exponential sums); "No Free Lunch in RLVR"
    (crossing bound).
    """
    pb, pr = np.asarray(p_base, float), np.asarray(p_rl, float)
    if pb.shape != pr.shape or pb.ndim != 1 or pb.size == 0:
        raise ValueError("p_base and p_rl must be 1-D, non-empty and of equal length")
    if np.any((pb < 0) | (pb > 1) | (pr < 0) | (pr > 1)) or not (
            np.all(np.isfinite(pb)) and np.all(np.isfinite(pr))):
        raise ValueError("success rates must lie in [0, 1]")
    qb, qr = 1.0 - pb, 1.0 - pr
    if decimals is not None:
        qb, qr = np.round(qb, decimals), np.round(qr, decimals)
    P = pb.size
    q_all = np.concatenate([qb, qr])
    sign = np.concatenate([np.ones(P), -np.ones(P)])
    uq, inv = np.unique(q_all, return_inverse=True)  # ascending q
    a = np.bincount(inv, weights=sign, minlength=uq.size) / P
    keep = (uq > 0) & (a != 0)
    q_kept, a_kept = uq[keep], a[keep]
    V = sign_changes(a_kept) if a_kept.size else 0
    # Sum over the q > 0 terms is exactly an integer count difference over P.
    counts_sum = np.bincount(inv, weights=sign, minlength=uq.size)[uq > 0].sum()
    zero_at_0 = bool(round(counts_sum) == 0)
    bound = max(V - 1, 0) if zero_at_0 else V
    return {"V": int(V), "bound": int(bound), "zero_at_k0": zero_at_0,
            "q": q_kept.tolist(), "a": a_kept.tolist()}


def cluster_influence(contrib, groups=None, *, axis: int = 0):
    """Influence rows of a mean curve, one per cluster of prompts.

    Parameters
    ----------
    contrib
        Per-prompt contributions, ``(P, K)`` with prompts on ``axis``.
    groups
        ``(P,)`` cluster labels (any hashable values numpy can sort), or None
        for independent prompts (every prompt its own cluster).

    Returns
    -------
    numpy.ndarray
        ``(G, K)`` rows ``h_g`` whose Gram matrix ``H^T H`` is the
        cluster-robust covariance estimate of the mean curve.

    Notes
    -----
    With :math:`e_{ik} = d_{ik} - \\bar d_k` and :math:`S_{gk} = \\sum_{i \\in g}
    e_{ik}`, :math:`h_g = S_g \\sqrt{G / (G - 1)} / P`, the usual
    cluster-robust ("sandwich") variance of a mean with the small-sample factor
    :math:`G/(G-1)` (Cameron and Miller, "A Practitioner's Guide to
    Cluster-Robust Inference", J. Human Resources 50(2), 2015). With one prompt
    per cluster, :math:`\\sum_g h_{gk}^2 = s_k^2 / P`, the independent-prompt
    variance (sample variance with ddof 1), so the independent band is the
    special case ``groups = arange(P)``.
    """
    d = np.moveaxis(np.asarray(contrib, float), axis, 0)
    if d.ndim != 2:
        raise ValueError("contrib must be 2-D (prompts, budgets)")
    P = d.shape[0]
    centred = d - d.mean(axis=0)  # (P, K)
    if groups is None:
        if P < 2:
            raise ValueError("a band needs at least 2 prompts")
        return centred / np.sqrt(P * (P - 1.0))
    g = np.asarray(groups)
    if g.shape != (P,):
        raise ValueError(f"groups must have one label per prompt ({P}), got shape {g.shape}")
    _, inv = np.unique(g, return_inverse=True)
    G = int(inv.max()) + 1
    if G < 2:
        raise ValueError("a clustered band needs at least 2 clusters")
    sums = np.zeros((G, d.shape[1]))  # (G, K)
    np.add.at(sums, inv, centred)
    return sums * (np.sqrt(G / (G - 1.0)) / P)


def run_influence(per_run_rl, per_run_base, *, axis: int = 1, groups=None):
    """Influence rows for a difference of curves averaged over several runs.

    Parameters
    ----------
    per_run_rl, per_run_base
        ``(R, P, K)`` and ``(R', P, K)`` per-run, per-prompt pass@k of the trained
        model and of the base on the same prompts (``axis`` is the prompt axis;
        runs come first). A model evaluated once has ``R = 1``.
    groups
        ``(P,)`` cluster labels of the prompts, or None (independent prompts):
        the prompt rows are then summed per cluster as in
        :func:`cluster_influence`.

    Returns
    -------
    mean : numpy.ndarray
        ``(K,)`` ``D(k) = mean_r mean_i pass_R - mean_r' mean_i pass_B``.
    H : numpy.ndarray
        ``(P + R + R', K)`` influence rows (prompt or cluster rows, then run rows of each
        model with two or more runs), whose Gram matrix estimates the covariance
        of ``D`` over both new prompts and new runs.
    df : numpy.ndarray
        ``(K,)`` Satterthwaite degrees of freedom of the variance estimate
        (:func:`satterthwaite_df`), for the small-sample correction of the band.

    Notes
    -----
    Prompts and runs are crossed random factors. With
    :math:`a_i = \\bar d_{i\\cdot} - D` the prompt effects (per-prompt difference
    of run-averaged curves) and :math:`b_r = \\bar p_{r\\cdot} - \\bar p` the
    run effects of each model, the variance of ``D`` is estimated by
    :math:`\\sum_i a_i^2 / (P(P-1)) + \\sum_r b^2_{R,r} / (R(R-1)) +
    \\sum_{r'} b^2_{B,r'} / (R'(R'-1))`: the two-way random-effects (pigeonhole)
    variance of a crossed mean without the interaction term (Owen, "The
    pigeonhole bootstrap", Annals of Applied Statistics 1(2), 2007; Cameron,
    Gelbach and Miller, "Robust Inference With Multiway Clustering", JBES 29(2),
    2011). The run rows carry each run's sampling noise a second time, so the
    estimate errs on the wide side. Multipliers are drawn per prompt and per run.
    A model with one run contributes no run rows: its run-to-run variance is
    not identified and is taken as zero.
    """
    r_ = np.moveaxis(np.asarray(per_run_rl, float), axis, 1)
    b_ = np.moveaxis(np.asarray(per_run_base, float), axis, 1)
    if r_.ndim != 3 or b_.ndim != 3 or r_.shape[1:] != b_.shape[1:]:
        raise ValueError("per-run curves must be (runs, prompts, budgets) on the same prompts")
    P = r_.shape[1]
    if P < 2:
        raise ValueError("a band needs at least 2 prompts")
    prompt_d = r_.mean(axis=0) - b_.mean(axis=0)  # (P, K)
    mean = prompt_d.mean(axis=0)  # (K,)
    rows = [cluster_influence(prompt_d, groups)]
    dfs = [rows[0].shape[0] - 1.0]
    for curves in (r_, b_):
        R = curves.shape[0]
        if R >= 2:
            run_means = curves.mean(axis=1)  # (R, K)
            rows.append((run_means - run_means.mean(axis=0)) / np.sqrt(R * (R - 1.0)))
            dfs.append(R - 1.0)
    return mean, np.concatenate(rows, axis=0), satterthwaite_df(rows, dfs)


def satterthwaite_df(blocks, dfs) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of variance components, per budget.

    Parameters
    ----------
    blocks
        Influence-row blocks ``(M_j, K)``; component ``j`` estimates the variance
        :math:`v_{jk} = \\sum_m h_{mk}^2` with ``dfs[j]`` degrees of freedom.
    dfs
        Degrees of freedom of each component (units minus one).

    Returns
    -------
    numpy.ndarray
        ``(K,)`` :math:`(\\sum_j v_{jk})^2 / \\sum_j v_{jk}^2 / \\nu_j` (inf where
        the variance is 0).

    References
    ----------
    F. E. Satterthwaite, "An Approximate Distribution of Estimates of Variance
    Components", Biometrics Bulletin 2(6), 1946.
    """
    v = np.stack([np.einsum("mk,mk->k", h, h) for h in blocks])  # (J, K)
    nu = np.asarray(dfs, float)[:, None]  # (J, 1)
    num, den = v.sum(axis=0) ** 2, (v**2 / nu).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


#: Below this many independent prompts the plain band's critical values move to the
#: Student-t scale with kurtosis-matched degrees of freedom (:func:`kurtosis_df`): in the
#: calibration study (docs/statistics.md) the Gaussian band under-covers at 50 prompts and
#: holds its level from about 200 prompts on, where the two agree.
SMALL_SAMPLE_PROMPTS = 200


def min_prompts(alpha: float) -> int:
    """Fewest independent prompts with which any band can support a gain or loss at ``alpha``.

    Notes
    -----
    With ``P`` prompts the most extreme outcome of an exact sign-flip test of
    "no difference" (every per-prompt difference of one sign) has two-sided
    p-value :math:`2^{1-P}`; below :math:`P = 1 + \\log_2(1/\\alpha)` even that
    does not reach level ``alpha`` (6 prompts at 0.05), so any verdict would
    rest on the normal approximation alone. The band refuses to support one.
    """
    return int(np.ceil(1.0 + np.log2(1.0 / alpha) - 1e-12))


def kurtosis_df(contrib, *, axis: int = 0) -> np.ndarray:
    """Degrees of freedom of each budget's variance estimate, matched to its kurtosis.

    Parameters
    ----------
    contrib
        Per-prompt contributions, ``(P, K)`` with prompts on ``axis``.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` :math:`\\nu_k = 2 / (2/(P-1) + \\max(\\hat\\kappa_k, 0)/P)`, with
        :math:`\\hat\\kappa_k = m_4 / m_2^2 - 3` the sample excess kurtosis of the
        budget's contributions (``P - 1`` where they have no variance).

    Notes
    -----
    The sample variance of ``P`` draws with excess kurtosis :math:`\\kappa` has
    :math:`\\mathrm{Var}(s^2)/\\sigma^4 = 2/(P-1) + \\kappa/P`; a scaled
    :math:`\\chi^2_\\nu/\\nu` with the same first two moments has
    :math:`2/\\nu` there, which gives :math:`\\nu` (the moment matching of
    G. E. P. Box, "Non-normality and tests on variances", Biometrika 40(3/4),
    1953; F. E. Satterthwaite, Biometrics Bulletin 2(6), 1946). Normal data
    keep :math:`P - 1`. Per-prompt differences of pass@k at large ``k`` are
    mostly 0 with a few prompts near -1 or +1: a kurtosis of 15-20, so 50
    prompts carry about 5 degrees of freedom of variance information there.
    """
    d = np.moveaxis(np.asarray(contrib, float), axis, 0)
    if d.ndim != 2 or d.shape[0] < 2:
        raise ValueError("contrib must be (prompts, budgets) with at least 2 prompts")
    P = d.shape[0]
    e = d - d.mean(axis=0)  # (P, K)
    m2 = np.mean(e * e, axis=0)
    m4 = np.mean(e**4, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2, 1.0) ** 2 - 3.0, 0.0)
    return 2.0 / (2.0 / (P - 1.0) + np.maximum(kappa, 0.0) / P)


def simultaneous_band(contrib, *, n_multipliers: int = 4000, alpha: float = 0.05,
                      seed: int = 0, axis: int = 0, groups=None,
                      influence=None, df=None, small_sample: bool | None = None) -> dict:
    """Gaussian-multiplier sup-t simultaneous confidence band for a mean curve.

    Parameters
    ----------
    contrib
        Per-prompt contributions, ``(P, K)`` with prompts on ``axis``: for D(k),
        ``pass@k_R,i - pass@k_B,i``. With ``influence`` given, the ``(K,)`` mean
        curve itself.
    n_multipliers
        Number B of Gaussian multiplier draws.
    alpha
        1 - simultaneous coverage.
    seed
        Seed of ``numpy.random.default_rng``.
    groups
        ``(P,)`` cluster labels: multipliers are drawn per cluster (see
        :func:`cluster_influence`). None: independent prompts.
    influence
        ``(M, K)`` influence rows from :func:`run_influence` (several runs);
        then ``contrib`` is the mean curve and ``groups`` must be None.
    df
        Degrees of freedom of the variance estimate (scalar or ``(K,)``), for
        the small-sample correction below; None: none, unless ``small_sample``.
    small_sample
        Independent prompts only (no ``groups``, ``influence`` or ``df``): take
        ``df`` from :func:`kurtosis_df`. None (default): when there are fewer
        than :data:`SMALL_SAMPLE_PROMPTS` prompts; False: never (the
        large-sample band of Chernozhukov et al. and passk-inference).

    Returns
    -------
    dict
        ``mean``, ``se``, ``lower``, ``upper`` (``(K,)`` each), ``critical_value``,
        ``degenerate`` (indices of budgets with zero estimated variance, e.g.
        every prompt solved by both models: they are left out of the maximum, so
        nothing is divided by zero, and their band is set to the a-priori range
        ``[-1, 1]`` of a pass@k difference: no inference is claimed there;
        callers should show them as "no variance", not as an interval),
        ``n_units`` (prompts, clusters or prompt and run rows),
        ``critical_values`` (``(K,)``: equal to ``critical_value`` without
        ``df``), ``df`` (``(K,)`` degrees of freedom used, None without),
        ``small_sample`` ("kurtosis-t" when :func:`kurtosis_df` set them, else
        None), ``too_few_units`` (True with fewer independent prompts than
        :func:`min_prompts`: then every budget's band is ``[-1, 1]``).

    Notes
    -----
    Let :math:`H` be the ``(M, K)`` influence rows (independent prompts:
    :math:`h_i = (d_i - \\bar d)/\\sqrt{P(P-1)}`), so that :math:`s_k^2 =
    \\sum_m h_{mk}^2` is the squared standard error of :math:`\\bar d_k`. The
    critical value is the :math:`1-\\alpha` quantile over draws
    :math:`\\xi \\sim N(0, I_M)` of

    .. math:: T = \\max_k \\frac{|\\sum_m \\xi_m h_{mk}|}{s_k},

    and the band is :math:`\\bar d_k \\pm c\\, s_k` (Chernozhukov, Chetverikov and
    Kato 2013). Given the data, :math:`\\xi^\\top H` is exactly Gaussian with
    covariance :math:`\\Sigma = H^\\top H`. We draw it through the
    eigendecomposition of that ``(K, K)`` Gram matrix, :math:`\\Sigma = V \\Lambda
    V^\\top`, as :math:`z \\Lambda^{1/2} V^\\top` with :math:`z \\sim N(0, I_r)`:
    the same distribution at cost ``O(M K^2 + B r K)`` instead of ``O(B M K)``,
    and no ``(M, K)`` factorisation (a thin SVD of the tall matrix thrashes a
    multi-threaded BLAS on a loaded machine). Eigenvalues below
    ``1e-12 * max`` are dropped; eigenvectors are ordered by decreasing
    eigenvalue and signed so that their largest-magnitude entry is positive,
    so a seed gives the same draws on any LAPACK. Critical values therefore
    agree with a direct implementation up to Monte Carlo error, not draw for
    draw. On the DeepScaleR example (1,060 prompts, k = 1..128) the Monte Carlo
    standard deviation of one critical value at B = 4,000 is about 0.02.

    Small-sample correction (``df`` given): with few clusters or runs the
    variance is estimated from few units and Gaussian critical values
    under-cover (Cameron and Miller 2015). Each budget's critical value is
    moved to the Student-t scale at the same pointwise level,
    :math:`c_k = t^{-1}_{\\nu_k}(\\Phi(c))`, the usual ``t(G-1)`` reference of
    cluster-robust inference applied to the sup-t level; this is our choice,
    checked by the coverage study, not a result of the papers cited. For
    independent prompts the same move with the kurtosis-matched
    :math:`\\nu_k` of :func:`kurtosis_df` is the small-sample correction
    (fewer than :data:`SMALL_SAMPLE_PROMPTS` prompts): the per-prompt
    differences of pass@k at large ``k`` are sparse and heavy-tailed, so their
    standard error is estimated from far fewer effective degrees of freedom
    than ``P - 1``, and the Gaussian band under-covers (the calibration table
    of docs/statistics.md gives both at 50 to 1,000 prompts). With fewer than
    :func:`min_prompts` prompts no budget is supported at all.

    References
    ----------
    V. Chernozhukov, D. Chetverikov, K. Kato, "Gaussian approximations and
    multiplier bootstrap for maxima of sums of high-dimensional random vectors",
    Annals of Statistics 41(6), 2013. Yang, Zhang and Chen, "RLVR is a Kernel,
    Not a Function: Statistical Inference for pass@k Crossovers", arXiv 2609.22547.
    """
    if n_multipliers < 2 or not 0 < alpha < 1:
        raise ValueError("need n_multipliers >= 2 and 0 < alpha < 1")
    if influence is not None:
        if groups is not None:
            raise ValueError("give groups or influence rows, not both")
        mean = np.asarray(contrib, float)
        H = np.asarray(influence, float)
        if mean.ndim != 1 or H.ndim != 2 or H.shape[1] != mean.size:
            raise ValueError("influence must be (M, K) with the (K,) mean curve as contrib")
        scale_ref = float(np.abs(mean).max()) if mean.size else 0.0
    else:
        d = np.moveaxis(np.asarray(contrib, float), axis, 0)
        if d.ndim != 2:
            raise ValueError("contrib must be 2-D (prompts, budgets)")
        if d.shape[0] < 2:
            raise ValueError("a band needs at least 2 prompts")
        mean = d.mean(axis=0)  # (K,)
        H = cluster_influence(d, groups)  # (M, K)
        scale_ref = float(np.abs(d).max())
        independent = groups is None and df is None
        if small_sample is None:
            small_sample = independent and d.shape[0] < SMALL_SAMPLE_PROMPTS
        if small_sample:
            if not independent:
                raise ValueError("the small-sample correction is for independent prompts; "
                                 "clusters and runs take df")
            df = kurtosis_df(d)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(H))):
        raise ValueError("contributions must be finite")
    se = np.sqrt(np.einsum("mk,mk->k", H, H))  # (K,)
    degenerate = se <= 1e-12 * max(1.0, scale_ref)
    live = ~degenerate
    rng = np.random.default_rng(seed)
    maxima = np.zeros(n_multipliers)
    if live.any():
        Hl = H[:, live]  # (M, K_live)
        gram = Hl.T @ Hl  # (K_live, K_live)
        lam, vec = np.linalg.eigh(gram)  # ascending
        lam, vec = lam[::-1], vec[:, ::-1]
        r = int(np.count_nonzero(lam > lam[0] * 1e-12)) if lam[0] > 0 else 0
        if r > 0:
            vec = vec[:, :r]
            big = np.argmax(np.abs(vec), axis=0)
            vec = vec * np.sign(vec[big, np.arange(r)])  # fixed signs
            # C order: a strided operand sends matmul off BLAS's fast path.
            factor = np.ascontiguousarray(np.sqrt(lam[:r])[:, None] * vec.T / se[live])  # (r, K_live)
            step = max(1, 2**22 // max(1, r + int(live.sum())))
            for start in range(0, n_multipliers, step):
                z = rng.standard_normal((min(step, n_multipliers - start), r))  # (b, r)
                maxima[start:start + len(z)] = np.max(np.abs(z @ factor), axis=1)
    crit = float(np.quantile(maxima, 1 - alpha))
    crits = np.full(mean.shape, crit)  # (K,)
    if df is not None:
        from scipy.special import ndtr, stdtrit

        nu = np.broadcast_to(np.asarray(df, float), mean.shape)
        if np.any(nu <= 0):
            raise ValueError("degrees of freedom must be positive")
        finite = np.isfinite(nu)
        crits[finite] = stdtrit(nu[finite], ndtr(crit))
    lower, upper = mean - crits * se, mean + crits * se
    lower[degenerate], upper[degenerate] = -1.0, 1.0
    too_few = influence is None and groups is None and H.shape[0] < min_prompts(alpha)
    if too_few:
        lower[:], upper[:] = -1.0, 1.0
    nu = None if df is None else [None if not np.isfinite(v) else float(v)
                                  for v in np.broadcast_to(np.asarray(df, float), mean.shape)]
    return {"mean": mean, "se": se, "lower": lower, "upper": upper, "critical_value": crit,
            "critical_values": crits, "degenerate": np.flatnonzero(degenerate).tolist(),
            "n_units": int(H.shape[0]), "df": nu,
            "small_sample": "kurtosis-t" if small_sample and influence is None else None,
            "too_few_units": bool(too_few)}


def classify_budgets(ks, lower, upper) -> dict:
    """Budgets with supported gain, supported loss, or no conclusion; first-loss set.

    Parameters
    ----------
    ks
        ``(K,)`` increasing budgets.
    lower, upper
        Simultaneous band for ``D(k)`` on those budgets.

    Returns
    -------
    dict
        ``gain`` (lower > 0), ``loss`` (upper < 0), ``inconclusive`` (lists of
        budgets); ``first_loss_set``: ``[first k that is not a supported gain,
        first supported loss]`` (``None`` upper end if no loss is supported; the
        whole entry is None if no gain precedes it) and ``first_loss_scope``:
        "integers" when the grid is 1..K without gaps (then the set covers
        every integer k), "grid" otherwise (the ends are grid points only);
        ``certified_crossing``: a supported gain at a smaller budget than some
        supported loss (the field of the same name in passk-inference).

    Notes
    -----
    Because the band holds simultaneously over the grid with probability
    1 - alpha, the first budget where R is truly worse lies in the first-loss
    set with at least that probability: before it every budget has a supported
    gain, and a supported loss exists at its upper end.
    """
    ks = np.asarray(ks)
    lo, hi = np.asarray(lower, float), np.asarray(upper, float)
    gain, loss = lo > 0, hi < 0
    out = {"gain": ks[gain].tolist(), "loss": ks[loss].tolist(),
           "inconclusive": ks[~gain & ~loss].tolist()}
    prefix = int(np.argmin(gain)) if not gain.all() else ks.size  # leading gains
    if prefix == 0:
        out["first_loss_set"] = None
    else:
        first_not_gain = int(ks[prefix]) if prefix < ks.size else None
        later_loss = np.flatnonzero(loss)
        first_loss = int(ks[later_loss[0]]) if later_loss.size else None
        out["first_loss_set"] = None if first_not_gain is None else [first_not_gain, first_loss]
    dense = bool(ks.size and ks[0] == 1 and np.all(np.diff(ks) == 1))
    out["first_loss_scope"] = "integers" if dense else "grid"
    out["certified_crossing"] = bool(gain.any() and loss.any()
                                     and ks[gain].min() < ks[loss].max())
    return out


def _percentile_ci(values: np.ndarray, alpha: float) -> list:
    """Percentile interval; values may be +inf (meaning 'beyond the grid')."""
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
    return [None if not np.isfinite(lo) else float(lo), None if not np.isfinite(hi) else float(hi)]


def paired_bootstrap(pass_base, pass_rl, ks, *, K_se: int | None = None,
                     n_boot: int = 1000, alpha: float = 0.05, seed: int = 0,
                     axis: int = 0, groups=None) -> dict:
    """Paired (prompt-resampling) bootstrap intervals for ``k*``, price and Delta_SE.

    Parameters
    ----------
    pass_base, pass_rl
        ``(P, K)`` per-prompt pass@k on the budgets ``ks``, prompts on ``axis``.
    ks
        ``(K,)`` budgets; must contain 1 (and ``K_se`` if Delta_SE is wanted).
    K_se
        Budget of the base in Delta_SE; None skips Delta_SE.
    n_boot
        Bootstrap resamples.
    groups
        ``(P,)`` cluster labels: whole clusters are resampled (the cluster
        bootstrap; each resample's means are weighted by the prompts it holds).
        None: prompts are resampled independently.

    Returns
    -------
    dict
        ``k_star``: percentile CI (upper end None when, in more than alpha/2 of the
        resamples, D never goes negative on the grid) and ``undefined_frac``;
        ``price``: percentile CI of the price and the CI of its budget;
        ``delta_se``: percentile CI. All percentile intervals at level 1 - alpha.

    Notes
    -----
    Prompts (or clusters) are resampled with replacement, the same draw for both
    models (the comparison is paired). Resample ``b`` draws ``P`` indices
    uniformly from ``0..P-1`` (``G`` cluster indices with ``groups``); row ``b``
    of ``rng.integers(0, P, size=(n_boot, P))`` with
    ``rng = numpy.random.default_rng(seed)``, drawn in blocks of whole rows, so
    the draws do not depend on the block size. The multiplicities
    :math:`w_{bi}` of each prompt (multinomial(P, 1/P) counts, got by counting
    the indices) turn every statistic into a matrix product: with the
    ``(P, K + 1)`` matrix :math:`E` of per-prompt differences
    :math:`d_{ik} = pass@k_{R,i} - pass@k_{B,i}` and, as the last column, the
    per-prompt Delta_SE terms :math:`pass@K_{B,i} - pass@1_{R,i}`, the
    resampled means are :math:`W E / P` (cluster bootstrap: :math:`W_G S /
    (W_G m)` with :math:`S` the ``(G, K + 1)`` cluster sums of :math:`E` and
    :math:`m` the cluster sizes). This is the ordinary nonparametric
    bootstrap (Efron and Tibshirani, "An Introduction to the Bootstrap", 1993,
    ch. 6) computed in ``O(B P K)`` by one BLAS product per block, instead of
    gathering ``B`` resampled ``(P, K)`` tables; its random stream differs from
    the earlier ``rng.multinomial`` draws, so a seed gives different (equally
    distributed) intervals than before.
    """
    b = np.moveaxis(np.asarray(pass_base, float), axis, 0)
    r = np.moveaxis(np.asarray(pass_rl, float), axis, 0)
    ks = np.asarray(ks)
    if b.shape != r.shape or b.shape[1] != ks.size:
        raise ValueError("pass_base, pass_rl and ks do not match")
    if ks[0] != 1:
        raise ValueError("the budget grid must start at k = 1")
    if n_boot < 1:
        raise ValueError("n_boot must be >= 1")
    P, K = b.shape
    j_se = None
    if K_se is not None:
        hit = np.flatnonzero(ks == K_se)
        if not hit.size:
            raise ValueError(f"K_se = {K_se} is not on the budget grid")
        j_se = int(hit[0])
    E = np.empty((P, K + 1))  # (P, K + 1): d(k) per prompt, then the Delta_SE term
    np.subtract(r, b, out=E[:, :K])
    E[:, K] = b[:, j_se] - r[:, 0] if j_se is not None else 0.0
    if groups is None:
        units, sums, sizes = P, E, None
    else:
        g = np.asarray(groups)
        if g.shape != (P,):
            raise ValueError(f"groups must have one label per prompt ({P})")
        _, inv = np.unique(g, return_inverse=True)
        units = int(inv.max()) + 1
        sums = np.zeros((units, K + 1))  # (G, K + 1)
        np.add.at(sums, inv, E)
        sizes = np.bincount(inv, minlength=units).astype(float)  # (G,)
    rng = np.random.default_rng(seed)
    means = np.empty((n_boot, K + 1))  # (B, K + 1)
    step = max(1, 2**20 // units)  # rows per block: about 8 MB per (step, units) array
    for start in range(0, n_boot, step):
        m = min(step, n_boot - start)
        idx = rng.integers(0, units, size=(m, units))  # (m, units)
        idx += np.arange(0, m * units, units)[:, None]  # row offsets: one count vector per row
        w = np.bincount(idx.ravel(), minlength=m * units).reshape(m, units).astype(float)
        if sizes is None:
            means[start:start + m] = (w @ sums) / P
        else:
            means[start:start + m] = (w @ sums) / (w @ sizes)[:, None]
    D = means[:, :K]  # (B, K)
    ksb = first_negative(ks, D)
    k_star = np.where(np.isnan(ksb), np.inf, ksb)
    price_v, price_k = price(ks, D)
    out = {
        "n_boot": n_boot, "alpha": alpha, "seed": seed,
        "resampled": "prompts" if groups is None else "clusters",
        "k_star": {"ci": _percentile_ci(k_star, alpha),
                   "undefined_frac": float(np.mean(~np.isfinite(k_star)))},
        "price": {"ci": _percentile_ci(price_v, alpha),
                  "k_ci": _percentile_ci(np.where(np.isnan(price_k), np.inf, price_k), alpha)},
    }
    if j_se is not None:
        out["delta_se"] = {"K": int(K_se), "ci": _percentile_ci(means[:, K], alpha)}
    return out
