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

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k_plugin
from rlvr_boundary.errors import InputError


def rate_histogram(p) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct rates, counts)`` of ``(P,)`` success rates."""
    v, c = np.unique(np.asarray(p, float), return_counts=True)
    return v, c


def crossing_bound_from_histograms(base, rl, *, decimals: int | None = None) -> dict:
    """:func:`rlvr_boundary.core.compare.crossing_bound` from each model's histogram of rates.

    The bound depends on the rates only through the two multisets: with
    ``q = 1 - p``, :math:`a_j = (\\#\\{i: q_{B,i} = q_j\\} - \\#\\{i: q_{R,i} = q_j\\})/P`.
    So a table of any length reduces to ``(distinct rates, counts)`` per model,
    and this gives the same ``V``, ``bound``, ``q`` and ``a`` as the row-wise function
    (a test checks it against that function).

    Parameters
    ----------
    base, rl
        ``(rates, counts)`` each; the counts of both sum to the number of prompts P.
    decimals
        As in ``crossing_bound``: round ``q`` before merging equal values.
    """
    (vb, cb), (vr, cr) = base, rl
    P = int(np.sum(cb))
    if P < 1 or int(np.sum(cr)) != P:
        raise ValueError("both histograms must count the same number (>= 1) of prompts")
    q = np.concatenate([1.0 - np.asarray(vb, float), 1.0 - np.asarray(vr, float)])
    w = np.concatenate([np.asarray(cb, float), -np.asarray(cr, float)])
    if decimals is not None:
        q = np.round(q, decimals)
    uq, inv = np.unique(q, return_inverse=True)  # ascending q
    counts = np.bincount(inv, weights=w, minlength=uq.size)
    a = counts / P
    keep = (uq > 0) & (a != 0)
    q_kept, a_kept = uq[keep], a[keep]
    V = int(cc.sign_changes(a_kept)) if a_kept.size else 0
    zero_at_0 = bool(round(counts[uq > 0].sum()) == 0)
    bound = max(V - 1, 0) if zero_at_0 else V
    return {"V": V, "bound": int(bound), "zero_at_k0": zero_at_0,
            "q": q_kept.tolist(), "a": a_kept.tolist()}


def _mean_curve(values, counts, ks, P: int) -> np.ndarray:
    """``(K,)`` mean of ``1 - (1 - p)^k`` over prompts, from distinct rates and counts."""
    out = np.zeros(len(ks))
    for s in range(0, len(values), 4096):  # (4096, K) blocks: bounded memory
        out += counts[s:s + 4096] @ pass_at_k_plugin(values[s:s + 4096], ks)
    return out / P


def diagnose_rates(p_base, p_rl, ks, *, round_decimals: int | None = None) -> dict:
    """Crossings, bound, price and k* of the rate curves of two models.

    Parameters
    ----------
    p_base, p_rl
        ``(P,)`` success rates in [0, 1] on the same prompts, or each a
        histogram ``(distinct rates, counts)`` (:func:`rate_histogram`) of them.
    ks
        ``(K,)`` budgets (> 0).
    """
    hb = p_base if isinstance(p_base, tuple) else rate_histogram(p_base)
    hr = p_rl if isinstance(p_rl, tuple) else rate_histogram(p_rl)
    P = int(np.sum(hb[1]))
    ks = np.asarray(ks)
    curve_b = _mean_curve(hb[0], hb[1], ks, P)  # (K,)
    curve_r = _mean_curve(hr[0], hr[1], ks, P)  # (K,)
    diff = curve_r - curve_b
    bound = crossing_bound_from_histograms(hb, hr, decimals=round_decimals)
    crossings = cc.grid_crossings(ks, diff)
    price_v, price_k = cc.price(ks, diff)
    return {
        "input_kind": "rates",
        "n_prompts": P,
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
        "asymptotic_diff": float((hr[1][hr[0] > 0].sum() - hb[1][hb[0] > 0].sum()) / P),
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


def diagnose(kind: str, values: np.ndarray, opts) -> dict:
    """Run the diagnostic of ``kind`` on a table read by :func:`rlvr_boundary.io.formats.read_price_table`.

    Parameters
    ----------
    kind
        "rates" (columns: base rate, RL rate) or "curve" (k, pass@k base, pass@k RL).
    values
        ``(rows, 2)`` or ``(rows, 3)`` finite numbers, checked by the reader; for
        rates also the reader's ``{"base": (rates, counts), "rl": (rates, counts)}``.
    opts
        The workflow's ``PriceOptions`` (read here: ``grid``, the budgets of rate curves,
        None for 1..1024; ``ks``; ``round_decimals``, the rounding of the bound).
    """
    if kind == "rates":
        ks = np.asarray(opts.grid if opts.grid is not None else np.arange(1, 1025))
        if isinstance(values, dict):  # histograms from the streaming reader
            return diagnose_rates(values["base"], values["rl"], ks,
                                  round_decimals=opts.round_decimals)
        return diagnose_rates(values[:, 0], values[:, 1], ks, round_decimals=opts.round_decimals)
    if opts.ks:
        raise InputError("--ks does not apply to a published curve: its budgets are its rows")
    return diagnose_curve(values[:, 0], values[:, 1], values[:, 2])
