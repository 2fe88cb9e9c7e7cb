"""The audit: :func:`make_report` computes and writes the result; the page is drawn from it.

:func:`make_report` loads the inputs once, computes the audit and writes the
result JSON. :func:`render_report` reads nothing but the result document (the JSON that
``rlvr-boundary report`` writes, as :func:`rlvr_boundary.io.results.read_result`
returns it): it draws the figures (:mod:`.figures`), puts the words of
:mod:`.words` and the numbers into one self-contained page (:mod:`.html`) and
writes it. Nothing is added to the result here, so ``rlvr-boundary report --from
audit.json`` redraws the same page byte for byte.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.analysis.audit import build_audit, choose_base, samples_shown, shown_pairs
from rlvr_boundary.analysis.options import ReportOptions
from rlvr_boundary.analysis.structure import cluster_groups, split_runs
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.atomic import atomic_open
from rlvr_boundary.io.counts import align
from rlvr_boundary.io.inputs import load_inputs
from rlvr_boundary.io.results import ENVELOPE_KEYS, read_result, write_result
from rlvr_boundary.io.samples import collect_texts
from rlvr_boundary.report import figures as F
from rlvr_boundary.report import html as H

__all__ = ["make_report", "render_report", "check_html_path",
           "payload_of", "read_learning"]


def check_html_path(out_html: str | Path) -> Path:
    """The page path, which must end in .html (its JSON and figures sit beside it)."""
    out_html = Path(out_html)
    if out_html.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out: the report file must end in .html, got {out_html}")
    return out_html


def payload_of(doc: dict) -> dict:
    """The audit payload of a result document (without the envelope keys)."""
    return {k: v for k, v in doc.items() if k not in ENVELOPE_KEYS}


def read_learning(paths: list) -> tuple[list[dict], list[dict]]:
    """Read where-learning-landed result files (``rlvr-boundary score --before ... --learning``).

    Returns
    -------
    tuple
        The results (payload plus ``source``: the file, its options and tool
        version) and their provenance rows (path, format, models, sha256).
    """
    from rlvr_boundary.io.text import sha256_of

    results, rows = [], []
    for path in paths:
        doc = read_result(path, kind="learning_landed")
        res = payload_of(doc)
        for key in ("labels", "settings", "texts", "tokens", "overall", "barely_moved",
                    "by_category", "by_position"):
            if key not in res:
                raise InputError(f"not a complete where-learning-landed result: no '{key}'",
                                 path=path, field=key)
        res["source"] = {"path": str(path), "tool_version": doc.get("tool_version"),
                         "options": doc.get("options")}
        results.append(res)
        rows.append({"path": str(path), "format": "learning_landed",
                     "models": [res["labels"]["before"], res["labels"]["after"]],
                     "sha256": sha256_of(path)})
    return results, rows


def make_report(paths: list, out_html: str | Path, opts: ReportOptions, *,
                notes: list[str] | None = None, progress=None, warn=None,
                learning: list | None = None) -> dict:
    """Load the inputs once, compute the audit and write ``<out>.json``; return that document.

    The document is read back from the file, so what a caller draws from it
    (:func:`render_report`) is exactly what the file holds.

    Parameters
    ----------
    paths
        Input files or directories (any format; labels in ``opts.compare.labels``).
    out_html
        Page path; the result is written beside it as ``.json``.
    opts
        Validated report options.
    notes
        Sentences for the provenance section (e.g. the source of example data).
    progress
        Called with the number of rows of each rollout batch read.
    warn
        Called with a sentence when prompt sets were intersected.
    learning
        Where-learning-landed result files to carry into the report (see
        :func:`read_learning`).
    """
    from rlvr_boundary.report import words as W

    out_html = check_html_path(out_html)
    # Read first: a bad file fails before the (longer) audit is computed.
    learned, learned_rows = read_learning(list(learning or []))
    c = opts.compare
    inputs = load_inputs(paths, fmt=c.format, labels=c.labels, choices=c.adapter_choices(),
                         facts=True, quality_sample=opts.quality_sample, seed=c.seed,
                         progress=progress)
    if len(inputs.counts) < 2:
        raise InputError("a report needs a base and at least one checkpoint; the inputs hold "
                         f"{len(inputs.counts)} model(s): "
                         f"{', '.join(ct.model for ct in inputs.counts)}")
    from rlvr_boundary.io.verdicts import choose_scorer

    primary = choose_scorer(inputs.counts, c.scorer)
    aligned = align(inputs.counts, intersect=c.intersect)
    note = W.dropped_note(aligned.dropped, aligned.n.shape[1])
    if note and warn is not None:
        warn(note)
    models, _ = split_runs(list(aligned.models))  # NAME#runJ: further runs of NAME
    base = choose_base(models, opts.base)
    groups = cluster_groups(c.cluster_by, aligned.prompt_ids, inputs.counts)
    facts = inputs.facts
    samples = answers = None
    if facts is not None:
        samples = {"quality": facts.quality(models), "quality_sampling": facts.quality_sampling(),
                   "tokens": facts.tokens(models), "texts": facts.texts}
        answers = facts.answer_classes(models, aligned.prompt_ids.tolist())
    audit = build_audit(aligned, opts, base=base, answers=answers, samples=samples,
                        groups=groups)
    if facts is not None and not facts.texts_complete and inputs.rollout_paths:
        # Too many (model, prompt) pairs to keep every text in one pass: fetch the few shown.
        audit["samples_shown"] = samples_shown(
            audit, collect_texts(inputs.rollout_paths, shown_pairs(audit)))
    if primary is not False:
        from rlvr_boundary.io.verdicts import scorer_result

        block = scorer_result(inputs.counts, aligned.prompt_ids, base, audit["checkpoints"],
                              audit["ks"], c, primary)
        if block is not None:
            audit["scorers"] = block
    if learned:
        audit["learning"] = learned
    strategies = _strategies(inputs.rollout_paths, audit, c.labels)
    if strategies is not None:
        audit["strategies"] = strategies
    audit["provenance"] = {"inputs": [*inputs.sources, *learned_rows], "notes": list(notes or [])}
    json_path = out_html.with_suffix(".json")
    write_result(json_path, "report", opts, audit)
    return read_result(json_path, kind="report")


def _strategies(paths: list, audit: dict, labels: dict) -> dict | None:
    """The strategy section when the rollout inputs carry a ``strategy`` column."""
    from rlvr_boundary.analysis.strategies import strategy_section
    from rlvr_boundary.io.strategies import read_strategy_counts

    got = read_strategy_counts(paths, audit["models"], audit["prompt_ids"], labels=labels)
    if got is None:
        return None
    names, n, c = got
    return strategy_section(audit["models"], audit["base"], audit["prompt_ids"], names, n, c)


def render_report(doc: dict, out_html: str | Path, *, figures: bool | None = None) -> dict:
    """Draw the figures and write the page of a report result.

    Parameters
    ----------
    doc
        A ``report`` result document as read from its JSON file.
    out_html
        Page to write; the figures go to ``<stem>_figures/`` beside it.
    figures
        Also write every figure as PNG and PDF (default: as the result's options say).

    Returns
    -------
    dict
        ``{"folder": name, "files": [...]}`` of the figure files written (empty
        when none were).
    """
    out_html = check_html_path(out_html)
    if figures is None:
        figures = bool(doc.get("options", {}).get("figures", True))
    audit = payload_of(doc)
    folder = out_html.with_name(out_html.stem + "_figures")
    draw = {"passk": F.passk_curves, "difference": F.difference_curves, "upset": F.upset,
            "histogram": F.accuracy_histograms}
    if audit.get("evolution"):
        draw["evolution"] = F.evolution
    if (audit.get("tokens") or {}).get("entropy_by_position"):
        draw["entropy_position"] = F.entropy_by_position
    if audit.get("learning"):
        draw["learning"] = F.learning_landed
    if audit.get("scorers"):
        draw["scorers"] = F.scorer_curves
    if audit.get("strategies"):
        draw["strategies"] = F.strategy_shares
    if not audit["comparisons"]:
        draw.pop("difference")
    if any(r.get("extrapolation") for r in audit["comparisons"].values()):
        draw["extrapolation"] = F.extrapolation
    svgs, files = {}, []
    for name, fn in draw.items():
        fig = fn(audit)
        svgs[name] = F.to_svg(fig)
        if figures:
            files += F.save(fig, folder, name)
        F.close(fig)
    figure_files = {"folder": folder.name, "files": files} if files else {}
    page = H.render(doc, svgs, figure_files=figure_files)
    with atomic_open(out_html, "w") as fh:
        fh.write(page)
    return figure_files
