"""Budget grids: the one parser of a grid spec, its size, and its budgets on given data.

A grid spec is what ``--ks`` takes: ``"1-128"``, ``"1,2,4,8"``, ``"1-16,32,64"``,
``"pow2"`` (every power of two up to the smallest ``n``) or nothing (every k
from 1 to the smallest ``n``). Three steps, each done here only:

1. :func:`parse_grid` checks the spec before anything is built or read: ASCII
   digits only, at most :data:`MAX_BUDGETS` budgets, none above :data:`MAX_K`;
2. :func:`grid_size` counts the budgets a spec asks for without building them
   (to refuse an analysis too large for memory before reading the inputs);
3. :func:`budgets` turns a parsed grid into the budgets on data whose smallest
   sample count is ``n_min``, refusing ``k > n`` through :func:`check_ks`, the
   check every pass@k function of the core applies.

Errors are ``ValueError`` with a message for the user; the options that take a
grid name their flag in front of it. numpy is imported inside the functions
that build arrays, so parsing a spec loads no numeric library.
"""

from __future__ import annotations

__all__ = ["MAX_BUDGETS", "MAX_K", "MAX_CELLS", "parse_grid", "grid_size", "budgets",
           "check_ks", "check_cells", "powers_of_two"]

#: Most budgets a grid may hold, and the largest budget (checked before the grid is built).
MAX_BUDGETS = 100_000
MAX_K = 10**9
#: Most (prompt, budget) cells of per-prompt pass@k curves held at once, per model;
#: the analysis keeps a few arrays of this size (8 bytes a cell), so this bounds memory.
MAX_CELLS = 10_000_000


def _ascii_int(text: str) -> int:
    # int() accepts other scripts' digits, underscores and signs; a budget is plain ASCII.
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(text)
    return int(text)


class GridError(ValueError):
    """A grid spec that cannot be used; the message is for the user."""


def parse_grid(spec: str | None) -> list[int] | str | None:
    """Parse a grid spec: a sorted list of budgets, ``"pow2"``, or None (every k up to n).

    Parameters
    ----------
    spec
        ``"1-128"``, ``"1,2,4,8"``, ``"1-16,32,64"``, ``"pow2"``, or None / ``""``.

    Returns
    -------
    list of int, "pow2" or None
        Budgets in increasing order, each counted once.

    Raises
    ------
    GridError
        A spec that is not one of these forms, holds a budget < 1, more than
        :data:`MAX_BUDGETS` budgets or a budget above :data:`MAX_K`.
    """
    if spec is None or spec == "":
        return None
    if spec == "pow2":
        return "pow2"
    too_big = GridError(f"{spec!r}: a grid holds at most {MAX_BUDGETS:,} budgets, each at most "
                        f"{MAX_K:,}")
    ks: set[int] = set()
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (_ascii_int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError(part)
                if hi > MAX_K or hi - lo + 1 + len(ks) > MAX_BUDGETS:
                    raise too_big
                ks.update(range(lo, hi + 1))
            else:
                ks.add(_ascii_int(part))
                if max(ks) > MAX_K or len(ks) > MAX_BUDGETS:
                    raise too_big
    except GridError:
        raise
    except ValueError:
        raise GridError(f"cannot parse the budget grid {spec!r}; use e.g. 1-128, 1,2,4,8 or "
                        "pow2") from None
    out = sorted(ks)
    if not out or out[0] < 1:
        raise GridError(f"budgets must be integers >= 1, got {spec!r}")
    return out


def powers_of_two(k_max: int) -> list[int]:
    """``[1, 2, 4, ..., 2**j]`` with ``2**j <= k_max``."""
    return [1 << j for j in range(int(k_max).bit_length())]


def grid_size(grid: list[int] | str | None, n_min: int | None = None) -> int:
    """Number of budgets of a parsed grid (:func:`parse_grid`) on data with smallest ``n_min``.

    ``"pow2"`` and None depend on ``n_min``; without it they count 0 (unknown yet).
    """
    if grid is None:
        return int(n_min or 0)
    if grid == "pow2":
        return int(n_min or 0).bit_length()
    return len(grid)


def check_ks(ks, n_min: int):
    """``(K,)`` int64 budgets, refusing non-integers, ``k < 1`` and ``k > n_min``.

    pass@k has no unbiased estimate for k > n: such a budget is refused, never
    answered with the common ``return 1.0`` shortcut.
    """
    import numpy as np

    ks_arr = np.atleast_1d(np.asarray(ks))
    if ks_arr.dtype == bool or ks_arr.dtype.kind not in "iu":
        if ks_arr.dtype.kind == "f" and np.all(ks_arr == np.floor(ks_arr)):
            ks_arr = ks_arr.astype(np.int64)
        else:
            raise ValueError("k must be integers")
    ks_arr = ks_arr.astype(np.int64)
    if ks_arr.ndim != 1 or ks_arr.size == 0:
        raise ValueError("ks must be a non-empty 1-D sequence")
    if np.any(ks_arr < 1):
        raise ValueError("k must be >= 1")
    if np.any(ks_arr > n_min):
        raise GridError(
            f"k = {int(ks_arr.max())} exceeds the smallest number of samples n = {n_min}: "
            "pass@k has no unbiased estimate for k > n (choose a smaller grid; beyond n only "
            "the plug-in curve extrapolates)")
    return ks_arr


def budgets(grid: list[int] | str | None, n_min: int):
    """``(K,)`` int64 budgets of a parsed grid on data whose smallest sample count is ``n_min``.

    None gives every k in 1..n_min (refused beyond :data:`MAX_BUDGETS`), ``"pow2"``
    the powers of two up to ``n_min``; a list is checked by :func:`check_ks`.
    """
    import numpy as np

    if grid is None:
        if n_min > MAX_BUDGETS:
            raise GridError(f"the default grid 1..n has {n_min:,} budgets, more than "
                            f"{MAX_BUDGETS:,}; choose a grid (e.g. pow2)")
        return np.arange(1, n_min + 1)
    if grid == "pow2":
        return np.array(powers_of_two(n_min), dtype=np.int64)
    return check_ks(grid, n_min)


def check_cells(rows: int, n_budgets: int, *, limit: int = MAX_CELLS,
                what: str = "prompts",
                limit_is: str = "per-prompt pass@k values held in memory") -> None:
    """Refuse ``rows x n_budgets`` per-prompt pass@k values beyond ``limit`` (before building).

    Raises
    ------
    GridError
        The message names both sizes and the limit (``limit_is`` says what it bounds),
        and suggests a coarser grid.
    """
    if rows * n_budgets > limit:
        raise GridError(f"{rows:,} {what} x {n_budgets:,} budgets is more than the {limit:,} "
                        f"{limit_is}; choose a smaller grid (e.g. pow2 or 1-64,128,256)")
