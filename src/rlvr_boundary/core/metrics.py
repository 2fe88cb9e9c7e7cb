"""Metrics users ask for beside pass@k, each as its reference implementation computes it.

All take per-prompt counts ``n`` (samples) and ``c`` (correct), shape ``(P,)``,
and return per-prompt values (average over prompts for the benchmark score)
unless said otherwise.

- ``cover@tau``: share of prompts whose plug-in success rate ``c/n`` is at
  least ``tau`` (``tau = 1/n`` gives "solved at least once", ``tau = 1`` "always
  solved"). A plug-in share: with few samples it is a biased estimate of the
  share of prompts whose *true* rate is at least ``tau``.
- ``pass^k``: probability that all of ``k`` samples are correct, estimated
  without bias by ``C(c, k) / C(n, k)`` (Yao et al., "tau-bench", arXiv
  2406.12045).
- ``G-Pass@k_tau`` and ``mG-Pass@k``: at least ``ceil(tau k)`` (and at least 1)
  of ``k`` samples drawn without replacement are correct; mG-Pass@k averages
  G-Pass@k over the cut-offs ``ceil(k/2)+1 .. k`` with weight ``2/k`` (Liu et
  al., "Are Your LLMs Capable of Stable Reasoning?", arXiv 2412.13147), as
  lighteval and the authors' code compute them, including their conventions:
  the cut-off is ``max(ceil(k * tau), 1)`` in floating point, and
  ``mG-Pass@1 = 0``.
- a Bayesian posterior for pass@k and pass^k: each prompt's rate has the
  posterior ``Beta(alpha0 + c, beta0 + n - c)``; the dataset metric's posterior
  mean and standard deviation are the mean of the per-prompt posterior means
  and ``sqrt(sum of variances) / P``; the interval is the normal one, clipped to
  [0, 1] (Hariri et al., "Don't Pass@k: A Bayesian Framework for Large
  Language Model Evaluation", arXiv 2510.04265, as the ``scorio`` package
  computes it).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from rlvr_boundary.core.passk import check_counts

__all__ = ["cover_at_tau", "pass_hat_k", "g_pass_at_k", "mg_pass_at_k", "passk_posterior"]


def cover_at_tau(n, c, taus) -> np.ndarray:
    """``(T,)`` share of prompts with ``c/n >= tau`` for each ``tau``.

    Parameters
    ----------
    n, c
        ``(P,)`` counts.
    taus
        Thresholds in [0, 1].
    """
    n, c = check_counts(n, c)
    t = np.atleast_1d(np.asarray(taus, float))
    if np.any((t < 0) | (t > 1)):
        raise ValueError("tau must lie in [0, 1]")
    # c >= tau n in integers avoids the rounding of c/n (e.g. 3/10 vs 0.3).
    return (c[:, None] >= t[None, :] * n[:, None] - 1e-9).mean(axis=0)


def _check_k(n, k: int) -> int:
    if int(k) != k or k < 1:
        raise ValueError("k must be an integer >= 1")
    if k > n.min():
        raise ValueError(f"k = {k} exceeds the smallest n = {n.min()}: no unbiased estimate")
    return int(k)


def _lgamma(x) -> np.ndarray:
    """``log Gamma(x)`` elementwise for ``x > 0``, by :func:`math.lgamma` on the distinct values.

    Counts repeat (a benchmark has few distinct ``(n, c)``), so this costs a few
    hundred calls where a ufunc would need ``scipy.special``, whose import alone
    takes longer than every metric of ``compare`` together.
    """
    x = np.asarray(x, float)
    u, inv = np.unique(x, return_inverse=True)
    return np.array([math.lgamma(v) for v in u.tolist()])[inv].reshape(x.shape)


def _hypergeom_pmf(n, c, k: int) -> np.ndarray:
    """``(P, k + 1)`` P(j correct among k drawn without replacement), j = 0..k."""
    # Computed once per distinct (n, c): benchmarks repeat the same counts often.
    pairs, inv = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    j = np.arange(k + 1)[None, :]  # (1, k+1)
    n_, c_ = pairs[:, :1].astype(float), pairs[:, 1:].astype(float)  # (U, 1)
    ok = (j <= c_) & (k - j <= n_ - c_)
    logp = (_lgamma(c_ + 1) - _lgamma(j + 1) - _lgamma(np.maximum(c_ - j, 0) + 1)
            + _lgamma(n_ - c_ + 1) - _lgamma(k - j + 1)
            - _lgamma(np.maximum(n_ - c_ - k + j, 0) + 1)
            - (_lgamma(n_ + 1) - _lgamma(k + 1) - _lgamma(n_ - k + 1)))
    pmf = np.where(ok, np.exp(np.where(ok, logp, 0.0)), 0.0)  # (U, k+1)
    return pmf[inv.reshape(-1)]


def pass_hat_k(n, c, k: int) -> np.ndarray:
    """``(P,)`` unbiased pass^k: ``C(c, k) / C(n, k)`` (all of k samples correct).

    Notes
    -----
    Computed as :math:`\\prod_{i=0}^{k-1} (c - i)/(n - i)`, zero when ``c < k``.
    """
    n, c = check_counts(n, c)
    k = _check_k(n, k)
    i = np.arange(k)[None, :]
    num = np.maximum(c[:, None] - i, 0).astype(float)
    return np.prod(num / (n[:, None] - i), axis=1)


def g_pass_at_k(n, c, k: int, tau: float) -> np.ndarray:
    """``(P,)`` G-Pass@k at threshold ``tau``, as lighteval computes it.

    Notes
    -----
    With :math:`m = \\max(\\lceil k\\tau \\rceil, 1)` and X hypergeometric
    (k drawn from n, c of them correct), the value is :math:`P(X \\ge m)`; it
    is 0 when ``m > min(c, k)`` (the reference's guard).
    """
    n, c = check_counts(n, c)
    k = _check_k(n, k)
    m = max(int(np.ceil(k * tau)), 1)
    pmf = _hypergeom_pmf(n, c, k)  # (P, k+1)
    out = pmf[:, m:].sum(axis=1) if m <= k else np.zeros(n.size)
    return np.where(m > np.minimum(c, k), 0.0, out)


def mg_pass_at_k(n, c, k: int) -> np.ndarray:
    """``(P,)`` mG-Pass@k, as lighteval computes it.

    Notes
    -----
    :math:`\\frac2k \\sum_{i=\\lceil k/2 \\rceil + 1}^{k} P(X \\ge i)
    = \\frac2k \\sum_j P(X = j) \\max(0, j - \\lceil k/2 \\rceil)`.
    """
    n, c = check_counts(n, c)
    k = _check_k(n, k)
    low = int(np.ceil(k * 0.5))
    pmf = _hypergeom_pmf(n, c, k)  # (P, k+1)
    weight = np.maximum(np.arange(k + 1) - low, 0)  # (k+1,)
    return 2.0 * (pmf @ weight) / k


def passk_posterior(n, c, k: int, *, alpha0: float = 1.0, beta0: float = 1.0,
                    level: float = 0.95, kind: str = "pass@k") -> dict:
    """Bayesian posterior of the dataset's pass@k (or pass^k) under Beta priors.

    Parameters
    ----------
    n, c
        ``(P,)`` counts.
    k
        Budget; any ``k >= 1`` (the latent quantity is defined beyond n).
    alpha0, beta0
        Beta prior of every prompt's success rate.
    level
        Credibility of the normal interval.
    kind
        "pass@k" (:math:`1-(1-p)^k`) or "pass^k" (:math:`p^k`).

    Returns
    -------
    dict
        ``mean``, ``sd``, ``lower``, ``upper``.

    Notes
    -----
    With :math:`a = \\alpha_0 + c`, :math:`b = \\beta_0 + n - c`:
    :math:`E[(1-p)^k] = B(a, b+k)/B(a, b)` and :math:`E[(1-p)^{2k}] =
    B(a, b+2k)/B(a, b)`; pass^k swaps the roles of a and b.
    """
    n, c = check_counts(n, c)
    if int(k) != k or k < 1:
        raise ValueError("k must be an integer >= 1")
    if alpha0 <= 0 or beta0 <= 0:
        raise ValueError("alpha0 and beta0 must be > 0")
    a, b = alpha0 + c, beta0 + n - c
    if kind == "pass^k":
        a, b = b, a
    elif kind != "pass@k":
        raise ValueError("kind must be 'pass@k' or 'pass^k'")
    # B(a, b + k) / B(a, b) = Gamma(b + k) Gamma(a + b) / (Gamma(b) Gamma(a + b + k))
    lg_b, lg_ab = _lgamma(b), _lgamma(a + b)
    m1 = np.exp(_lgamma(b + k) - lg_b + lg_ab - _lgamma(a + b + k))  # E[q^k], q = 1 - p
    m2 = np.exp(_lgamma(b + 2 * k) - lg_b + lg_ab - _lgamma(a + b + 2 * k))
    var = np.maximum(m2 - m1**2, 0.0)
    means = 1.0 - m1 if kind == "pass@k" else m1
    mean, sd = float(means.mean()), float(np.sqrt(var.sum()) / n.size)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return {"mean": mean, "sd": sd, "lower": max(0.0, mean - z * sd),
            "upper": min(1.0, mean + z * sd), "k": int(k), "kind": kind,
            "prior": [alpha0, beta0], "level": level}
