"""The report page: :func:`render_report` draws a ``report`` result document, and nothing else.

:func:`render_report` reads nothing but the result document (the JSON that the
audit workflow, :mod:`rlvr_boundary.pipelines.audit`, writes, as
:func:`rlvr_boundary.io.results.read_result` returns it): it draws the figures
(:mod:`.figures`), puts the words of :mod:`.words` and the numbers into one
self-contained page (:mod:`.html`) and writes it. Nothing is added to the
result here, so ``rlvr-boundary report --from audit.json`` redraws the same
page byte for byte.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.atomic import atomic_open
from rlvr_boundary.io.results import payload_of
from rlvr_boundary.report import figures as F
from rlvr_boundary.report import html as H

__all__ = ["render_report", "check_html_path"]


def check_html_path(out_html: str | Path) -> Path:
    """The page path, which must end in .html (its JSON and figures sit beside it)."""
    out_html = Path(out_html)
    if out_html.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out: the report file must end in .html, got {out_html}")
    return out_html


def render_report(doc: dict, out_html: str | Path, *, figures: bool | None = None,
                  svgs: dict | None = None) -> dict:
    """Draw the figures and write the page of a report result.

    Parameters
    ----------
    doc
        A ``report`` result document as read from its JSON file.
    out_html
        Page to write; the figures go to ``<stem>_figures/`` beside it.
    figures
        Also write every figure as PNG and PDF (default: as the result's options say).
    svgs
        A dict to receive each figure's inline ``<svg>`` element by name, as the page
        holds it (for a caller that shows the figures elsewhere, e.g. the browser app).

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
    if any((r.get("cot") or {}).get("comparison") for r in audit["comparisons"].values()):
        draw["cot"] = F.cot_curves  # CoT-pass@k beside pass@k
    if not audit["comparisons"]:
        draw.pop("difference")
    if audit["comparisons"] and all(r.get("cover") for r in audit["comparisons"].values()):
        draw["cover"] = F.cover_curves
    if any(r.get("extrapolation") for r in audit["comparisons"].values()):
        draw["extrapolation"] = F.extrapolation
    svg_of, files = {}, []
    for name, fn in draw.items():
        fig = fn(audit)
        svg_of[name] = F.to_svg(fig)
        if figures:
            files += F.save(fig, folder, name)
        F.close(fig)
    if svgs is not None:
        svgs.update(svg_of)
    figure_files = {"folder": folder.name, "files": files} if files else {}
    page = H.render(doc, svg_of, figure_files=figure_files)
    with atomic_open(out_html, "w") as fh:
        fh.write(page)
    return figure_files
