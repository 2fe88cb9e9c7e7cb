"""The audit report: read inputs, compute the audit, draw, write HTML + JSON + figures.

:func:`make_report` is the whole job behind ``rlvr-boundary report``. The numbers
come from :func:`rlvr_boundary.analysis.audit.build_audit`; this package only reads
(:mod:`.samples`), draws (:mod:`.figures`) and writes (:mod:`.html`).
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.analysis.audit import ReportOptions, build_audit, choose_base
from rlvr_boundary.errors import InputError


def load_inputs(paths: list[Path], opts: ReportOptions, labels: dict | None = None,
                workdir: Path | None = None):
    """Counts of every model in every input; labels must be unique across inputs.

    Adapter inputs that carry samples (verl dumps, the limit-of-RLVR evaluator)
    are converted once into a rollout table in ``workdir``, so the report can
    show their texts and answers like those of native rollout tables.
    """
    from rlvr_boundary.io import adapters
    from rlvr_boundary.io.formats import detect_format, load_counts
    from rlvr_boundary.io.rollouts import read_manifest, sha256_of, write_rollouts

    counts, prov, rollout_paths = [], [], []
    seen: dict[str, Path] = {}
    for path in paths:
        fmt = detect_format(path) if opts.format == "auto" else opts.format
        label = (labels or {}).get(str(path))
        source = path
        if fmt in adapters.ADAPTERS and workdir is not None:
            default = None if path.is_dir() else path.name.split(".")[0]
            table = adapters.read(fmt, path, model=label or default)
            if "sample_idx" in table.column_names:
                source = workdir / f"input-{len(prov)}.parquet"
                write_rollouts(table, source)
        found = load_counts(source, fmt="rollouts" if source != path else fmt, label=label)
        for ct in found:
            if ct.model in seen:
                raise InputError(
                    f"model label '{ct.model}' appears in both {seen[ct.model]} and {path}; "
                    "labels must be unique (single-model files are labelled by file name)",
                    path=path, field="model")
            seen[ct.model] = path
        counts.extend(found)
        if fmt == "rollouts" or source != path:
            rollout_paths.append(source)
        manifest = read_manifest(path) if fmt == "rollouts" else None
        prov.append({"path": str(path), "format": fmt, "models": [c.model for c in found],
                     "sha256": sha256_of(path), "manifest": manifest})
    return counts, prov, rollout_paths


def make_report(paths: list[Path], out_html: Path, opts: ReportOptions, *,
                labels: dict | None = None, notes: list[str] | None = None,
                console=None) -> dict:
    """Write ``out_html``, ``out_html.with_suffix('.json')`` and the figures folder.

    Returns
    -------
    dict
        The audit payload (as written to the JSON file, without the envelope).
    """
    import tempfile

    say = console.print if console is not None else (lambda *a, **k: None)
    out_html = Path(out_html)
    if out_html.suffix.lower() not in (".html", ".htm"):
        raise InputError("the report file must end in .html", path=out_html, field="out")

    with tempfile.TemporaryDirectory(prefix="rlvr-boundary-") as tmp:
        return _make_report(paths, out_html, opts, labels, notes, say, Path(tmp))


def _make_report(paths, out_html, opts, labels, notes, say, workdir: Path) -> dict:
    from rlvr_boundary import __version__
    from rlvr_boundary.io.atomic import atomic_open
    from rlvr_boundary.io.counts import align
    from rlvr_boundary.report import figures as F
    from rlvr_boundary.report import html as H
    from rlvr_boundary.report.samples import collect_texts, gather_facts
    from rlvr_boundary.io.results import SCHEMA_VERSION, envelope, to_jsonable, write_result

    counts, prov, rollout_paths = load_inputs(paths, opts, labels, workdir)
    if len(counts) < 2:
        raise InputError("a report needs a base and at least one checkpoint; the inputs hold "
                         f"{len(counts)} model(s): {[c.model for c in counts]}")
    aligned = align(counts, intersect=opts.intersect)
    base = choose_base(list(aligned.models), opts.base)
    facts = None
    if rollout_paths:
        from rlvr_boundary.console import progress

        total = sum(int(c.n.sum()) for c in counts)
        with progress() as bar:
            task = bar.add_task("reading samples", total=total)
            facts = gather_facts(rollout_paths, progress=lambda k: bar.advance(task, k))
    answers = facts.answer_classes(list(aligned.models), aligned.prompt_ids.tolist()) if facts else None
    say(f"auditing {len(aligned.models)} models on {aligned.n.shape[1]} problems (base: {base})")
    audit = build_audit(aligned, opts, base=base, answers=answers)
    audit["quality"] = facts.quality(audit["models"]) if facts else None
    audit["tokens"] = facts.tokens(audit["models"]) if facts else None

    wanted = set()
    for m in audit["checkpoints"]:
        for kind in ("regressions", "gains"):
            for r in audit["coverage"]["ranked"][m][kind]:
                wanted |= {(base, r["prompt_id"]), (m, r["prompt_id"])}
    wanted |= {(r["model"], r["prompt_id"]) for r in audit["lucky"]}
    texts = collect_texts(rollout_paths, wanted) if rollout_paths else {}

    folder = out_html.with_name(out_html.stem + "_figures")
    draw = {"passk": F.passk_curves, "difference": F.difference_curves, "upset": F.upset,
            "histogram": F.accuracy_histograms}
    if audit["evolution"]:
        draw["evolution"] = F.evolution
    if audit["tokens"] and audit["tokens"].get("entropy_by_position"):
        draw["entropy_position"] = F.entropy_by_position
    if not audit["comparisons"]:
        draw.pop("difference")
    svgs, files = {}, []
    for name, fn in draw.items():
        fig = fn(audit)
        svgs[name] = F.to_svg(fig)
        if opts.figures:
            files += F.save(fig, folder, name)
        F.close(fig)
    figure_files = {"folder": folder.name, "files": files} if files else {}

    provenance = {"inputs": prov, "notes": list(notes or [])}
    audit["provenance"] = provenance
    audit["figures"] = figure_files
    doc = envelope("report", opts, audit)  # validates the payload before anything is written
    page = H.render(audit, svgs, texts=texts, provenance=provenance, options=doc["options"],
                    version=__version__, schema_version=SCHEMA_VERSION, figure_files=figure_files)
    # Texts shown in the page are in the JSON too, so every number and sample shown is there.
    audit["samples_shown"] = [{"model": m, "prompt_id": p, **v} for (m, p), v in sorted(texts.items())]
    write_result(out_html.with_suffix(".json"), "report", opts, audit)
    with atomic_open(out_html, "w") as fh:
        fh.write(page)
    return to_jsonable(audit)
