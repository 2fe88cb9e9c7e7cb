"""The audit workflow behind ``rlvr-boundary report``: inputs in, result document and page out.

:func:`run` is what the command line, the app and the lab call alike:

1. check the outputs (page, its JSON, its figure folder) before any work;
2. read every input once, in any format, gathering per-sample facts (answers,
   quality flags, token summaries, a few texts) in the same pass;
3. choose the scorer, align the prompts, split further runs (``NAME#runJ``),
   cluster the prompts;
4. compute the audit (:func:`rlvr_boundary.analysis.audit.build_audit`) and the
   scorer, learning and strategy sections;
5. write the ``report`` result document, read it back, and draw the page and
   its figures from that document alone (:func:`rlvr_boundary.report.build.render_report`).

:func:`redraw` is ``report --from``: the page from a result file, nothing
recomputed, byte for byte the page :func:`run` drew. Heavy imports sit inside
the functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option
from rlvr_boundary.pipelines.compare import CompareOptions

__all__ = ["ReportOptions", "run", "redraw", "read_learning"]


@dataclass
class ReportOptions:
    """Options of ``rlvr-boundary report`` (recorded in the JSON result).

    The pairwise part is a :class:`~rlvr_boundary.pipelines.compare.CompareOptions`
    (grid, bootstrap, alpha, seed, inputs); the fields here are the audit's own,
    each declared once as its flag.
    """

    compare: CompareOptions = option(default_factory=CompareOptions, cli=False,
                                     help="grid, band, bootstrap, seed and input options "
                                          "shared with compare")
    base: str | None = option(None, metavar="LABEL", group="inputs",
                              help="label of the base model (default: 'base', else the first "
                                   "model read)")
    k: int | None = option(None, metavar="K", group="statistics", low=1,
                           help="audit budget K for coverage and support (default: the "
                                "smallest n)")
    zeta: float = option(0.05, group="statistics", low=0, high=1, low_open=True,
                         high_open=True,
                         help="support miss probability, and that of 'solved at K' "
                              "(pass@K >= 1 - zeta)")
    top: int = option(10, group="statistics", low=0,
                      help="regressed and improved problems listed")
    lucky_below: float = option(0.05, cli=False, low=0, high=1, low_open=True, high_open=True,
                                help="a problem is a 'lucky guess' candidate when 0 < c/n < "
                                     "lucky_below")
    lucky_max: int = option(30, cli=False, low=0,
                            help="at most this many lucky-guess problems are listed (rarest "
                                 "first)")
    diversity_k: int | None = option(None, cli=False, low=1,
                                     help="budget of the answer-diversity statistics (default "
                                          "min(16, smallest n))")
    quality_sample: int = option(20_000, metavar="N", group="statistics", low=0,
                                 help="quality flags derived from completion text use a uniform "
                                      "random sample of at most N completions per model; 0 = "
                                      "all")
    figures: bool = option(True, flag="--no-figures", group="output",
                           help="do not write PNG/PDF files (the HTML keeps its inline SVG)")

    def __post_init__(self) -> None:
        if isinstance(self.compare, dict):  # read back from a result file
            self.compare = CompareOptions(**{k: v for k, v in self.compare.items()
                                             if k != "grid"})
        check(self)


def read_learning(paths: list) -> tuple[list[dict], list[dict]]:
    """Read where-learning-landed result files (``rlvr-boundary score --before ... --learning``).

    Returns
    -------
    tuple
        The results (payload plus ``source``: the file, its options and tool
        version) and their provenance rows (path, format, models, sha256).
    """
    from rlvr_boundary.io.results import payload_of, read_result
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


def _problem_texts(audit: dict, rollout_paths: list, prompts, warn) -> list[dict]:
    """Put the texts of the problems the page lists into ``audit["problems"]``; return the
    provenance row of the prompt file (none without one)."""
    from rlvr_boundary.analysis.audit import shown_pairs
    from rlvr_boundary.io.samples import collect_problems
    from rlvr_boundary.io.text import sha256_of

    listed = {p for _, p in shown_pairs(audit)}
    found = collect_problems(list(rollout_paths), listed,
                             prompts_file=Path(prompts) if prompts is not None else None)
    if found:
        audit["problems"] = found
    if prompts is None:
        return []
    missing = len(listed - set(found))
    if missing and warn is not None:
        warn(f"{missing} of the {len(listed)} problems the page lists have no text in "
             f"{prompts}; they are shown by id only.")
    return [{"path": str(prompts), "format": "prompts", "models": [],
             "sha256": sha256_of(prompts)}]


def outputs_of(out_html: str | Path) -> tuple[Path, Path, Path]:
    """``(page, its JSON, its figure folder)``; the page must end in .html."""
    from rlvr_boundary.report.build import check_html_path

    out = check_html_path(out_html)
    return out, out.with_suffix(".json"), out.with_name(out.stem + "_figures")


def run(paths: list, opts: ReportOptions, out_html: str | Path, *,
        notes: list[str] | None = None, learning: list | None = None, progress=None,
        warn=None, svgs: dict | None = None,
        prompts: str | Path | None = None) -> tuple[dict, dict]:
    """Audit the inputs: write ``<out>.json``, the page ``out_html`` and its figures.

    Parameters
    ----------
    paths
        Input files or directories (any format; labels in ``opts.compare.labels``).
    opts
        Validated report options.
    out_html
        The page; the result goes beside it as ``.json``, the figures (when
        ``opts.figures``) into ``<stem>_figures/``.
    notes
        Sentences for the provenance section (e.g. the source of example data).
    learning
        Where-learning-landed result files to carry into the report
        (:func:`read_learning`).
    progress
        Called with the number of rows of each rollout batch read.
    warn
        Called with a sentence when prompt sets were intersected.
    svgs
        A dict to receive the page's figures as inline SVG by name
        (:func:`rlvr_boundary.report.build.render_report`).
    prompts
        A prompt file (as ``sample --prompts`` reads) whose texts are shown beside the
        ids of the problems the page lists; without it, the rollouts' ``prompt`` column.

    Returns
    -------
    tuple
        The result document as read back from its file, and the figure files
        written (``{"folder": name, "files": [...]}``, empty when none).
    """
    from rlvr_boundary.io.outputs import check_outputs, removed_on_failure

    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("missing ROLLOUTS: give rollout or count files (or --example, or "
                         "--from RESULT to redraw a page)")
    out, json_path, folder = outputs_of(out_html)
    from rlvr_boundary.io.formats import check_labels

    check_labels(opts.compare.labels, paths)
    check_outputs({"--out": out, "--out (its JSON)": json_path},
                  [*paths, *([prompts] if prompts is not None else [])],
                  folders={"--out (its figures)": folder})
    # A failed run leaves nothing it created: no result JSON without its page, no figures.
    with removed_on_failure(out, json_path, folder):
        doc = compute(paths, opts, json_path, notes=notes, learning=learning,
                      progress=progress, warn=warn, prompts=prompts)
        from rlvr_boundary.report import build as B

        figures = B.render_report(doc, out, figures=opts.figures, svgs=svgs)
    return doc, figures


def redraw(result: str | Path, out_html: str | Path, *, figures: bool = True) -> tuple[dict, dict]:
    """``report --from``: draw the page (and figures) of a report result file again.

    Nothing is read but the result, nothing recomputed: the page is byte for
    byte the one :func:`run` drew from the same document.
    """
    from rlvr_boundary.io.outputs import check_outputs, removed_on_failure
    from rlvr_boundary.io.results import read_result

    out, _, folder = outputs_of(out_html)
    check_outputs({"--out": out}, [result], folders={"--out (its figures)": folder})
    doc = read_result(result, kind="report")
    with removed_on_failure(out, folder):
        from rlvr_boundary.report import build as B

        drawn = B.render_report(doc, out, figures=figures)
    return doc, drawn


def compute(paths: list[Path], opts: ReportOptions, json_path: Path, *,
            notes: list[str] | None = None, learning: list | None = None, progress=None,
            warn=None, prompts: str | Path | None = None) -> dict:
    """Load the inputs once, compute the audit, write ``json_path``; return it as read back.

    The document is read back from the file, so what a caller draws from it is
    exactly what the file holds.
    """
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.analysis.audit import build_audit, choose_base, samples_shown, shown_pairs
    from rlvr_boundary.analysis.structure import cluster_groups, split_runs
    from rlvr_boundary.io.inputs import load_inputs
    from rlvr_boundary.io.results import read_result, write_result
    from rlvr_boundary.io.samples import collect_texts
    from rlvr_boundary.io.verdicts import choose_scorer
    from rlvr_boundary.pipelines.common import cot_sections, scorer_section, strategies_section
    from rlvr_boundary.report import words as W
    from rlvr_boundary.verify.quality import quality_flags

    # Read first: a bad file fails before the (longer) audit is computed.
    learned, learned_rows = read_learning(list(learning or []))
    if prompts is not None:
        from rlvr_boundary.io.prompts import read_prompts

        read_prompts(prompts)  # checked now: a bad prompt file fails before the audit
    c = opts.compare
    inputs = load_inputs(paths, fmt=c.format, labels=c.labels, choices=c.adapter_choices(),
                         facts=True, quality_sample=opts.quality_sample, seed=c.seed,
                         progress=progress, flagger=quality_flags)
    if len(inputs.counts) < 2:
        raise InputError("a report needs a base and at least one checkpoint; the inputs hold "
                         f"{len(inputs.counts)} model(s): "
                         f"{', '.join(ct.model for ct in inputs.counts)}")
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
        block = scorer_section(inputs.counts, aligned.prompt_ids, base, audit["checkpoints"],
                               audit["ks"], c, primary)
        if block is not None:
            audit["scorers"] = block
    if learned:
        audit["learning"] = learned
    cot_sections(inputs.rollout_paths, audit, aligned, c, groups)  # CoT-pass@k, if carried
    strategies = strategies_section(inputs.rollout_paths, audit, c.labels)
    if strategies is not None:
        audit["strategies"] = strategies
    prompt_rows = _problem_texts(audit, inputs.rollout_paths, prompts, warn)
    audit["provenance"] = {"inputs": [*inputs.sources, *learned_rows, *prompt_rows],
                           "notes": list(notes or [])}
    write_result(json_path, "report", opts, audit)
    return read_result(json_path, kind="report")
