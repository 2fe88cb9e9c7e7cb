"""Every sentence a reader sees, made from result documents: one place for page, console and app.

The workflows write numbers (every number a sentence needs is in the result
document); this module says what they mean. It imports nothing of the library:
a result document in, words out. Rules kept here:

- differences of pass@k and prices are in points (percentage points, 1 point =
  0.01), with a sign for differences; pass@k values themselves as proportions
  with four decimals; JSON keeps proportions;
- a term is defined where it is first used (SRR, NDR, NSCR, the band, k*), and
  :data:`GLOSSARY` defines every term once for the page, the app and the docs;
- no ``None``, no Python containers, no nested parentheses in a sentence;
- a missing value reads as a phrase ("none", "beyond the grid"), never as a blank.

Each result kind has one console rendering (:func:`console_lines`): the
commands only print what it returns.
"""

from __future__ import annotations

#: Spelled-out names of the support metrics (Wu et al., "The Invisible Leash", arXiv 2507.14843).
SUPPORT_TERMS = {
    "SRR": "support retention rate",
    "NDR": "net discovery rate",
    "SDS": "support dynamic score",
    "NSCR": "net support change rate",
}


#: Every term a reader meets, defined once: the report page, the app and the docs use these
#: (docs/glossary.md is generated from it). Keys are the terms as written.
GLOSSARY = {
    "pass@k": "The chance that at least one of k samples of a problem is correct, averaged over "
              "problems. Estimated without bias from n >= k samples with c correct: "
              "1 - C(n-c, k)/C(n, k) (Chen et al., arXiv 2107.03374). There is no unbiased "
              "estimate for k > n.",
    "D(k)": "pass@k of the trained model minus pass@k of the base, per budget k, in points "
            "(percentage points: 1 point = 0.01).",
    "k*": "The crossover budget: the first k at which D(k) < 0, where the trained model "
          "starts to solve fewer problems than its base.",
    "price": "The largest loss of the trained model against the base over the budget grid, "
             "max over k of max(0, -D(k)), in points: what the pass@1 gain cost at large k.",
    "Delta_SE": "The sampling-efficiency gap, not a gain: pass@K of the base minus pass@1 of "
                "the trained model (K = 256, or the largest budget of the grid below it), in "
                "points. It says how far one attempt of the trained model falls short of what "
                "the base reaches with K attempts; smaller is better, and it stays large when "
                "RL gained nothing at K.",
    "band": "The simultaneous confidence band of D(k): it covers every budget of the grid at "
            "once with the stated level (a Gaussian-multiplier sup-t band over prompts, or "
            "clusters and runs).",
    "supported gain": "A budget where the whole band lies above 0: the trained model is "
                      "better there, at the band's level, for every budget at once.",
    "supported loss": "A budget where the whole band lies below 0: the trained model is worse "
                      "there.",
    "first-loss set": "The budgets where RL first becomes truly worse lie between the first "
                      "budget that is not a supported gain and the first supported loss.",
    "crossings": "How many times the two pass@k curves change order on the budget grid. For "
                 "the model curves 1 - (1 - p)^k the number of crossings is at most the number "
                 "of sign changes of the per-problem differences (the generalized Descartes "
                 "rule of signs); the unbiased curves follow that bound only approximately.",
    "support": "A model supports a problem when it finds a correct answer within a budget K: "
               "its success probability exceeds epsilon = 1 - zeta^(1/K) (Wu et al., \"The "
               "Invisible Leash\", arXiv 2507.14843).",
    "support epsilon": "The success probability 1 - zeta^(1/K) above which a problem counts as "
                       "supported at budget K (zeta = 0.05 by default).",
    "SRR": "Support retention rate P/(P+S): the share of the base's supported problems the "
           "trained model keeps (P preserved, S shrunk).",
    "NDR": "Net discovery rate E/(P+E): the share of the trained model's supported problems "
           "that are new (E expanded).",
    "SDS": "Support dynamic score 2 SRR NDR/(SRR + NDR), their harmonic mean.",
    "NSCR": "Net support change rate (E - S)/(P + E + S): above 0 the support grew, below 0 it "
            "shrank.",
    "coverage": "The problems a model solves at budget K: at least one correct sample at K = "
                "n, or pass@K at least 1 - zeta.",
    "cover@tau": "The share of problems solved in at least a share tau of their samples "
                 "(c/n >= tau): low tau measures breadth, high tau reliability.",
    "maj@k": "The chance that the most frequent answer among k samples is correct, averaged "
             "over random k-subsets (ties split evenly; incomplete answers never win).",
    "CoT-pass@k": "pass@k counting a sample as correct only when both its final answer and its "
                  "chain of thought are correct (the cot_correct column, e.g. from an LLM "
                  "judge; Wen et al., arXiv 2506.14245). Answer-only pass@k minus CoT-pass@k "
                  "is the share reached by a flawed chain.",
    "RBF": "Rollout branching factor: per generation step, how many candidate tokens lie "
           "inside the top 95% of the probability mass; averaged over the steps.",
    "entropy": "Token entropy: the entropy of the next-token distribution at each step, in "
               "nats, averaged over a completion. Answer entropy: the entropy of the "
               "distribution of distinct final answers among k samples.",
}


#: What each output-quality flag means when it fires (verify fills the q_* columns).
QUALITY_FLAGS = {
    "q_no_boxed": "no \\boxed{} answer in the completion",
    "q_multi_boxed": "several \\boxed{} answers in one completion",
    "q_text_after_answer": "20 or more characters of text after the last boxed answer",
    "q_cjk_share": "share of Chinese, Japanese or Korean characters among the letters",
    "q_language_mix": "the answer's script differs from the prompt's (CJK against non-CJK)",
    "q_redundancy3": "repetition: 1 - distinct word 3-grams / all word 3-grams",
}


def quality_omitted_sentence(never: list[str], everywhere: list[str]) -> str | None:
    """Which flags the quality table leaves out, and why."""
    bits = []
    if never:
        bits.append(f"never fire on these samples: {', '.join(never)}")
    if everywhere:
        bits.append(f"fire on every sample of every model, so they describe the task rather "
                    f"than a model (for example a task whose answers are never boxed): "
                    f"{', '.join(everywhere)}")
    if not bits:
        return None
    return "Not shown, flags that " + "; flags that ".join(bits) + "."


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
    end = res.get("gain_run_end")
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


def plain_summary(audit: dict, m: str) -> str:
    """One paragraph in plain words for checkpoint ``m``: what RL bought at small k, what it
    cost at large k, how sure, and what to do. Read first on the page and in the app."""
    res = audit["comparisons"][m]
    base = res["models"]["base"]
    ks = list(res["ks"])
    p_base, p_rl = res["pass_at_k"][base][0], res["pass_at_k"][m][0]
    gains, losses = res.get("gain_budgets") or [], res.get("loss_budgets") or []
    band = res.get("band")
    d1 = res["diff"][0]
    who = f"with {'one attempt' if ks[0] == 1 else f'{ks[0]} attempts'} per problem"
    bought = (f"What RL bought: {who}, {m} solves {p_rl:.1%} of the problems against "
              f"{p_base:.1%} for {base}, {pts(abs(d1), False)} points "
              f"{'more' if d1 > 0 else 'fewer' if d1 < 0 else 'either way'}")
    if band is None:
        bought += " (one prompt: no band, so no verdict)."
    elif ks[0] in gains:
        bought += ", a gain the band supports."
    elif ks[0] in losses:
        bought += ", a loss the band supports."
    else:
        bought += ", too close to call at this sample size."
    if losses and (not gains or losses[0] > ks[0]):
        cost = (f"What it cost: from k = {losses[0]} attempts on it solves fewer problems than "
                f"{base} (supported), by up to {pts(res['price'], False)} points at k = "
                f"{res['price_k']}.")
    elif res["price"] > 0:
        cost = (f"What it cost: it falls behind by up to {pts(res['price'], False)} points at "
                f"k = {res['price_k']}, but no loss is supported up to k = {ks[-1]}.")
    else:
        cost = f"What it cost: nothing measurable; it is never behind up to k = {ks[-1]}."
    t = (audit.get("coverage") or {}).get("table_2x2", {}).get(m)
    if t is not None:
        cost += (f" At K = {audit['K']} attempts it solves {t['rl_only']} problem"
                 f"{'s' if t['rl_only'] != 1 else ''} {base} cannot and misses "
                 f"{t['base_only']} that {base} solves.")
    if band is None:
        sure = "How sure: not at all; a verdict needs more than one prompt."
    else:
        sure = (f"How sure: each 'supported' holds at {band['level']:.0%} for every budget at "
                f"once (prompts are the sampling unit, {res['n_prompts']} of them)")
        ci = res.get("bootstrap_ci") or {}
        ks_ci = (ci.get("k_star") or {}).get("ci")
        if ks_ci and res["k_star"] is not None:
            hi = f"beyond {ks[-1]}" if ks_ci[1] is None else f"{ks_ci[1]:g}"
            lo = f"beyond {ks[-1]}" if ks_ci[0] is None else f"{ks_ci[0]:g}"
            sure += (f"; the budget where it falls behind, k* = {res['k_star']}, lies "
                     + (f"at {lo}" if lo == hi else f"between {lo} and {hi}")
                     + f" with {1 - ci['alpha']:.0%} confidence")
        sure += "."
    if band is None:
        todo = "What to do: evaluate on more problems."
    elif gains and losses:
        todo = (f"What to do: use {m} where one or a few attempts count; where you sample "
                f"k >= {losses[0]} attempts and keep the best, {base} does better. To keep the "
                "large-k coverage while training, see the pass@k-preserving advantage shaping "
                "of rlvr_boundary.shaping, or pick an earlier checkpoint.")
    elif gains:
        todo = f"What to do: keep {m}: it gains with no supported cost up to k = {ks[-1]}."
    elif losses:
        todo = (f"What to do: prefer {base} for this task: RL made it worse where it is "
                "measured, and gained nothing supported.")
    else:
        todo = ("What to do: no difference is supported; to decide, plan a larger study with "
                "rlvr-boundary plan (it says how many prompts and samples reach a verdict).")
    return " ".join([bought, cost, sure, todo])


def frontier_sentence(fr: dict, n_prompts: int, base: str) -> str:
    """The hard frontier and the transitions, with what the intervals are over."""
    u = fr["unsolved"]
    lvl = f"{1 - fr['alpha']:.0%}"

    text = (f"A problem is solved at K = {fr['K']} by the coverage rule above. The hard "
            f"frontier, the problems no model solves: {u['count']} of the {n_prompts} "
            f"({u['share']:.1%}, {lvl} interval {u['ci'][0]:.1%} to {u['ci'][1]:.1%}). ")
    text += (f"Per checkpoint, the table counts the problems it gained (0 -> 1: unsolved by "
             f"{base}, solved by it) and lost (1 -> 0).")
    return text + (" The intervals are Wilson score intervals with the prompts as the sampling "
                   "unit, for the share among prompts drawn like these with the samples drawn "
                   "(in simulation they covered 94% to 98% of the time at 95%: "
                   "docs/statistics.md); an unsolved problem may be solvable with more "
                   "samples.")


def cover_sentence(cover: dict, n_prompts: int) -> str:
    """What cover@tau is, what its band covers, and why it matters beside pass@k."""
    text = ("cover@tau is the share of problems a model solves in at least a share tau of its "
            "samples (Dragoi et al., arXiv 2510.08325). Low tau counts the problems solved at "
            "all (breadth), high tau those solved reliably (depth). pass@k at large k weighs "
            "tau near 0 most, where a lucky guess on a small answer space counts as much as a "
            "reliable solution; a gap that opens only at small tau is that kind of gap. ")
    if cover.get("no_band"):
        return text + f"No band is drawn: {cover['no_band']}."
    return text + (f"The bands hold at every tau at once with probability at least "
                   f"{cover['level']:.0%} (Dvoretzky-Kiefer-Wolfowitz, ±"
                   f"{cover['halfwidth'] * 100:.1f} points with {n_prompts} problems; coverage "
                   f"measured in docs/statistics.md). They are for {cover['estimand']}.")


def cover_caption(cover: dict) -> str:
    """Caption of the cover@tau figure."""
    return ("Top: cover@tau of every model, shaded by its simultaneous band. Bottom: each "
            "checkpoint minus the base, with a band that holds at every tau at once (a union "
            "of the two models' bands, so wider than a paired one).")


def cover_verdict_sentence(model: str, base: str, cover: dict) -> str:
    """Where along tau the checkpoint's cover is supported above or below the base's."""
    d = cover["diff"]
    taus = cover["taus"]
    if d["verdict"] is None:
        return (f"{model}: no band (see above), so no tau is called a gain or a loss; the "
                f"largest difference is {max(d['diff'], key=abs) * 100:+.1f} points.")
    gain = [t for t, v in zip(taus, d["verdict"]) if v == "gain"]
    loss = [t for t, v in zip(taus, d["verdict"]) if v == "loss"]

    def span(ts):  # runs of consecutive thresholds: "tau 0.43 to 0.89 and tau = 0.95"
        step = taus[1] - taus[0] if len(taus) > 1 else 1.0
        runs = [[ts[0]]]
        for t in ts[1:]:
            if t - runs[-1][-1] > step * 1.5:
                runs.append([t])
            else:
                runs[-1].append(t)
        return " and ".join(f"tau {r[0]:g} to {r[-1]:g}" if len(r) > 1 else f"tau = {r[0]:g}"
                            for r in runs)

    parts = []
    if gain:
        parts.append(f"solves more problems reliably than {base} at {span(gain)} "
                     f"({len(gain)} of {len(taus)} thresholds)")
    if loss:
        parts.append(f"solves fewer than {base} at {span(loss)} "
                     f"({len(loss)} of {len(taus)} thresholds)")
    if not parts:
        return (f"{model}: the band does not separate it from {base} at any tau (largest "
                f"difference {max(d['diff'], key=abs) * 100:+.1f} points).")
    return f"{model} " + "; it ".join(parts) + "; elsewhere the band cannot tell them apart."


def crossings_overview(comparisons: dict) -> str:
    """One sentence for every checkpoint's crossings and their bound."""
    if not comparisons:
        return ""
    seen = "; ".join(
        f"{m} {r['n_crossings']} time{'s' if r['n_crossings'] != 1 else ''}"
        + (f" (near k = {r['crossings'][0]['k_continuous']:.1f})"
           if r["n_crossings"] == 1 else "")
        + f", at most {r['crossing_bound']}"
        for m, r in comparisons.items())
    return (f"How often the curves change order on the grid, and the most the model curves "
            f"could (generalized Descartes rule of signs, approximate for the unbiased curves): "
            f"{seen}.")


def delta_se_cell(res: dict) -> str | None:
    """The sampling-efficiency gap as a gap: unsigned when positive, named by its parts."""
    if res.get("delta_se") is None:
        return None
    v = res["delta_se"]
    gap = pts(v, False) if v >= 0 else f"{pts(v)} (RL pass@1 above base)"
    return f"{gap}: base pass@{res['delta_se_K']} − RL pass@1"


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


# ----------------------------------------------------------------------------- console renderings
#
# One rendering per result kind: a list of lines (str) and rich renderables (a table, a
# styled line) that the command prints in order. Model labels and other user data go
# into rich Text objects or plain strings printed without markup, never into markup.


def _styled(*parts):
    """A rich Text from ``(text, style)`` pairs and plain strings (no markup parsing)."""
    from rich.text import Text

    return Text.assemble(*parts)


def note_line(text: str):
    """A "note:" line (yellow label) for the console."""
    return _styled(("note:", "yellow"), " " + text)


def _table(header: list[str], rows: list[list[str]], *, justify: str = "right", **kw):
    from rich.table import Table

    t = Table(show_header=True, header_style="bold", **kw)
    for col in header:
        t.add_column(col, justify=justify)
    for r in rows:
        t.add_row(*r)
    return t


def kstar_price_sentence(res: dict) -> str:
    """'k* = 22; price 1.98 points (0.01981) at k = 128.': the crossover and the price."""
    kstar = f"k* = {res['k_star']}" if res["k_star"] is not None else "no k* on the grid"
    price = (f"price {pts(res['price'], False)} points ({res['price']:.5f}) at k = "
             f"{res['price_k']}" if res["price"] > 0 else "no price on the grid")
    return f"{kstar}; {price}."


def compare_console(res: dict) -> list:
    """What a person reads after ``compare``: a short table and the words of the result."""
    base, rl = res["models"]["base"], res["models"]["rl"]
    ks = list(res["ks"])
    nb = res["n_samples"][base]
    n_text = f"{nb['min']}" if nb["min"] == nb["max"] else f"{nb['min']} to {nb['max']}"
    out: list = [_styled((rl, "bold"), " against ", (base, "bold"),
                         f" on {res['n_prompts']} prompts, n = {n_text} samples per prompt")]
    show = sorted({ks[0], ks[-1], *[k for k in ks if k & (k - 1) == 0],
                   *([res["k_star"]] if res["k_star"] else [])})
    band = res.get("band")
    rows = []
    for k in show:
        j = ks.index(k)
        b = f"{pts(band['lower'][j])} to {pts(band['upper'][j])}" if band else "-"
        rows.append([str(k), f"{res['pass_at_k'][base][j]:.4f}", f"{res['pass_at_k'][rl][j]:.4f}",
                     pts(res["diff"][j]), b, res["verdict_per_k"][j]])
    out.append(_table(["k", f"pass@k {base}", f"pass@k {rl}", "D(k), points", "band, points",
                       "verdict"], rows))
    nr = res["n_samples"][rl]
    note = one_sample_note(max(nb["max"], nr["max"]))
    if note:
        out.append(note_line(note))
    out.append(f"Solved by at least one sample: {base} {res['solved_at_n'][base]} of "
               f"{res['n_prompts']}, {rl} {res['solved_at_n'][rl]} of {res['n_prompts']}.")
    if res.get("maj_at_k"):
        out.append(majority_sentence(res["maj_at_k"], [base, rl]))
    if res.get("cover"):
        out.append("cover@tau: " + cover_verdict_sentence(rl, base, res["cover"]))
    out.append(crossings_sentence(res))
    out.append(kstar_price_sentence(res))
    out += [s for s in (delta_se_sentence(res), band_sentence(res), bootstrap_sentence(res)) if s]
    out.append(_styled((headline(res), "bold")))
    out.append(explanation(res))
    if res.get("scorers"):
        out += scorer_lines(res["scorers"])
    if res.get("cot"):  # CoT-pass@k beside answer-only pass@k
        out += cot_lines(res["cot"], base, rl, res)
    extras = [band_unit_sentence(res)]
    if res.get("verifier_error"):
        extras.append(verifier_error_sentence(res["verifier_error"]))
    if res.get("extrapolation"):
        extras.append(extrapolation_sentence(res["extrapolation"]))
    return out + [x for x in extras if x]


def majority_sentence(maj: dict, models: list[str]) -> str:
    """maj@k of each model at the budgets computed, beside pass@k in the table above."""
    per = "; ".join(f"{m} " + ", ".join(f"{v:.4f}" for v in maj["models"][m]) for m in models)
    return (f"maj@k, the chance that the most frequent answer among k samples is correct, at "
            f"k = {', '.join(str(k) for k in maj['ks'])}: {per}.")


# ============================================================================ CoT-pass@k
# CoT-pass@k beside answer-only pass@k (Wen et al., arXiv 2506.14245): the words of the
# compare console and of the report's "CoT-pass@k" section. Kept in one block.

#: What CoT-pass@k is, said once where the view is shown.
COT_INTRO = ("CoT-pass@k (Wen et al., arXiv 2506.14245) counts a sample as correct only when "
             "both its final answer and its chain of thought are correct (the rollouts' "
             "cot_correct verdict, e.g. from an LLM judge). The curves, D(k), the band and its "
             "verdicts, k* and the price are computed exactly as for answer-only pass@k, on "
             "these counts.")

#: The band on the CoT counts is the same band: what it claims, and no more.
COT_BAND_NOTE = ("The band on CoT-pass@k is the same simultaneous band drawn on other counts, so "
                 "its calibration is the band's; it treats the chain-of-thought verdicts as "
                 "given and does not account for errors of the judge that made them.")


def cot_skipped_sentence(block: dict, base: str, rl: str) -> str | None:
    """Why the CoT-pass@k view of a pair is not drawn (None when it is)."""
    why = block.get("skipped")
    if why is None:
        return None
    if why == "runs":
        return (f"CoT-pass@k of {rl} against {base} is not drawn: further runs were given, and "
                "the CoT view reads the first run of each model only, so its band could not "
                "cover the run-to-run variance the answer-only band covers.")
    carried = block.get("carried_by") or []
    if not carried:
        return (f"Neither {rl}'s nor {base}'s rollouts carry a cot_correct column, so there is "
                "no CoT-pass@k for this pair.")
    other = rl if carried[0] == base else base
    return (f"Only {carried[0]}'s rollouts carry a cot_correct column, {other}'s do not, so "
            f"CoT-pass@k of {rl} against {base} is not drawn: it compares both models on the "
            "same verdict. Judge the chains of the other model's samples too to draw it.")


def cot_without_answer_sentence(block: dict) -> str | None:
    """Rows whose chain was judged correct but whose answer was wrong (None when there are none)."""
    rows = {m: n for m, n in (block.get("cot_without_answer") or {}).items() if n}
    if not rows:
        return None
    per = "; ".join(f"{m} {count_phrase(n, 'row')}" for m, n in rows.items())
    return (f"Rows with cot_correct true but correct false: {per}. They count as not "
            "CoT-correct, since CoT-pass@k needs both the answer and the chain correct.")


def cot_kstar_price_sentence(block: dict) -> str | None:
    """'CoT-pass@k: k* = 4; price 2.00 points (0.02000) at k = 8.' (None when not drawn)."""
    res = block.get("comparison")
    if res is None:
        return None
    return "CoT-pass@k: " + kstar_price_sentence(res)


def cot_meaning_sentence(block: dict, base: str, rl: str,
                         answer: dict | None = None) -> str | None:
    """What the gap between answer-only pass@k and CoT-pass@k says, from the numbers.

    With ``answer`` (the answer-only comparison) and a price there, also how much of the
    base's lead at large k survives on CoT-pass@k.
    """
    gaps, res = block.get("answer_minus_cot"), block.get("comparison")
    if not gaps or res is None:
        return None
    ks = list(res["ks"])
    if all(abs(v or 0.0) <= 1e-12 for m in (base, rl) for v in gaps[m]):
        return ("Every correct answer came with a correct chain of thought, so answer-only "
                "pass@k and CoT-pass@k coincide.")
    bits = []
    for m in (rl, base):
        g = [0.0 if v is None else v for v in gaps[m]]
        j = max(i for i, v in enumerate(g) if v >= max(g) - 1e-12)  # the largest k of a tie
        bits.append(f"{m} by {pts(g[0], False)} points at k = {ks[0]} and "
                    f"{pts(g[-1], False)} at k = {ks[-1]}"
                    + (f", most at k = {ks[j]} with {pts(g[j], False)}"
                       if j not in (0, len(g) - 1) else ""))
    grows = all((gaps[m][-1] or 0.0) >= (gaps[m][0] or 0.0) for m in (base, rl))
    text = ("Answers reached by a flawed chain of thought inflate answer-only pass@k"
            + (", most at large k, where one lucky answer among k tries suffices" if grows
               else "")
            + ": answer-only pass@k exceeds CoT-pass@k for " + "; for ".join(bits) + ".")
    if answer is not None and answer.get("price", 0) > 0:
        price, cot_price = answer["price"], res["price"]
        text += (f" The price of {rl}, its largest loss against {base}, is "
                 f"{pts(price, False)} points on answers and {pts(cot_price, False)} points on "
                 "CoT-pass@k")
        if cot_price <= 1e-12:
            text += (", so the base's lead at large k came from answers reached by a flawed "
                     "chain.")
        elif cot_price < price:
            text += (", so part of the base's lead at large k came from answers reached by a "
                     "flawed chain.")
        else:
            text += ", so the base's lead at large k does not rest on flawed chains."
    return text


def cot_lines(block: dict, base: str, rl: str, answer: dict | None = None) -> list[str]:
    """The CoT-pass@k lines of the compare console: the crossing and price, the band's
    verdicts, what the gap means, and the rows counted as not CoT-correct."""
    skipped = cot_skipped_sentence(block, base, rl)
    if skipped is not None:
        out = [skipped]
    else:
        res = block["comparison"]
        band = band_sentence(res)
        out = [cot_kstar_price_sentence(block),
               *([f"CoT-pass@k, {band[0].lower()}{band[1:]}"] if band else []),
               cot_meaning_sentence(block, base, rl, answer)]
    return [x for x in (*out, cot_without_answer_sentence(block)) if x]


def report_console(audit: dict) -> list:
    """What a person reads after ``report``: the summary of the page."""
    return summary_lines(audit)


def price_console(res: dict) -> list:
    """What a person reads after ``price``: crossings, the bound, k* and the price."""
    ks = list(res["ks"])
    out = []
    if res["input_kind"] == "rates":
        out.append(f"{res['n_prompts']} prompts; rate curves 1-(1-p)^k on k = {ks[0]}..{ks[-1]} "
                   f"({len(ks)} budgets)")
        out.append(f"crossings: {res['n_crossings']}; bound (generalized Descartes): "
                   f"{res['crossing_bound']} (V = {res['crossing_bound_V']})")
    else:
        out.append(f"published curve at k = {', '.join(map(str, ks))}")
        out.append(f"crossings: {res['n_crossings']} in "
                   + (", ".join(f"({a}, {b}]" for a, b in res["crossing_intervals"]) or "-"))
    for c in res["crossings"]:
        out.append(f"  {c['direction'].replace('_', ' ')} between k = {c['k_before']} and "
                   f"{c['k_after']} (log-k interpolation: {c['k_continuous']:.1f})")
    out.append(kstar_price_sentence(res))
    if res["input_kind"] == "rates":
        out.append(f"as k -> infinity, D -> {pts(res['asymptotic_diff'])} points "
                   "(difference in the share of prompts with nonzero success rate)")
    return out


#: Prices below this are LP round-off (constraints hold to about 1e-9), not a loss.
NO_LOSS = 1e-8


def frontier_line(r: dict, kmax: float) -> str:
    """One line of the price frontier, in points; says so when nothing is lost."""
    gain = f"tau = {r['tau']:.2f}: pass@1 gain {r['gain'] * 100:+.2f} points, "
    if r["price"] <= NO_LOSS:
        return gain + f"no pass@k loss at any budget k <= {kmax:g}"
    loss = "< 0.01" if r["price"] * 100 < 0.005 else f"{r['price'] * 100:.2f}"
    return gain + f"worst pass@k loss {loss} points at k = {r['price_k']:g}"


def frontier_notes(above: list[dict], n_floors: int) -> list[str]:
    """Why tilt points lie above the frontier line, one sentence per reason found."""
    reasons = {a["reason"] for a in above}
    notes = []
    if "floor grid" in reasons:
        notes.append(f"Some tilt points lie above the frontier line because the frontier is "
                     f"computed at {n_floors} floors tau and drawn with straight lines between "
                     "them; between two floors the true frontier bulges above the line. At each "
                     "such point's own floor the LP gains at least as much for no more price.")
    if "floor, not price" in reasons:
        notes.append("Some tilt points lie above the frontier line because each frontier point "
                     "maximizes pass@1 under a floor on every prompt (p_x >= tau p_x(pi0)), not "
                     "under a price: its price is measured afterwards. The tilt spreads its "
                     "losses more evenly, so its worst pass@k loss can be smaller at the same "
                     "gain. At equal floor it never gains more than the frontier (right panel).")
    return notes


def frontier_console(doc: dict) -> list:
    """About six lines of the frontier (first and last floor included) and the notes."""
    front, kmax = doc["frontier"], doc["options"]["kmax"]
    step = max(1, len(front) // 6)
    out = [frontier_line(front[i], kmax)
           for i in sorted(set(range(0, len(front), step)) | {len(front) - 1})]
    return out + frontier_notes(doc["tilt_above_frontier"], len(front))


def diagnose_sentences(doc: dict) -> list[str]:
    """Free lunch (the direction and how far it goes) or the certificate; specialization."""
    names, prompts = doc["strategies"], doc["prompts"]
    out = []
    if doc["free_lunch"]:
        out.append("A free lunch exists: moving mass along d (sum 0) raises some prompts and "
                   "lowers none, so pass@1 can rise at no pass@k price.")
        out += [f"  d({n}) = {v:+.4f}" for n, v in zip(names, doc["direction"])]
        out.append("  change of success per prompt, per unit step: " + ", ".join(
            f"{p} {g:+.4f}" for p, g in zip(prompts, doc["prompt_change"])))
        out.append(f"  from pi0 the step can go up to {doc['max_step']:.4f} before a weight "
                   "hits 0.")
    else:
        out.append("No free lunch: every change of mixture that raises pass@1 lowers some "
                   "prompt. Certificate (Stiemke): strictly positive prompt weights under which "
                   f"every strategy scores the same, {doc['c']:.4f}:")
        out.append("  " + ", ".join(f"{p} {v:.4f}" for p, v in zip(prompts, doc["weights"])))
    if doc["exclusive"]:
        out.append("The matrix has exclusive specialization (every strategy has a prompt only "
                   "it solves), which alone rules out a free lunch.")
    if doc.get("dominance_margin") is not None:
        m = doc["dominance_margin"]
        out.append(f"Dominance margin with blocks by best strategy: {m:+.4f} "
                   + ("(> 0: dominant specialization, which alone rules out a free lunch)"
                      if m > 0 else "(<= 0: our dominance condition does not apply)"))
    return out


def diagnose_console(doc: dict) -> list:
    """The diagnosis, its first sentence in bold."""
    lines = diagnose_sentences(doc)
    head, _, rest = lines[0].partition(": ")
    return [_styled((head, "bold"), ": " + rest), *lines[1:]]


def theory_verify_console(doc: dict) -> list:
    """The claims table (status, claim, instances, figure, seconds) and the tally."""
    from rich.table import Table

    res = doc["claims"]
    t = Table(show_header=True, header_style="bold", show_lines=True)
    for c, kw in (("status", {"no_wrap": True}), ("claim", {"ratio": 2}),
                  ("instances", {"justify": "right"}), ("figure", {"ratio": 3}),
                  ("s", {"justify": "right"})):
        t.add_column(c, overflow="fold", **kw)
    for c in res:
        color = {"PASS": "green", "FAIL": "red"}.get(c["status"], "yellow")
        t.add_row(_styled((c["status"], color)), c["claim"], f"{c['instances']:,}",
                  c["figure"], f"{c['seconds']:.1f}")
    measured = len(res) - doc["passed"] - doc["failed"]
    return [t, f"{doc['passed']} PASS, {doc['failed']} FAIL, {measured} MEASURED "
               f"({'quick' if doc['options']['quick'] else 'full'} suite, "
               f"{sum(c['seconds'] for c in res):.1f} s)"]


def entropy_match_sentence(matched: dict, target: float) -> str:
    """The temperature found by entropy matching, and the entropy it gives."""
    return (f"entropy matched: temperature {matched['temperature']:.3f} gives "
            f"{matched['entropy']:.4f} nats (target {target:.4f})")


def sample_console(doc: dict) -> list:
    """What a person reads after ``sample``: how many samples, shards, how fast, resumed."""
    rate = doc["samples_per_second"]
    return [f"{doc['samples']} samples ({doc['prompts']} prompts x {doc['n']}) in "
            f"{doc['shards']} shards; drew {doc['generated_now']} now"
            + (f" at {rate:.1f} samples/s" if rate else "")
            + (f", {doc['resumed_from']} kept from an earlier run" if doc["resumed_from"]
               else "")] + no_logprobs_console(doc)


def no_logprobs_console(doc: dict) -> list:
    """Say so when samples came back without logprobs (their token summaries are NaN)."""
    bare = doc.get("without_token_summaries") or 0
    if not bare:
        return []
    return [_styled((
        f"{bare} of {doc['generated_now']} samples drawn now have no token summaries "
        "(entropy_mean, rbf_mean, log_ppl are NaN): the server returned no logprobs. Texts and "
        "grades are unaffected; for token statistics use a server that returns logprobs "
        "(vLLM, SGLang) with --logprobs K, or the transformers backend", "yellow"))]


def score_sentence(summary: dict, label: str) -> str:
    """How many completions a scoring run scored, under which model, how long."""
    return f"scored {summary['rows']} completions under {label} in {summary['seconds']:.1f} s"


def learning_brief(res: dict) -> str:
    """Where learning landed in one line: the share of tokens that barely moved."""
    return (f"where learning landed: {res['barely_moved']['0.05']:.1%} of {res['tokens']:,} "
            "tokens moved by at most 0.05 in probability")


def learning_console(doc: dict) -> list:
    """The one-line brief, then the full sentence of the report."""
    return [learning_brief(doc), learning_sentence(doc)]


#: What each code-grading check mode means, for a person.
CHECK_MODE_WORDS = {"outside": "outside the program's process",
                    "in-process": "inside the program's process (its tests need its objects)",
                    "none": "not recorded (the grading job itself failed or timed out)"}


def verify_console(doc: dict) -> list:
    """What a person reads after ``verify``: totals, statuses, each backend's known limits,
    and per answer type how often several backends disagree (with examples)."""
    if doc.get("already_complete"):
        return [f"{doc['output']} is already complete ({doc['rows']} samples graded with "
                f"{doc['verifier']}, {doc['correct']} correct): nothing to grade"]
    out: list = [f"graded {doc['rows']} samples with {doc['verifier']} in "
                 f"{doc['seconds']:.1f} s: {doc['correct']} correct; statuses: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(doc["statuses"].items()))]
    modes = doc.get("check_modes")
    if modes:
        out.append("where the verdicts were made: " + ", ".join(
            f"{n} {CHECK_MODE_WORDS.get(m, m)}" for m, n in sorted(modes.items())))
    for b, limits in (doc.get("known_limits") or {}).items():
        out.append(_styled((f"known limits of {b}: " + "; ".join(limits), "dim")))
    dis = doc.get("disagreement")
    if not dis:
        return out
    from rich.table import Table

    ref = dis["reference"]
    out += [f"{info['label']}: {info['correct']} correct" for info in doc["backends"].values()]
    table = Table(title=f"disagreement with {ref} by answer type")
    others = list(dis["overall"])
    table.add_column("answer type")
    table.add_column("rows", justify="right")
    for b in others:
        table.add_column(f"{b} differs", justify="right")
        table.add_column(f"only {ref} / only {b}", justify="right")
    for ty, st in [*dis["by_type"].items(), ("all", dis["overall"])]:
        cells = [ty, str(next(iter(st.values()))["rows"])]
        for b in others:
            x = st[b]
            cells += [f"{x['disagree']} ({x['rate']:.1%})",
                      f"{x['only_reference']} / {x['only_other']}"]
        table.add_row(*cells)
    out.append(table)
    for ty, per in dis["examples"].items():
        for b, exs in per.items():
            for e in exs[:2]:
                out.append(f"  {ty}: gold {e['gold']!r}, answer {e['answer']!r}: "
                           f"{ref} {e[ref]}, {b} {e[b]}")
    return out


def plan_console(doc: dict) -> list:
    """What a person reads after ``plan``: the pilot, the claims, each design's power."""
    o = doc["options"]
    named = [(w, o[f"{w}_at"]) for w in ("gain", "loss") if o.get(f"{w}_at")]
    claims = " and ".join(f"a {w} at k = {k}" for w, k in named)
    k_max = max(k for _, k in named)
    pilot = doc["pilot"]
    out = [f"Pilot: {pilot['prompts']} prompts, n = {pilot['n_base']} (base) and "
           f"{pilot['n_rl']} (trained). Planned study: {doc['prompts']} prompts; claim: "
           f"{claims}; band over k = 1..{k_max}."]
    out += [plan_design_line(row) for row in doc["designs"]]
    out.append(plan_recommendation(doc, o["power"]))
    out.append("Use the pilot only to allocate: estimate from the new samples alone.")
    return out


def rft_console(doc: dict) -> list:
    """What a person reads after ``rft-select``: selected, by verdict, and every drop reason."""
    return [f"{doc['n_input']} samples -> {doc['n_selected']} selected "
            f"({doc['n_positive_selected']} correct, {doc['n_negative_selected']} incorrect)"
            + (f"; {doc['shortfall']} short of the budget" if doc["shortfall"] else ""),
            "dropped: " + ", ".join(f"{k} {v}" for k, v in doc["drops"].items())]


#: The console rendering of each result kind (see :func:`console_lines`).
CONSOLE = {"compare": compare_console, "report": report_console, "price": price_console,
           "theory-frontier": frontier_console, "theory-diagnose": diagnose_console,
           "theory-verify": theory_verify_console, "sample": sample_console,
           "learning_landed": learning_console, "verify": verify_console,
           "plan": plan_console, "rft-select": rft_console}


def console_lines(doc: dict) -> list:
    """The console rendering of a result document, chosen by its kind."""
    kind = doc.get("kind")
    if kind not in CONSOLE:
        raise KeyError(f"no console rendering for result kind {kind!r}")
    return CONSOLE[kind](doc)


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
