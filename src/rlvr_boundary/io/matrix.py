"""Read a strategy fitness matrix: the input of the No Free Lunch lab (frontier, diagnose).

The CSV has the header ``strategy,pi0,<prompt ids...>`` and one row per
strategy: its name, its prior weight ``pi0`` and its fitness on each prompt, all
in [0, 1]; the weights sum to 1. Errors name the file (or the source given), the
line and the field. Used by ``rlvr-boundary theory`` and the browser app alike.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import InputError


def read_matrix(path):
    """``(names, pi0, F, prompts)`` from the CSV file at ``path``; see :func:`parse_matrix`."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    return parse_matrix(path.read_text(encoding="utf-8"), path)


def parse_matrix(text: str, source):
    """``(names, pi0, F, prompts)`` from CSV text; ``source`` names it in errors.

    Returns
    -------
    names : list[str]
        Strategy names, one per row.
    pi0 : numpy.ndarray
        ``(S,)`` prior weights, renormalised to sum to exactly 1.
    F : numpy.ndarray
        ``(S, X)`` fitness of each strategy on each prompt.
    prompts : list[str]
        Prompt ids from the header.
    """
    rows = list(csv.reader(text.splitlines()))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError("need a header and at least one strategy row", path=source)
    head = [h.strip() for h in rows[0]]
    if len(head) < 3 or head[1].lower() != "pi0":
        raise InputError("header must be 'strategy,pi0,<prompt ids...>'", path=source, line=1)
    names, pi0, F = [], [], []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(head):
            raise InputError(f"expected {len(head)} fields, found {len(r)}", path=source, line=i)
        names.append(r[0].strip())
        try:
            vals = [float(x) for x in r[1:]]
        except ValueError:
            raise InputError("expected numbers after the strategy name", path=source,
                             line=i) from None
        if not all(0 <= v <= 1 for v in vals):
            raise InputError("pi0 and fitness values must lie in [0, 1]", path=source, line=i)
        pi0.append(vals[0])
        F.append(vals[1:])
    pi0 = np.array(pi0)  # (S,)
    if abs(pi0.sum() - 1) > 1e-6:
        raise InputError(f"pi0 must sum to 1 (sums to {pi0.sum():.6g})", path=source,
                         field="pi0")
    return names, pi0 / pi0.sum(), np.array(F), head[2:]
