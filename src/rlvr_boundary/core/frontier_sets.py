"""The hard frontier: problems no model solves at K, and the 0 -> 1 transitions.

Pure numpy/scipy. "Solved at K" is the audit's coverage rule
(:mod:`rlvr_boundary.core.coverage`): the unbiased pass@K of the problem is at
least ``1 - zeta``; at ``K = n`` that is at least one correct sample among the n
drawn. A 0 -> 1 transition is a problem the base does not solve at K and the
trained model does; 1 -> 0 the reverse (ProRL, Liu et al., "ProRL: Prolonged
Reinforcement Learning Expands Reasoning Boundaries in Large Language Models",
arXiv 2505.24864, reports these counts).
"""

from __future__ import annotations

import numpy as np

__all__ = ["wilson_interval", "frontier_shares"]


def wilson_interval(x: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``x / n``.

    Parameters
    ----------
    x
        Successes, ``0 <= x <= n``.
    n
        Trials, ``n >= 1``.
    alpha
        1 - confidence level.

    Returns
    -------
    tuple of float
        ``(lower, upper)`` in [0, 1].

    Notes
    -----
    With :math:`\\hat p = x/n` and :math:`z = \\Phi^{-1}(1 - \\alpha/2)`,

    .. math:: \\frac{\\hat p + z^2/(2n) \\pm z \\sqrt{\\hat p(1-\\hat p)/n + z^2/(4n^2)}}
              {1 + z^2/n}.

    References
    ----------
    E. B. Wilson, "Probable inference, the law of succession, and statistical
    inference", JASA 22 (1927).
    """
    from scipy.stats import norm

    if not (isinstance(n, (int, np.integer)) and n >= 1 and 0 <= x <= n):
        raise ValueError("need integers 0 <= x <= n and n >= 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    z = float(norm.ppf(1 - alpha / 2))
    p = x / n
    mid = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    den = 1 + z * z / n
    return max(0.0, (mid - half) / den), min(1.0, (mid + half) / den)


def frontier_shares(n_prompts: int, counts: dict[str, int], alpha: float = 0.05) -> dict:
    """Each count as a share of the prompts with its Wilson interval (prompts are the
    sampling unit).

    Parameters
    ----------
    n_prompts
        Prompts audited, P.
    counts
        ``{name: count}``, each ``0 <= count <= P`` (e.g. ``gained``: 0 -> 1,
        ``lost``: 1 -> 0, ``unsolved``: solved by no model).
    alpha
        1 - confidence level.

    Returns
    -------
    dict
        ``{name: {"count", "share", "ci": [lo, hi]}}``.

    Notes
    -----
    The interval is for the share among prompts drawn like these, each with the
    samples drawn: it treats the prompts as independent draws and the solved-at-K
    event of each as fixed. It says nothing about whether an unsolved problem is
    solvable with more samples.
    """
    out = {}
    for name, x in counts.items():
        lo, hi = wilson_interval(int(x), int(n_prompts), alpha)
        out[name] = {"count": int(x), "share": int(x) / int(n_prompts), "ci": [lo, hi]}
    return out
