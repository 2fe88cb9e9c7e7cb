"""Token replacement: how much a sample's verdict depends on the token at each position.

The intervention (the RLVR report of Renmin University's Gaoling School of AI,
"Decomposing the Entropy-Performance Exchange" and its extension): take a sampled
completion, replace the token at a relative position with an alternative,
resample the rest of the completion, and verify it again. Comparing the new
verdicts with the original one shows where in a completion the outcome is
decided, and whether low-perplexity samples follow more robust paths (the
report finds smaller accuracy changes for them, and large changes when the
first tokens are replaced).

This module aggregates the measured records; the model part (sampling,
replacing, resampling) lives in ``rlvr_boundary.lab.replace``.

Definitions, per record ``r`` (one sample, one position; ``o_r`` the sample's
original 0/1 verdict, ``y_r`` the share of correct continuations after the
replacement, ``c_r`` the same with the original token kept, a control for the
resampling itself):

- change ``d_r = y_r - o_r`` (signed change in accuracy),
- flip rate ``|y_r - o_r|`` (share of continuations whose verdict differs),
- effect ``y_r - c_r`` (change caused by the replacement beyond resampling),
- break rate ``1 - y_r`` over the records of originally correct samples and
  fix rate ``y_r`` over those of originally wrong ones (the flip rate mixes the
  two in the proportion of the original accuracy).

Samples are grouped into tertiles of their log-perplexity
``log PPL = -(1/T) sum_t log p(y_t)``, edges at the 1/3 and 2/3 quantiles of the
samples' values (a sample on an edge goes to the lower group).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ppl_tertiles", "replacement_effects"]

_STATS = ("original", "replaced", "control", "change", "control_change", "flip", "effect")


def ppl_tertiles(log_ppl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(edges (2,), group (N,))``: tertile edges of ``log_ppl`` and each sample's group 0/1/2."""
    lp = np.asarray(log_ppl, dtype=np.float64)  # (N,)
    if lp.ndim != 1 or lp.size == 0 or not np.all(np.isfinite(lp)):
        raise ValueError("log_ppl must be a non-empty 1-D array of finite values")
    edges = np.quantile(lp, [1 / 3, 2 / 3])  # (2,)
    return edges, np.searchsorted(edges, lp, side="left")  # (N,): lp <= edge -> lower group


def _rows(original, replaced, control) -> dict:
    d = {"original": original, "replaced": replaced, "control": control,
         "change": replaced - original, "control_change": control - original,
         "flip": np.abs(replaced - original), "effect": replaced - control}
    return d


def _mean_se(v: np.ndarray) -> tuple[float | None, float | None]:
    return (float(v.mean()) if v.size else None,
            float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None)


def _summ(vals: dict, n_units: int) -> dict:
    out = {"n": int(n_units)}
    for k in _STATS:
        out[k], out[k + "_se"] = _mean_se(vals[k])
    right = vals["original"] == 1
    out["break"], out["break_se"] = _mean_se(1 - vals["replaced"][right])
    out["fix"], out["fix_se"] = _mean_se(vals["replaced"][~right])
    return out


def replacement_effects(sample, position_bin, original, replaced, control, log_ppl,
                        n_bins: int, category=None) -> dict:
    """Changes in accuracy after token replacement, by relative position and perplexity tertile.

    Parameters
    ----------
    sample
        ``(M,)`` index of the sample each record belongs to (into ``log_ppl``).
    position_bin
        ``(M,)`` relative-position bin of the replaced token, in ``0 .. n_bins - 1``.
    original
        ``(M,)`` 0/1 verdict of the original sample.
    replaced, control
        ``(M,)`` share of correct continuations with the token replaced / kept.
    log_ppl
        ``(N,)`` log-perplexity of every sample.
    n_bins
        Number of relative-position bins.
    category
        Optional ``(M,)`` label of each replaced token (e.g. its kind: digit,
        operator, word).

    Returns
    -------
    dict
        ``tertile_edges`` (2,); ``by_position``: one dict per bin with ``n`` and the mean
        and standard error of ``original``, ``replaced``, ``control``, ``change``,
        ``control_change``, ``flip`` and ``effect`` (records of a bin come from different
        samples, so the standard error is over records), and ``break`` / ``fix`` rates;
        ``by_tertile``: the same per perplexity group (low, mid, high), with each
        sample's records averaged first and the standard error over samples;
        ``by_category`` (with ``category``): the same per label, over records (a
        sample's records in one category are not independent: read its standard
        errors as lower bounds); ``grid``: ``change``, ``flip`` and ``effect``
        means per (tertile, bin) and ``break`` (over originally correct samples),
        ``(3, n_bins)`` nested lists (None where empty).

    Notes
    -----
    ``change = replaced - original``, ``flip = |replaced - original|``,
    ``effect = replaced - control``; see the module docstring.
    """
    sample = np.asarray(sample, dtype=np.int64)  # (M,)
    pos = np.asarray(position_bin, dtype=np.int64)  # (M,)
    o = np.asarray(original, dtype=np.float64)  # (M,)
    y = np.asarray(replaced, dtype=np.float64)  # (M,)
    c = np.asarray(control, dtype=np.float64)  # (M,)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if not (sample.shape == pos.shape == o.shape == y.shape == c.shape) or sample.ndim != 1:
        raise ValueError("sample, position_bin, original, replaced and control must be 1-D "
                         "arrays of one length")
    if sample.size == 0:
        raise ValueError("no records")
    edges, group = ppl_tertiles(log_ppl)  # (2,), (N,)
    if sample.min() < 0 or sample.max() >= group.size:
        raise ValueError("sample indices must index log_ppl")
    if pos.min() < 0 or pos.max() >= n_bins:
        raise ValueError(f"position bins must be in 0..{n_bins - 1}")
    for name, v in (("original", o), ("replaced", y), ("control", c)):
        if np.any((v < 0) | (v > 1)) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be shares in [0, 1]")
    rows = _rows(o, y, c)
    g = group[sample]  # (M,)

    by_position = []
    for b in range(n_bins):
        m = pos == b
        by_position.append(_summ({k: v[m] for k, v in rows.items()}, m.sum()))

    # Per tertile: average each sample's records first (its positions are not independent).
    samples = np.unique(sample)  # (N',)
    per_sample = {}
    for k, v in rows.items():
        tot = np.bincount(sample, weights=v, minlength=group.size)
        cnt = np.bincount(sample, minlength=group.size)
        per_sample[k] = tot[samples] / cnt[samples]  # (N',)
    sg = group[samples]  # (N',)
    by_tertile = [_summ({k: v[sg == t] for k, v in per_sample.items()}, (sg == t).sum())
                  for t in range(3)]

    grid = {}
    cells = dict(rows, **{"break": 1 - y})
    for k in ("change", "flip", "effect", "break"):
        tab = [[None] * n_bins for _ in range(3)]
        for t in range(3):
            for b in range(n_bins):
                m = (g == t) & (pos == b) & ((o == 1) if k == "break" else True)
                if m.any():
                    tab[t][b] = float(cells[k][m].mean())
        grid[k] = tab
    by_category = None
    if category is not None:
        cat = np.asarray(category, dtype=object)  # (M,)
        if cat.shape != sample.shape:
            raise ValueError("category must have one label per record")
        by_category = {str(k): _summ({n: v[cat == k] for n, v in rows.items()},
                                     (cat == k).sum()) for k in sorted(set(cat.tolist()))}
    return {"tertile_edges": edges.tolist(), "by_category": by_category, "n_bins": int(n_bins),
            "n_samples": int(samples.size), "n_records": int(sample.size),
            "by_position": by_position, "by_tertile": by_tertile, "grid": grid}
