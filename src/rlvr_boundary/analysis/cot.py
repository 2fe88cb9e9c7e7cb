"""CoT-pass@k beside answer-only pass@k: the same comparison on chain-of-thought counts.

CoT-pass@k (Wen et al., "Reinforcement Learning with Verifiable Rewards
Implicitly Incentivizes Correct Reasoning in Base LLMs", arXiv 2506.14245)
counts a sample as correct only when both its final answer and its chain of
thought are correct. Given per-prompt counts ``c_cot = #(correct AND
cot_correct)`` (read by :func:`rlvr_boundary.io.cot.read_cot_counts`), the
curves, D(k), the band and its verdicts, the crossing k* and the price are
those of :func:`rlvr_boundary.analysis.pairwise.compare_aligned` on an aligned
count set whose ``c`` is ``c_cot``: no statistic is computed here, so the band's
calibration is the band's (docs/statistics.md).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.analysis.pairwise import compare_aligned

__all__ = ["cot_block", "cot_settings"]


def cot_settings(opts) -> SimpleNamespace:
    """The comparison's settings for the CoT curves: grid, band, bootstrap and seed as given.

    The verifier-error and extrapolation views are of the answer verdicts and are
    not repeated on the CoT counts (None here).
    """
    return SimpleNamespace(grid=opts.grid, K_se=opts.K_se, bootstrap=opts.bootstrap,
                           alpha=opts.alpha, seed=opts.seed, verifier_error=None,
                           extrapolate=None, extrapolate_method=opts.extrapolate_method)


def cot_block(aligned: Aligned, base: str, rl: str, cot: dict, opts, *, answer: dict,
              groups=None, runs: dict | None = None) -> dict:
    """The ``cot`` block of a comparison: CoT-pass@k of both models and their comparison.

    Parameters
    ----------
    aligned
        The counts of the answer-only comparison (its prompts and sample counts).
    base, rl
        Labels of the base and the trained model in ``aligned.models``.
    cot
        ``{label: {"c": (P,) int, "n": (P,) int, "cot_without_answer": int}}`` in
        ``aligned.prompt_ids`` order, for each model whose rollouts carry
        ``cot_correct`` (:func:`rlvr_boundary.io.cot.read_cot_counts`).
    opts
        The comparison's options (:class:`~rlvr_boundary.analysis.pairwise.ComparisonSettings`).
    answer
        The answer-only comparison (``compare_aligned`` on ``aligned``), for the gap
        between the two kinds of curve.
    groups
        ``(P,)`` cluster labels, or None (as for the answer-only band).
    runs
        Further runs of each model, ``{"base": [...], "rl": [...]}``: with any, the
        view is skipped (the CoT counts are read from the first run only).

    Returns
    -------
    dict
        ``carried_by`` (which of the two models' rollouts carry the column),
        ``cot_without_answer`` (rows with a correct chain but a wrong answer, counted
        as not CoT-correct, per carrying model) and ``skipped`` (None, ``"not_both"``
        or ``"runs"``). When not skipped: ``comparison``, the full comparison payload
        on the CoT counts, and ``answer_minus_cot``, answer-only pass@k minus
        CoT-pass@k per model and budget.
    """
    carried = [m for m in (base, rl) if m in cot]
    block: dict = {"carried_by": carried,
                   "cot_without_answer": {m: int(cot[m]["cot_without_answer"]) for m in carried},
                   "skipped": None}
    if len(carried) < 2:
        block["skipped"] = "not_both"
        return block
    if runs and (runs.get("base") or runs.get("rl")):
        block["skipped"] = "runs"
        return block
    rows = [aligned.models.index(base), aligned.models.index(rl)]
    n = aligned.n[rows]  # (2, P)
    c = np.stack([np.asarray(cot[base]["c"], np.int64), np.asarray(cot[rl]["c"], np.int64)])
    for j, m in enumerate((base, rl)):
        if not np.array_equal(np.asarray(cot[m]["n"], np.int64), n[j]):
            # Both passes read the same rows: a mismatch is a bug, not bad input.
            raise RuntimeError(f"the CoT pass read other sample counts for {m!r} than the "
                               "count pass")
    cot_aligned = Aligned([base, rl], aligned.prompt_ids, n, c, dict(aligned.dropped))
    res = compare_aligned(cot_aligned, base, rl, cot_settings(opts), groups=groups)
    block["comparison"] = res
    block["answer_minus_cot"] = {
        m: np.asarray(answer["pass_at_k"][m], float) - np.asarray(res["pass_at_k"][m], float)
        for m in (base, rl)}
    return block
