"""The No Free Lunch workflows: the verification suite, the diagnosis and the price frontier.

Three entry points, each ``inputs + options -> result document`` (written when a
path is given), called alike by ``rlvr-boundary theory`` and the app's theory tab:

- :func:`verify`: every claim of the suite on fixed seeds (``theory-verify``);
- :func:`diagnose`: free lunch or the Stiemke certificate of a strategy matrix,
  and its specialization (``theory-diagnose``);
- :func:`frontier`: the price frontier over floors tau, the exponential-tilt
  path, the tilt points above the frontier line and why, and the frontier at
  every tilt point's own floor (``theory-frontier``); its figure is drawn from
  the document alone (:func:`rlvr_boundary.report.theory_figures.frontier_figure`).

A matrix is a CSV file (``path``) or CSV text (``text``, named ``source`` in
messages): :func:`rlvr_boundary.io.matrix.read_matrix` / ``parse_matrix``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.options import check, option

__all__ = ["TheoryVerifyOptions", "DiagnoseOptions", "FrontierOptions", "verify", "diagnose",
           "frontier", "example_matrix"]

#: The suite's fixed base seed (``rlvr_boundary.theory.suite.SEED``; a test keeps them equal).
SUITE_SEED = 20260003


@dataclass
class TheoryVerifyOptions:
    """Options of ``rlvr-boundary theory verify``."""

    quick: bool = option(False, help="fewer instances per claim (CI)")
    seed: int = option(SUITE_SEED, cli=False,
                       help="base seed of the suite (fixed; claim i draws from "
                            "default_rng(seed + i))")

    def __post_init__(self) -> None:
        check(self)


@dataclass
class DiagnoseOptions:
    """Options of ``rlvr-boundary theory diagnose``."""

    matrix: str = option("", cli=False, help="the fitness matrix CSV that was diagnosed")

    def __post_init__(self) -> None:
        check(self)


@dataclass
class FrontierOptions:
    """Options of ``rlvr-boundary theory frontier`` and of the app's theory tab (one set of
    bounds for both)."""

    taus: int = option(21, low=2, high=10_000, help="number of floors tau, evenly spaced on "
                                                    "[0, 1]")
    kmax: int = option(1024, low=1, high=10**9,
                       help="largest budget of the worst pass@k loss (powers of two up to it)")

    def __post_init__(self) -> None:
        check(self)


def example_matrix() -> Path:
    """The shipped 3x3 counterexample (docs/theory.md shows the same file)."""
    from rlvr_boundary.examples import example_dir

    return example_dir("theory") / "three_by_three.csv"


def _matrix(path, text, source):
    from rlvr_boundary.io.matrix import parse_matrix, read_matrix

    if text is not None:
        return parse_matrix(text, source or "strategy matrix")
    return read_matrix(path)


def verify(opts: TheoryVerifyOptions, *, json_path: str | Path | None = None,
           progress=None) -> dict:
    """Run every claim of the suite; return (and write) the ``theory-verify`` document.

    ``progress`` is called with the name of each claim as it starts.
    """
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc
    from rlvr_boundary.theory.suite import run_suite

    check_outputs({"--json": json_path})
    res = run_suite(quick=opts.quick, progress=progress)
    failed = sum(c["status"] == "FAIL" for c in res)
    passed = sum(c["status"] == "PASS" for c in res)
    doc = envelope("theory-verify", opts, {"claims": res, "passed": passed, "failed": failed})
    if json_path:
        write_doc(json_path, doc)
    return doc


def diagnose(path: str | Path | None = None, *, text: str | None = None,
             source: str | None = None, json_path: str | Path | None = None) -> dict:
    """Free lunch or its certificate for a strategy matrix: the ``theory-diagnose`` document."""
    import numpy as np

    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc
    from rlvr_boundary.theory.specialization import specialization_report
    from rlvr_boundary.theory.stiemke import alternative

    check_outputs({"--json": json_path}, [path] if path else [])
    names, pi0, F, prompts = _matrix(path, text, source)
    res = alternative(F)
    spec = specialization_report(F)
    d = res["direction"]
    payload = {"strategies": names, "prompts": prompts, "pi0": pi0,
               "free_lunch": res["free_lunch"],
               "direction": None if d is None else np.asarray(d),
               "prompt_change": None if d is None else F.T @ d,
               # from pi0 the step along d can go this far before a weight hits 0
               "max_step": None if d is None else min(pi0[s] / -d[s] for s in range(d.size)
                                                      if d[s] < 0),
               "weights": None if res["weights"] is None else np.asarray(res["weights"]),
               "c": res["c"], **spec}
    doc = envelope("theory-diagnose", DiagnoseOptions(matrix=str(path or source or "")),
                   payload)
    if json_path:
        write_doc(json_path, doc)
    return doc


def frontier(path: str | Path | None, opts: FrontierOptions, *, text: str | None = None,
             source: str | None = None, json_path: str | Path | None = None,
             figure: str | Path | None = None) -> dict:
    """The price frontier and the tilt path of a matrix: the ``theory-frontier`` document.

    ``figure`` (a .png, .pdf or .svg path) is drawn from the document.
    """
    import numpy as np

    from rlvr_boundary.core.grid import powers_of_two
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc
    from rlvr_boundary.theory.frontier import above_frontier, price_frontier, tilt_path

    check_outputs({"--out": figure, "--json": json_path}, [path] if path else [],
                  suffixes={"--out": (".png", ".pdf", ".svg")})
    names, pi0, F, prompts = _matrix(path, text, source)
    ks = np.array(sorted({*powers_of_two(opts.kmax), opts.kmax}), dtype=float)  # (K,)
    front = price_frontier(F, pi0, np.linspace(0, 1, opts.taus), ks)
    path_ = tilt_path(F, pi0, ks=ks)
    above = above_frontier(F, pi0, front, path_, ks)
    # The frontier at every tilt point's own floor too: the comparison that is a theorem.
    floors = np.unique(np.concatenate([[r["tau"] for r in front], [t["floor"] for t in path_]]))
    at_floors = price_frontier(F, pi0, floors, ks)
    doc = envelope("theory-frontier", opts,
                   {"strategies": names, "prompts": prompts, "pi0": pi0, "frontier": front,
                    "tilt_path": path_, "tilt_above_frontier": above,
                    "frontier_at_floors": at_floors})
    if json_path:
        write_doc(json_path, doc)
    if figure:
        from rlvr_boundary.report import theory_figures as TF

        TF.save(TF.frontier_figure(doc), figure)
    return doc
