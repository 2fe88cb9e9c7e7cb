"""The band when the verifier errs: known error rates, or two scorers that disagree.

A verifier with false-positive rate ``fp`` (a wrong answer graded correct) and
false-negative rate ``fn`` (a correct answer graded wrong) turns a prompt's true
success rate ``p`` into the observed rate ``q = fp + p (1 - fp - fn)``, if its
errors are independent across samples given the prompt (an assumption: a
verifier that always misgrades one answer form breaks it).

Known rates. An unbiased estimate of the true pass@k exists for ``k <= n``, but
it divides by ``(1 - fp - fn)^k``: at k = 128 and ``fp + fn = 0.1`` its
variance is inflated about ``10^11``-fold, so it is useless where the boundary
question lives. We fit instead the distribution of *true* rates by the NPMLE
with the misclassification in the likelihood (``c ~ Binomial(n, q(p))``),
read pass@k off it, and bootstrap prompts for a sup-t simultaneous band over
the grid. This is model-based (the grid NPMLE) and says so.

Two scorers. With each sample graded by two scorers, ``c_both`` counts samples
both call correct and ``c_either`` those at least one calls correct. If on
every sample at least one scorer is right, the true count lies between them.
The worst case for a gain pairs the trained model's ``c_both`` with the base's
``c_either``; the worst case for a loss the reverse. Each side gets a
``1 - alpha/2`` band (Bonferroni), so a gain or loss supported by the bounds
holds with probability at least ``1 - alpha`` whichever scorer is right.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core.compare import classify_budgets, simultaneous_band
from rlvr_boundary.core.extrapolate import (_log_binom, default_grid, fit_npmle,
                                              mixture_pass_at_k, npmle_weights)
from rlvr_boundary.core.passk import check_counts, pass_at_k

__all__ = ["corrected_fit", "corrected_pass_at_k", "verifier_error_band", "two_scorer_band"]


def _check_rates(fp: float, fn: float) -> None:
    if not (0 <= fp < 1 and 0 <= fn < 1 and fp + fn < 1):
        raise ValueError("need 0 <= fp, fn and fp + fn < 1 (else the verdicts carry no signal)")


def corrected_fit(n, c, fp: float, fn: float, *, init=None) -> dict:
    """NPMLE of the true-rate distribution under verifier error rates ``fp``, ``fn``.

    Notes
    -----
    Maximises :math:`\\sum_i \\log \\sum_j w_j \\mathrm{Bin}(c_i; n_i, fp + p_j(1 - fp - fn))`
    over weights on the true-rate grid :math:`p_j`; the returned fit is on that
    grid, so :func:`rlvr_boundary.core.extrapolate.mixture_pass_at_k` gives
    true pass@k.
    """
    _check_rates(fp, fn)
    p = default_grid()
    q = fp + p * (1.0 - fp - fn)  # observed-rate grid
    fit = fit_npmle(n, c, grid=q, init=init)
    fit["grid"] = p
    fit["observed_grid"] = q
    return fit


def corrected_pass_at_k(n, c, ks, fp: float, fn: float) -> np.ndarray:
    """``(K,)`` true pass@k under the error rates (model-based, any k)."""
    return mixture_pass_at_k(corrected_fit(n, c, fp, fn), ks)


def verifier_error_band(nb, cb, nr, cr, ks, *, fp: float | tuple = 0.0, fn: float | tuple = 0.0,
                        n_boot: int = 200, alpha: float = 0.05, seed: int = 0,
                        groups=None) -> dict:
    """Simultaneous band for the true ``D(k)`` under given verifier error rates.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` counts of base and trained model on the same prompts.
    ks
        ``(K,)`` budgets.
    fp, fn
        Error rates, one value for both models or a ``(base, rl)`` pair.
    n_boot
        Paired prompt-bootstrap refits.
    groups
        ``(P,)`` cluster labels: whole clusters are resampled. None: prompts.

    Returns
    -------
    dict
        ``diff``, ``lower``, ``upper``, ``critical_value``, the classification of
        :func:`rlvr_boundary.core.compare.classify_budgets`, ``model_based``.

    Notes
    -----
    Bootstrap sup-t band: with :math:`D^*_b` the refitted curves and
    :math:`s_k` their standard deviation, the critical value is the
    :math:`1-\\alpha` quantile of :math:`\\max_k |D^*_{bk} - \\hat D_k| / s_k`.
    """
    fpb, fpr = (fp, fp) if np.isscalar(fp) else fp
    fnb, fnr = (fn, fn) if np.isscalar(fn) else fn
    nb, cb = check_counts(nb, cb)
    nr, cr = check_counts(nr, cr)
    if nb.shape != nr.shape:
        raise ValueError("base and RL counts must be on the same prompts")
    ks = np.asarray(ks)
    fb, fr = corrected_fit(nb, cb, fpb, fnb), corrected_fit(nr, cr, fpr, fnr)
    diff = mixture_pass_at_k(fr, ks) - mixture_pass_at_k(fb, ks)  # (K,)
    idx = _resamples(nb.size, n_boot, seed, groups)  # (B, P)
    # Every replicate refits on the same (n, c) pairs: only their multiplicities change.
    # So the likelihood matrix is built once per model and the B refits run together.
    boot = (_boot_pass_at_k(nr, cr, fr, idx, fpr, fnr, ks)
            - _boot_pass_at_k(nb, cb, fb, idx, fpb, fnb, ks))  # (B, K)
    return _sup_t(diff, boot, ks, alpha, fpb, fpr, fnb, fnr, n_boot)


def _resamples(P: int, n_boot: int, seed: int, groups) -> list[np.ndarray]:
    """The bootstrap's prompt indices, replicate by replicate (clusters kept whole)."""
    rng = np.random.default_rng(seed)
    if groups is None:
        return [rng.integers(0, P, P) for _ in range(n_boot)]
    _, inv = np.unique(np.asarray(groups), return_inverse=True)
    members = [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]
    return [np.concatenate([members[g] for g in rng.integers(0, len(members), len(members))])
            for _ in range(n_boot)]


def _sup_t(diff, boot, ks, alpha, fpb, fpr, fnb, fnr, n_boot) -> dict:
    s = boot.std(axis=0, ddof=1)  # (K,)
    live = s > 1e-12
    t = np.abs(boot[:, live] - diff[live]) / s[live]
    crit = float(np.quantile(t.max(axis=1), 1 - alpha)) if live.any() else 0.0
    lower, upper = diff - crit * s, diff + crit * s
    lower[~live], upper[~live] = -1.0, 1.0
    out = {"diff": diff, "lower": lower, "upper": upper, "critical_value": crit,
           "fp": [fpb, fpr], "fn": [fnb, fnr], "n_boot": n_boot, "model_based": True}
    out.update(classify_budgets(ks, lower, upper))
    return out


def verifier_error_band_reference(nb, cb, nr, cr, ks, *, fp: float | tuple = 0.0,
                                  fn: float | tuple = 0.0, n_boot: int = 200,
                                  alpha: float = 0.05, seed: int = 0, groups=None) -> dict:
    """:func:`verifier_error_band` with every refit a cold fit from the data (the tests' reference).

    Each replicate's counts are fitted by :func:`corrected_fit` from the
    uniform start, the likelihood rebuilt from the replicate; the fast path
    shares one likelihood matrix and starts every refit from the full-data
    fit. Both stop at the optimality certificate of
    :func:`rlvr_boundary.core.extrapolate.npmle_weights`, so they differ by
    no more than that certificate allows.
    """
    fpb, fpr = (fp, fp) if np.isscalar(fp) else fp
    fnb, fnr = (fn, fn) if np.isscalar(fn) else fn
    nb, cb = check_counts(nb, cb)
    nr, cr = check_counts(nr, cr)
    ks = np.asarray(ks)
    fb, fr = corrected_fit(nb, cb, fpb, fnb), corrected_fit(nr, cr, fpr, fnr)
    diff = mixture_pass_at_k(fr, ks) - mixture_pass_at_k(fb, ks)  # (K,)
    boot = np.empty((n_boot, ks.size))  # (B, K)
    for j, idx in enumerate(_resamples(nb.size, n_boot, seed, groups)):
        bb = corrected_fit(nb[idx], cb[idx], fpb, fnb)  # cold start: the uniform weights
        rr = corrected_fit(nr[idx], cr[idx], fpr, fnr)
        boot[j] = mixture_pass_at_k(rr, ks) - mixture_pass_at_k(bb, ks)
    return _sup_t(diff, boot, ks, alpha, fpb, fpr, fnb, fnr, n_boot)


def _boot_pass_at_k(n, c, fit: dict, idx: list, fp: float, fn: float, ks) -> np.ndarray:
    """``(B, K)`` true pass@k of every bootstrap refit.

    Every replicate holds the same distinct ``(n, c)`` pairs as the data with
    other multiplicities, so the ``(U, L)`` likelihood is built once and each
    refit is :func:`rlvr_boundary.core.extrapolate.npmle_weights` on the
    replicate's ``(U,)`` multiplicities, started from the full-data fit. The
    maximum does not depend on the start: each refit stops at the same
    optimality certificate as a cold fit (:func:`verifier_error_band_reference`
    refits from the uniform start; a test compares the two).
    """
    pairs, inv = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    U = pairs.shape[0]
    ll = _log_binom(pairs[:, 0], pairs[:, 1], fit["observed_grid"])  # (U, L)
    lik = np.exp(ll - ll.max(axis=1, keepdims=True))  # (U, L)
    ks = np.asarray(ks, float)
    with np.errstate(divide="ignore"):
        terms = np.exp(np.multiply.outer(ks, np.log(1.0 - fit["grid"])))  # (K, L)
    terms[ks == 0] = 1.0
    W = np.stack([npmle_weights(lik, np.bincount(inv[i], minlength=U), init=fit["weights"])
                  ["weights"] for i in idx])  # (B, L)
    return 1.0 - W @ terms.T


def two_scorer_band(n_base, both_base, either_base, n_rl, both_rl, either_rl, ks, *,
                    n_multipliers: int = 4000, alpha: float = 0.05, seed: int = 0) -> dict:
    """Band for ``D(k)`` that holds whichever of two scorers is right on each sample.

    Parameters
    ----------
    n_base, n_rl
        ``(P,)`` samples per prompt.
    both_base, both_rl, either_base, either_rl
        ``(P,)`` samples both scorers / at least one scorer grade correct.

    Returns
    -------
    dict
        ``lower`` (from the gain's worst case), ``upper`` (from the loss's
        worst case), each at level ``1 - alpha/2``, and the classification.
    """
    nb, bb = check_counts(n_base, both_base)
    _, eb = check_counts(n_base, either_base)
    nr, br = check_counts(n_rl, both_rl)
    _, er = check_counts(n_rl, either_rl)
    if np.any(bb > eb) or np.any(br > er):
        raise ValueError("'both' counts cannot exceed 'either' counts")
    ks = np.asarray(ks)
    d_low = pass_at_k(nr, br, ks) - pass_at_k(nb, eb, ks)  # (P, K): worst for a gain
    d_high = pass_at_k(nr, er, ks) - pass_at_k(nb, bb, ks)  # (P, K): worst for a loss
    lo = simultaneous_band(d_low, n_multipliers=n_multipliers, alpha=alpha / 2, seed=seed)
    hi = simultaneous_band(d_high, n_multipliers=n_multipliers, alpha=alpha / 2, seed=seed + 1)
    out = {"lower": lo["lower"], "upper": hi["upper"], "diff_low": lo["mean"],
           "diff_high": hi["mean"], "level": 1 - alpha}
    out.update(classify_budgets(ks, lo["lower"], hi["upper"]))
    return out
