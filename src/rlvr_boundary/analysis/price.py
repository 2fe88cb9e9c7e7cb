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
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import pass_at_k_plugin
from rlvr_boundary.errors import InputError


@dataclass
class PriceOptions:
    """Options of ``rlvr-boundary price``."""

    ks: str | None = None
    """Budget grid for rate input, e.g. "1-1024" (default) or "1,4,16,64,256"."""
    kind: str = "auto"
    """Input kind: "rates" (2 columns), "curve" (3 columns: k, base, RL) or "auto" by column count."""
    round_decimals: int | None = None
    """Round rates to this many decimals before merging equal values in the crossing bound."""


def read_columns(text: str, source: str) -> tuple[list[str] | None, np.ndarray, list[int]]:
    """Parse a CSV/TSV/whitespace table of numbers with an optional header row.

    Returns
    -------
    tuple
        ``(header or None, values (rows, cols), line numbers)``.
    """
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise InputError("no data rows", path=source)
    sample = lines[0][1]
    delim = "\t" if "\t" in sample else "," if "," in sample else None
    rows, numbers, header = [], [], None
    for i, ln in lines:
        cells = next(csv.reader(io.StringIO(ln), delimiter=delim)) if delim else ln.split()
        cells = [c.strip() for c in cells]
        try:
            vals = [float(c) for c in cells]
        except ValueError:
            if header is None and not rows:
                header = cells
                continue
            raise InputError(f"expected numbers, found {cells}", path=source, line=i) from None
        if rows and len(vals) != len(rows[0]):
            raise InputError(f"expected {len(rows[0])} columns, found {len(vals)}", path=source,
                             line=i)
        if not all(math.isfinite(v) for v in vals):
            raise InputError("values must be finite numbers", path=source, line=i)
        rows.append(vals)
        numbers.append(i)
    if not rows:
        raise InputError("no data rows", path=source)
    return header, np.array(rows, dtype=float), numbers


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


def diagnose_text(text: str, source: str, opts: PriceOptions) -> dict:
    """Parse the table in ``text`` and run the matching diagnostic."""
    from rlvr_boundary.analysis.pairwise import parse_ks

    header, values, lines = read_columns(text, source)
    ncol = values.shape[1]
    kind = opts.kind
    if kind == "auto":
        kind = {2: "rates", 3: "curve"}.get(ncol)
        if kind is None:
            raise InputError(f"expected 2 columns (base rate, RL rate) or 3 (k, pass@k base, "
                             f"pass@k RL), found {ncol}", path=source, line=lines[0])
    want = 2 if kind == "rates" else 3
    if ncol != want:
        raise InputError(f"--kind {kind} needs {want} columns, found {ncol}", path=source,
                         line=lines[0])
    if kind == "rates":
        bad = np.flatnonzero(((values < 0) | (values > 1)).any(axis=1))
        if bad.size:
            raise InputError(f"success rates must lie in [0, 1], found {values[bad[0]].tolist()}",
                             path=source, line=lines[bad[0]])
        ks = parse_ks(opts.ks or "1-1024", 10**9)
        out = diagnose_rates(values[:, 0], values[:, 1], ks, round_decimals=opts.round_decimals)
    else:
        if opts.ks:
            raise InputError("--ks does not apply to a published curve: its budgets are its rows")
        try:
            out = diagnose_curve(values[:, 0], values[:, 1], values[:, 2])
        except InputError as exc:
            exc.path = source
            exc.args = (str(exc),)
            raise
    out["columns"] = header
    return out


def read_source(path: str | None) -> tuple[str, str]:
    """Text of a file, or of stdin when ``path`` is None or "-"."""
    import sys

    if path in (None, "-"):
        return sys.stdin.read(), "<stdin>"
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not valid UTF-8 ({exc.reason})", path=p) from None
