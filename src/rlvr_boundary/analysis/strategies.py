"""The strategy view of an audit: which solution strategy each sample used, per model.

When every rollout names the strategy it used (a ``strategy`` column, as the
lab's rollouts have), the report can say what a pass@k curve cannot: how RL
moved the mixture of strategies, how accurate each strategy is, and which
problems only a minority strategy solves, so that a checkpoint that abandoned
that strategy no longer reaches them.

Definitions (all over the samples read; nothing is inferred):

- share of strategy s for model m: its samples with label s over all its samples;
- accuracy of s: the correct share of those samples;
- a strategy *solves* a problem when at least one sample of any model with that
  strategy is correct on it (pooled over models: the evidence that the strategy
  can work there);
- the *majority strategy* is the base model's most frequent named strategy;
  a *minority-only* problem is solved by some strategy but not by the majority
  one: the problems the No Free Lunch analysis predicts a pass@1-tilted model
  loses first ("No Free Lunch in RLVR: every pass@1 gain has a pass@k price");
- a model *reaches* a problem when at least one of its samples on it is correct.

Samples without a strategy label count under :data:`UNLABELLED`; they take part
in shares and accuracy but never define what a strategy solves.
"""

from __future__ import annotations

import numpy as np

#: Label of samples whose strategy is missing (None or empty).
UNLABELLED = "(none)"
#: Label that gathers the rarest strategies when there are more than ``max_strategies``.
OTHER = "(other)"


def strategy_codes(labels, max_strategies: int = 12) -> tuple[np.ndarray, list[str]]:
    """Integer codes ``(N,)`` of strategy labels and the ordered names they index.

    The names are the labels by decreasing count (ties by name), the rarest
    beyond ``max_strategies`` merged into :data:`OTHER`, :data:`UNLABELLED` last.
    """
    labs = [UNLABELLED if (s is None or s == "") else str(s) for s in labels]
    uniq, inv, cnt = np.unique(np.array(labs, dtype=object), return_inverse=True,
                               return_counts=True)
    order = sorted(range(len(uniq)), key=lambda i: (uniq[i] == UNLABELLED, -cnt[i], uniq[i]))
    named = [i for i in order if uniq[i] != UNLABELLED]
    keep = named[:max_strategies]
    names = [str(uniq[i]) for i in keep]
    remap = np.empty(len(uniq), dtype=np.int64)
    for j, i in enumerate(keep):
        remap[i] = j
    if len(named) > len(keep):
        names.append(OTHER)
        for i in named[len(keep):]:
            remap[i] = len(names) - 1
    if any(u == UNLABELLED for u in uniq):
        names.append(UNLABELLED)
        remap[[i for i in range(len(uniq)) if uniq[i] == UNLABELLED]] = len(names) - 1
    return remap[inv.reshape(-1)] if len(labs) else np.zeros(0, np.int64), names


def strategy_counts(prompt_index, codes, correct, n_prompts: int, n_strategies: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``(X, S)`` and correct samples ``(X, S)`` per prompt and strategy of one model."""
    x = np.asarray(prompt_index, dtype=np.int64)
    s = np.asarray(codes, dtype=np.int64)
    ok = np.asarray(correct, dtype=bool)
    flat = x * n_strategies + s  # (N,)
    size = n_prompts * n_strategies
    n = np.bincount(flat, minlength=size).reshape(n_prompts, n_strategies)
    c = np.bincount(flat[ok], minlength=size).reshape(n_prompts, n_strategies)
    return n, c


def strategy_tables(models: list[str], prompt_ids: list[str], rows: dict
                    ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Strategy names and ``(M, X, S)`` sample and correct counts from per-sample rows.

    Parameters
    ----------
    models, prompt_ids
        The audit's models and prompts (``M`` and ``X``).
    rows
        ``{"model": (N,) model index, "prompt": (N,) prompt index, "strategy": N labels,
        "correct": (N,) bool}`` of the samples read (the reader keeps only the audited
        models and prompts).
    """
    codes, names = strategy_codes(rows["strategy"])
    m_arr = np.asarray(rows["model"], dtype=np.int64)  # (N,)
    x_arr = np.asarray(rows["prompt"], dtype=np.int64)  # (N,)
    ok_arr = np.asarray(rows["correct"], dtype=bool)  # (N,)
    n = np.zeros((len(models), len(prompt_ids), len(names)), np.int64)  # (M, X, S)
    c = np.zeros_like(n)
    for i in range(len(models)):
        sel = m_arr == i
        n[i], c[i] = strategy_counts(x_arr[sel], codes[sel], ok_arr[sel], len(prompt_ids),
                                     len(names))
    return names, n, c


def strategy_section(models: list[str], base: str, prompt_ids: list[str], names: list[str],
                     n: np.ndarray, c: np.ndarray, *, top: int = 25) -> dict:
    """Every number of the report's strategy section.

    Parameters
    ----------
    models
        Model labels (the audit's order); ``base`` is one of them.
    prompt_ids
        The ``X`` audited prompts.
    names
        The ``S`` strategy names (:func:`strategy_codes`).
    n, c
        ``(M, X, S)`` samples and correct samples per model, prompt and strategy.
    top
        At most this many minority-only problems listed one by one (the counts
        cover all of them).

    Returns
    -------
    dict
        ``strategies``; per model ``shares``, ``accuracy`` (None where a model has
        no sample of a strategy) and ``samples``; ``solves`` (problems each
        strategy solves) and ``only`` (problems only it solves) with ``reached``
        (per model, how many of those it still reaches); ``majority``;
        ``minority_only`` (count, per-model reached count and mean accuracy on
        them, and the listed ``rows``).
    """
    n = np.asarray(n, dtype=np.int64)  # (M, X, S)
    c = np.asarray(c, dtype=np.int64)  # (M, X, S)
    M, X, S = n.shape
    if c.shape != n.shape or len(models) != M or len(prompt_ids) != X or len(names) != S:
        raise ValueError("models, prompt_ids, names and the counts' shape must agree")
    if np.any(c > n) or np.any(c < 0):
        raise ValueError("correct counts must lie in 0..n")
    ib = models.index(base)
    tot = n.sum(axis=(1, 2))  # (M,)
    per_s = n.sum(axis=1)  # (M, S)
    ok_s = c.sum(axis=1)  # (M, S)
    named = np.array([s not in (UNLABELLED, OTHER) for s in names])  # (S,)
    solves = (c.sum(axis=0) > 0) & named  # (X, S)
    reach = c.sum(axis=2) > 0  # (M, X)
    out: dict = {"strategies": list(names), "models": {}}
    for i, m in enumerate(models):
        out["models"][m] = {
            "samples": int(tot[i]),
            "shares": {s: (float(per_s[i, j] / tot[i]) if tot[i] else None)
                       for j, s in enumerate(names)},
            "accuracy": {s: (float(ok_s[i, j] / per_s[i, j]) if per_s[i, j] else None)
                         for j, s in enumerate(names)},
        }
    only = solves & (solves.sum(axis=1, keepdims=True) == 1)  # (X, S)
    out["solves"] = {s: int(solves[:, j].sum()) for j, s in enumerate(names) if named[j]}
    out["only"] = {s: {"problems": int(only[:, j].sum()),
                       "reached": {m: int((only[:, j] & (c[i, :, j] > 0)).sum())
                                   for i, m in enumerate(models)}}
                   for j, s in enumerate(names) if named[j]}
    base_named = np.where(named, per_s[ib], -1)
    if not named.any() or base_named.max() <= 0:
        out["majority"] = None
        out["minority_only"] = None
        return out
    jm = int(np.argmax(base_named))
    out["majority"] = names[jm]
    mino = solves.any(axis=1) & ~solves[:, jm]  # (X,)
    idx = np.flatnonzero(mino)
    acc = c.sum(axis=2) / np.maximum(n.sum(axis=2), 1)  # (M, X)
    mo = {"problems": int(idx.size),
          "reached": {m: int(reach[i, idx].sum()) for i, m in enumerate(models)},
          "accuracy": {m: (float(acc[i, idx].mean()) if idx.size else None)
                       for i, m in enumerate(models)}}
    # Listed: the ones the base solves most often first (the clearest losses), then by id.
    order = sorted(idx, key=lambda x: (-acc[ib, x], prompt_ids[x]))[:top]
    mo["rows"] = [{"prompt_id": str(prompt_ids[x]),
                   "solved_by": [names[j] for j in np.flatnonzero(solves[x])],
                   "correct": {m: [int(c[i, x].sum()), int(n[i, x].sum())]
                               for i, m in enumerate(models)}}
                  for x in order]
    out["minority_only"] = mo
    return out
