"""The count-free pass@k price diagnostic ("No Free Lunch in RLVR").

Two kinds of input, both small tables a user can paste:

- **rates**: two columns, the per-prompt success rates of base and RL on the
  same prompts. The curves are the rate curves ``1 - (1 - p)^k`` (exact if the
  rates are true rates, plug-in if they are ``c/n``), so any budget k > 0 is
  allowed and the crossing bound of :func:`rlvr_boundary.core.compare.crossing_bound`
  applies to them exactly.
- **curve**: three columns ``k, pass@k base, pass@k RL`` as papers print them.
  Only the printed budgets are known: crossings are reported as intervals
  between printed budgets (plus a log-k interpolation), and the price is the
  largest printed loss.

Reading the table is :func:`rlvr_boundary.io.formats.read_price_table`'s job;
this module only computes.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.analysis.options import PriceOptions
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k_plugin
from rlvr_boundary.errors import InputError


def diagnose_rates(p_base, p_rl, ks, *, round_decimals: int | None = None) -> dict:
    """Crossings, bound, price and k* of the rate curves of two models.

    Parameters
    ----------
    p_base, p_rl
        ``(P,)`` success rates in [0, 1] on the same prompts.
    ks
        ``(K,)`` budgets (> 0).
    """
    pb, pr = np.asarray(p_base, float), np.asarray(p_rl, float)
    ks = np.asarray(ks)
    curve_b = pass_at_k_plugin(pb, ks).mean(axis=0)  # (K,)
    curve_r = pass_at_k_plugin(pr, ks).mean(axis=0)  # (K,)
    diff = curve_r - curve_b
    bound = cc.crossing_bound(pb, pr, decimals=round_decimals)
    crossings = cc.grid_crossings(ks, diff)
    price_v, price_k = cc.price(ks, diff)
    return {
        "input_kind": "rates",
        "n_prompts": int(pb.size),
        "ks": ks,
        "pass_at_k": {"base": curve_b, "rl": curve_r},
        "diff": diff,
        "crossings": crossings,
        "n_crossings": len(crossings),
        "crossing_bound": bound["bound"],
        "crossing_bound_V": bound["V"],
        "exponential_sum": {"q": bound["q"], "a": bound["a"]},
        "k_star": cc.first_negative(ks, diff),
        "price": price_v,
        "price_k": price_k,
        # As k -> infinity pass@k -> share of prompts with p > 0 (coverage).
        "asymptotic_diff": float(np.mean(pr > 0) - np.mean(pb > 0)),
    }


def diagnose_curve(ks, curve_base, curve_rl) -> dict:
    """Crossing intervals and price of two published aggregate pass@k curves."""
    ks = np.asarray(ks, float)
    b, r = np.asarray(curve_base, float), np.asarray(curve_rl, float)
    if np.any(np.diff(ks) <= 0):
        raise InputError("budgets k must increase strictly down the rows", field="k")
    if np.any(ks <= 0):
        raise InputError("budgets k must be > 0", field="k")
    if np.any((b < 0) | (b > 1) | (r < 0) | (r > 1)):
        raise InputError("pass@k values must lie in [0, 1] (give fractions, not percent)")
    diff = r - b
    crossings = cc.grid_crossings(ks, diff)
    price_v, price_k = cc.price(ks, diff)
    ks_out = [int(k) if float(k).is_integer() else float(k) for k in ks]
    return {
        "input_kind": "curve",
        "ks": ks_out,
        "pass_at_k": {"base": b, "rl": r},
        "diff": diff,
        "crossings": crossings,
        "n_crossings": len(crossings),
        "crossing_intervals": [[c["k_before"], c["k_after"]] for c in crossings],
        "k_star": cc.first_negative(ks_out, diff),
        "price": price_v,
        "price_k": price_k,
        "note": "only the printed budgets are known: a crossing lies somewhere in its interval, "
                "and the price is the largest loss at a printed budget (a lower bound on the "
                "largest loss over all budgets in range)",
    }


def diagnose(kind: str, values: np.ndarray, opts: PriceOptions) -> dict:
    """Run the diagnostic of ``kind`` on a table read by :func:`rlvr_boundary.io.formats.read_price_table`.

    Parameters
    ----------
    kind
        "rates" (columns: base rate, RL rate) or "curve" (k, pass@k base, pass@k RL).
    values
        ``(rows, 2)`` or ``(rows, 3)`` finite numbers, checked by the reader.
    opts
        Options (budget grid for rates, rounding of the bound).
    """
    if kind == "rates":
        ks = np.asarray(opts.grid if opts.grid is not None else np.arange(1, 1025))
        return diagnose_rates(values[:, 0], values[:, 1], ks, round_decimals=opts.round_decimals)
    if opts.ks:
        raise InputError("--ks does not apply to a published curve: its budgets are its rows")
    return diagnose_curve(values[:, 0], values[:, 1], values[:, 2])
