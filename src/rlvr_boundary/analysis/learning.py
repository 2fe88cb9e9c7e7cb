"""Where learning landed: how token probabilities moved between two checkpoints.

Score the *same* texts under a checkpoint before RL (A) and after (B), teacher
forcing, and compare token by token. For sampled token :math:`y_t` of a text,
:math:`\\Delta\\log p_t = \\log p_B(y_t\\mid\\cdot) - \\log p_A(y_t\\mid\\cdot)`,
:math:`\\Delta p_t = p_B - p_A` and :math:`\\Delta H_t = H_B(t) - H_A(t)` (entropy of
the full next-token distribution at that step). Following the RUC report
(Deng et al., "From Trial-and-Error to Improvement: A Systematic Analysis of LLM
Exploration Mechanisms in RLVR", arXiv 2508.07534), which finds that RL changes
the probabilities of few tokens and concentrates on some kinds of tokens, we
report:

- the share of tokens that barely move (:math:`|\\Delta p_t| \\le \\epsilon` for a
  few thresholds);
- the distribution of changes by token category (digits, operators, reasoning
  words, format tokens, other; the rules are in :func:`token_category`);
- by relative position (t/T in equal bins), and by sample perplexity group
  (quantile groups of each text's log-PPL under A);
- the token strings whose entropy fell most (mean :math:`\\Delta H` at the steps
  where they were produced, at least ``min_count`` occurrences).

Everything is pure numpy on per-token arrays; :func:`learning_landed` returns a
JSON-ready, self-describing dict. The token categories are our own heuristic
(the report names these groups but gives no rule); they are documented in the
result.

Entropy matching (Yue et al., "Does Reinforcement Learning Really Incentivize
Reasoning Capacity in LLMs Beyond the Base Model?", arXiv 2504.13837, Figure 18)
compares RL with the base at equal output entropy: :func:`match_temperature` is
the bisection that finds the base's temperature, given a function measuring the
mean token entropy at a temperature.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["CATEGORIES", "REASONING_WORDS", "token_category", "learning_landed", "match_temperature"]

CATEGORIES = ("digits", "operators", "reasoning", "format", "other")

#: Words that steer a chain of thought (lower-case, stripped of spaces and punctuation).
REASONING_WORDS = frozenset("""
wait so therefore thus hence because since first then next finally let check verify but however
alternatively step recall consider suppose compute calculate means need hmm actually maybe perhaps
if implies note answer conclude instead again notice assume substitute solve simplify
""".split())

_OPERATOR_CHARS = set("+-*/=^<>()[]|%!,.:;·×÷≤≥≠±")
_LATEX_OPS = ("\\frac", "\\cdot", "\\times", "\\div", "\\le", "\\ge", "\\ne", "\\sqrt", "\\pm",
              "\\sum", "\\prod", "\\int", "\\left", "\\right", "\\pi", "\\infty")
_FORMAT = re.compile(r"^(\s+|\\boxed|boxed|\$+|\\\[|\\\]|\\\(|\\\)|#+|\*+|`+|-{2,}|<\|[^|]*\|>|</?think>|"
                     r"\{|\}|\n+)$")


def token_category(text: str) -> str:
    """Category of one token's text: digits, operators, reasoning, format or other.

    Rules, first match wins: ``format`` (whitespace only, ``\\boxed``, ``$``,
    LaTeX display brackets, markdown markers, braces, chat special tokens);
    ``digits`` (digits with at most ``.``/``,`` between them); ``operators``
    (only arithmetic/relational punctuation, or a LaTeX operator command);
    ``reasoning`` (a word of :data:`REASONING_WORDS`, any case); else ``other``.
    """
    s = text.replace("Ġ", " ").replace("Ċ", "\n")
    core = s.strip()
    if not core or _FORMAT.match(core) or _FORMAT.match(s):
        return "format"
    if re.fullmatch(r"\d+([.,]\d+)*", core):
        return "digits"
    if all(c in _OPERATOR_CHARS for c in core) or core in _LATEX_OPS:
        return "operators"
    if core.lower().strip(".,:;!?") in REASONING_WORDS:
        return "reasoning"
    return "other"


def _stats(dlp: np.ndarray, dp: np.ndarray, dH: np.ndarray, eps: float) -> dict:
    if dlp.size == 0:
        return {"tokens": 0}
    q = np.quantile(dlp, [0.05, 0.25, 0.5, 0.75, 0.95])
    return {"tokens": int(dlp.size), "mean_dlogp": float(dlp.mean()),
            "mean_abs_dp": float(np.abs(dp).mean()), "share_barely_moved": float(np.mean(np.abs(dp) <= eps)),
            "share_up": float(np.mean(dp > eps)), "share_down": float(np.mean(dp < -eps)),
            "mean_dentropy": float(dH.mean()),
            "dlogp_quantiles": {str(p): float(v) for p, v in zip((0.05, 0.25, 0.5, 0.75, 0.95), q)}}


def learning_landed(token_texts: Sequence[Sequence[str]], logp_before: Sequence, logp_after: Sequence,
                    entropy_before: Sequence, entropy_after: Sequence, *, labels=("before", "after"),
                    eps: float = 0.05, thresholds: Sequence[float] = (0.01, 0.05, 0.1),
                    position_bins: int = 10, ppl_groups: int = 4, top: int = 15,
                    min_count: int = 3) -> dict:
    """How the probabilities of the same tokens moved from checkpoint A to checkpoint B.

    Parameters
    ----------
    token_texts
        Per text, the ``(T_i,)`` token strings (for the categories).
    logp_before, logp_after
        Per text, ``(T_i,)`` log-probabilities of each token under A and B.
    entropy_before, entropy_after
        Per text, ``(T_i,)`` next-token entropies (nats) at each step under A and B.
    labels
        Names of A and B.
    eps
        :math:`|\\Delta p|` at or below which a token "barely moved" in the
        per-group statistics; ``thresholds`` are also reported overall.
    position_bins
        Relative-position bins (step t of T goes to bin ``floor(t B / T)``).
    ppl_groups
        Number of quantile groups of the texts' log-PPL under A.
    top
        Length of the list of tokens whose entropy fell most.
    min_count
        Occurrences a token string needs to enter that list.

    Returns
    -------
    dict
        JSON-ready: ``analysis``, ``description``, ``definitions``, ``labels``,
        ``settings``, ``texts``, ``tokens``, ``barely_moved`` (threshold -> share),
        ``overall``, ``by_category``, ``by_position``, ``by_ppl_group``,
        ``entropy_fell_most``, ``dlogp_histogram``.
    """
    n = len(token_texts)
    arrays = [token_texts, logp_before, logp_after, entropy_before, entropy_after]
    if any(len(a) != n for a in arrays):
        raise ValueError("give one entry per text in every argument")
    if n == 0:
        raise ValueError("no texts")
    if not 0 <= eps < 1 or position_bins < 1 or ppl_groups < 1:
        raise ValueError("need 0 <= eps < 1, position_bins >= 1, ppl_groups >= 1")
    dlp, dp, dH, cat, pos, grp_ppl, toks = [], [], [], [], [], [], []
    ppl_a = np.full(n, np.nan)
    for i in range(n):
        a = np.asarray(logp_before[i], dtype=np.float64)
        b = np.asarray(logp_after[i], dtype=np.float64)
        ha = np.asarray(entropy_before[i], dtype=np.float64)
        hb = np.asarray(entropy_after[i], dtype=np.float64)
        T = a.size
        if not (b.size == ha.size == hb.size == len(token_texts[i]) == T):
            raise ValueError(f"text {i}: arrays of different lengths")
        if T == 0:
            continue
        if np.any(a > 1e-6) or np.any(b > 1e-6) or np.any(~np.isfinite(a)) or np.any(~np.isfinite(b)):
            raise ValueError(f"text {i}: log-probabilities must be finite and <= 0")
        ppl_a[i] = -a.mean()
        dlp.append(b - a)
        dp.append(np.exp(b) - np.exp(a))
        dH.append(hb - ha)
        cat.extend(token_category(t) for t in token_texts[i])
        pos.append((np.arange(T) * position_bins) // T)
        grp_ppl.append(np.full(T, i))
        toks.extend(token_texts[i])
    if not dlp:
        raise ValueError("no tokens in any text")
    dlp, dp, dH = np.concatenate(dlp), np.concatenate(dp), np.concatenate(dH)  # (N,)
    pos, owner = np.concatenate(pos), np.concatenate(grp_ppl)  # (N,)
    cat = np.asarray(cat)
    # quantile groups of the texts' log-PPL under A (ties keep texts together)
    finite = np.isfinite(ppl_a)
    ranks = np.full(n, -1)
    order = np.argsort(ppl_a[finite], kind="stable")
    g_of = np.empty(order.size, dtype=np.int64)
    g_of[order] = (np.arange(order.size) * ppl_groups) // max(order.size, 1)
    ranks[np.flatnonzero(finite)] = g_of
    tok_group = ranks[owner]
    groups = []
    for g in range(ppl_groups):
        members = np.flatnonzero(ranks == g)
        if members.size == 0:
            continue
        m = tok_group == g
        groups.append({"group": g, "texts": int(members.size),
                       "log_ppl_range": [float(ppl_a[members].min()), float(ppl_a[members].max())],
                       **_stats(dlp[m], dp[m], dH[m], eps)})
    # tokens whose entropy fell most (mean dH where the token was produced)
    by_tok: dict[str, list[int]] = {}
    for j, t in enumerate(toks):
        by_tok.setdefault(t, []).append(j)
    fell = [(float(dH[idx].mean()), t, len(idx), float(dlp[idx].mean()))
            for t, idx in by_tok.items() if len(idx) >= min_count]
    fell.sort(key=lambda x: x[0])
    edges = np.linspace(-5, 5, 41)
    hist, _ = np.histogram(np.clip(dlp, -5, 5), bins=edges)
    return {
        "analysis": "learning_landed",
        "description": (f"Same texts scored under '{labels[0]}' (A) and '{labels[1]}' (B): how the "
                        "probability of each produced token moved."),
        "definitions": {
            "dlogp": "log p_B(token) - log p_A(token), per produced token",
            "dp": "p_B(token) - p_A(token)",
            "dentropy": "entropy of B's next-token distribution minus A's, at that step (nats)",
            "barely_moved": "|dp| <= threshold",
            "categories": "digits, operators, reasoning (steering words), format (whitespace, boxed, "
                          "$, markdown, braces, special tokens), other; first matching rule wins",
            "position": "step t of a T-token text is in bin floor(t * bins / T)",
            "ppl_group": "quantile group of the text's log-PPL under A (0 = lowest)",
        },
        "labels": {"before": labels[0], "after": labels[1]},
        "settings": {"eps": eps, "thresholds": list(thresholds), "position_bins": position_bins,
                    "ppl_groups": ppl_groups, "top": top, "min_count": min_count},
        "texts": n,
        "tokens": int(dlp.size),
        "barely_moved": {str(t): float(np.mean(np.abs(dp) <= t)) for t in thresholds},
        "overall": _stats(dlp, dp, dH, eps),
        "by_category": {c: _stats(dlp[cat == c], dp[cat == c], dH[cat == c], eps) for c in CATEGORIES},
        "by_position": [{"bin": b, "range": [b / position_bins, (b + 1) / position_bins],
                         **_stats(dlp[pos == b], dp[pos == b], dH[pos == b], eps)}
                        for b in range(position_bins)],
        "by_ppl_group": groups,
        "entropy_fell_most": [{"token": t, "count": c, "mean_dentropy": d, "mean_dlogp": l}
                              for d, t, c, l in fell[:top]],
        "dlogp_histogram": {"edges": edges.tolist(), "counts": hist.tolist(),
                            "note": "dlogp clipped to [-5, 5]"},
    }


def match_temperature(measure: Callable[[float], float], target: float, *, lo: float = 0.05,
                      hi: float = 2.0, tol: float = 0.01, max_iter: int = 12) -> dict:
    """Bisection for the temperature at which ``measure(T)`` (mean token entropy) hits ``target``.

    Parameters
    ----------
    measure
        Mean token entropy (nats) of a model's samples at temperature T; should
        increase with T (it does in expectation; use common random numbers, i.e.
        the same seeds at every T, to keep the estimate monotone in practice).
    target
        Entropy to match (e.g. the RL model's mean token entropy at T = 1).
    lo, hi
        Bracket; refused if ``target`` lies outside ``[measure(lo), measure(hi)]``.
    tol
        Stop when ``|measure(T) - target| <= tol`` or the bracket is narrower than 1e-3.
    max_iter
        Bisection steps.

    Returns
    -------
    dict
        ``temperature``, ``entropy`` (measured there), ``target``, ``converged``
        and ``trace`` (every (T, entropy) evaluated).
    """
    if not 0 <= lo < hi:
        raise ValueError("need 0 <= lo < hi")
    trace = []

    def f(t: float) -> float:
        v = float(measure(t))
        trace.append({"temperature": t, "entropy": v})
        return v

    f_lo, f_hi = f(lo), f(hi)
    if not (min(f_lo, f_hi) - tol <= target <= max(f_lo, f_hi) + tol):
        raise ValueError(f"target entropy {target:.4g} is outside [{f_lo:.4g}, {f_hi:.4g}] measured at "
                         f"temperatures {lo} and {hi}; widen the bracket")
    best = min(((lo, f_lo), (hi, f_hi)), key=lambda x: abs(x[1] - target))
    a, b = lo, hi
    for _ in range(max_iter):
        if abs(best[1] - target) <= tol or b - a < 1e-3:
            break
        m = 0.5 * (a + b)
        fm = f(m)
        if abs(fm - target) < abs(best[1] - target):
            best = (m, fm)
        if (fm < target) == (f_lo < f_hi):
            a = m
        else:
            b = m
    return {"temperature": best[0], "entropy": best[1], "target": float(target),
            "converged": bool(abs(best[1] - target) <= tol), "trace": trace}
