"""Dependence between prompts and between runs: cluster labels and the band that uses them.

The plain band treats prompts as independent draws. Two common designs break
that:

- clustered prompts (several problems from one competition, paraphrases of one
  problem): their differences move together, so the band draws one Gaussian
  multiplier per cluster (:func:`rlvr_boundary.core.compare.cluster_influence`);
- several runs per model (training seeds of the recipe, or repeated sampling
  runs): the question "does this recipe narrow the boundary" averages over runs,
  and the band adds a multiplier per run
  (:func:`rlvr_boundary.core.compare.run_influence`).

Both reduce to the plain band when every cluster holds one prompt and each
model has one run. This module turns the user's rule into labels and picks the
influence rows; the arithmetic lives in the core.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.verifier_error import verifier_error_band
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError

__all__ = ["cluster_labels", "run_curves", "structured_band", "verifier_error_block",
           "PREFIX_RULE"]

PREFIX_RULE = "id-prefix:"
"""``--cluster-by id-prefix:SEP`` clusters prompts by their id up to the last SEP."""


def cluster_labels(rule: str, prompt_ids, columns: list[dict]) -> np.ndarray:
    """Cluster label of every prompt, from a field of the inputs or a prefix of the id.

    Parameters
    ----------
    rule
        A field name carried by the input rows (e.g. ``source``), or
        ``id-prefix:SEP``: the id up to its last ``SEP`` (``fresh32k-aime24-3``
        with ``-`` gives ``fresh32k-aime24``; an id without ``SEP`` is its own
        cluster).
    prompt_ids
        ``(P,)`` aligned prompt ids.
    columns
        For each input (base, trained model, ...), a dict ``field -> (P,)`` values
        aligned to ``prompt_ids`` (absent fields omitted).

    Returns
    -------
    numpy.ndarray
        ``(P,)`` str labels.
    """
    ids = np.asarray(prompt_ids, dtype=object)
    if rule.startswith(PREFIX_RULE):
        sep = rule[len(PREFIX_RULE):]
        if not sep:
            raise InputError("--cluster-by id-prefix:SEP needs a separator, e.g. id-prefix:-")
        return _at_least_two(rule, np.array([str(i).rsplit(sep, 1)[0] for i in ids], dtype=object))
    found = [col[rule] for col in columns if rule in col]
    if not found:
        have = sorted({k for col in columns for k in col})
        raise InputError(f"--cluster-by {rule}: no input carries the field '{rule}' for every "
                         f"prompt (fields found: {', '.join(have) or 'none'}); or use "
                         "id-prefix:SEP")
    labels = np.array([str(v) for v in found[0]], dtype=object)
    for other in found[1:]:
        bad = np.flatnonzero(labels != np.array([str(v) for v in other], dtype=object))
        if bad.size:
            raise InputError(f"--cluster-by {rule}: the inputs disagree on prompt "
                             f"'{ids[bad[0]]}' ({labels[bad[0]]!r} vs {other[bad[0]]!r})")
    return _at_least_two(rule, labels)


def _at_least_two(rule: str, labels: np.ndarray) -> np.ndarray:
    if np.unique(labels.astype(str)).size < 2:
        raise InputError(f"--cluster-by {rule}: every prompt falls in one cluster "
                         f"({labels[0]!r}); a clustered band needs at least 2 clusters")
    return labels


def run_curves(n_runs, c_runs, ks) -> np.ndarray:
    """``(R, P, K)`` per-run, per-prompt pass@k from ``(R, P)`` counts."""
    n_runs, c_runs = np.atleast_2d(n_runs), np.atleast_2d(c_runs)
    return np.stack([pass_at_k(n, c, ks) for n, c in zip(n_runs, c_runs)])


def structured_band(curves_base, curves_rl, *, groups=None, n_multipliers: int = 4000,
                    alpha: float = 0.05, seed: int = 0) -> dict:
    """Simultaneous band for ``D(k)`` with clusters and/or several runs per model.

    Parameters
    ----------
    curves_base, curves_rl
        ``(R', P, K)`` and ``(R, P, K)`` per-run per-prompt pass@k.
    groups
        ``(P,)`` cluster labels or None.

    Returns
    -------
    dict
        The output of :func:`rlvr_boundary.core.compare.simultaneous_band` plus
        ``unit`` (what the multipliers are drawn over), ``n_clusters`` and
        ``n_runs`` (per model). With clusters or runs the per-budget critical
        values carry the small-sample t correction (``G - 1`` degrees of
        freedom for clusters, Satterthwaite's with runs).
    """
    R, Rb = curves_rl.shape[0], curves_base.shape[0]
    n_clusters = None if groups is None else int(np.unique(np.asarray(groups)).size)
    if R == 1 and Rb == 1:
        # Independent prompts: no small-sample correction (the reference band).
        df = None if groups is None else n_clusters - 1
        band = cc.simultaneous_band(curves_rl[0] - curves_base[0], n_multipliers=n_multipliers,
                                    alpha=alpha, seed=seed, groups=groups, df=df)
    else:
        mean, H, df = cc.run_influence(curves_rl, curves_base, groups=groups)
        band = cc.simultaneous_band(mean, influence=H, n_multipliers=n_multipliers,
                                    alpha=alpha, seed=seed, df=df)
    unit = "clusters of prompts" if groups is not None else "prompts"
    if R > 1 or Rb > 1:
        unit += " and runs"
    band.update({"unit": unit, "n_clusters": n_clusters, "n_runs": {"base": Rb, "rl": R}})
    return band


def verifier_error_block(nb, cb, nr, cr, ks, plain: dict, rates, *, n_boot: int = 100,
                         alpha: float = 0.05, seed: int = 0, groups=None) -> dict:
    """The band under verifier error rates, and whether the plain verdicts survive it.

    Parameters
    ----------
    nb, cb, nr, cr
        ``(P,)`` counts.
    ks
        ``(K,)`` budgets.
    plain
        The comparison result with ``gain_budgets`` and ``loss_budgets``.
    rates
        ``(fp, fn)``: false-positive and false-negative rates of the verifier.
    """
    fp, fn = rates
    out = verifier_error_band(nb, cb, nr, cr, ks, fp=fp, fn=fn, n_boot=n_boot, alpha=alpha,
                              seed=seed, groups=groups)
    gain, loss = set(out["gain"]), set(out["loss"])
    kept_gain = [k for k in plain["gain_budgets"] if k in gain]
    kept_loss = [k for k in plain["loss_budgets"] if k in loss]
    return {"fp": fp, "fn": fn, "diff": out["diff"], "lower": out["lower"], "upper": out["upper"],
            "critical_value": out["critical_value"], "gain_budgets": out["gain"],
            "loss_budgets": out["loss"], "first_loss_set": out["first_loss_set"],
            "gain_survives": kept_gain, "loss_survives": kept_loss,
            "verdicts_survive": len(kept_gain) == len(plain["gain_budgets"])
            and len(kept_loss) == len(plain["loss_budgets"]),
            "n_boot": n_boot, "model_based": True,
            "method": "NPMLE of true success rates with the verifier's error rates in the "
                      "likelihood; prompt-bootstrap sup-t band"}
