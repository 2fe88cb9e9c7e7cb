"""Scorer sensitivity: do the pass@k conclusions survive a change of math grader?

Public comparisons find that the choice of math answer scorer alone moves the
MATH-500 accuracy of the same generations by many points. This module takes
the per-prompt counts of the same completions graded by several scorers (for
example ``math-verify`` and ``canonical``, from ``rlvr-boundary verify
--backend math-verify,canonical``) and recomputes, per scorer, everything a
base-vs-RL comparison reports: pass@k per model, the difference curve, its
crossings and k*, the price, and the budgets where a simultaneous band supports
a gain or a loss. It then says which conclusions every scorer supports (the
loss from k = 61 "survives either scorer") and which depend on the scorer.

Two functions, both pure numpy over arrays (no files, no sentences):

- :func:`scorer_sensitivity`: counts per scorer per model -> per-scorer
  comparison and the robust part;
- :func:`disagreement_by_type`: verdicts per scorer per completion and an
  answer type per completion -> disagreement rates by answer type, with
  examples.

The per-scorer statistics are those of :mod:`rlvr_boundary.core.compare`
(definitions and references there: Yue et al., "Does Reinforcement Learning
Really Incentivize Reasoning Capacity in LLMs Beyond the Base Model?", arXiv
2504.13837, for the pass@k crossover; the sup-t band of Chernozhukov,
Chetverikov and Kato, Annals of Statistics 2013). The band uses the same
multiplier seed for every scorer, so a scorer difference is not Monte Carlo
noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rlvr_boundary.core import compare as cc
from rlvr_boundary.core.passk import check_counts, pass_at_k


@dataclass
class ScorerOptions:
    """Options of a scorer-sensitivity comparison."""

    ks: Sequence[int] | None = None
    """Budgets; default every k from 1 to the smallest n."""
    bootstrap: int = 4000
    """Gaussian multipliers of the simultaneous band."""
    alpha: float = 0.05
    """1 - simultaneous coverage of the band."""
    seed: int = 0
    """Seed of the multiplier draws (the same for every scorer)."""

    def __post_init__(self) -> None:
        if self.bootstrap < 2 or not 0 < self.alpha < 1:
            raise ValueError("need bootstrap >= 2 and 0 < alpha < 1")


def _counts(counts: Mapping, scorer: str, model: str, P: int | None):
    try:
        n, c = counts[scorer][model]
    except KeyError:
        raise ValueError(f"no counts for scorer {scorer!r}, model {model!r}") from None
    n, c = check_counts(n, c)  # (P,) each
    if P is not None and c.size != P:
        raise ValueError(f"counts of scorer {scorer!r}, model {model!r} must be 1-D over the "
                         f"same {P} prompts, got shape {c.shape}")
    return np.asarray(n), c


def scorer_sensitivity(counts: Mapping[str, Mapping[str, tuple]], base: str, rl: str,
                       opts: ScorerOptions | None = None) -> dict:
    """Every pass@k conclusion of base vs RL, per scorer, and what all scorers support.

    Parameters
    ----------
    counts
        ``{scorer: {model: (n, c)}}``: per-prompt samples ``n`` and correct
        ``c`` (``(P,)`` each) of the same prompts in the same order for every
        scorer and model. The ``n`` must agree across scorers (the same
        completions, graded differently).
    base, rl
        The two model labels.
    opts
        Budgets and band options.

    Returns
    -------
    dict
        ``scorers``, ``models``, ``ks``, ``n_prompts``; ``per_scorer``:
        ``{scorer: {pass_at_k: {model: (K,)}, diff (K,), crossings, k_star,
        price, price_k, gain_budgets, loss_budgets, first_loss_set}}``;
        ``pass_at_k_spread``: ``{model: (K,)}`` max - min over scorers;
        ``robust``: ``gain_budgets`` and ``loss_budgets`` supported under every
        scorer, ``first_loss_all`` (the first of those losses), ``loss_any``
        (supported under at least one), ``k_star`` per scorer and whether all
        agree, ``price_range``.

    Notes
    -----
    With :math:`\\mathrm{pass@}k_{s,m,i}` the unbiased estimate for prompt i,
    model m under scorer s, ``diff`` is
    :math:`D_s(k) = \\frac1P \\sum_i (\\mathrm{pass@}k_{s,R,i} - \\mathrm{pass@}k_{s,B,i})`.
    A budget is in ``robust.loss_budgets`` when the simultaneous band of
    :math:`D_s` lies below 0 at k for every scorer s: the conclusion "R is
    worse at k" does not depend on the grader.
    """
    opts = opts or ScorerOptions()
    scorers = list(counts)
    if not scorers:
        raise ValueError("no scorers given")
    if base == rl:
        raise ValueError("base and rl must be different models")
    P = None
    arrays: dict = {}
    for s in scorers:
        for m in (base, rl):
            n, c = _counts(counts, s, m, P)
            P = c.size
            arrays[s, m] = (n, c)
    for m in (base, rl):
        n0 = arrays[scorers[0], m][0]
        for s in scorers[1:]:
            if not np.array_equal(arrays[s, m][0], n0):
                raise ValueError(f"model {m!r}: the sample counts n differ between scorers "
                                 f"{scorers[0]!r} and {s!r}; grade the same completions")
    n_min = int(min(arrays[scorers[0], m][0].min() for m in (base, rl)))
    ks = np.arange(1, n_min + 1) if opts.ks is None else np.asarray(sorted(set(opts.ks)), int)
    if ks.size == 0 or ks[0] < 1 or ks[-1] > n_min:
        raise ValueError(f"budgets must lie in 1..{n_min} (the smallest n)")
    per: dict = {}
    for s in scorers:
        pb = pass_at_k(*arrays[s, base], ks)  # (P, K)
        pr = pass_at_k(*arrays[s, rl], ks)  # (P, K)
        diff = cc.paired_difference(pr, pb)  # (K,)
        price_v, price_k = cc.price(ks, diff)
        row = {"pass_at_k": {base: pb.mean(axis=0), rl: pr.mean(axis=0)}, "diff": diff,
               "crossings": cc.grid_crossings(ks, diff), "k_star": cc.first_negative(ks, diff),
               "price": price_v, "price_k": price_k}
        if P >= 2:
            band = cc.simultaneous_band(pr - pb, n_multipliers=opts.bootstrap, alpha=opts.alpha,
                                        seed=opts.seed)
            cls = cc.classify_budgets(ks, band["lower"], band["upper"])
            row.update({"band_lower": band["lower"], "band_upper": band["upper"],
                        "gain_budgets": cls["gain"], "loss_budgets": cls["loss"],
                        "first_loss_set": cls["first_loss_set"]})
        else:
            row.update({"band_lower": None, "band_upper": None, "gain_budgets": [],
                        "loss_budgets": [], "first_loss_set": None})
        per[s] = row
    gain_all = sorted(set.intersection(*(set(per[s]["gain_budgets"]) for s in scorers)))
    loss_all = sorted(set.intersection(*(set(per[s]["loss_budgets"]) for s in scorers)))
    loss_any = sorted(set.union(*(set(per[s]["loss_budgets"]) for s in scorers)))
    spread = {m: np.max([per[s]["pass_at_k"][m] for s in scorers], axis=0)
              - np.min([per[s]["pass_at_k"][m] for s in scorers], axis=0) for m in (base, rl)}
    k_stars = {s: per[s]["k_star"] for s in scorers}
    prices = [per[s]["price"] for s in scorers]
    return {
        "scorers": scorers, "models": {"base": base, "rl": rl}, "ks": ks, "n_prompts": int(P),
        "per_scorer": per,
        "pass_at_k_spread": spread,
        "robust": {"gain_budgets": gain_all, "loss_budgets": loss_all,
                   "first_loss_all": loss_all[0] if loss_all else None,
                   "loss_any": loss_any,
                   "loss_depends_on_scorer": sorted(set(loss_any) - set(loss_all)),
                   "k_star": k_stars, "k_star_agree": len(set(k_stars.values())) == 1,
                   "price_range": [float(min(prices)), float(max(prices))]},
        "options": {"ks": None if opts.ks is None else [int(k) for k in ks],
                    "bootstrap": opts.bootstrap, "alpha": opts.alpha, "seed": opts.seed},
    }


def disagreement_by_type(types: Sequence[str], verdicts: Mapping[str, Sequence[bool]], *,
                         reference: str, examples: Sequence[dict] | None = None,
                         max_examples: int = 3) -> dict:
    """How often each scorer disagrees with a reference scorer, by answer type.

    Parameters
    ----------
    types
        ``(N,)`` answer type of each graded completion (e.g. of its gold answer).
    verdicts
        ``{scorer: (N,) bool}``, including ``reference``.
    reference
        The scorer the others are compared with (the primary grader).
    examples
        Optional ``(N,)`` dicts describing each completion (gold, answer, ids);
        up to ``max_examples`` of the disagreeing ones are kept per type and
        scorer.

    Returns
    -------
    dict
        ``reference``, ``rows``; ``overall`` and ``by_type[type]``: ``{scorer:
        {rows, disagree, rate, only_reference, only_other}}`` where
        ``only_reference`` counts completions the reference accepts and the
        scorer rejects, ``only_other`` the reverse; ``examples[type][scorer]``.
    """
    t = np.asarray(types, dtype=object)  # (N,)
    if reference not in verdicts:
        raise ValueError(f"reference scorer {reference!r} not among {list(verdicts)}")
    ref = np.asarray(verdicts[reference], bool)  # (N,)
    if ref.shape != t.shape or (examples is not None and len(examples) != t.size):
        raise ValueError("types, verdicts and examples must have one entry per completion")
    others = [s for s in verdicts if s != reference]

    def stats(mask: np.ndarray, s: str) -> dict:
        v = np.asarray(verdicts[s], bool)
        if v.shape != ref.shape:
            raise ValueError(f"verdicts of {s!r} have shape {v.shape}, expected {ref.shape}")
        n = int(mask.sum())
        a, b = ref[mask], v[mask]
        dis = int(np.count_nonzero(a != b))
        return {"rows": n, "disagree": dis, "rate": dis / n if n else 0.0,
                "only_reference": int(np.count_nonzero(a & ~b)),
                "only_other": int(np.count_nonzero(~a & b))}

    everything = np.ones(t.size, bool)
    out = {"reference": reference, "rows": int(t.size),
           "overall": {s: stats(everything, s) for s in others}, "by_type": {}, "examples": {}}
    for ty in sorted(set(t.tolist())):
        mask = t == ty
        out["by_type"][ty] = {s: stats(mask, s) for s in others}
        if examples is not None:
            ex = {}
            for s in others:
                idx = np.flatnonzero(mask & (ref != np.asarray(verdicts[s], bool)))[:max_examples]
                if idx.size:
                    ex[s] = [{**examples[i], reference: bool(ref[i]),
                              s: bool(verdicts[s][i])} for i in idx]
            if ex:
                out["examples"][ty] = ex
    return out


def merge_tallies(tallies: Sequence[dict]) -> dict:
    """Sum verdict tallies (one per model, :class:`rlvr_boundary.io.verdicts.VerdictTally`).

    Parameters
    ----------
    tallies
        ``{scorers, counts: {type: {pattern: n}}, examples: {type: {pattern: [dict]}}}``
        each, with the same ``scorers``; a pattern is the string of the scorers'
        verdicts (``"10"``: the first accepts, the second rejects).

    Returns
    -------
    dict
        The same shape: counts summed, examples concatenated in the given order.
    """
    tallies = [t for t in tallies if t]
    if not tallies:
        raise ValueError("no tallies given")
    scorers = list(tallies[0]["scorers"])
    counts: dict = {}
    examples: dict = {}
    for t in tallies:
        if list(t["scorers"]) != scorers:
            raise ValueError(f"tallies of different scorers: {scorers} and {list(t['scorers'])}")
        for ty, pats in t["counts"].items():
            cell = counts.setdefault(ty, {})
            for p, n in pats.items():
                cell[p] = cell.get(p, 0) + int(n)
        for ty, pats in t["examples"].items():
            for p, ex in pats.items():
                examples.setdefault(ty, {}).setdefault(p, []).extend(ex)
    return {"scorers": scorers, "counts": counts, "examples": examples}


def disagreement_from_tally(tally: dict, *, reference: str, max_examples: int = 3,
                            order: Sequence[str] | None = None) -> dict:
    """:func:`disagreement_by_type` from counts of verdict patterns instead of per-row arrays.

    A table of millions of completions is reduced while it is read to the count
    of each verdict pattern per answer type (and a few examples), so memory does
    not grow with the rows; this gives the same table from those counts.

    Parameters
    ----------
    tally
        ``{scorers, counts, examples}`` (see :func:`merge_tallies`); examples carry
        ``row`` (their order in the input) and the per-completion fields.
    reference
        The scorer the others are compared with.
    max_examples
        Examples kept per type and scorer (the first disagreeing rows).
    order
        Order of the other scorers in the output (default: the tally's).

    Returns
    -------
    dict
        As :func:`disagreement_by_type`.
    """
    scorers = list(tally["scorers"])
    if reference not in scorers:
        raise ValueError(f"reference scorer {reference!r} not among {scorers}")
    ir = scorers.index(reference)
    others = [s for s in (order or scorers) if s != reference]
    if sorted(others) != sorted(s for s in scorers if s != reference):
        raise ValueError(f"order {list(order or [])} does not list the tally's scorers {scorers}")

    def stats(pats: Mapping[str, int], s: str) -> dict:
        i = scorers.index(s)
        rows = dis = only_ref = only_other = 0
        for p, n in pats.items():
            a, b = p[ir] == "1", p[i] == "1"
            rows += n
            dis += n * (a != b)
            only_ref += n * (a and not b)
            only_other += n * (b and not a)
        return {"rows": rows, "disagree": dis, "rate": dis / rows if rows else 0.0,
                "only_reference": only_ref, "only_other": only_other}

    everything: dict = {}
    for pats in tally["counts"].values():
        for p, n in pats.items():
            everything[p] = everything.get(p, 0) + n
    out = {"reference": reference, "rows": sum(everything.values()),
           "overall": {s: stats(everything, s) for s in others}, "by_type": {}, "examples": {}}
    for ty in sorted(tally["counts"]):
        out["by_type"][ty] = {s: stats(tally["counts"][ty], s) for s in others}
        ex = {}
        for s in others:
            i = scorers.index(s)
            got = [(e, p) for p, rows in (tally["examples"].get(ty) or {}).items()
                   if p[ir] != p[i] for e in rows]
            got.sort(key=lambda ep: ep[0].get("row", 0))
            if got:
                ex[s] = [{**e, reference: p[ir] == "1", s: p[i] == "1"}
                         for e, p in got[:max_examples]]
        if ex:
            out["examples"][ty] = ex
    return out


def scorer_block(counts: Mapping[str, Mapping[str, tuple]], base: str, checkpoints: Sequence[str],
                 *, primary: str | None, opts: ScorerOptions | None = None,
                 tallies: Sequence[dict] | None = None) -> dict:
    """The scorer-sensitivity part of a ``compare`` or ``report`` result.

    Parameters
    ----------
    counts
        ``{scorer: {model: (n, c)}}`` on the aligned prompts (every model).
    base, checkpoints
        The base label and the checkpoints compared with it.
    primary
        The scorer whose verdicts are the main counts (None: the ``correct``
        column matches none of them).
    opts
        Budgets (the main comparison's grid) and band options.
    tallies
        Verdict tallies of the models (:func:`merge_tallies`), for the
        disagreement table; None or empty to leave it out.

    Returns
    -------
    dict
        ``scorers``, ``primary``, ``reference`` (the scorer the disagreement
        table compares the others with: the primary one, else the first),
        ``comparisons``: ``{checkpoint: scorer_sensitivity(...)}``, and
        ``disagreement`` (:func:`disagreement_from_tally`, or None).
    """
    scorers = list(counts)
    if len(scorers) < 2:
        raise ValueError("scorer sensitivity needs two or more scorers")
    if primary is not None and primary not in scorers:
        raise ValueError(f"primary scorer {primary!r} not among {scorers}")
    reference = primary if primary is not None else scorers[0]
    comparisons = {m: scorer_sensitivity({s: {base: counts[s][base], m: counts[s][m]}
                                          for s in scorers}, base, m, opts)
                   for m in checkpoints}
    tallies = [t for t in (tallies or []) if t]
    dis = None
    if tallies:
        merged = merge_tallies(tallies)
        # The tally names scorers by their column suffix, as ``counts`` does (its order is
        # the table's; the patterns are read by name, so the order does not matter).
        if set(merged["scorers"]) == set(scorers):
            dis = disagreement_from_tally(merged, reference=reference, order=scorers)
    return {"scorers": scorers, "primary": primary, "reference": reference,
            "comparisons": comparisons, "disagreement": dis}
