"""Every sentence a reader sees, made from result dicts: one place for the page and the console.

The analysis writes numbers; this module says what they mean. Rules kept here:

- differences of pass@k are in points (percentage points, 1 point = 0.01), with
  a sign; pass@k values themselves as proportions with four decimals;
- a term is defined where it is first used (SRR, NDR, NSCR, the band, k*);
- no ``None``, no Python containers, no nested parentheses in a sentence;
- a missing value reads as a phrase ("none", "beyond the grid"), never as a blank.
"""

from __future__ import annotations

from rlvr_boundary.analysis.pairwise import gain_run_end

#: Spelled-out names of the support metrics (Wu et al., "The Invisible Leash", arXiv 2507.14843).
SUPPORT_TERMS = {
    "SRR": "support retention rate",
    "NDR": "net discovery rate",
    "SDS": "support dynamic score",
    "NSCR": "net support change rate",
}


def pts(x: float, sign: bool = True) -> str:
    """A difference of proportions in points: 0.0198 -> '+1.98'."""
    return f"{x * 100:+.2f}" if sign else f"{x * 100:.2f}"


def ranges(ks: list[int] | None, dash: str = "-") -> str:
    """Compress a budget list into ranges: [1, 2, 3, 7] -> '1-3, 7' ('none' if empty)."""
    if not ks:
        return "none"
    out, start, prev = [], ks[0], ks[0]
    for k in [*ks[1:], None]:
        if k is not None and k == prev + 1:
            prev = k
            continue
        out.append(str(start) if start == prev else f"{start}{dash}{prev}")
        if k is not None:
            start = prev = k
    return ", ".join(out)


def one_sample_note(n_max: int) -> str | None:
    """Said when every prompt has a single sample."""
    if n_max > 1:
        return None
    return ("Each prompt has one sample, so only pass@1 can be estimated: pass@k beyond "
            "k = 1 needs repeated samples per prompt.")


def headline(res: dict) -> str:
    """The plain verdict: 'RL helps up to k = 10 and hurts from k = 61.'"""
    ks = list(res["ks"])
    if res.get("band") is None:
        d1 = res["diff"][0]
        return (f"RL {'raises' if d1 > 0 else 'lowers' if d1 < 0 else 'leaves'} pass@1"
                f"{'' if d1 == 0 else ' by ' + pts(abs(d1), False) + ' points'}; one prompt "
                "gives no confidence band.")
    end = gain_run_end(res)
    losses = res.get("loss_budgets") or []
    gains = res.get("gain_budgets") or []
    if end is not None and losses:
        return f"RL helps up to k = {end} and hurts from k = {losses[0]}."
    if end is not None:
        if end == ks[-1]:
            return f"RL helps at every budget from k = {ks[0]} to {ks[-1]}."
        return f"RL helps up to k = {end}; no loss is supported up to k = {ks[-1]}."
    if losses:
        if losses[0] == ks[0] and len(losses) == len(ks):
            return f"RL hurts at every budget from k = {ks[0]} to {ks[-1]}."
        return f"RL hurts from k = {losses[0]}; no gain is supported at k = {ks[0]}."
    if gains:
        return f"RL helps at k = {ranges(gains)} only; no loss is supported."
    if all(res.get("degenerate") or [False]):
        return "The two models tie at every budget: every prompt is solved by both or by neither."
    return f"No difference is supported at any budget from k = {ks[0]} to {ks[-1]}."


def explanation(res: dict) -> str:
    """One sentence behind the headline, its terms defined where used."""
    base, rl = res["models"]["base"], res["models"]["rl"]
    ks = list(res["ks"])
    p_base, p_rl = res["pass_at_k"][base][0], res["pass_at_k"][rl][0]
    bits = [f"{rl} against {base}: pass@{ks[0]} goes from {p_base:.4f} to {p_rl:.4f}, "
            f"{pts(res['diff'][0])} points"]
    if res["k_star"] is not None:
        bits.append(f"the curves cross at k* = {res['k_star']}, the first budget where RL is "
                    "behind")
    else:
        bits.append("the curves do not cross on the grid")
    if res["price"] > 0:
        bits.append(f"the price, the largest loss over the grid, is {pts(res['price'], False)} "
                    f"points at k = {res['price_k']}")
    else:
        bits.append("RL pays no price on the grid")
    if res.get("band") is not None:
        bits.append(f"'supported' means the {res['band']['level']:.0%} simultaneous band, which "
                    "covers every budget at once, excludes zero")
    return "; ".join(bits) + "."


def band_sentence(res: dict) -> str | None:
    """Supported gains and losses, the first-loss set and the ties, in one sentence."""
    band = res.get("band")
    if band is None:
        return None
    text = (f"{band['level']:.0%} simultaneous band, critical value {band['critical_value']:.3f}: "
            f"supported gain at k = {ranges(res['gain_budgets'])}, supported loss at "
            f"k = {ranges(res['loss_budgets'])}")
    fl = res.get("first_loss_set")
    if fl:
        hi = "beyond the grid" if fl[1] is None else f"k = {fl[1]}"
        text += f"; the first budget where RL is truly worse lies between k = {fl[0]} and {hi}"
    ties = [k for k, v in zip(res["ks"], res.get("verdict_per_k") or []) if v == "tie"]
    if ties:
        text += (f"; tie at k = {ranges(ties)}, where every prompt is solved by both models "
                 "or by neither")
    checks = band_calibration_sentence(res)  # the calibration block below
    return text + "." + (f" {checks}" if checks else "")


def crossings_sentence(res: dict) -> str:
    """Observed crossings and the bound, and what each is of."""
    n = res["n_crossings"]
    where = ", ".join(f"between k = {c['k_before']} and {c['k_after']}, near k = "
                      f"{c['k_continuous']:.1f}" for c in res["crossings"])
    return (f"The unbiased curves cross {n} time{'s' if n != 1 else ''} on the grid"
            + (f": {where}" if where else "")
            + ". The plug-in curves 1 - (1 - c/n)^k can cross at most "
            + f"{res['crossing_bound']} time{'s' if res['crossing_bound'] != 1 else ''}, by the "
            "generalized Descartes rule of signs; the unbiased finite-n curves are not "
            "exponential sums, so the bound applies to them only approximately.")


def count_phrase(n: int, noun: str) -> str:
    """'1 checkpoint', '3 checkpoints'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def coverage_rule(cov: dict) -> str:
    """When a problem counts as solved at the audit budget K."""
    return (f"A problem counts as solved at K = {cov['K']} when its unbiased pass@{cov['K']} "
            f"is at least {cov['tau']:g}; at K = n that means at least one correct sample.")


def bootstrap_sentence(res: dict) -> str | None:
    ci = res.get("bootstrap_ci")
    if not ci:
        return None
    ks = list(res["ks"])

    def end(v):
        return f"beyond k = {ks[-1]}" if v is None else f"{v:g}"

    lo, hi = ci["k_star"]["ci"]
    text = (f"Paired bootstrap {1 - ci['alpha']:.0%} intervals: k* from {end(lo)} to {end(hi)}; "
            f"price from {pts(ci['price']['ci'][0], False)} to {pts(ci['price']['ci'][1], False)} "
            "points")
    if "delta_se" in ci:
        text += (f"; sampling-efficiency gap from {pts(ci['delta_se']['ci'][0])} to "
                 f"{pts(ci['delta_se']['ci'][1])} points")
    return text + "."


def delta_se_sentence(res: dict) -> str | None:
    if res.get("delta_se") is None:
        return None
    base, rl = res["models"]["base"], res["models"]["rl"]
    return (f"Sampling-efficiency gap: pass@{res['delta_se_K']} of {base} minus pass@1 of {rl} "
            f"is {pts(res['delta_se'])} points.")


def support_sentence(audit: dict, m: str) -> str:
    """Coverage and support of checkpoint ``m`` at the audit budget, terms spelled out."""
    t = audit["coverage"]["table_2x2"][m]
    s = audit["support"]["problem"][m]

    def num(x, spec):  # a ratio over no solved problems is undefined (None)
        return "undefined" if x is None else format(x, spec)

    return (f"At K = {audit['K']}, {m} solves {t['rl_only']} problem"
            f"{'s' if t['rl_only'] != 1 else ''} the base does not and misses {t['base_only']} "
            f"the base solves: {SUPPORT_TERMS['SRR']} SRR = {num(s['SRR'], '.3f')}, the share "
            f"of the base's solved problems kept; {SUPPORT_TERMS['NDR']} NDR = "
            f"{num(s['NDR'], '.3f')}, the share of its solved problems that are new; "
            f"{SUPPORT_TERMS['NSCR']} NSCR = {num(s['NSCR'], '+.3f')}.")


def dropped_note(dropped: dict, kept: int) -> str | None:
    """Said once when prompt sets were intersected."""
    if not dropped:
        return None
    per = ", ".join(f"{v} from {m}" for m, v in dropped.items())
    return f"Compared on the {kept} prompts common to all models; dropped {per}."


def summary_lines(audit: dict) -> list[str]:
    """The report's summary: per checkpoint a headline, its explanation, and its support."""
    lines = []
    for m, res in audit["comparisons"].items():
        lines.append(f"{m}: {headline(res)}")
        lines.append(explanation(res))
        lines.append(support_sentence(audit, m))
    if audit.get("scorers"):
        lines += scorer_lines(audit["scorers"])
    n_max = max(v["max"] for v in audit["n_samples"].values())
    note = one_sample_note(n_max)
    if note:
        lines.append(note)
    return lines


def advisor_verdict(row: dict) -> str:
    """'supported', 'tie' or 'not separated' for a budget-advisor row."""
    if row.get("tie"):
        return "tie"
    return "supported" if row.get("supported") else "not separated"


def quality_sampling_note(sampling: dict | None) -> str | None:
    """Says how many completions the text-derived quality flags come from."""
    if not sampling:
        return None
    parts = []
    for m, v in sampling.items():
        if v["sampled"] < v["completions"]:
            parts.append(f"{m}: a uniform random sample of {v['sampled']:,} of "
                         f"{v['completions']:,} completions")
        else:
            parts.append(f"{m}: all {v['completions']:,} completions")
    return ("The flags were derived from the completion text here; " + "; ".join(parts) + ".")


#: Said where the "Where learning landed" section has no result to show.
LEARNING_MISSING = ("No where-learning-landed result was given. Score the same samples under the "
                    "checkpoint before RL and after it with rlvr-boundary score ROLLOUTS --model "
                    "AFTER --before BEFORE --learning LEARNING.json, then add --learning "
                    "LEARNING.json to rlvr-boundary report.")

#: What the section measures, with the paper it follows.
LEARNING_INTRO = ("The same texts are scored under a checkpoint before RL and after it, token by "
                  "token: Δlog p is the change of each produced token's log-probability, |Δp| "
                  "the size of the change of its probability, ΔH the change of the next-token "
                  "entropy at that step, in nats. Following Deng et al., 'From Trial-and-Error "
                  "to Improvement: A Systematic Analysis of LLM Exploration Mechanisms in "
                  "RLVR' (arXiv 2508.07534), it shows how many tokens barely moved and where the "
                  "changes are: by kind of token and by relative position in the text. The token "
                  "kinds are a heuristic of this tool.")


def learning_sentence(res: dict) -> str:
    """One where-learning-landed result in a sentence: pair, size, share barely moved."""
    lab = res["labels"]
    eps = res["settings"]["eps"]
    moved = res["overall"]
    shares = ", ".join(f"{float(t):g}: {v:.1%}" for t, v in res["barely_moved"].items())
    return (f"{lab['after']} against {lab['before']} on {res['texts']:,} texts, "
            f"{res['tokens']:,} tokens: {moved['share_barely_moved']:.1%} of tokens moved by at "
            f"most {eps:g} in probability, {moved['share_up']:.1%} rose and "
            f"{moved['share_down']:.1%} fell by more; mean Δlog p {moved['mean_dlogp']:+.4f}, "
            f"mean |Δp| {moved['mean_abs_dp']:.4f}. Share barely moved by threshold on |Δp|: "
            f"{shares}.")


def learning_entropy_sentence(res: dict) -> str | None:
    """The tokens whose next-token entropy fell most (None when none qualified)."""
    rows = res.get("entropy_fell_most") or []
    if not rows:
        return None
    items = ", ".join(f"{r['token']!r} {r['mean_dentropy']:+.3f}" for r in rows[:8])
    return (f"Tokens whose entropy fell most, mean ΔH at the steps that produced them, at least "
            f"{res['settings']['min_count']} occurrences: {items}.")


def band_unit_sentence(res: dict) -> str | None:
    """What the band's multipliers were drawn over, when not independent prompts (else None)."""
    band = res.get("band") or {}
    if not (band.get("n_clusters") or any(v > 1 for v in (band.get("n_runs") or {}).values())):
        return None
    crit = band["critical_values"]
    return (f"Band drawn over {band['unit']} ({band['n_clusters'] or res['n_prompts']} "
            f"units; runs: base {band['n_runs']['base']}, trained {band['n_runs']['rl']}); "
            f"critical values {min(crit):.2f} to {max(crit):.2f} after the small-sample t "
            "correction.")


def _verdicts(gain: list, loss: list, first_loss) -> str:
    text = (f"a gain at k = {ranges(gain)}" if gain else "no gain") + " and " + \
        (f"a loss at k = {ranges(loss)}" if loss else "no loss")
    if first_loss:
        hi = "beyond the grid" if first_loss[1] is None else f"k = {first_loss[1]}"
        text += f", the first budget where RL is truly worse lying between k = {first_loss[0]} " \
                f"and {hi}"
    return text


def sampling_unit_sentences(su: dict, n_prompts: int) -> list[str]:
    """The band's sampling unit and how the verdicts move against independent prompts."""
    runs = su["n_runs"]
    unit = su["unit"]
    if su["n_clusters"]:
        unit = f"{su['n_clusters']} clusters of the {n_prompts} prompts"
        if runs["base"] > 1 or runs["rl"] > 1:
            unit += " and the runs"
    lo, hi = su["critical_values"]
    crit = f"{lo:.2f}" if abs(hi - lo) < 5e-3 else f"{lo:.2f} to {hi:.2f}"
    first = (f"The band's sampling unit: {unit}; runs per model: base {runs['base']}, "
             f"checkpoint {runs['rl']}. Its multipliers are drawn per unit, and with few units "
             f"the small-sample t correction raises the critical value to {crit}, against "
             f"{su['independent']['critical_value']:.2f} with independent prompts.")
    ind = su["independent"]
    second = (f"Drawn over independent prompts the band supports "
              f"{_verdicts(ind['gain_budgets'], ind['loss_budgets'], ind['first_loss_set'])}; "
              f"drawn over {su['unit']} it supports "
              f"{_verdicts(su['gain_budgets'], su['loss_budgets'], su['first_loss_set'])}.")
    moved = []
    if su["moved_gain"]:
        moved.append(f"the gain at k = {ranges(su['moved_gain'])}")
    if su["moved_loss"]:
        moved.append(f"the loss at k = {ranges(su['moved_loss'])}")
    third = ("No verdict changes." if not moved else
             f"No longer supported: {' and '.join(moved)}.")
    return [first, second, third]


def verifier_error_sentence(ve: dict) -> str:
    """Verdicts under the verifier's error rates, and whether the plain ones survive."""
    return (f"Under verifier error (false positives {ve['fp']:g}, false negatives {ve['fn']:g}): "
            f"supported gain at k = {ranges(ve['gain_budgets'])}, supported loss at "
            f"k = {ranges(ve['loss_budgets'])}; the verdicts "
            + ("survive." if ve["verdicts_survive"] else "do not all survive.")
            + (f" {verifier_calibration_sentence(ve)}" if ve.get("measured") else ""))


def verifier_error_lost(ve: dict, res: dict) -> str | None:
    """Verdicts of the plain band that the band under verifier error no longer supports."""
    gone_g = [k for k in res.get("gain_budgets") or [] if k not in set(ve["gain_survives"])]
    gone_l = [k for k in res.get("loss_budgets") or [] if k not in set(ve["loss_survives"])]
    parts = ([f"the gain at k = {ranges(gone_g)}"] if gone_g else []) + \
            ([f"the loss at k = {ranges(gone_l)}"] if gone_l else [])
    return f"Lost under verifier error: {' and '.join(parts)}." if parts else None


#: Said where a model-based block uses only the first run of models that have several.
FIRST_RUN_ONLY = ("With several runs per model this block is fitted to the first run of each "
                  "model only; the band above covers the runs, this one does not.")


def first_run_note(res: dict) -> str | None:
    """:data:`FIRST_RUN_ONLY` when the comparison averaged several runs, else None."""
    runs = (res.get("band") or {}).get("n_runs") or {}
    return FIRST_RUN_ONLY if any(v > 1 for v in runs.values()) else None


def extrapolation_sentence(ex: dict) -> str:
    """The model-based prediction at the largest budget, beside the power law's (calibration block)."""
    return extrapolation_point_sentence(ex)


def extrapolation_k_star_sentence(ex: dict) -> str:
    """Where each view puts the crossing k* (calibration block)."""
    return extrapolation_crossing_sentence(ex)


# ----------------------------------------------------------------------------- scorer sensitivity


def names_phrase(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = [str(x) for x in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def scorer_primary_sentence(block: dict) -> str:
    """Which scorer graded the main numbers, and which regrade the same completions."""
    p = block["primary"]
    if p is None:
        return ("The main numbers use the correct column, which matches none of the scorers' "
                f"verdict columns; the same completions are also graded by "
                f"{names_phrase(block['scorers'])}.")
    others = [s for s in block["scorers"] if s != p]
    return (f"The main numbers are graded by {p}; the same completions graded by "
            f"{names_phrase(others)} give the other rows: a scorer changes the verdicts, not "
            "the samples.")


def scorer_robust_sentence(sens: dict) -> str:
    """What survives a change of scorer: the loss, k*, the price ('survives either scorer')."""
    rb, scorers, per = sens["robust"], sens["scorers"], sens["per_scorer"]
    ks = list(sens["ks"])
    every = "either scorer" if len(scorers) == 2 else "every scorer"
    if rb["loss_budgets"]:
        text = (f"The loss from k = {rb['first_loss_all']} survives {every}: the band supports "
                f"a loss at k = {ranges(rb['loss_budgets'])} under each of them")
        if rb["loss_depends_on_scorer"]:
            text += (f"; at k = {ranges(rb['loss_depends_on_scorer'])} the loss is supported "
                     "under some scorers only")
    elif rb["loss_any"]:
        some = [s for s in scorers if per[s]["loss_budgets"]]
        rest = [s for s in scorers if not per[s]["loss_budgets"]]
        first = min(per[s]["loss_budgets"][0] for s in some)
        text = (f"The loss depends on the scorer: the band supports a loss from k = {first} "
                f"under {names_phrase(some)} and at no budget under {names_phrase(rest)}")
    else:
        text = (f"No scorer's band supports a loss at any budget from k = {ks[0]} to "
                f"{ks[-1]}")
    k_star = rb["k_star"]
    if rb["k_star_agree"]:
        v = next(iter(k_star.values()))
        text += ("; the curves do not cross on the grid under " + every if v is None
                 else f"; k* = {v} under {every}")
    else:
        text += "; k* moves with the scorer: " + ", ".join(
            f"{s} {'none on the grid' if v is None else v}" for s, v in k_star.items())
    lo, hi = rb["price_range"]
    text += (f"; the price is {pts(lo, False)} points under {every}" if lo == hi else
             f"; the price ranges from {pts(lo, False)} to {pts(hi, False)} points")
    if rb["gain_budgets"]:
        text += f"; a gain at k = {ranges(rb['gain_budgets'])} is supported under {every}"
    return text + "."


def disagreement_sentence(dis: dict) -> str:
    """How often each scorer's verdict differs from the reference, and where most."""
    ref = dis["reference"]
    bits = []
    for s, st in dis["overall"].items():
        text = (f"{s} disagrees with {ref} on {st['disagree']:,} of {st['rows']:,} completions "
                f"({st['rate']:.1%}): {st['only_reference']:,} accepted by {ref} only, "
                f"{st['only_other']:,} by {s} only")
        worst = sorted(((v[s]["rate"], ty) for ty, v in dis["by_type"].items()
                        if v[s]["disagree"]), reverse=True)[:3]
        if worst and len(dis["by_type"]) > 1:
            text += "; most often on " + ", ".join(f"{ty} answers ({r:.1%})" for r, ty in worst)
        bits.append(text)
    return "; ".join(bits) + "." if bits else f"Only {ref} graded these completions."


def scorer_lines(block: dict) -> list[str]:
    """Console lines of the scorer-sensitivity block (compare and report)."""
    lines = [scorer_primary_sentence(block)]
    for m, sens in block["comparisons"].items():
        base = sens["models"]["base"]
        K = list(sens["ks"])[-1]
        for s, per in sens["per_scorer"].items():
            pk = per["pass_at_k"]
            k_star = "no k*" if per["k_star"] is None else f"k* = {per['k_star']}"
            lines.append(f"  {s}: pass@1 {base} {pk[base][0]:.4f}, {m} {pk[m][0]:.4f}; "
                         f"pass@{K} {base} {pk[base][-1]:.4f}, {m} {pk[m][-1]:.4f}; {k_star}; "
                         f"price {pts(per['price'], False)} points; supported loss at "
                         f"k = {ranges(per['loss_budgets'])}")
        lines.append(f"{m}: {scorer_robust_sentence(sens)}")
    if block.get("disagreement"):
        lines.append(disagreement_sentence(block["disagreement"]))
    return lines


#: Said where the strategy section has no data.
STRATEGY_MISSING = ("The strategy view needs a 'strategy' column in the rollout table: the name of "
                    "the solution strategy each sample used (the lab's rollouts have one; a "
                    "parser of your own can fill it). These inputs do not have it.")

#: What the strategy section measures.
STRATEGY_INTRO = ("Each sample names the solution strategy it used (the rollouts' strategy "
                  "column). A strategy solves a problem when at least one sample of any model "
                  "that used it is correct there; the majority strategy is the base model's most "
                  "frequent one. Problems that only minority strategies solve are the ones a "
                  "model tilted towards the majority strategy loses first (No Free Lunch in "
                  "RLVR: every pass@1 gain has a pass@k price).")


def strategy_mixture_sentence(st: dict, base: str, model: str) -> str:
    """How a checkpoint's strategy mixture moved from the base's, largest shift first."""
    b, m = st["models"][base]["shares"], st["models"][model]["shares"]
    moves = sorted(((s, (m[s] or 0.0) - (b[s] or 0.0)) for s in st["strategies"]),
                   key=lambda t: -abs(t[1]))
    # strategies under half a percent in both models are left out of the sentence
    parts = [f"{s} {100 * (b[s] or 0):.0f}% -> {100 * (m[s] or 0):.0f}%" for s, _ in moves
             if max(b[s] or 0, m[s] or 0) >= 0.005]
    up = [s for s, d in moves if d > 0]
    lead = f"most towards {up[0]}" if up else "with no strategy gaining"
    return f"{model} moved its strategy mixture {lead}: " + ", ".join(parts) + "."


def strategy_minority_sentence(st: dict, base: str, model: str) -> str | None:
    """How many minority-only problems a checkpoint still reaches, against the base."""
    mo = st.get("minority_only")
    if not mo or not mo["problems"]:
        return None
    X = mo["problems"]
    rb, rm = mo["reached"][base], mo["reached"][model]
    ab, am = mo["accuracy"][base], mo["accuracy"][model]
    return (f"{X} problem{'s' if X != 1 else ''} {'are' if X != 1 else 'is'} solved only by "
            f"strategies other than {st['majority']}: {model} reaches {rm} of them (the base "
            f"{rb}), with mean accuracy {am:.3f} on them (the base {ab:.3f}).")


# ============================================================================ calibration
# Uncertainty that keeps its word: sentences for the band's small-sample checks, the
# extrapolation's reach and the plan. Owned by the statistics work; kept in one block.


def _cov_phrase(rows: list) -> str:
    return " and ".join(f"{r['coverage']:.2f} at {r['prompts']} prompts" for r in rows)


def band_calibration_sentence(res: dict) -> str | None:
    """What the band cannot vouch for here: too few prompts, no variance, few prompts (or None)."""
    band = res.get("band") or {}
    parts = []
    if band.get("too_few_prompts"):
        parts.append(f"With {res['n_prompts']} prompts no gain or loss can be supported at the "
                     f"{band['level']:.0%} level: even an exact sign-flip test needs "
                     f"{band['min_prompts']} prompts to get there.")
    nov = band.get("no_variance") or []
    if nov:
        ks = [res["ks"][j] for j in nov]
        parts.append(f"No variance at k = {ranges(ks)}: every prompt has the same difference "
                     "there, which a band cannot turn into a verdict, so none is drawn.")
    warn = band.get("warning")
    if warn and not band.get("too_few_prompts"):
        measured = _cov_phrase(warn["measured"])
        parts.append(f"Only {warn['prompts']} prompts: the band's level is validated from "
                     f"{warn['validated_from']} prompts on; in simulation its "
                     f"{warn['level']:.0%} band covered {measured}, so read it as approximate.")
    return " ".join(parts) or None


_REACH_REASONS = {
    "clusters": "clustered prompts (the intervals treat prompts as independent)",
    "prompts": "fewer than {min_prompts} prompts",
    "samples": "fewer than {min_samples} samples per prompt",
    "zero_share": "more than {share:.0%} of the prompts never solved",
    "ratio": "budgets beyond {max_ratio} times n",
}


def extrapolation_reach_sentence(ex: dict) -> str:
    """Where the prediction's intervals hold their level, and why not beyond."""
    r = ex["reach"]
    rule = r["rule"]
    why = [_REACH_REASONS[x].format(min_prompts=rule["min_prompts"],
                                    min_samples=rule["min_samples"],
                                    share=rule["max_zero_share"], max_ratio=rule["max_ratio"])
           for x in r["reasons"]]
    level = f"{ex['level']:.0%}"
    if not r["reasons"]:
        return (f"Each {level} interval is the range of predictions of every rate distribution "
                "the data cannot reject; at every budget shown it is inside the conditions where "
                "its coverage was validated.")
    if r["k_max_calibrated"] is None:
        return (f"Not calibrated: the intervals were not validated with {' and '.join(why)}, "
                "so the predictions are shown without intervals.")
    return (f"Intervals up to k = {r['k_max_calibrated']}; beyond it the prediction is not "
            f"calibrated ({' and '.join(why)} were not validated) and is shown without an "
            "interval.")


def extrapolation_point_sentence(ex: dict) -> str:
    """The prediction at the largest budget, with its interval or the reason it has none."""
    j = len(ex["ks"]) - 1
    k_star = "none" if ex["k_star"] is None else f"{ex['k_star']:.0f}"
    lo, hi = ex["diff_lower"][j], ex["diff_upper"][j]
    band = (f"interval {lo:+.4f} to {hi:+.4f}" if lo is not None and hi is not None
            else "not calibrated, no interval")
    return (f"Model-based prediction ({ex['method'].replace('_', ' ')}) at k = {ex['ks'][j]}: "
            f"D = {ex['diff'][j]:+.4f} ({band}), predicted k* {k_star}; power law: "
            f"D = {ex['power_law']['diff'][j]:+.4f}. {extrapolation_reach_sentence(ex)}")


def extrapolation_crossing_sentence(ex: dict) -> str:
    """Where each view puts the crossing k*, with the set the calibrated intervals allow."""
    def k_of(v):
        return f"beyond k = {ex['k_max']}" if v is None else f"k = {v:.0f}"

    text = f"Predicted crossing k*: {k_of(ex['k_star'])} from the fitted rates"
    cal = [k for k, ok in zip(ex["ks"], ex.get("calibrated") or []) if ok]
    ks_set = ex.get("k_star_set")
    if cal:
        top = f"k = {max(cal)}"
        if ks_set is None:
            text += f"; the intervals allow no crossing up to {top}"
        else:
            hi = (f"k = {ks_set[1]:.0f}" if ks_set[1] is not None else f"beyond {top}")
            text += f"; the intervals put it between k = {ks_set[0]:.0f} and {hi}"
    return text + f"; {k_of(ex['power_law']['k_star'])} from the power law."


def plan_design_line(row: dict) -> str:
    """One simulated design: its power, uniform and (when offered) allocated."""
    u, a = row["uniform"], row["allocated"]
    text = f"  n = {row['n']:>5} per prompt: power {u['power']:.2f} +- {u['mc_se']:.2f} uniform"
    lo, hi = row["allocated_n_range"]
    if lo == hi:
        return text + "; allocated: the same design here"
    if row.get("allocated_offered", True):
        text += f", {a['power']:.2f} +- {a['mc_se']:.2f} allocated ({lo}-{hi} per prompt)"
    else:
        text += (f"; allocated ({lo}-{hi} per prompt) not offered, its power "
                 f"{a['power']:.2f} is not above uniform")
    return text


def plan_recommendation(res: dict, power: float) -> str:
    """The recommended design, or why there is none."""
    rec = res.get("recommended")
    if rec:
        return (f"Recommended: {rec['design']} n = {rec['n']} samples per prompt: power "
                f"{rec['power']:.2f} +- {rec['mc_se']:.2f} (re-estimated on fresh simulated "
                f"studies; {power:.2f} asked). The power averages over the truths the pilot "
                "leaves plausible, so a larger pilot makes it sharper.")
    unlimited = res.get("unlimited") or {}
    if res.get("reachable") is False:
        return (f"Not reachable with these prompts: even with unlimited samples per prompt "
                f"the band certifies the claims in {unlimited.get('power', 0):.2f} of the "
                f"simulated studies ({power:.2f} asked): plan more --prompts.")
    return (f"Not reachable below n = {res['searched_up_to']:,} samples per prompt: no "
            f"simulated design up to there reaches power {power:.2f}.")


def verifier_calibration_sentence(ve: dict) -> str:
    """The coverage the band under verifier error had in the calibration study."""
    m = ve["measured"]
    return (f"In simulation this band covered the true D(k) at every budget in "
            f"{m['coverage']:.2f} of studies (nominal {m['level']:.2f}; {m['prompts']} prompts, "
            f"n = {m['n']}, false positives {m['fp']:g}, false negatives {m['fn']:g}): read its "
            "verdicts as approximate.")
