"""The options of each entry point, validated once: one dataclass per command.

Kept apart from the computations and free of numpy/scipy imports, so the
command line can build its parser (defaults and help come from here) without
loading the numeric stack. Errors name the command-line flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr_boundary.errors import InputError


@dataclass
class CompareOptions:
    """Options of a base-vs-RL comparison (``rlvr-boundary compare``; recorded in every result).

    Validated once here; ``grid`` is derived from ``ks``. The input fields
    (format, labels, adapter choices) say how the files were read, so a result
    records everything needed to reproduce it.
    """

    ks: str | None = None
    """Budget grid, e.g. "1-128", "1,2,4,8" or "pow2"; default every k from 1 to the smallest n."""
    bootstrap: int = 4000
    """Gaussian multipliers for the simultaneous band, and paired-bootstrap resamples."""
    alpha: float = 0.05
    """1 - confidence level of the band and of the bootstrap intervals."""
    seed: int = 0
    """Seed of the multiplier and bootstrap draws."""
    K_se: int | None = None
    """Base budget K of Delta_SE = pass@K_B - pass@1_R; default 256, or the largest k if n < 256."""
    intersect: bool = False
    """Compare on the common prompts when the models' prompt sets differ (else an error)."""
    format: str = "auto"
    """Input format name, or auto-detection."""
    labels: dict = field(default_factory=dict)
    """Model label of single-model input files, ``{path: label}``."""
    lm_eval_filter: str | None = None
    """lm-evaluation-harness filter to read (default: the first non-majority filter)."""
    lm_eval_metric: str | None = None
    """lm-evaluation-harness per-document metric (default: the first verdict-like one)."""
    lighteval_metric: str | None = None
    """lighteval metric (default: a sampling metric such as avg@n, else a 0/1 match)."""
    verl_step: int | None = None
    """verl validation step to read from a directory of dumps (default: every step)."""
    cluster_by: str | None = None
    """Draw band multipliers (and bootstrap resamples) per cluster: an input field, or id-prefix:SEP."""
    rl_runs: tuple[str, ...] = ()
    """Further runs of the trained model (files); the band then covers run-to-run variance."""
    base_runs: tuple[str, ...] = ()
    """Further runs of the base model (files)."""
    extrapolate: int | None = None
    """Predict pass@k and D(k) up to this budget from a fitted rate distribution (model-based)."""
    extrapolate_method: str = "beta_mixture"
    """Rate distribution for the prediction: beta_mixture or npmle."""
    verifier_error: tuple[float, float] | None = None
    """Verifier false-positive and false-negative rates; the band is then also drawn under them."""
    scorer: str | None = None
    """Scorer whose verdicts (column correct__<scorer>) the main analysis uses; default `correct`."""
    grid: list | str | None = field(init=False, default=None)
    """Derived: the parsed ``ks`` (a sorted list, "pow2", or None for 1..n)."""

    def __post_init__(self) -> None:
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, int) \
                or not 2 <= self.bootstrap <= MAX_BOOTSTRAP:
            raise InputError(f"--bootstrap must be an integer >= 2 and at most "
                             f"{MAX_BOOTSTRAP:,}, got {self.bootstrap!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed < 2**63:
            raise InputError(f"--seed must be an integer from 0 to 2**63 - 1, got {self.seed!r}")
        if not 0 < self.alpha < 1:
            raise InputError(f"--alpha must lie strictly between 0 and 1, got {self.alpha!r}")
        if self.K_se is not None and self.K_se < 1:
            raise InputError(f"--K-se must be >= 1, got {self.K_se!r}")
        if self.verl_step is not None and self.verl_step < 0:
            raise InputError(f"--verl-step must be >= 0, got {self.verl_step!r}")
        if self.extrapolate is not None and self.extrapolate < 1:
            raise InputError(f"--extrapolate must be >= 1, got {self.extrapolate!r}")
        if self.extrapolate_method not in ("beta_mixture", "npmle"):
            raise InputError("--extrapolate-method must be beta_mixture or npmle, got "
                             f"{self.extrapolate_method!r}")
        if self.verifier_error is not None:
            fp, fn = self.verifier_error
            if not (0 <= fp < 1 and 0 <= fn < 1 and fp + fn < 1):
                raise InputError("--verifier-error rates must lie in [0, 1) with FP + FN < 1")
            self.verifier_error = (float(fp), float(fn))
        if self.scorer is not None and not (self.scorer and all(
                ch.isalnum() or ch in "_-." for ch in self.scorer)):
            raise InputError(f"--scorer must name a verdict column's scorer, such as "
                             f"math-verify or canonical, got {self.scorer!r}")
        self.rl_runs, self.base_runs = tuple(self.rl_runs), tuple(self.base_runs)
        self.labels = dict(self.labels or {})
        self.grid = parse_grid(self.ks)

    def adapter_choices(self) -> dict[str, dict]:
        """Keyword arguments of each adapter's ``read``, by format name."""
        return {"lm-eval": {"filter": self.lm_eval_filter, "metric": self.lm_eval_metric},
                "lighteval": {"metric": self.lighteval_metric},
                "verl": {"step": self.verl_step}}


#: Largest bootstrap / multiplier count accepted (its arrays take 8 bytes per draw).
MAX_BOOTSTRAP = 1_000_000
#: Most budgets a grid may hold, and the largest budget (checked before the grid is built).
MAX_BUDGETS = 100_000
MAX_K = 10**9
#: Most (prompt, budget) cells of per-prompt pass@k curves held at once, per model;
#: the analysis keeps a few arrays of this size (8 bytes a cell), so this bounds memory.
MAX_CELLS = 10_000_000


def check_cells(n_prompts: int, n_budgets: int, what: str = "prompts") -> None:
    """Refuse a grid whose per-prompt curves would exceed :data:`MAX_CELLS` (before building)."""
    if n_prompts * n_budgets > MAX_CELLS:
        raise InputError(
            f"{n_prompts:,} {what} x {n_budgets:,} budgets is more than the "
            f"{MAX_CELLS:,} per-prompt pass@k values held in memory; choose a smaller "
            "grid with --ks (e.g. pow2 or 1-64,128,256)", field="ks")


def parse_grid(spec: str | None) -> list | str | None:
    """Parse a budget grid spec: "1-128", "1,2,4,8", "1-16,32,64", "pow2", or None (1..n)."""
    if spec is None or spec == "":
        return None
    if spec == "pow2":
        return "pow2"
    ks: set[int] = set()
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (_ascii_int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                if hi > MAX_K or hi - lo + 1 + len(ks) > MAX_BUDGETS:
                    raise InputError(f"--ks {spec!r}: a grid holds at most {MAX_BUDGETS:,} "
                                     f"budgets, each at most {MAX_K:,}", field="ks")
                ks.update(range(lo, hi + 1))
            else:
                ks.add(_ascii_int(part))
                if max(ks) > MAX_K or len(ks) > MAX_BUDGETS:
                    raise InputError(f"--ks {spec!r}: a grid holds at most {MAX_BUDGETS:,} "
                                     f"budgets, each at most {MAX_K:,}", field="ks")
    except InputError:
        raise
    except ValueError:
        raise InputError(f"--ks: cannot parse the budget grid {spec!r}; use e.g. 1-128, "
                         "1,2,4,8 or pow2") from None
    out = sorted(ks)
    if not out or out[0] < 1:
        raise InputError(f"--ks: budgets must be integers >= 1, got {spec!r}")
    return out


def _ascii_int(text: str) -> int:
    # int() accepts other scripts' digits, underscores and signs; a budget is plain ASCII.
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError(text)
    return int(text)


@dataclass
class ReportOptions:
    """Options of ``rlvr-boundary report`` (recorded in the JSON result).

    The pairwise part is a :class:`CompareOptions` (grid, bootstrap, alpha,
    seed, inputs); the fields here are the audit's own. Validated once here.
    """

    compare: CompareOptions = field(default_factory=CompareOptions)
    """Grid, band, bootstrap, seed and input options shared with ``compare``."""
    base: str | None = None
    """Label of the base model; default: a model labelled 'base', else the first model read."""
    k: int | None = None
    """Audit budget K for coverage and support; default the smallest n over all models."""
    zeta: float = 0.05
    """Miss probability of the empirical support and of 'solved at K' (pass@K >= 1 - zeta)."""
    top: int = 10
    """Number of most regressed / most improved prompts listed."""
    lucky_below: float = 0.05
    """A problem is a 'lucky guess' candidate when 0 < c/n < lucky_below."""
    lucky_max: int = 30
    """At most this many lucky-guess problems are listed (rarest first)."""
    diversity_k: int | None = None
    """Budget of the answer-diversity statistics; default min(16, smallest n)."""
    quality_sample: int = 20_000
    """Quality flags derived from text use at most this many completions per model (0: all)."""
    figures: bool = True
    """Write the figures as PNG and PDF beside the report."""

    def __post_init__(self) -> None:
        if isinstance(self.compare, dict):  # read back from a result file
            self.compare = CompareOptions(**{k: v for k, v in self.compare.items()
                                             if k != "grid"})
        if not 0 < self.zeta < 1:
            raise InputError(f"--zeta must lie strictly between 0 and 1, got {self.zeta!r}")
        if self.k is not None and self.k < 1:
            raise InputError(f"--k must be >= 1, got {self.k!r}")
        if self.top < 0:
            raise InputError(f"--top must be >= 0, got {self.top!r}")
        if not 0 < self.lucky_below < 1:
            raise InputError(f"lucky_below must lie in (0, 1), got {self.lucky_below!r}")
        if self.lucky_max < 0 or self.quality_sample < 0:
            raise InputError("lucky_max and quality_sample must be >= 0")
        if self.diversity_k is not None and self.diversity_k < 1:
            raise InputError(f"diversity_k must be >= 1, got {self.diversity_k!r}")


@dataclass
class PriceOptions:
    """Options of ``rlvr-boundary price``."""

    ks: str | None = None
    """Budget grid for rate input, e.g. "1-1024" (default) or "1,4,16,64,256"."""
    kind: str = "auto"
    """Input kind: "rates" (2 columns), "curve" (3 columns: k, base, RL) or "auto" by column count."""
    round_decimals: int | None = None
    """Round rates to this many decimals before merging equal values in the crossing bound."""
    grid: list | None = field(init=False, default=None)
    """Derived: the parsed ``ks`` (None: 1..1024)."""

    def __post_init__(self) -> None:
        if self.kind not in ("auto", "rates", "curve"):
            raise InputError(f"--kind must be auto, rates or curve, got {self.kind!r}")
        if self.round_decimals is not None and not 0 <= self.round_decimals <= 17:
            # float64 holds 17 significant digits: more decimals round nothing
            raise InputError(f"--round must lie in 0..17, got {self.round_decimals!r}")
        grid = parse_grid(self.ks)
        if grid == "pow2":
            grid = [2 ** i for i in range(11)]
        self.grid = grid


@dataclass
class FrontierOptions:
    """Options of ``rlvr-boundary theory frontier`` (and the app's strategy-matrix tab)."""

    taus: int = 21
    """Number of floors tau, evenly spaced on [0, 1]."""
    kmax: int = 1024
    """Largest budget of the worst pass@k loss (powers of two up to kmax)."""
