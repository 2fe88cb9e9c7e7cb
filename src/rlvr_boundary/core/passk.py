"""pass@k and its relatives, computed exactly and stably.

Notation: a prompt has ``n`` samples of which ``c`` are correct; ``p`` is its
true success rate.

Deviation from common practice: for ``k > n`` there is no unbiased estimate of
pass@k. The widely copied shortcut returns 1.0 (or the value at ``k = n``); we
refuse instead (``ValueError``), and offer the plug-in curve
:func:`pass_at_k_plugin` for extrapolation beyond ``n``, which is labelled as such.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core.grid import check_ks

# scipy.stats is imported inside the two maj@k helpers that need it: importing it costs
# about a second, two thirds of a whole `compare` run that never calls them.

__all__ = [
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_plugin",
    "avg_at_n",
    "maj_at_k",
    "passk_within_prompt_variance",
    "check_counts",
]


def check_counts(n, c) -> tuple[np.ndarray, np.ndarray]:
    """Validate per-prompt counts and return them as int64 arrays of shape ``(P,)``.

    Refuses booleans, non-integers, ``n < 1``, ``c < 0`` and ``c > n``.
    """
    n_arr, c_arr = np.asarray(n), np.asarray(c)
    for name, a in (("n", n_arr), ("c", c_arr)):
        if a.dtype == bool:
            raise ValueError(f"{name} must be integer counts, not booleans")
        if a.dtype.kind == "f":
            if not np.all(np.isfinite(a)) or np.any(a != np.floor(a)):
                raise ValueError(f"{name} must be integers")
        elif a.dtype.kind not in "iu":
            raise ValueError(f"{name} must be integers, got dtype {a.dtype}")
    n_arr, c_arr = np.atleast_1d(n_arr.astype(np.int64)), np.atleast_1d(c_arr.astype(np.int64))
    if n_arr.ndim != 1 or n_arr.shape != c_arr.shape:
        raise ValueError(f"n and c must be 1-D of equal length, got {n_arr.shape} and {c_arr.shape}")
    if np.any(n_arr < 1):
        raise ValueError("every n must be >= 1")
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        i = int(np.flatnonzero((c_arr < 0) | (c_arr > n_arr))[0])
        raise ValueError(f"need 0 <= c <= n; prompt {i} has c = {c_arr[i]}, n = {n_arr[i]}")
    return n_arr, c_arr


def pass_at_k_curve(n: int, c) -> np.ndarray:
    """Unbiased pass@k for every k = 1..n of prompts that share the same ``n``.

    Parameters
    ----------
    n
        Number of samples per prompt (shared).
    c
        ``(P,)`` number of correct samples per prompt.

    Returns
    -------
    numpy.ndarray
        ``(P, n)``: column ``k-1`` holds pass@k.

    Notes
    -----
    The failure probability of a uniformly random k-subset is

    .. math:: \\frac{\\binom{n-c}{k}}{\\binom{n}{k}} = \\prod_{j=0}^{k-1}\\frac{n-c-j}{n-j}
              = \\exp\\Big(\\sum_{j=0}^{k-1}\\log\\big(1-\\tfrac{c}{n-j}\\big)\\Big),

    so one cumulative sum of ``log1p(-c/(n-j))`` over ``j`` gives every k at once
    in O(n) per prompt, and ``pass@k = -expm1(cumsum)`` keeps full relative
    precision both near 0 and near 1. Terms with ``j >= n - c`` are ``-inf``
    (a k-subset that large must contain a correct sample): pass@k = 1 exactly.
    Never NaN, never outside [0, 1], exact to ~1e-15 for n up to 1e5 and beyond.

    References
    ----------
    Chen et al., "Evaluating Large Language Models Trained on Code", 2021 (the
    unbiased estimator ``1 - C(n-c, k)/C(n, k)``).
    """
    c = np.asarray(c, dtype=np.int64)
    return _curve_prefix(int(n), c, int(n))


def pass_at_k(n, c, ks=None, *, chunk_elems: int = 2**24) -> np.ndarray:
    """Unbiased pass@k of every prompt at every requested budget.

    Parameters
    ----------
    n, c
        ``(P,)`` samples and correct samples per prompt; ``n`` may differ by prompt.
    ks
        Budgets (ints >= 1). Default: ``1..min(n)``. Any ``k > n_i`` raises.
    chunk_elems
        Bound on the size of the ``(prompts, n)`` work array, for memory.

    Returns
    -------
    numpy.ndarray
        ``(P, K)`` float64 in [0, 1].

    Notes
    -----
    :math:`\\mathrm{pass@}k_i = 1 - \\binom{n_i-c_i}{k}/\\binom{n_i}{k}`; see
    :func:`pass_at_k_curve` for the stable evaluation. Prompts are grouped by
    ``n``, each distinct ``(n, c)`` is evaluated once, and only up to ``max(ks)``.
    """
    n, c = check_counts(n, c)
    ks = np.arange(1, int(n.min()) + 1) if ks is None else check_ks(ks, int(n.min()))
    kmax = int(ks.max())
    out = np.empty((n.size, ks.size), dtype=np.float64)  # (P, K)
    for n_val in np.unique(n):
        rows = np.flatnonzero(n == n_val)
        # The curve depends on (n, c) only: evaluate each distinct c once (at most
        # n + 1 of them, however many prompts) and only the first kmax steps.
        uc, inv = np.unique(c[rows], return_inverse=True)
        m = int(n_val)
        step = max(1, chunk_elems // max(kmax, 1))
        for start in range(0, uc.size, step):
            sel = slice(start, start + step)
            curves = _curve_prefix(m, uc[sel], kmax)[:, ks - 1]  # (U, K)
            hit = (inv >= start) & (inv < start + step)
            out[rows[hit]] = curves[inv[hit] - start]
    return out


def _curve_prefix(n: int, c: np.ndarray, kmax: int) -> np.ndarray:
    """Columns 1..kmax of :func:`pass_at_k_curve` without computing the rest."""
    j = np.arange(kmax, dtype=np.float64)  # (kmax,)
    alive = j[None, :] < (n - c)[:, None]  # (P, kmax): a j-subset can still be all-wrong
    ratio = np.where(alive, c[:, None] / (n - j)[None, :], 0.0)
    terms = np.where(alive, np.log1p(-ratio), -np.inf)  # (P, kmax)
    # "+ 0.0" turns the -0.0 of -expm1(0) into 0.0.
    return -np.expm1(np.cumsum(terms, axis=1)) + 0.0


def pass_at_k_plugin(p, ks) -> np.ndarray:
    """Plug-in pass@k curve ``1 - (1 - p)^k`` from success rates, for any k > 0.

    Parameters
    ----------
    p
        ``(P,)`` success rates in [0, 1] (true, or plug-in ``c/n``).
    ks
        Budgets (may be non-integer and may exceed any n).

    Returns
    -------
    numpy.ndarray
        ``(P, K)``.

    Notes
    -----
    With plug-in rates ``c/n`` this is biased *downward* for k > 1 relative to
    the true pass@k on prompts with small c (it is exact only for k = 1); it is
    the extrapolation of choice beyond ``n`` because it is the pass@k of the
    estimated per-prompt Bernoulli model. Evaluated as ``-expm1(k*log1p(-p))``.
    """
    p = np.asarray(p, dtype=np.float64)
    ks = np.atleast_1d(np.asarray(ks, dtype=np.float64))
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ValueError("success rates must lie in [0, 1]")
    if np.any(ks <= 0):
        raise ValueError("k must be > 0")
    with np.errstate(divide="ignore"):
        return -np.expm1(ks[None, :] * np.log1p(-p)[:, None])


def avg_at_n(n, c) -> float:
    """avg@n: the mean over prompts of ``c/n`` (equals mean pass@1)."""
    n, c = check_counts(n, c)
    return float(np.mean(c / n))


def passk_within_prompt_variance(n, c, k) -> np.ndarray:
    """Unbiased estimate of the sampling variance of each prompt's pass@k estimate.

    Parameters
    ----------
    n, c
        ``(P,)`` counts; every ``n_i >= 2k`` is required.
    k
        Budget, or a 1-D sequence of budgets (evaluated together, in one pass).

    Returns
    -------
    numpy.ndarray
        ``(P,)`` estimates of :math:`\\mathrm{Var}(\\widehat{\\mathrm{pass@}k}_i \\mid p_i)`
        for a scalar ``k``; ``(P, K)`` for a sequence.

    Notes
    -----
    With :math:`f = (1-p)^k` and :math:`\\hat f = \\binom{n-c}{k}/\\binom{n}{k}`
    (unbiased for f), :math:`\\binom{n-c}{2k}/\\binom{n}{2k}` is unbiased for
    :math:`f^2 = (1-p)^{2k}` when :math:`n \\ge 2k`. Hence
    :math:`\\hat f^2 - \\binom{n-c}{2k}/\\binom{n}{2k}` is unbiased for
    :math:`\\mathrm{Var}(\\hat f) = E[\\hat f^2] - f^2`, and pass@k = 1 - f has the
    same variance. It can be slightly negative for a given prompt (it is an
    unbiased estimate, not a variance); sums over prompts are what it is for.
    """
    n, c = check_counts(n, c)
    scalar = np.ndim(k) == 0
    ks = check_ks(np.atleast_1d(k), int(n.min()))
    if np.any(n.min() < 2 * ks):
        raise ValueError(f"the analytic variance needs n >= 2k (k = {int(ks.max())}, "
                         f"min n = {int(n.min())})")
    both = pass_at_k(n, c, np.concatenate([ks, 2 * ks]))  # (P, 2K): one pass for all budgets
    fail_k, fail_2k = 1.0 - both[:, :ks.size], 1.0 - both[:, ks.size:]
    var = fail_k**2 - fail_2k  # (P, K)
    return var[:, 0] if scalar else var


def maj_at_k(class_sizes, class_correct, n_incomplete: int, ks) -> np.ndarray:
    """Exact expected majority-vote accuracy over uniformly random k-subsets (one prompt).

    Parameters
    ----------
    class_sizes
        ``(A,)`` number of samples in each distinct (complete) answer class.
    class_correct
        ``(A,)`` bool, whether each class is a correct answer.
    n_incomplete
        Samples with no answer (incomplete); they are drawn but never win.
    ks
        Budgets, each ``1 <= k <= n`` where ``n = sum(class_sizes) + n_incomplete``.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` maj@k.

    Notes
    -----
    Draw a k-subset uniformly; :math:`X_a` samples fall in class a (multivariate
    hypergeometric). The vote goes to a class with the largest :math:`X_a \\ge 1`;
    ties are split uniformly; if every drawn sample is incomplete nobody wins
    (score 0). Then

    .. math:: \\mathrm{maj@}k = \\sum_{x \\ge 1} \\sum_{a\\,\\text{correct}}
        P(X_a = x,\\ X_b \\le x\\ \\forall b) \\; E[1/(1+T_a) \\mid \\cdot],

    where :math:`T_a` counts other classes tied at x. Writing
    :math:`1/(1+t) = \\int_0^1 y^t dy`, for each threshold x we multiply, over the
    classes, the generating polynomials :math:`L_b(z) + y E_b(z)` with
    :math:`L_b = \\sum_{j<x} w_b(j) z^j` and :math:`E_b = w_b(x) z^x`, where the
    correct class being credited contributes :math:`E_a` without y; a flag
    dimension lets one pass handle every correct class. Only classes with
    ``size >= x`` have an :math:`E_b` term; the others collapse into one binomial
    factor. The y-degree never exceeds ``k // x`` (at most that many classes can
    reach x among k draws). Weights use the representation of the hypergeometric
    as independent binomials conditioned on the total,
    :math:`w_b(j) = \\mathrm{Bin}(j; m_b, \\theta)` with :math:`\\theta = k/n`, which
    keeps every number in [0, 1] (no overflow of binomial coefficients) before
    the final division by :math:`\\mathrm{Bin}(k; n, \\theta)`.

    Cost per k: :math:`O(\\sum_x \\#\\{b: m_b \\ge x\\} \\cdot x \\cdot k \\cdot k/x)`
    = :math:`O(k^2 \\sum_b \\min(m_b, k))` in the worst case; classes of equal
    size share a factor. This is the exact quantity, not "vote over the first
    k samples", which depends on sample order.
    """
    sizes = np.asarray(class_sizes, dtype=np.int64)
    correct = np.asarray(class_correct, dtype=bool)
    if sizes.shape != correct.shape or sizes.ndim != 1:
        raise ValueError("class_sizes and class_correct must be 1-D of equal length")
    if np.any(sizes < 1):
        raise ValueError("every answer class must have at least one sample")
    if n_incomplete < 0:
        raise ValueError("n_incomplete must be >= 0")
    n = int(sizes.sum()) + int(n_incomplete)
    ks = check_ks(ks, n)
    out = np.zeros(ks.size)
    if not correct.any():
        return out
    for i, k in enumerate(ks):
        out[i] = _maj_one_k(sizes, correct, n, int(k))
    return np.clip(out, 0.0, 1.0)


def _maj_one_k(sizes: np.ndarray, correct: np.ndarray, n: int, k: int) -> float:
    theta = k / n if k < n else 1.0
    if k == n:
        # Deterministic: the whole sample votes.
        top = sizes.max()
        winners = sizes == top
        return float(correct[winners].sum() / winners.sum())
    total = 0.0
    for x in range(1, min(k, int(sizes.max())) + 1):
        T = k // x  # max number of classes tied at x
        big = sizes >= x
        # Classes that cannot reach x, and incomplete samples: any count (full pmf).
        small_total = n - int(sizes[big].sum())  # small classes and incomplete samples
        # state[f, t, j]: f = credited correct class chosen (0/1), t = other ties, j = draws
        state = np.zeros((2, T + 1, k + 1))
        state[0, 0, :] = _binom_pmf_row(small_total, theta, k)
        # Group identical (size, correct) classes: identical factors.
        keys, counts = np.unique(np.stack([sizes[big], correct[big]], axis=1), axis=0,
                                 return_counts=True)
        for (m_b, corr_b), r in zip(keys, counts):
            w = _binom_pmf_row(int(m_b), theta, x)  # (x+1,) weights for j = 0..x
            low, eq = w[:x], w[x]
            for _ in range(int(r)):
                new = np.zeros_like(state)
                # L_b: j < x draws from this class, no tie.
                for j in range(x):
                    if low[j] != 0.0:
                        new[:, :, j:] += low[j] * state[:, :, : k + 1 - j]
                # E_b as a tie (y): shifts t by one.
                if T >= 1:
                    new[:, 1:, x:] += eq * state[:, :-1, : k + 1 - x]
                # E_b as the credited correct class (only from f = 0).
                if corr_b:
                    new[1, :, x:] += eq * state[0, :, : k + 1 - x]
                state = new
        # Integrate y: weight 1/(t+1); read coefficient of z^k with the flag set.
        total += float(np.sum(state[1, :, k] / np.arange(1, T + 2)))
    from scipy import stats

    denom = stats.binom.pmf(k, n, theta)
    return total / denom


def _binom_pmf_row(m: int, theta: float, jmax: int) -> np.ndarray:
    """``Bin(j; m, theta)`` for j = 0..jmax (zeros beyond m)."""
    from scipy import stats

    j = np.arange(jmax + 1)
    return stats.binom.pmf(j, m, theta)


