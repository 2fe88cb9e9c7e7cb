"""Load the inputs of a comparison or an audit: every file read once, in any format.

:func:`load_inputs` is the loader of the audit workflow (``rlvr-boundary
report`` and the app's report; ``compare`` reads its two files one model each
with :func:`rlvr_boundary.io.formats.load_model_counts`). For each path it

1. detects the format once (or takes the one given),
2. reads it: count files directly; rollout tables (native, or an adapter's
   rollout-shaped output) as validated Arrow batches, each batch feeding both
   the count reducer and, when asked, the per-sample facts (answers, quality
   flags, token summaries, a few texts for the review lists), so the file is
   parsed exactly once,
3. labels single-model inputs (``labels`` maps a path, as given or resolved, to
   a model label; else the adapter's label or the file name) and checks that
   labels are unique across inputs,
4. records provenance: path, format, models, SHA-256 and the run manifest.

Adapter tables are reduced in memory; nothing is written to disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.counts import Counts
from rlvr_boundary.io.formats import (
    NATIVE_FORMATS,
    check_choices_used,
    detect_format,
    feed,
    label_for,
    load_counts,
    read_adapter,
)
from rlvr_boundary.io.rollouts import (
    REQUIRED_ROLLOUT,
    CountReducer,
    iter_rollout_batches,
    read_manifest,
    sha256_of,
    table_columns,
)
from rlvr_boundary.io.samples import FACT_COLUMNS, QUALITY_COLUMNS, SampleFacts


@dataclass
class Inputs:
    """What :func:`load_inputs` read."""

    counts: list[Counts]
    """One per model, across all inputs (labels unique)."""
    sources: list[dict]
    """Provenance of each input: path, format, models, sha256, manifest."""
    facts: SampleFacts | None = None
    """Per-sample facts of the rollout inputs (None when not asked or no input has samples)."""
    rollout_paths: list[Path] = field(default_factory=list)
    """Native rollout tables among the inputs (for a second look at texts, if needed)."""


def load_inputs(paths: list[str | Path], *, fmt: str = "auto",
                labels: dict[str, str] | None = None,
                choices: dict[str, dict] | None = None, facts: bool = False,
                quality_sample: int = 20_000, seed: int = 0, progress=None,
                flagger=None) -> Inputs:
    """Counts of every model in every input, and optionally their per-sample facts.

    Parameters
    ----------
    paths
        Input files or directories.
    fmt
        ``"auto"`` (detect each file) or a format name for all of them.
    labels
        ``{path: label}`` for single-model inputs; a path matches as given or resolved.
    choices
        Adapter choices by format, ``{"lm-eval": {"filter": ..., "metric": ...},
        "lighteval": {"metric": ...}, "verl": {"step": ...}}`` (None: the default).
    facts
        Also gather answers, quality flags, token summaries and texts (the report).
    quality_sample
        At most this many completions per model for quality flags derived from
        text (0: all).
    seed
        Seed of that sample.
    progress
        Called with the number of rows of each rollout batch read.
    flagger
        ``flagger(text, prompt)``: the quality flags of one completion, for tables
        without ``q_*`` columns (None: such flags are not derived).
    """
    choices = choices or {}
    acc = SampleFacts(quality_sample=quality_sample, seed=seed, flagger=flagger) if facts \
        else None
    out = Inputs([], [], None)
    seen: dict[str, Path] = {}
    formats = []
    for path in map(Path, paths):
        f = detect_format(path) if fmt == "auto" else fmt
        formats.append(f)
        label = label_for(path, labels)
        found = _read_one(path, f, label, choices, acc, progress)
        for ct in found:
            if ct.model in seen:
                raise InputError(
                    f"model label '{ct.model}' appears in both {seen[ct.model]} and {path}; "
                    "labels must be unique (name them with --label PATH=NAME)",
                    path=path, field="model")
            seen[ct.model] = path
        out.counts.extend(found)
        if f == "rollouts":
            out.rollout_paths.append(path)
        out.sources.append({"path": str(path), "format": f, "models": [c.model for c in found],
                            "sha256": sha256_of(path),
                            "manifest": read_manifest(path) if f == "rollouts" else None})
    check_choices_used(choices, formats)
    if acc is not None and acc.columns:
        acc.finish()
        out.facts = acc
    return out


def _read_one(path: Path, fmt: str, label: str | None, choices: dict[str, dict],
              acc: SampleFacts | None, progress) -> list[Counts]:
    if fmt == "rollouts":
        names = set(table_columns(path))
        want = list(REQUIRED_ROLLOUT)
        derive = False
        if acc is not None:
            want += [c for c in FACT_COLUMNS if c in names]
            derive = "text" in names and not (names & set(QUALITY_COLUMNS))
            want += [c for c in ("text", "prompt") if c in names]
        from rlvr_boundary.io.verdicts import TALLY_COLUMNS, scorer_columns

        scorers = scorer_columns(names)  # several graders' verdicts: counted in this same pass
        want += scorers + [c for c in TALLY_COLUMNS if scorers and c in names]
        reducer = CountReducer(path)
        for batch in iter_rollout_batches(path, want):
            if label is not None:
                batch = _relabelled(batch, label, path)
            feed(batch, reducer, acc, derive, progress)
        return list(reducer.result(path).values())
    if fmt in NATIVE_FORMATS:
        return load_counts(path, fmt=fmt, label=label)
    return read_adapter(fmt, path, label, choices.get(fmt, {}), facts=acc, progress=progress)


def _relabelled(batch, label: str, path: Path):
    """The batch with its single model renamed ``label`` (several models: an error)."""
    models = pc.unique(batch.column("model")).to_pylist()
    if len(models) > 1:
        raise InputError(f"--label names one model, but the table holds several "
                         f"({', '.join(map(str, models[:5]))})", path=path, field="label")
    i = batch.column_names.index("model")
    return batch.set_column(i, "model", pa.array([label] * batch.num_rows, pa.string()))


