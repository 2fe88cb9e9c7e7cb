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
from rlvr_boundary.io.text import MAX_LINE_BYTES, iter_text_lines


def read_matrix(path):
    """``(names, pi0, F, prompts)`` from the CSV file at ``path``; see :func:`parse_matrix`.

    The file is read line by line with a bounded line length (a file without
    newlines cannot exhaust memory); line numbers count blank lines too.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    return _parse_lines(iter_text_lines(path, replace_invalid=False), path)


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
    return _parse_lines(enumerate(text.splitlines(), start=1), source)


def _unique_names(ids: list[str], what: str, source, line: int) -> None:
    """Refuse an empty or repeated name in the header: each column must be one prompt."""
    seen: dict[str, int] = {}
    for j, x in enumerate(ids):
        col = j + 3  # strategy and pi0 come first
        if not x:
            raise InputError(f"column {col} of the header has no {what}", path=source, line=line)
        if x in seen:
            raise InputError(f"{what} {x!r} names columns {seen[x]} and {col}; each column must "
                             "be a different prompt", path=source, line=line, field=x)
        seen[x] = col


#: Most prompts (columns) and cells of a fitness matrix. The lab's linear programs grow
#: faster than the matrix: ``theory diagnose`` took 245 s and 677 MB on 20 strategies x
#: 5,000 prompts and 265 s and 419 MB on 500 x 2,000 (measured on a shared 2-CPU machine),
#: so larger matrices are refused while reading, before they are held.
MAX_PROMPTS = 5_000
MAX_CELLS = 1_000_000


def _rows(lines, source):
    """``(line number, cells)`` of each non-blank line, one at a time."""
    for i, text in lines:
        if text.count(",") > MAX_PROMPTS + 1:  # counted before csv builds the cells
            raise InputError(f"more than {MAX_PROMPTS:,} columns: a matrix has at most "
                             f"{MAX_PROMPTS:,} prompts", path=source, line=i)
        try:
            for r in csv.reader([text]):
                if any(c.strip() for c in r):
                    yield i, r
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=source, line=i) from None


def _parse_lines(lines, source):
    csv.field_size_limit(MAX_LINE_BYTES)
    rows = _rows(lines, source)
    first = next(rows, None)
    if first is None:
        raise InputError("need a header and at least one strategy row", path=source)
    head_line, head = first[0], [h.strip() for h in first[1]]
    if len(head) < 3 or head[1].lower() != "pi0":
        raise InputError("header must be 'strategy,pi0,<prompt ids...>'", path=source,
                         line=head_line)
    _unique_names(head[2:], "prompt id", source, head_line)
    names, pi0, F = [], [], []
    first_line: dict[str, int] = {}
    for i, r in rows:
        if (len(F) + 1) * (len(head) - 2) > MAX_CELLS:
            raise InputError(f"more than {MAX_CELLS:,} fitness values (strategies x prompts); "
                             "the lab's linear programs would not fit in memory", path=source,
                             line=i)
        if len(r) != len(head):
            raise InputError(f"expected {len(head)} fields, found {len(r)}", path=source, line=i)
        name = r[0].strip()
        if not name:
            raise InputError("a strategy needs a name (the first field)", path=source, line=i,
                             field=head[0] or "strategy")
        if name in first_line:
            raise InputError(f"strategy {name!r} appears twice (first on line {first_line[name]});"
                             " each row is one strategy", path=source, line=i,
                             field=head[0] or "strategy")
        first_line[name] = i
        names.append(name)
        try:
            vals = [float(x) for x in r[1:]]
        except ValueError:
            raise InputError("expected numbers after the strategy name", path=source,
                             line=i) from None
        if not all(0 <= v <= 1 for v in vals):  # also refuses nan
            raise InputError("pi0 and fitness values must lie in [0, 1]", path=source, line=i)
        pi0.append(vals[0])
        F.append(np.array(vals[1:]))  # (X,): the row's strings are dropped here
    if not F:
        raise InputError("need a header and at least one strategy row", path=source)
    pi0 = np.array(pi0)  # (S,)
    if abs(pi0.sum() - 1) > 1e-6:
        raise InputError(f"pi0 must sum to 1 (sums to {pi0.sum():.6g})", path=source,
                         field="pi0")
    return names, pi0 / pi0.sum(), np.array(F), head[2:]
