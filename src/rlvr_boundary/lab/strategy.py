"""The strategy view: measured strategy mixtures against the exponential-tilt prediction.

Every lab sample names its strategy, so for each checkpoint we know the
mixture ``pi(s)`` it actually samples, overall and per prompt. The No Free
Lunch paper's model predicts that RL on pass@1 moves the base mixture ``pi_0``
along the exponential tilt

.. math:: \\pi_\\beta(s) \\propto \\pi_0(s)\\, e^{\\beta \\bar f_s},
          \\qquad \\bar f_s = \\tfrac1X \\sum_x F[s, x],

with one global ``beta``. We compare a checkpoint with the tilt of the same
entropy (:func:`rlvr_boundary.theory.grpo.tv_to_tilt`), and, per prompt, the
checkpoint's mixture on that prompt with the base's mixture on that prompt
tilted by the same ``beta``. Samples labelled ``mixed`` or unreadable are left
out of the mixtures and counted separately.

References
----------
"No Free Lunch in RLVR: every pass@1 gain has a pass@k price" (the shared
strategy model, exponential tilt).
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.lab import task as T
from rlvr_boundary.theory.grpo import tv_to_tilt
from rlvr_boundary.theory.model import pass1, tilt, tv


def mixture_counts(strategies, prompt_index, n_prompts: int) -> np.ndarray:
    """``(X, S)`` counts of each named strategy per prompt (mixed / unreadable left out)."""
    names = list(T.STRATEGIES)
    out = np.zeros((n_prompts, len(names)))
    for s, i in zip(strategies, prompt_index):
        if s in T.STRATEGIES:
            out[i, names.index(s)] += 1
    return out


def strategy_view(F, base_counts, model_counts) -> dict:
    """Compare a checkpoint's strategy mixtures with the tilt of the base's.

    Parameters
    ----------
    F
        ``(S, X)`` fitness matrix of the audited prompts.
    base_counts, model_counts
        ``(X, S)`` strategy counts per prompt (:func:`mixture_counts`).

    Returns
    -------
    dict
        ``pi0`` and ``pi`` (overall mixtures), ``tilt`` (the matched tilt),
        ``beta``, ``tv`` (overall), ``pass1_tilt`` / ``pass1_measured`` (from the
        strategy model ``sum_s pi_s F[s, x]``), and ``per_prompt_tv`` (mean over
        prompts of TV between the checkpoint's mixture and the base's mixture
        tilted by ``beta``; prompts with no named sample in either are skipped).
    """
    F = np.asarray(F, float)  # (S, X)
    pi0 = base_counts.sum(axis=0) / base_counts.sum()  # (S,)
    pi = model_counts.sum(axis=0) / model_counts.sum()  # (S,)
    res = tv_to_tilt(F, pi0, pi)
    beta = res["beta"]
    t = tilt(pi0, F, beta)
    tvs = []
    for x in range(F.shape[1]):
        b, m = base_counts[x], model_counts[x]
        if b.sum() == 0 or m.sum() == 0:
            continue
        tvs.append(tv(m / m.sum(), tilt(b / b.sum(), F, beta)))
    return {"strategies": list(T.STRATEGIES), "pi0": pi0, "pi": pi, "tilt": t, "beta": beta,
            "tv": res["tv"], "pass1_tilt": pass1(F, t), "pass1_measured": pass1(F, pi),
            "per_prompt_tv": float(np.mean(tvs)) if tvs else None}


def cue_view(cue_index, counts) -> dict:
    """Does a model choose its strategy by the prompt's cue (cued family)?

    Parameters
    ----------
    cue_index
        ``(X,)`` index (order of :data:`rlvr_boundary.lab.task.STRATEGIES`) of the
        strategy each prompt's cue points to.
    counts
        ``(X, S)`` strategy counts per prompt (:func:`mixture_counts`).

    Returns
    -------
    dict
        ``following``: share of the named samples that use the cued strategy;
        ``blind``: the share a prompt-blind policy with the same overall mixture
        would reach, ``sum_x pi(s_cue(x)) / X`` weighted like ``following`` (the
        global-tilt reading); ``by_cue``: the mixture given each cue;
        ``mutual_information``: ``I(cue; strategy)`` in nats over the named samples
        (0 for a prompt-blind policy, at most the cue's entropy).

    Notes
    -----
    With ``n_{c,s}`` the named samples of cue ``c`` using strategy ``s`` and ``N``
    their total, ``I = sum_{c,s} (n_{c,s}/N) log(n_{c,s} N / (n_{c.} n_{.s}))``.
    """
    names = list(T.STRATEGIES)
    cue_index = np.asarray(cue_index, dtype=int)  # (X,)
    counts = np.asarray(counts, dtype=np.float64)  # (X, S)
    S = counts.shape[1]
    joint = np.zeros((S, S))  # (cue, strategy)
    for c in range(S):
        joint[c] = counts[cue_index == c].sum(axis=0)
    N = joint.sum()
    if N == 0:
        return {"following": None, "blind": None, "by_cue": {}, "mutual_information": None}
    following = float(np.trace(joint) / N)
    pi = joint.sum(axis=0) / N  # (S,) overall mixture
    row = joint.sum(axis=1)  # (S,) named samples per cue
    blind = float((row / N) @ pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = joint / N * np.log(joint * N / np.outer(row, joint.sum(axis=0)))
    mi = float(np.nansum(np.where(joint > 0, terms, 0.0)))
    by_cue = {names[c]: {names[s]: float(joint[c, s] / row[c]) for s in range(S)}
              for c in range(S) if row[c] > 0}
    return {"following": following, "blind": blind, "by_cue": by_cue,
            "mutual_information": max(mi, 0.0)}
