"""Options of the boundary monitor, validated once (recorded in every look's result)."""

from __future__ import annotations

from dataclasses import dataclass

from rlvr_boundary.errors import InputError
from rlvr_boundary.monitor.rules import CORRECTIONS, Rule, parse_rule

__all__ = ["MonitorOptions", "DEFAULT_EVERY", "DEFAULT_N"]

#: Default schedule: one look every this many optimizer steps.
DEFAULT_EVERY = 20
#: Default samples per held-out prompt at each look.
DEFAULT_N = 16


@dataclass
class MonitorOptions:
    """What the monitor samples, how it compares, and when it raises an alarm.

    The sampling budget of one look is ``len(prompts) * n`` completions. The
    band's half-width shrinks like ``1 / sqrt(prompts)`` (prompts are the
    sampling unit) and, at a budget k, the within-prompt noise of pass@k
    shrinks as n grows past k (docs/monitor.md gives measured widths).
    """

    n: int = DEFAULT_N
    """Samples per held-out prompt at each look (the largest budget k of the curve)."""
    every: int = DEFAULT_EVERY
    """Look every this many optimizer steps (the trainer integrations' schedule)."""
    ks: str | None = None
    """Budget grid, e.g. "1-16" or "pow2" (default: every k from 1 to the smallest n)."""
    log_ks: tuple[int, ...] | None = None
    """Budgets whose pass@k, D(k) and band ends are logged as scalars (default: powers of
    two up to n, and n)."""
    bootstrap: int = 2000
    """Gaussian multipliers of the band (and paired-bootstrap resamples)."""
    alpha: float = 0.05
    """Level of one look's band; with a correction, also the run's false-alarm budget."""
    seed: int = 0
    """Seed of the multipliers, and of the samples (each look draws fresh ones)."""
    correction: str = "bonferroni"
    """Correction for repeated looks: bonferroni, spending, open or none (monitor.rules)."""
    looks: int | None = None
    """Scheduled looks L (bonferroni and spending need it; the TRL callback derives it
    from max_steps and every)."""
    rules: tuple[Rule, ...] = ()
    """Alarm rules, e.g. (Rule("stop", loss_at=8),) or parsed from "stop:loss>=8"."""
    K: int | None = None
    """Budget of coverage and support (SRR/NDR); default n."""
    zeta: float = 0.05
    """Miss probability of the empirical support (epsilon = 1 - zeta^(1/K))."""
    temperature: float = 1.0
    """Sampling temperature (1: the model's own distribution, what pass@k at large k needs)."""
    top_p: float = 1.0
    """Nucleus sampling (1 = off)."""
    top_k: int = 0
    """Top-k sampling (0 = off)."""
    max_new_tokens: int = 256
    """Longest completion; longer ones are cut (truncated) and graded as they are."""
    batch_size: int = 64
    """Sequences the transformers backend decodes together."""
    template: str = "plain"
    """Prompt template of held-out prompts given as questions (plain, qwen-boxed, chat)."""
    full_compare: bool = True
    """Also compute compare's paired-bootstrap intervals for k*, price and Delta_SE (the
    result then equals ``rlvr-boundary compare`` key for key; off saves time)."""

    def __post_init__(self) -> None:
        for name in ("n", "every", "bootstrap", "batch_size", "max_new_tokens"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{name} must be an integer >= 1, got {v!r}", field=name)
        if self.bootstrap < 2:
            raise InputError("bootstrap must be >= 2", field="bootstrap")
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must lie strictly between 0 and 1, got {self.alpha!r}",
                             field="alpha")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"seed must be an integer >= 0, got {self.seed!r}", field="seed")
        if self.correction not in CORRECTIONS:
            raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got "
                             f"{self.correction!r}", field="correction")
        if self.looks is not None and (isinstance(self.looks, bool) or
                                       not isinstance(self.looks, int) or self.looks < 1):
            raise InputError(f"looks must be an integer >= 1, got {self.looks!r}", field="looks")
        self.rules = tuple(parse_rule(r) if isinstance(r, str) else
                           Rule(**r) if isinstance(r, dict) else r for r in self.rules)
        if any(not isinstance(r, Rule) for r in self.rules):
            raise InputError("rules must be Rule objects or strings such as stop:loss>=8",
                             field="rules")
        for r in self.rules:
            budget = r.loss_at if r.loss_at is not None else r.k_star_below
            if budget > self.n:
                raise InputError(f"rule {r.describe()}: budget {budget} exceeds n = {self.n} "
                                 "samples per prompt (pass@k has no unbiased estimate there)",
                                 field="rules")
        if self.K is not None and not 1 <= self.K <= self.n:
            raise InputError(f"K must lie in 1..n = {self.n}, got {self.K!r}", field="K")
        if not 0 < self.zeta < 1:
            raise InputError(f"zeta must lie strictly between 0 and 1, got {self.zeta!r}",
                             field="zeta")
        if self.log_ks is not None:
            self.log_ks = tuple(int(k) for k in self.log_ks)
            if not self.log_ks or any(not 1 <= k <= self.n for k in self.log_ks):
                raise InputError(f"log_ks must be budgets in 1..n = {self.n}", field="log_ks")
        # The sampling options are checked by SamplingParams when the first look samples.

    @property
    def budget_K(self) -> int:
        """The coverage and support budget (K, default n)."""
        return self.K if self.K is not None else self.n

    def logged_budgets(self, ks) -> list[int]:
        """Budgets logged as scalars: ``log_ks``, or powers of two and the largest k of ``ks``."""
        ks = [int(k) for k in ks]
        if self.log_ks is not None:
            return [k for k in self.log_ks if k in ks]
        out = [k for k in ks if k & (k - 1) == 0]
        if ks and ks[-1] not in out:
            out.append(ks[-1])
        return out
