"""The count-free price diagnostic ("No Free Lunch in RLVR"): a small table in, the ``price`` result out.

:func:`run` reads per-prompt success rates of base and RL (two columns) or a
published pass@k curve (three columns: k, base, RL) from a file, standard input
or text in hand (the app's paste box), computes crossings, the crossing bound,
k* and the price (:func:`rlvr_boundary.analysis.price.diagnose`), writes the
result when asked, and draws its figure when asked
(:func:`rlvr_boundary.report.theory_figures.price_figure`). ``rlvr-boundary
price`` and the app call it alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlvr_boundary.core import grid as G
from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

__all__ = ["PriceOptions", "run", "DEFAULT_RATE_GRID"]

#: The budget grid of rate curves when none is given.
DEFAULT_RATE_GRID = "1-1024"


@dataclass
class PriceOptions:
    """Options of ``rlvr-boundary price`` (and of the app's rates and curve paste)."""

    ks: str | None = option(None, metavar="GRID",
                            help="budget grid for rates (default 1-1024; pow2: 1, 2, 4, ..., "
                                 "1024)")
    kind: str = option("auto", choices=("auto", "rates", "curve"),
                       help="input kind: 2 columns = rates, 3 = curve (default: by the number "
                            "of columns)")
    round_decimals: int | None = option(None, flag="--round", metavar="D", low=0, high=17,
                                        help="round rates to D decimals before merging equal "
                                             "values in the bound")
    base_label: str = option("base", metavar="NAME", help="name of the base model's column")
    rl_label: str = option("RL", metavar="NAME", help="name of the trained model's column")
    grid: list | None = field(init=False, default=None)
    """Derived: the parsed ``ks`` (None: 1..1024)."""

    def __post_init__(self) -> None:
        # float64 holds 17 significant digits: more decimals round nothing (the bound above)
        check(self)
        try:
            grid = G.parse_grid(self.ks)
        except G.GridError as exc:
            raise InputError(f"--ks: {exc}") from None
        if grid == "pow2":
            grid = G.powers_of_two(1024)
        self.grid = grid


def run(table: str | Path | None, opts: PriceOptions, *, text: str | None = None,
        source: str | None = None, json_path: str | Path | None = None,
        figure: str | Path | None = None) -> dict:
    """Diagnose a rates table or a printed curve; return (and write) the ``price`` document.

    Parameters
    ----------
    table
        A file, or ``"-"`` / None for standard input (ignored when ``text`` is given).
    opts
        Validated options.
    text, source
        The table as text in hand, and how messages name it ("pasted table").
    json_path
        Where to write the result document.
    figure
        Folder for the figure ``price.png|pdf|svg`` (None: not drawn).
    """
    from rlvr_boundary.analysis.price import diagnose
    from rlvr_boundary.io.formats import parse_price_table, read_price_table
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc

    check_outputs({"--json": json_path}, [] if text is not None else [table])
    if text is not None:
        kind, header, values, source = parse_price_table(text, source or "<text>", opts.kind)
    else:
        kind, header, values, source = read_price_table(table, opts.kind)
    try:
        res = diagnose(kind, values, opts)
    except InputError as exc:  # a table-level error names the table
        exc.path = exc.path or source
        exc.args = (str(exc),)
        raise
    res["columns"] = header
    res["input"] = source
    res["labels"] = {"base": opts.base_label, "rl": opts.rl_label}
    doc = envelope("price", opts, res)
    if json_path:
        write_doc(json_path, doc)
    if figure:
        from rlvr_boundary.report import theory_figures as TF

        TF.save_formats(TF.price_figure(doc), Path(figure), "price")
    return doc
