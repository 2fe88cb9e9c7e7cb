"""Steps shared by the count workflows (compare, audit): examples, scorer and strategy sections.

Each helper sequences a reader of :mod:`rlvr_boundary.io` with the analysis of
:mod:`rlvr_boundary.analysis` that uses what it read; neither package calls the
other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Example", "example_inputs", "scorer_section", "strategies_section"]


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
