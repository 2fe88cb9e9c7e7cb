"""The audit page, drawn from a report result file alone.

:func:`render_report` reads nothing but the result document (the JSON that
``rlvr-boundary report`` writes, as :func:`rlvr_boundary.io.results.read_result`
returns it): it draws the figures (:mod:`.figures`), puts the words of
:mod:`.words` and the numbers into one self-contained page (:mod:`.html`) and
writes it. Nothing is added to the result here, so ``rlvr-boundary report --from
audit.json`` redraws the same page byte for byte.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.atomic import atomic_open
from rlvr_boundary.io.results import ENVELOPE_KEYS
from rlvr_boundary.report import figures as F
from rlvr_boundary.report import html as H

__all__ = ["render_report", "render_compare_figures", "check_html_path", "payload_of"]


def check_html_path(out_html: str | Path) -> Path:
    """The page path, which must end in .html (its JSON and figures sit beside it)."""
    out_html = Path(out_html)
    if out_html.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out: the report file must end in .html, got {out_html}")
    return out_html


def payload_of(doc: dict) -> dict:
    """The audit payload of a result document (without the envelope keys)."""
    return {k: v for k, v in doc.items() if k not in ENVELOPE_KEYS}


def render_report(doc: dict, out_html: str | Path, *, figures: bool = True) -> dict:
    """Draw the figures and write the page of a report result.

    Parameters
    ----------
    doc
        A ``report`` result document as read from its JSON file.
    out_html
        Page to write; the figures go to ``<stem>_figures/`` beside it.
    figures
        Also write every figure as PNG and PDF.

    Returns
    -------
    dict
        ``{"folder": name, "files": [...]}`` of the figure files written (empty
        when none were).
    """
    out_html = check_html_path(out_html)
    audit = payload_of(doc)
    folder = out_html.with_name(out_html.stem + "_figures")
    draw = {"passk": F.passk_curves, "difference": F.difference_curves, "upset": F.upset,
            "histogram": F.accuracy_histograms}
    if audit.get("evolution"):
        draw["evolution"] = F.evolution
    if (audit.get("tokens") or {}).get("entropy_by_position"):
        draw["entropy_position"] = F.entropy_by_position
    if not audit["comparisons"]:
        draw.pop("difference")
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


def render_compare_figures(doc: dict, folder: str | Path) -> list[str]:
    """The pass@k and difference figures of a ``compare`` result, as PNG and PDF in ``folder``."""
    base, rl = doc["models"]["base"], doc["models"]["rl"]
    # The figures take the audit's shape: one base and its checkpoints' comparisons.
    view = {"models": [base, rl], "base": base, "checkpoints": [rl], "ks": doc["ks"],
            "n_prompts": doc["n_prompts"], "pass_at_k": doc["pass_at_k"],
            "comparisons": {rl: doc}}
    files = []
    for name, fn in (("passk", F.passk_curves), ("difference", F.difference_curves)):
        fig = fn(view)
        files += F.save(fig, Path(folder), name)
        F.close(fig)
    return files
