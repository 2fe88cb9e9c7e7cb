"""cover@tau as a curve over the reliability threshold tau, with a simultaneous band.

Pure numpy. Definition (Dragoi, Pintilie, Gogianu and Brad, "Beyond Pass@k:
Breadth-Depth Metrics for Reasoning Boundaries", arXiv 2510.08325): for
problems with per-sample success rates ``p_i``,

.. math:: G(\\tau) = \\frac{1}{T} \\sum_i \\mathbf 1\\{p_i \\ge \\tau\\},

the share of problems solved with reliability at least ``tau``. Low tau measures
breadth (problems solved at all), high tau depth (problems solved reliably). The
paper shows pass@k is the Beta(1, k)-weighted average of this curve, so at large
k pass@k is dominated by tau near 0, where lucky guesses on a small answer space
count as fully as reliable solutions.

What we compute, and the deviation from the paper
--------------------------------------------------
The rates ``p_i`` are unknown; with ``n_i`` samples of problem ``i`` we observe
``c_i``. The curve we draw is the plug-in ``G_hat(tau) = mean_i 1{c_i >= tau n_i}``
(as the paper evaluates it). Its expectation is not ``G(tau)`` but

.. math:: G_n(\\tau) = E_i\\, P(\\mathrm{Binomial}(n_i, p_i) \\ge \\tau n_i),

the cover *measured with n samples per problem*: a problem whose rate sits near tau
is counted in or out by the luck of its n draws. The band below is for ``G_n``. It
is the Dvoretzky-Kiefer-Wolfowitz band with Massart's constant: with the problems
drawn independently from a population,

.. math:: P\\Big(\\sup_\\tau |\\hat G(\\tau) - G_n(\\tau)| > \\varepsilon\\Big)
          \\le 2 e^{-2 P \\varepsilon^2},

so ``eps = sqrt(log(2 / alpha) / (2 P))`` gives a band that holds at every tau at
once with probability at least ``1 - alpha``, for any distribution of rates and any
sample sizes (``c_i / n_i`` is one draw per problem of a random variable; ``G_hat``
is one minus its empirical distribution function just below tau). It is exact in
the limit for continuous distributions and conservative for discrete ones (rates
``c/n`` take n + 1 values), so its coverage is at least the nominal level;
``benchmarks/calibration.py`` measures it (docs/statistics.md). For the infinite-
sample ``G(tau)`` the band is not calibrated: at small n the plug-in's bias near
mass points of the rates can exceed eps, and the calibration table prints that
coverage too.

The difference of two models' curves on the same problems gets the band of the two
DKW bands at level ``1 - alpha / 2`` each (a union bound): with probability at least
``1 - alpha`` both hold, and then ``G_rl - G_base`` lies in
``[lo_rl - hi_base, hi_rl - lo_base]`` at every tau. It ignores the pairing and is
conservative (about 2.1 eps wide at 95%); it never claims more than it has.

References
----------
M. Dragoi et al., arXiv 2510.08325 (2025). A. Dvoretzky, J. Kiefer and J. Wolfowitz,
Ann. Math. Statist. 27 (1956). P. Massart, "The tight constant in the
Dvoretzky-Kiefer-Wolfowitz inequality", Ann. Probab. 18 (1990).
"""

from __future__ import annotations

import math

import numpy as np

from rlvr_boundary.core.metrics import cover_at_tau
from rlvr_boundary.core.passk import check_counts

__all__ = ["TAU_GRID", "cover_band", "cover_difference_band", "dkw_halfwidth"]

#: The curve's thresholds: 0.01, 0.02, ..., 1.00 (tau = 0 is 1 for every model).
TAU_GRID = tuple(round(j / 100, 2) for j in range(1, 101))


def dkw_halfwidth(n_problems: int, alpha: float = 0.05) -> float:
    """Half-width of the DKW band for ``n_problems`` problems at level ``1 - alpha``.

    Parameters
    ----------
    n_problems
        Number of problems P >= 1.
    alpha
        1 - confidence level, in (0, 1).

    Returns
    -------
    float
        ``sqrt(log(2 / alpha) / (2 P))`` (Massart's constant).
    """
    if int(n_problems) != n_problems or n_problems < 1:
        raise ValueError("need at least one problem")
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * int(n_problems)))


def cover_band(n, c, taus=TAU_GRID, alpha: float = 0.05) -> dict:
    """cover@tau over ``taus`` with its simultaneous DKW band.

    Parameters
    ----------
    n, c
        ``(P,)`` samples and correct samples per problem.
    taus
        ``(T,)`` thresholds in [0, 1].
    alpha
        1 - confidence level of the band (simultaneous over every tau).

    Returns
    -------
    dict
        ``taus``, ``cover`` (plug-in, ``(T,)``), ``lower``, ``upper`` (clipped to
        [0, 1]), ``halfwidth`` and ``level``.

    Notes
    -----
    ``cover[j] = mean_i 1{c_i >= tau_j n_i}``; ``lower``/``upper`` are
    ``cover -/+ sqrt(log(2/alpha) / (2P))``: a band for the cover measured with
    these n per problem (see the module docstring for why not for the
    infinite-sample cover).
    """
    n, c = check_counts(n, c)
    t = [float(x) for x in np.atleast_1d(np.asarray(taus, float))]
    g = cover_at_tau(n, c, t)  # (T,)
    eps = dkw_halfwidth(n.shape[0], alpha)
    return {"taus": t, "cover": g.tolist(), "lower": np.clip(g - eps, 0, 1).tolist(),
            "upper": np.clip(g + eps, 0, 1).tolist(), "halfwidth": eps, "level": 1 - alpha}


def cover_difference_band(n_base, c_base, n_rl, c_rl, taus=TAU_GRID,
                          alpha: float = 0.05) -> dict:
    """``G_rl(tau) - G_base(tau)`` on the same problems, with a simultaneous band.

    Parameters
    ----------
    n_base, c_base, n_rl, c_rl
        ``(P,)`` counts of the two models on the same P problems (same order).
    taus
        ``(T,)`` thresholds in [0, 1].
    alpha
        1 - confidence level of the band.

    Returns
    -------
    dict
        ``taus``, ``diff`` ``(T,)``, ``lower``, ``upper`` (clipped to [-1, 1]),
        ``level``, and ``verdict`` per tau: ``"gain"`` (band above 0), ``"loss"``
        (below 0) or ``"unclear"``.

    Notes
    -----
    The union of the two models' DKW bands at ``alpha / 2`` each: the difference
    band is ``[lo_rl - hi_base, hi_rl - lo_base]``. Conservative: it ignores that
    the two models answer the same problems.
    """
    n_base, c_base = check_counts(n_base, c_base)
    n_rl, c_rl = check_counts(n_rl, c_rl)
    if n_base.shape != n_rl.shape:
        raise ValueError("the two models must be counted on the same problems")
    b = cover_band(n_base, c_base, taus, alpha / 2)
    r = cover_band(n_rl, c_rl, taus, alpha / 2)
    gb, gr = np.asarray(b["cover"]), np.asarray(r["cover"])  # (T,)
    lo = np.clip(np.asarray(r["lower"]) - np.asarray(b["upper"]), -1, 1)
    hi = np.clip(np.asarray(r["upper"]) - np.asarray(b["lower"]), -1, 1)
    verdict = np.where(lo > 0, "gain", np.where(hi < 0, "loss", "unclear"))
    return {"taus": b["taus"], "diff": (gr - gb).tolist(), "lower": lo.tolist(),
            "upper": hi.tolist(), "level": 1 - alpha, "verdict": verdict.tolist()}
