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
    return text + "."


def crossings_sentence(res: dict) -> str:
    """Observed crossings and the bound, and what each is of."""
    n = res["n_crossings"]
    where = ", ".join(f"between k = {c['k_before']} and {c['k_after']}, near k = "
                      f"{c['k_continuous']:.1f}" for c in res["crossings"])
    return (f"The unbiased curves cross {n} time{'s' if n != 1 else ''} on the grid"
            + (f": {where}" if where else "")
            + f". The plug-in curves 1 - (1 - c/n)^k can cross at most "
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
