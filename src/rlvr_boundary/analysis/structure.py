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

import re

import numpy as np

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.verifier_error import verifier_error_band
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError

__all__ = ["band_checks", "cluster_labels", "cluster_groups", "run_curves", "sampling_unit_block",
           "split_runs", "structured_band", "verifier_error_block",
           "BAND_VALIDATED_PROMPTS", "PREFIX_RULE"]

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
            "n_boot": n_boot, "model_based": True, "measured": _verifier_measured(),
            "method": "NPMLE of true success rates with the verifier's error rates in the "
                      "likelihood; prompt-bootstrap sup-t band"}


#: Fewest independent prompts at which the calibration study measured the plain band
#: (with its small-sample correction) within [0.93, 0.97] of coverage at the 95% level.
#: Below it the result carries a warning with the coverage measured there.
BAND_VALIDATED_PROMPTS = 50


def band_checks(band: dict, diff, degenerate, *, alpha: float = 0.05) -> dict:
    """What the band can and cannot vouch for: small-sample correction, too few prompts, warning.

    Parameters
    ----------
    band
        The output of :func:`structured_band`.
    diff
        ``(K,)`` D(k).
    degenerate
        ``(K,)`` bool: budgets whose per-prompt differences have no spread.

    Returns
    -------
    dict
        ``small_sample`` (the correction applied to independent prompts, or
        None), ``df_range`` (``[min, max]`` degrees of freedom of the critical
        values, None without), ``too_few_prompts`` and ``min_prompts`` (see
        :func:`rlvr_boundary.core.compare.min_prompts`), ``no_variance``: the
        indices of budgets where every prompt has the same nonzero difference
        (never supported: a zero-width band certifies nothing), and
        ``warning``: None, or, for independent prompts fewer than
        :data:`BAND_VALIDATED_PROMPTS`, ``{"prompts", "validated_from",
        "level", "measured"}`` with the coverage the calibration study measured
        at its smallest sizes (``measured``: rows ``{"prompts", "coverage",
        "mc_se"}``, from :mod:`rlvr_boundary.analysis.calibration_data`).
    """
    from rlvr_boundary.analysis.calibration_data import BAND

    d = np.asarray(diff, float)
    deg = np.asarray(degenerate, bool)
    df = [v for v in (band.get("df") or []) if v is not None]
    independent = band.get("n_clusters") is None and not any(
        v > 1 for v in (band.get("n_runs") or {}).values())
    P = int(band["n_units"]) if independent else None
    warning = None
    if independent and P < BAND_VALIDATED_PROMPTS:
        rows = sorted(BAND["independent"].items())
        warning = {"prompts": P, "validated_from": BAND_VALIDATED_PROMPTS, "level": BAND["level"],
                   "measured": [{"prompts": int(k), "coverage": v["coverage"], "mc_se": v["mc_se"]}
                                for k, v in rows if int(k) <= BAND_VALIDATED_PROMPTS]}
    return {"small_sample": band.get("small_sample"),
            "df_range": [min(df), max(df)] if df else None,
            "too_few_prompts": bool(band.get("too_few_units")),
            "min_prompts": cc.min_prompts(alpha),
            "no_variance": np.flatnonzero(deg & (np.abs(d) > 1e-12)).tolist(),
            "warning": warning}


def _verifier_measured() -> dict | None:
    """The coverage the calibration study measured for the band under verifier error."""
    from rlvr_boundary.analysis.calibration_data import VERIFIER

    return dict(VERIFIER) if VERIFIER else None


RUN_SUFFIX = re.compile(r"^(?P<name>.+)#run(?P<j>\d+)$")
"""A model labelled ``NAME#runJ`` is a further run (training seed, sampling run) of ``NAME``."""


def split_runs(models: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The models of a report and the further runs of each, from their labels.

    Parameters
    ----------
    models
        Every label read, e.g. ``["base", "ckpt", "ckpt#run2", "ckpt#run3"]``.

    Returns
    -------
    tuple
        The models without the run labels (``["base", "ckpt"]``, in order) and
        ``{name: [run labels]}`` for models with further runs, sorted by run
        number (``{"ckpt": ["ckpt#run2", "ckpt#run3"]}``).
    """
    main = [m for m in models if not RUN_SUFFIX.match(m)]
    runs: dict[str, list[tuple[int, str]]] = {}
    for m in models:
        hit = RUN_SUFFIX.match(m)
        if hit is None:
            continue
        name = hit.group("name")
        if name not in main:
            raise InputError(f"the model '{m}' is labelled as a further run of '{name}', but no "
                             f"model is labelled '{name}': label its first run '{name}' (e.g. "
                             f"--label FILE={name})", field="label")
        runs.setdefault(name, []).append((int(hit.group("j")), m))
    return main, {name: [m for _, m in sorted(v)] for name, v in runs.items()}


def cluster_groups(rule: str | None, prompt_ids, counts: list):
    """``(P,)`` cluster labels for the aligned ``prompt_ids`` from the rule, or None without one.

    ``counts`` are the inputs read (objects with ``prompt_ids`` and ``extra``,
    a dict of per-prompt fields such as ``source``); see :func:`cluster_labels`.
    """
    if rule is None:
        return None
    columns = []
    for ct in counts:
        pos = {str(p): i for i, p in enumerate(ct.prompt_ids)}
        if not all(str(p) in pos for p in prompt_ids):
            continue  # an input without every prompt cannot vouch for the labels
        idx = np.array([pos[str(p)] for p in prompt_ids], dtype=int)
        columns.append({k: np.asarray(v)[idx] for k, v in (ct.extra or {}).items()})
    return cluster_labels(rule, prompt_ids, columns)


def sampling_unit_block(curves_base, curves_rl, band: dict, ks, *, n_multipliers: int = 4000,
                        alpha: float = 0.05, seed: int = 0) -> dict:
    """How the verdicts move when the band is drawn over clusters or runs instead of prompts.

    Parameters
    ----------
    curves_base, curves_rl
        ``(R', P, K)`` and ``(R, P, K)`` per-run per-prompt pass@k.
    band
        The structured band of the comparison (``unit``, ``n_clusters``,
        ``n_runs``, ``critical_values``) with its verdicts (``gain_budgets``,
        ``loss_budgets``, ``first_loss_set``).
    ks
        ``(K,)`` budgets.

    Returns
    -------
    dict
        ``unit``, ``n_clusters``, ``n_runs``, the structured verdicts and those
        of the band over independent prompts on the same run-averaged curves
        (``independent``: gain and loss budgets, first-loss set, critical value);
        ``moved_gain``/``moved_loss``: budgets supported by the independent band
        but not by the structured one.
    """
    ks = np.asarray(ks)
    d = curves_rl.mean(axis=0) - curves_base.mean(axis=0)  # (P, K)
    ind = cc.simultaneous_band(d, n_multipliers=n_multipliers, alpha=alpha, seed=seed)
    lower, upper = np.array(ind["lower"], float), np.array(ind["upper"], float)
    mean = d.mean(axis=0)
    # As in the comparison: a tie (no spread, D = 0) is a point; a nonzero difference with
    # no spread keeps the band's [-1, 1], so a zero-width band never supports anything.
    tie = (np.ptp(d, axis=0) <= 1e-12) & (np.abs(mean) <= 1e-12)  # (K,)
    lower[tie] = upper[tie] = mean[tie]
    cls = cc.classify_budgets(ks, lower, upper)
    gain, loss = band["gain_budgets"], band["loss_budgets"]
    return {"unit": band["unit"], "n_clusters": band["n_clusters"], "n_runs": band["n_runs"],
            "critical_value": band["critical_value"],
            "critical_values": [min(band["critical_values"]), max(band["critical_values"])],
            "gain_budgets": list(gain), "loss_budgets": list(loss),
            "first_loss_set": band["first_loss_set"],
            "independent": {"critical_value": ind["critical_value"],
                            "gain_budgets": cls["gain"], "loss_budgets": cls["loss"],
                            "first_loss_set": cls["first_loss_set"]},
            "moved_gain": [k for k in cls["gain"] if k not in set(gain)],
            "moved_loss": [k for k in cls["loss"] if k not in set(loss)]}
