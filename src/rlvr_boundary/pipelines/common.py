"""Steps shared by the count workflows (compare, audit): examples, scorer and strategy sections.

Each helper sequences a reader of :mod:`rlvr_boundary.io` with the analysis of
:mod:`rlvr_boundary.analysis` that uses what it read; neither package calls the
other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Example", "cot_sections", "example_inputs", "scorer_section", "strategies_section"]


@dataclass
class Example:
    """The inputs of a shipped example, as a command or the app hands them to a workflow."""

    paths: list[Path]
    """Input files or folders."""
    labels: dict[str, str] = field(default_factory=dict)
    """Model label of each single-model file."""
    base: str | None = None
    """Label of the base model."""
    notes: list[str] = field(default_factory=list)
    """Where the data comes from (for the report's provenance)."""
    prompts: Path | None = None
    """A prompt file with the problems' texts (shown beside their ids), if the example has one."""


def example_inputs(name: str) -> Example:
    """The inputs of the shipped example ``name`` (``deepscaler32k`` or ``lab``)."""
    from rlvr_boundary.examples import EXAMPLES, example_dir, example_files, example_note

    if name == "lab":
        folder = example_dir("lab")
        ex = Example([folder], base=EXAMPLES["lab"]["base_label"],
                     prompts=folder / EXAMPLES["lab"]["prompts"])
    else:
        files = example_files(name)
        ex = Example([files["base"], files["rl"]],
                     {str(files["base"]): files["base_label"], str(files["rl"]): files["rl_label"]},
                     base=files["base_label"])
    ex.notes.append("Example data: " + example_note(name))
    return ex


def scorer_section(counts: list, prompt_ids, base: str, checkpoints: list[str], ks, options,
                   primary: str | None) -> dict | None:
    """The scorer-sensitivity block of a result, or None when the inputs carry < 2 scorers.

    Parameters
    ----------
    counts
        The models' :class:`~rlvr_boundary.io.counts.Counts` (with ``scorers`` and ``tally``).
    prompt_ids
        ``(P,)`` the aligned prompts of the main analysis.
    base, checkpoints
        Labels, as in the main analysis.
    ks
        The main analysis's budgets.
    options
        The comparison options (bootstrap, alpha, seed).
    primary
        The scorer of the main counts (:func:`rlvr_boundary.io.verdicts.primary_scorer`).
    """
    from rlvr_boundary.analysis.scorers import ScorerOptions, scorer_block
    from rlvr_boundary.io.verdicts import aligned_scorer_counts

    models = [base, *checkpoints]
    mine = [ct for ct in counts if ct.model in models]
    per = aligned_scorer_counts(mine, prompt_ids)
    if not per:
        return None
    # The main numbers' scorer first (the others are read against it), then by name.
    first = [primary] if primary in per else []
    per = {s: per[s] for s in [*first, *sorted(s for s in per if s not in first)]}
    opts = ScorerOptions(ks=[int(k) for k in ks], bootstrap=options.bootstrap,
                         alpha=options.alpha, seed=options.seed)
    tallies = [ct.tally for ct in mine if ct.tally is not None]
    return scorer_block(per, base, checkpoints, primary=primary if primary in per else None,
                        opts=opts, tallies=tallies)


def strategies_section(paths: list, audit: dict, labels: dict) -> dict | None:
    """The strategy section when the rollout inputs carry a ``strategy`` column, else None."""
    from rlvr_boundary.analysis.strategies import strategy_section, strategy_tables
    from rlvr_boundary.io.strategies import read_strategy_rows

    rows = read_strategy_rows(paths, audit["models"], audit["prompt_ids"], labels=labels)
    if rows is None:
        return None
    names, n, c = strategy_tables(audit["models"], audit["prompt_ids"], rows)
    return strategy_section(audit["models"], audit["base"], audit["prompt_ids"], names, n, c)


def cot_sections(paths: list, audit: dict, aligned, options, groups=None) -> bool:
    """Add the CoT-pass@k block (``cot``) to each comparison of an audit whose rollouts carry
    ``cot_correct``; return whether any model carries it.

    Parameters
    ----------
    paths
        The native rollout tables among the inputs.
    audit
        The audit payload (:func:`rlvr_boundary.analysis.audit.build_audit`); its
        ``comparisons`` gain ``cot`` in place when some model carries the column.
    aligned
        The aligned counts of every model and run the audit was computed from.
    options
        The comparison options (grid, band, bootstrap, seed, labels, scorer).
    groups
        ``(P,)`` cluster labels, as for the answer-only bands.
    """
    from rlvr_boundary.analysis.cot import cot_block
    from rlvr_boundary.io.cot import read_cot_counts, verdict_column
    from rlvr_boundary.io.formats import label_for

    prompt_ids, models = audit["prompt_ids"], set(audit["models"])
    verdict = verdict_column(options.scorer)
    cot: dict = {}
    for path in paths:
        got = read_cot_counts(path, prompt_ids, label=label_for(path, options.labels),
                              verdict=verdict)
        cot.update({m: v for m, v in (got or {}).items() if m in models})
    if not cot:
        return False
    base, runs = audit["base"], audit.get("runs") or {}
    for m, res in audit["comparisons"].items():
        res["cot"] = cot_block(aligned, base, m, cot, options, answer=res, groups=groups,
                               runs={"base": runs.get(base, []), "rl": runs.get(m, [])})
    return True
