"""Rejection-sampling fine-tuning (RFT) data selection of the RUC report.

The report keeps pass@k while fine-tuning on the model's own samples by first
applying rule filters and then one selection strategy, for a fixed budget per
round (1.1k samples); its final recipe is "5% negatives + high RBF".

Rule filters, in this order (a sample is dropped for the first rule it fails,
and that reason is counted):

1. ``no_text``: the completion text is missing;
2. ``no_boxed``: no ``\\boxed{...}`` answer;
3. then the text is cut after the (last) boxed answer;
4. ``no_digit``: the cut text holds no digit 0-9 (the report says "at least one
   digit" without saying where; we read it as the kept text, which is what the
   model is trained on);
5. ``redundant``: the 3-gram redundancy of the cut text exceeds 0.31.

Strategies: ``rbf`` ranks the positive (correct) samples by mean rollout
branching factor, highest first; ``entropy`` by mean token entropy, highest
first; ``random`` takes a seeded uniform sample. With ``neg_frac > 0``,
``round(neg_frac * budget)`` negatives (incorrect samples that passed the rules)
are drawn uniformly at random (seeded) — the report's "5% noise" — and the rest
of the budget goes to positives. If there are too few negatives the remainder
goes to positives; if there are too few positives the set comes out short (we
never raise the share of negatives above the one asked for) and the shortfall is
reported. Positives whose ranking score is missing (NaN) are dropped as
``missing_score``; eligible samples that do not fit are ``over_budget``.

The strategies and the columns they rank by are declared with the workflow's
options (:data:`rlvr_boundary.pipelines.rft_select.STRATEGIES`); here ``by`` is
only ``random`` or ranked by the ``score`` given.

The text rules are given by the caller as ``text_ops``, a namespace with
``last_boxed``, ``cut_after_answer`` and ``redundancy3``: the command passes
:mod:`rlvr_boundary.verify.quality`, the same code that computes the audit's
quality flags. (Passed in, not imported: shaping sits below the verifiers and
depends on the numeric core only.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Drop reasons, in the order the rules are applied.
DROP_REASONS = ("no_text", "no_boxed", "no_digit", "redundant", "missing_score", "over_budget")


@dataclass
class RftSelection:
    """Result of :func:`select_rft`."""

    indices: np.ndarray
    """``(S,)`` selected row numbers, ascending."""
    texts: list
    """Cut text of each selected row (same order as ``indices``)."""
    reasons: list
    """Per input row: None if selected, else the drop reason."""
    n_positive: int
    n_negative: int
    shortfall: int
    """``budget`` minus the number selected."""

    def drop_counts(self) -> dict[str, int]:
        counts = {r: 0 for r in DROP_REASONS}
        for r in self.reasons:
            if r is not None:
                counts[r] += 1
        return counts


def apply_rules(texts, max_redundancy: float, text_ops) -> tuple[list, list]:
    """Rule filters. Returns ``(cut_texts, reasons)``; reason None means kept.

    ``text_ops`` provides ``last_boxed``, ``cut_after_answer`` and ``redundancy3``
    (:mod:`rlvr_boundary.verify.quality`).
    """
    last_boxed, cut_after_answer = text_ops.last_boxed, text_ops.cut_after_answer
    redundancy3 = text_ops.redundancy3
    cut: list = []
    reasons: list = []
    for text in texts:
        if text is None:
            cut.append(None)
            reasons.append("no_text")
            continue
        if last_boxed(text) is None:
            cut.append(None)
            reasons.append("no_boxed")
            continue
        kept = cut_after_answer(text)
        cut.append(kept)
        if not any(ch in "0123456789" for ch in kept):
            reasons.append("no_digit")
        elif redundancy3(kept) > max_redundancy:
            reasons.append("redundant")
        else:
            reasons.append(None)
    return cut, reasons


def select_rft(texts, correct, score, opts, *, text_ops) -> RftSelection:
    """Apply the rule filters and the strategy of ``opts``.

    Parameters
    ----------
    texts
        ``(N,)`` completion texts (None for missing).
    correct
        ``(N,)`` bool verdicts.
    score
        ``(N,)`` ranking score of the strategy (rbf_mean or entropy_mean), or None
        for ``random``.
    opts
        The workflow's options (``RftOptions`` of :mod:`rlvr_boundary.pipelines.rft_select`):
        ``budget``, ``neg_frac``, ``by`` (``random`` or a ranked strategy), ``max_redundancy``,
        ``seed``.
    text_ops
        The text rules: :mod:`rlvr_boundary.verify.quality` (see :func:`apply_rules`).
    """
    n = np.asarray(correct).shape[0]
    if len(texts) != n:
        raise ValueError(f"{len(texts)} texts for {n} verdicts")
    cut, reasons = apply_rules(texts, opts.max_redundancy, text_ops)
    sel = choose_rft(reasons, correct, score, opts)
    sel.texts = [cut[i] for i in sel.indices]
    return sel


def choose_rft(reasons: list, correct, score, opts) -> RftSelection:
    """The strategy of ``opts`` on rows whose rule outcome is known: :func:`select_rft`
    without the texts.

    A caller that reads a table in batches applies :func:`apply_rules` batch by batch,
    keeps only the reasons (not the texts), and calls this once; the selection is the
    same as :func:`select_rft`'s on the whole table. ``reasons`` is modified in place
    (``missing_score``, ``over_budget``); the returned ``texts`` is empty (cut the
    chosen rows' texts with ``text_ops.cut_after_answer``).
    """
    correct = np.asarray(correct, dtype=bool)
    n = correct.shape[0]
    if len(reasons) != n:
        raise ValueError(f"{len(reasons)} rule outcomes for {n} verdicts")
    ok = np.array([r is None for r in reasons], dtype=bool)
    rng = np.random.default_rng(opts.seed)

    pos = np.flatnonzero(ok & correct)
    neg = np.flatnonzero(ok & ~correct)
    if opts.by != "random":
        if score is None:
            raise ValueError(f"strategy {opts.by!r} needs a score")
        s = np.asarray(score, dtype=np.float64)
        missing = pos[~np.isfinite(s[pos])]
        for i in missing:
            reasons[i] = "missing_score"
        pos = pos[np.isfinite(s[pos])]
        order = np.lexsort((pos, -s[pos]))  # highest score first, ties by row order
        pos_ranked = pos[order]
    else:
        pos_ranked = rng.permutation(pos)

    n_neg_want = int(round(opts.neg_frac * opts.budget))
    neg_take = rng.permutation(neg)[:min(n_neg_want, neg.size)]
    n_pos_want = opts.budget - neg_take.size  # too few negatives: positives fill the gap
    pos_take = pos_ranked[:n_pos_want]
    chosen = np.sort(np.concatenate([pos_take, neg_take])).astype(np.int64)
    chosen_set = set(chosen.tolist())
    for i in np.concatenate([pos_ranked, neg]).tolist():
        if i not in chosen_set and reasons[i] is None:
            reasons[i] = "over_budget"
    return RftSelection(indices=chosen, texts=[], reasons=reasons,
                        n_positive=int(pos_take.size), n_negative=int(neg_take.size),
                        shortfall=int(opts.budget - chosen.size))
