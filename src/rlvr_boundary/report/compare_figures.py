"""The figure files of ``rlvr-boundary compare --out``: pass@k and D(k) of one pair.

Kept apart from :mod:`rlvr_boundary.report.build`, which loads the whole audit
stack: ``compare`` needs only the two figure functions and matplotlib.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.report import figures as F

__all__ = ["render_compare_figures"]


def render_compare_figures(doc: dict, folder: str | Path, *, pdf: bool = False) -> list[str]:
    """The pass@k and difference figures (and the per-scorer one, when the result has
    several scorers; the CoT-pass@k one, when it has a computed ``cot`` block) of a
    ``compare`` result as PNG in ``folder``.

    ``pdf`` also writes each as PDF (embedded TrueType fonts): off by default in
    ``compare``, where two PDFs cost about as much as the rest of the command.
    """
    base, rl = doc["models"]["base"], doc["models"]["rl"]
    # The figures take the audit's shape: one base and its checkpoints' comparisons.
    view = {"models": [base, rl], "base": base, "checkpoints": [rl], "ks": doc["ks"],
            "n_prompts": doc["n_prompts"], "pass_at_k": doc["pass_at_k"],
            "comparisons": {rl: doc}}
    formats = ("png", "pdf") if pdf else ("png",)
    files = []
    draw = [("passk", F.passk_curves), ("difference", F.difference_curves)]
    if doc.get("scorers"):  # the same completions graded by several scorers
        view["scorers"] = doc["scorers"]
        draw.append(("scorers", F.scorer_curves))
    if (doc.get("cot") or {}).get("comparison"):  # CoT-pass@k beside pass@k
        draw.append(("cot", F.cot_curves))
    for name, fn in draw:
        fig = fn(view)
        files += F.save(fig, Path(folder), name, formats)
        F.close(fig)
    return files
