"""The plan workflow: pilot counts of both models in, the ``plan`` result out.

:func:`run` reads the two pilot files (any count format), aligns them, refuses a
planned study too large to simulate, and runs the power simulation of
:func:`rlvr_boundary.analysis.plan.plan_design`. :class:`PlanOptions` declares
the flags and their bounds; the simulation's own options are
:class:`rlvr_boundary.analysis.plan.PlanOptions`, built from them (the result
records those).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rlvr_boundary.core import grid as G
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters import FORMATS
from rlvr_boundary.options import check, option

__all__ = ["PlanOptions", "run", "MAX_SIMS", "parse_budgets"]

#: Most simulated studies per design (each draws the whole study and its band); equal to
#: :data:`rlvr_boundary.analysis.plan.MAX_SIMS` (a test keeps them equal; the command line
#: does not import the simulation to build its flags).
MAX_SIMS = 20_000
#: Largest budget a claim may name and most prompts planned: analysis.plan's MAX_BUDGET and
#: MAX_PROMPTS, kept equal the same way.
MAX_CLAIM_K = 4096
MAX_PLANNED_PROMPTS = 100_000


def parse_budgets(text: str) -> tuple[int, ...]:
    """``"64,128,256"`` -> ``(64, 128, 256)``."""
    try:
        return tuple(int(b) for b in text.split(","))
    except ValueError:
        raise ValueError(f"expected integers such as 64,128,256, got {text!r}") from None


@dataclass
class PlanOptions:
    """Options of ``rlvr-boundary plan``: the claims, the design and the inputs' format."""

    gain_at: int | None = option(None, metavar="K", low=1, high=MAX_CLAIM_K,
                                 group="claims and design",
                                 help="certify that the trained model is better at budget K "
                                      "(e.g. 1)")
    loss_at: int | None = option(None, metavar="K", low=1, high=MAX_CLAIM_K,
                                 group="claims and design",
                                 help="certify that the trained model is worse at budget K "
                                      "(e.g. 64)")
    power: float = option(0.8, low=0, high=1, low_open=True, high_open=True,
                          group="claims and design", help="required power")
    budgets: tuple[int, ...] = option((), metavar="N,N,...", kind="text", parse=parse_budgets,
                                      group="claims and design",
                                      help="candidate samples per prompt (default: a search K, 2K, 4K, "
                                           "... until the power is reached)")
    prompts: int | None = option(None, metavar="P", low=2, high=MAX_PLANNED_PROMPTS,
                                 group="claims and design",
                                 help="prompts in the planned study (default: the pilot's)")
    sims: int = option(400, low=10, high=MAX_SIMS, group="claims and design",
                       help="simulated studies per design")
    multipliers: int = option(500, cli=False, low=50, high=1_000_000,
                              help="Gaussian multipliers of each simulated band")
    alpha: float = option(0.05, low=0, high=1, low_open=True, high_open=True,
                          group="claims and design", help="1 - confidence level")
    seed: int = option(0, low=0, high=2**63 - 1, what="an integer from 0 to 2**63 - 1",
                       group="claims and design", help="random seed")
    format: str = option("auto", metavar="NAME", group="inputs",
                         choices=lambda: ("auto", *FORMATS),
                         help="input format (default: detect)")

    def __post_init__(self) -> None:
        self.budgets = tuple(self.budgets)
        check(self)
        for b in self.budgets:
            if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= G.MAX_K:
                raise InputError(f"--budgets must be integers from 1 to {G.MAX_K:,}, got {b!r}")

    def simulation(self):
        """The simulation's options (:class:`rlvr_boundary.analysis.plan.PlanOptions`)."""
        from rlvr_boundary.analysis import plan as AP

        names = {f.name for f in dataclasses.fields(AP.PlanOptions)}
        return AP.PlanOptions(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                                 if f.name in names})


def run(base: str | Path, rl: str | Path, opts: PlanOptions, *,
        json_path: str | Path | None = None) -> dict:
    """Power of each design to certify the claims, from pilot counts: the ``plan`` document."""
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.analysis.plan import plan_design
    from rlvr_boundary.io.formats import load_model_counts
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc

    sim = opts.simulation()  # the simulation's own checks first (a claim named, ...)
    check_outputs({"--json": json_path}, [base, rl])
    b = load_model_counts(base, fmt=opts.format, label="base")
    r = load_model_counts(rl, fmt=opts.format, label="rl")
    al = align([b, r])
    study = opts.prompts or al.n.shape[1]
    try:  # each simulated study holds (prompts, budgets) pass@k values
        G.check_cells(study, sim.k_max, what="prompts in the planned study")
    except G.GridError as exc:
        raise InputError(str(exc).replace("choose a smaller grid (e.g. pow2 or "
                                          "1-64,128,256)", "plan fewer --prompts or a "
                                                           "smaller budget")) from None
    res = plan_design(al.n[0], al.c[0], al.n[1], al.c[1], sim)
    doc = envelope("plan", sim, res)
    if json_path:
        write_doc(json_path, doc)
    return doc
