"""Every number of the audit report, from aligned counts (and optional per-sample facts).

The computation behind ``rlvr-boundary report``: it calls the numeric core
(:mod:`rlvr_boundary.core`) for a base model and any number of checkpoints and
returns a JSON-ready dict, with no sentences in it. Reading files and writing
the result live in the audit workflow (:mod:`rlvr_boundary.pipelines.audit`),
words in :mod:`rlvr_boundary.report.words`, drawing and HTML in
:mod:`rlvr_boundary.report`, which reads only the result document. The options
are the workflow's ``ReportOptions`` (read here: ``compare``, ``k``, ``zeta``,
``top``, ``lucky_below``, ``lucky_max``, ``diversity_k``).

Sections computed here:

- pass@k of every model on one grid, and the pairwise comparison of each
  checkpoint with the base (:func:`rlvr_boundary.analysis.pairwise.compare_aligned`);
- coverage at the audit budget K: solved sets, every intersection (UpSet),
  the 2x2 tables, accuracy histograms (0 and 1 apart), ranked regressions/gains;
- support dynamics (P/E/S/O, SRR, NDR, SDS, NSCR) per problem, and per distinct
  correct answer when extracted answers are present;
- the training evolution when checkpoint labels carry a step number;
- the budget advisor: the best model at each deployment budget and whether the
  simultaneous band separates it from the runner-up;
- the lucky-guess review list: problems a model solves rarely (0 < c/n < 5%).
"""

from __future__ import annotations

import re
import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.analysis.pairwise import check_cells, compare_aligned, parse_ks
from rlvr_boundary.analysis.structure import run_curves, sampling_unit_block, split_runs
from rlvr_boundary.core import compare as cc
from rlvr_boundary.core import coverage as cv
from rlvr_boundary.core import support as sp
from rlvr_boundary.core.diversity import answer_diversity_many
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError


_STEP = re.compile(r"(?:global[_-]?)?step[_-]?(\d+)|(?:^|[_-])s(\d+)$|ckpt[_-]?(\d+)", re.I)


def step_of(label: str) -> int | None:
    """Training step encoded in a checkpoint label ('step-200', 'global_step_40', ...)."""
    m = _STEP.search(label)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def choose_base(models: list[str], requested: str | None) -> str:
    """The base label: the requested one, else 'base' if present, else the first."""
    if requested is not None:
        if requested not in models:
            raise InputError(f"--base '{requested}' is not among the models read: "
                             f"{', '.join(models)}", field="base")
        return requested
    for m in models:
        if m.lower() == "base":
            return m
    return models[0]


def build_audit(aligned: Aligned, opts, *, base: str,
                answers: dict | None = None, samples: dict | None = None,
                groups=None) -> dict:
    """Compute the whole audit.

    Parameters
    ----------
    aligned
        Counts of every model on the common prompts (``(M, P)``).
    opts
        Report options.
    base
        Label of the base model (one of ``aligned.models``).
    answers
        Optional ``{model: list of P dicts answer -> count}`` over *all* samples
        (None answers under the key ``None``) and ``{model: list of P dicts}`` of
        the correct samples only, as ``{"all": ..., "correct": ...}``; enables the
        diversity and per-answer support sections.
    samples
        Optional per-sample summaries gathered while reading: ``quality``,
        ``quality_sampling``, ``tokens`` (dicts per model) and ``texts``
        (``{(model, prompt_id): {"correct": [...], "incorrect": [...]}}``). Only the
        texts of problems the audit lists are kept, as ``samples_shown``.
    groups
        ``(P,)`` cluster labels of the prompts (``--cluster-by``), or None: each
        comparison's band and bootstrap then draw per cluster.

    Notes
    -----
    Models labelled ``NAME#runJ`` are further runs of ``NAME``
    (:func:`rlvr_boundary.analysis.structure.split_runs`): they enter only the
    comparisons, whose curves and band average over the runs; every other
    section describes each model's first run.

    Returns
    -------
    dict
        JSON-ready audit payload.
    """
    full = aligned
    models, runs = split_runs(list(aligned.models))
    if runs:
        rows = [aligned.models.index(m) for m in models]
        aligned = Aligned(models, aligned.prompt_ids, aligned.n[rows], aligned.c[rows],
                          dict(aligned.dropped))
    others = [m for m in models if m != base]
    n, c = aligned.n, aligned.c  # (M, P)
    P = n.shape[1]
    n_min = int(n.min())
    ks = parse_ks(opts.compare.grid, n_min)
    check_cells(P * len(models), ks.size, "(prompt, model) pairs")
    K = int(opts.k) if opts.k is not None else n_min
    if K > n_min:
        raise InputError(f"--k: the audit budget K = {K} must lie in 1..{n_min} (the smallest n)")
    curves = {m: pass_at_k(n[i], c[i], ks) for i, m in enumerate(models)}  # each (P, K)
    out: dict = {
        "models": models, "base": base, "checkpoints": others, "n_prompts": P,
        "prompt_ids": aligned.prompt_ids.tolist(),
        "n_samples": {m: {"min": int(n[i].min()), "max": int(n[i].max())}
                      for i, m in enumerate(models)},
        "ks": ks, "K": K, "zeta": opts.zeta,
        "pass_at_k": {m: curves[m].mean(axis=0) for m in models},
        "dropped": aligned.dropped,
    }
    # The base's per-prompt curves are computed once, above, for every checkpoint.
    out["comparisons"] = {m: _comparison(full, base, m, opts, curves, groups, runs)
                          for m in others}
    out["runs"] = runs
    out["coverage"] = _coverage(aligned, base, others, K, opts)
    out["frontier"] = _frontier(out["coverage"], others, P, opts.compare.alpha)
    out["support"] = _support(aligned, base, others, K, opts, answers)
    out["diversity"] = _diversity(models, answers, n_min, opts)
    if answers:
        out["maj_at_k"] = majority_curves(models, answers, ks)
    out["evolution"] = _evolution(models, base, curves, ks, K)
    out["advisor"] = _advisor(models, curves, ks, opts, out["comparisons"], base)
    out["lucky"] = _lucky(aligned, opts)
    samples = samples or {}
    out["quality"] = samples.get("quality")
    out["quality_sampling"] = samples.get("quality_sampling")
    out["tokens"] = samples.get("tokens")
    out["samples_shown"] = samples_shown(out, samples.get("texts") or {})
    return out


def _comparison(full: Aligned, base: str, m: str, opts, curves: dict, groups,
                runs: dict) -> dict:
    """One checkpoint against the base, and how its verdicts move with clusters or runs."""
    r = {"base": runs.get(base, []), "rl": runs.get(m, [])}
    first_n = min(int(full.n[full.models.index(x)].min()) for x in (base, m))
    for label in (*r["base"], *r["rl"]):
        if int(full.n[full.models.index(label)].min()) < first_n:
            raise InputError(f"the run '{label}' has fewer samples on some prompt "
                             f"({int(full.n[full.models.index(label)].min())}) than the "
                             f"comparison's budgets need ({first_n}); runs of a model need at "
                             "least as many samples per prompt as its first run", field="label")
    res = compare_aligned(full, base, m, opts.compare, curves=curves, groups=groups, runs=r)
    if res.get("band") is not None and (groups is not None or r["base"] or r["rl"]):
        ks = np.asarray(res["ks"])
        per_run = [run_curves(full.n[[full.models.index(x) for x in [name, *r[key]]]],
                              full.c[[full.models.index(x) for x in [name, *r[key]]]], ks)
                   for key, name in (("base", base), ("rl", m))]
        res["sampling_unit"] = sampling_unit_block(
            *per_run, {**res["band"], **{k: res[k] for k in ("gain_budgets", "loss_budgets",
                                                              "first_loss_set")}},
            ks, n_multipliers=opts.compare.bootstrap, alpha=opts.compare.alpha,
            seed=opts.compare.seed)
    return res


def samples_shown(audit: dict, texts: dict) -> list[dict]:
    """The texts of the problems the audit lists, as JSON rows (model, prompt_id, texts)."""
    return [{"model": m, "prompt_id": p, **texts[(m, p)]}
            for m, p in sorted(shown_pairs(audit) & set(texts))]


def shown_pairs(audit: dict) -> set[tuple[str, str]]:
    """(model, prompt_id) pairs whose sample texts the report shows: the ranked lists
    (base and checkpoint) and the lucky-guess list."""
    base = audit["base"]
    wanted = set()
    for m in audit["checkpoints"]:
        for kind in ("regressions", "gains"):
            for r in audit["coverage"]["ranked"][m][kind]:
                wanted |= {(base, r["prompt_id"]), (m, r["prompt_id"])}
    wanted |= {(r["model"], r["prompt_id"]) for r in audit["lucky"]}
    return wanted


def _coverage(aligned: Aligned, base: str, others: list[str], K: int,
              opts) -> dict:
    models = list(aligned.models)
    n, c = aligned.n, aligned.c
    solved = cv.solved_at_k(n, c, K, tau=1 - opts.zeta)  # (M, P)
    inter = cv.intersections(solved, models)
    ib = models.index(base)
    tables, ranks = {}, {}
    ids = aligned.prompt_ids.tolist()
    for m in others:
        i = models.index(m)
        t = cv.table_2x2(solved[ib], solved[i])
        tables[m] = {"both": int(t[1, 1]), "base_only": int(t[1, 0]),
                     "rl_only": int(t[0, 1]), "neither": int(t[0, 0])}
        # Ranked by accuracy c/n (pass@1): finer than pass@K, which is 0/1 at K = n.
        rc = cv.rank_changes(n[ib], c[ib], n[i], c[i], None, prompt_ids=ids, top=opts.top)
        ranks[m] = {kind: [{"prompt_id": ids[j], "base": float(b), "model": float(r),
                            "delta": float(d), "c_base": int(c[ib, j]), "n_base": int(n[ib, j]),
                            "c_model": int(c[i, j]), "n_model": int(n[i, j])}
                           for j, d, b, r in zip(v["index"], v["delta"], v["base"], v["r"])]
                    for kind, v in rc.items()}
    hist = cv.accuracy_histogram(n, c)
    return {
        "K": K, "tau": 1 - opts.zeta,
        "solved": {m: int(solved[i].sum()) for i, m in enumerate(models)},
        "union": int(solved.any(axis=0).sum()),
        "intersections": [{"models": list(x.models), "count": int(x.count)} for x in inter],
        "table_2x2": tables,
        "ranked": ranks,
        "histogram": {"edges": hist["edges"],
                      "labels": _hist_labels(hist["edges"]),
                      "counts": {m: hist["counts"][i] for i, m in enumerate(models)}},
    }


def _frontier(cov: dict, others: list[str], P: int, alpha: float) -> dict:
    """The hard frontier at K: problems no model solves, and per checkpoint the 0 -> 1
    (unsolved by the base, solved by it) and 1 -> 0 transitions, each with a Wilson interval
    over prompts (:func:`rlvr_boundary.core.frontier_sets.frontier_shares`)."""
    from rlvr_boundary.core.frontier_sets import frontier_shares

    # calibrated: coverage measured by benchmarks/calibration.py (the 'sets' rows)
    return {"K": cov["K"], "alpha": alpha, "calibrated": True,
            "unsolved": frontier_shares(P, {"unsolved": P - cov["union"]}, alpha)["unsolved"],
            "transitions": {m: frontier_shares(P, {"gained": cov["table_2x2"][m]["rl_only"],
                                                   "lost": cov["table_2x2"][m]["base_only"]},
                                               alpha) for m in others}}


def _hist_labels(edges) -> list[str]:
    """'0', '(0, 0.1)', '[0.1, 0.2)', ..., '[0.9, 1)', '1': interior bins exclude 0 and 1."""
    inner = [f"[{a:.2g}, {b:.2g})" for a, b in zip(edges[:-1], edges[1:])]
    inner[0] = f"(0, {edges[1]:.2g})"
    return ["0", *inner, "1"]


def _support(aligned: Aligned, base: str, others: list[str], K: int, opts,
             answers: dict | None) -> dict:
    models = list(aligned.models)
    ib = models.index(base)
    out = {"K": K, "zeta": opts.zeta, "epsilon": float(sp.epsilon_for_budget(K, opts.zeta)),
           "problem": {}, "answer": {} if answers else None}
    for m in others:
        i = models.index(m)
        res = sp.problem_support(aligned.n[ib], aligned.c[ib], aligned.n[i], aligned.c[i], K,
                                 zeta=opts.zeta)
        region = res.pop("region")
        res["regions_by_prompt"] = {r: [aligned.prompt_ids[j] for j in np.flatnonzero(region == r)]
                                    for r in ("E", "S")}
        out["problem"][m] = res
        if answers:
            a = sp.answer_support(answers["correct"][base], answers["correct"][m],
                                  aligned.n[ib], aligned.n[i], K, zeta=opts.zeta)
            out["answer"][m] = {k: a[k] for k in ("P", "E", "S", "O", "SRR", "NDR", "SDS", "NSCR")}
    return out


def _diversity(models: list[str], answers: dict | None, n_min: int, opts) -> dict | None:
    if not answers:
        return None
    k = opts.diversity_k or min(16, n_min)
    out = {"k": k, "na_label": "NA", "models": {}}
    for m in models:
        per_prompt = [np.array(list(d.values()), dtype=np.int64) for d in answers["all"][m]]
        res = answer_diversity_many(per_prompt, k=k)
        out["models"][m] = {key: float(np.mean(res[key]))
                            for key in ("distinct", "entropy", "exp_entropy", "inverse_simpson")}
    return out


#: Largest budget of maj@k on the page: its exact expectation costs O(k^2) per answer class
#: and prompt, so larger budgets would dominate the report's time.
MAJ_K_MAX = 16


def majority_curves(models: list[str], answers: dict, ks) -> dict:
    """maj@k of every model at the grid's first budget and powers of two up to MAJ_K_MAX: per
    prompt the exact
    expectation over k-subsets (:func:`rlvr_boundary.core.passk.maj_at_k`; an answer class is
    correct when its samples were graded correct, samples without an answer never win),
    averaged over prompts."""
    from rlvr_boundary.core.passk import maj_at_k

    grid = [int(k) for k in ks if k <= MAJ_K_MAX]
    show = sorted({grid[0], *[k for k in grid if k & (k - 1) == 0]})
    out = {"ks": show, "models": {}}
    for m in models:
        per = np.zeros((len(answers["all"][m]), len(show)))  # (P, K)
        for j, (alls, good) in enumerate(zip(answers["all"][m], answers["correct"][m])):
            # The reader files samples without an answer under "NA": they never win.
            classes = [a for a in alls if a not in (None, "NA")]
            if not classes:
                continue  # every sample incomplete: nobody wins
            sizes = [alls[a] for a in classes]
            per[j] = maj_at_k(sizes, [bool(good.get(a)) for a in classes],
                              int(alls.get("NA", 0)) + int(alls.get(None, 0)), show)
        out["models"][m] = per.mean(axis=0).tolist()
    return out


def _evolution(models: list[str], base: str, curves: dict, ks: np.ndarray, K: int) -> dict | None:
    steps = {m: step_of(m) for m in models if m != base}
    stepped = {m: s for m, s in steps.items() if s is not None}
    if len(stepped) < 2:
        return None
    order = sorted(stepped, key=stepped.get)
    jK = int(np.flatnonzero(ks == K)[0]) if K in ks else len(ks) - 1
    rows = [{"model": base, "step": 0 if base not in stepped else stepped[base],
             "is_base": True, "pass_at_1": float(curves[base][:, 0].mean()),
             "pass_at_K": float(curves[base][:, jK].mean())}]
    rows += [{"model": m, "step": stepped[m], "is_base": False,
              "pass_at_1": float(curves[m][:, 0].mean()),
              "pass_at_K": float(curves[m][:, jK].mean())} for m in order]
    return {"K": int(ks[jK]), "rows": rows}


def _advisor(models: list[str], curves: dict, ks: np.ndarray, opts,
             comparisons: dict, base: str) -> list[dict]:
    """Best model at each deployment budget, and whether the band separates it.

    For each budget on a power-of-two sub-grid (plus the largest k), the best
    model has the largest mean pass@k. Its lead over the runner-up is
    'supported' when the simultaneous band of their paired difference, computed
    over the whole grid, is above 0 at that budget. A budget where the two
    models' per-prompt pass@k agree on every prompt (all solved or none by both)
    is a tie (``tie``: true), whatever the order of the labels.

    A checkpoint-vs-base band is the comparison's own (the sup-t band of -D is
    exactly [-upper, -lower] with the same multipliers), so only pairs of two
    checkpoints need a new one.
    """
    show = [int(k) for k in ks if k & (k - 1) == 0]
    if ks[-1] not in show:
        show.append(int(ks[-1]))
    means = np.stack([curves[m].mean(axis=0) for m in models])  # (M, K)
    bands: dict = {}
    rows = []
    for k in show:
        j = int(np.flatnonzero(ks == k)[0])
        order = np.argsort(-means[:, j], kind="stable")
        best = models[order[0]]
        row = {"k": int(k), "best": best, "pass_at_k": float(means[order[0], j])}
        if len(models) > 1:
            second = models[order[1]]
            contrib = curves[best] - curves[second]  # (P, K)
            if (best, second) not in bands:
                cmp_band = None
                for rl, sign in ((best, 1), (second, -1)):
                    res = comparisons.get(rl)
                    if res is not None and {rl, base} == {best, second} and res.get("band") \
                            and len(res["ks"]) == ks.size:
                        lo, hi = np.asarray(res["band"]["lower"]), np.asarray(res["band"]["upper"])
                        cmp_band = {"lower": lo, "upper": hi} if sign > 0 else \
                            {"lower": -hi, "upper": -lo}
                bands[(best, second)] = cmp_band or cc.simultaneous_band(
                    contrib, n_multipliers=opts.compare.bootstrap, alpha=opts.compare.alpha,
                    seed=opts.compare.seed)
            band = bands[(best, second)]
            tie = bool(np.ptp(contrib[:, j]) <= 1e-12 and abs(contrib[:, j].mean()) <= 1e-12)
            lead = float(means[order[0], j] - means[order[1], j])
            lo, hi = (lead, lead) if tie else (float(band["lower"][j]), float(band["upper"][j]))
            row.update({"runner_up": second, "lead": lead, "band": [lo, hi], "tie": tie,
                        "supported": bool(lo > 0)})
        rows.append(row)
    return rows


def _lucky(aligned: Aligned, opts) -> list[dict]:
    """Problems a model solves rarely: 0 < c/n < lucky_below, rarest first."""
    rows = []
    for i, m in enumerate(aligned.models):
        rate = aligned.c[i] / aligned.n[i]
        for j in np.flatnonzero((aligned.c[i] > 0) & (rate < opts.lucky_below)):
            rows.append({"model": m, "prompt_id": str(aligned.prompt_ids[j]),
                         "c": int(aligned.c[i, j]), "n": int(aligned.n[i, j]),
                         "rate": float(rate[j]),
                         "others": {o: f"{int(aligned.c[q, j])}/{int(aligned.n[q, j])}"
                                    for q, o in enumerate(aligned.models) if q != i}})
    rows.sort(key=lambda r: (r["rate"], r["model"], r["prompt_id"]))
    return rows[: opts.lucky_max] if opts.lucky_max else rows
