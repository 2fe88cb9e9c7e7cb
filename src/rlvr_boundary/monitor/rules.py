"""Alarm rules of the boundary monitor, and the correction for looking many times.

A rule says what to do (warn, save a checkpoint, stop training) and when: the
simultaneous band first supports a loss at a budget ``k >= K`` (``loss_at``), or
the point estimate of ``k*`` falls below a value (``k_star_below``).

Why a correction is needed
--------------------------
The band is a simultaneous confidence statement over the budget grid **at one
look**: if the trained policy is no worse than the base at any ``k >= K``, the
chance that *this* band supports a loss there is at most ``alpha``. A monitor
looks at every scheduled step. Checking L bands at level ``alpha`` each and
stopping at the first alarm is sequential testing: the chance that *some* look
raises a false alarm grows with L (up to ``L * alpha``; the benchmark
``benchmarks/bench_monitor.py`` measures it when the policy equals the base).

The corrections below give look ``j`` its own level ``alpha_j`` with
``sum_j alpha_j <= alpha``. By the union bound the chance of any false alarm
over the whole run is then at most ``alpha``, whatever the dependence between
looks (they share the base's samples and follow one training run):

- ``bonferroni`` (the default): ``alpha_j = alpha / L`` for the L scheduled looks;
- ``spending``: the increments of the Lan-DeMets spending function of
  O'Brien-Fleming type, ``a(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))`` at
  information fraction ``t = j / L``: very little at the first looks, most of
  ``alpha`` at the last ones (an alarm early needs a clear loss);
- ``open``: ``alpha_j = alpha / (j (j + 1))``, which sums to ``alpha`` over an
  unlimited number of looks (for a run whose length is not known, such as a
  checkpoint folder being watched);
- ``none``: ``alpha`` at every look (one-look statements; the false-alarm rate
  of the run is not controlled).

With ``bonferroni`` or ``spending`` a look past the L scheduled ones has no
level left (``alpha_j = 0``): its band is still drawn and logged at the plain
level, but it cannot raise an alarm.

The ``k_star_below`` rule reads the point estimate of ``k*``, which carries no
error control (under "RL changed nothing" a noisy ``D(k)`` dips below zero
often); use it to warn, and the band rule to stop.

References
----------
K. K. G. Lan and D. L. DeMets, "Discrete sequential boundaries for clinical
trials", Biometrika 70 (1983) 659-663.
P. C. O'Brien and T. R. Fleming, "A multiple testing procedure for clinical
trials", Biometrics 35 (1979) 549-556.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlvr_boundary.errors import InputError

__all__ = ["ACTIONS", "CORRECTIONS", "Rule", "parse_rule", "look_alpha", "look_alphas",
           "rule_fires"]

#: What a rule can do when it fires.
ACTIONS = ("warn", "save", "stop")
#: Corrections for repeated looks.
CORRECTIONS = ("bonferroni", "spending", "open", "none")


@dataclass(frozen=True)
class Rule:
    """One alarm: what to do, and when.

    Exactly one of ``loss_at`` and ``k_star_below`` is set.
    """

    action: str = "warn"
    """'warn' (log and record), 'save' (a checkpoint) or 'stop' (end training)."""
    loss_at: int | None = None
    """Fire when the look's band (at its corrected level) supports a loss at a budget >= this."""
    k_star_below: int | None = None
    """Fire when the point estimate k* is below this budget (no error control: warn with it)."""

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise InputError(f"rule action must be one of {', '.join(ACTIONS)}, got "
                             f"{self.action!r}", field="rule")
        if (self.loss_at is None) == (self.k_star_below is None):
            raise InputError("a rule needs exactly one condition: loss_at (a supported loss at "
                             "k >= K) or k_star_below", field="rule")
        for name in ("loss_at", "k_star_below"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InputError(f"rule {name} must be an integer >= 1, got {v!r}", field="rule")

    def describe(self) -> str:
        """The rule as it is written on the command line: ``stop:loss>=64``."""
        cond = f"loss>={self.loss_at}" if self.loss_at is not None else \
            f"kstar<{self.k_star_below}"
        return f"{self.action}:{cond}"


def parse_rule(text: str) -> Rule:
    """Parse ``ACTION:loss>=K`` or ``ACTION:kstar<V`` (``stop:loss>=64``, ``warn:kstar<16``)."""
    if not isinstance(text, str) or ":" not in text:
        raise InputError(f"cannot read the rule {text!r}: write ACTION:loss>=K or "
                         "ACTION:kstar<V, e.g. stop:loss>=64", field="rule")
    action, cond = (part.strip() for part in text.split(":", 1))
    cond = cond.replace(" ", "")
    for prefix, key in (("loss>=", "loss_at"), ("kstar<", "k_star_below")):
        if cond.startswith(prefix):
            value = cond[len(prefix):]
            if not (value.isascii() and value.isdigit()) or len(value) > 9:
                break
            return Rule(action=action, **{key: int(value)})
    raise InputError(f"cannot read the rule {text!r}: write ACTION:loss>=K or ACTION:kstar<V, "
                     "e.g. stop:loss>=64", field="rule")


def _check(alpha: float, method: str, looks: int | None) -> None:
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}", field="alpha")
    if method not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}",
                         field="correction")
    if method in ("bonferroni", "spending"):
        if looks is None:
            raise InputError(f"the {method} correction needs the number of scheduled looks "
                             "(looks, or max_steps with every); use correction 'open' when "
                             "the length of the run is not known", field="looks")
        if isinstance(looks, bool) or not isinstance(looks, int) or looks < 1:
            raise InputError(f"looks must be an integer >= 1, got {looks!r}", field="looks")


def look_alpha(alpha: float, method: str, look: int, looks: int | None = None) -> float:
    """Level ``alpha_j`` of look ``j = look`` (1-based).

    Parameters
    ----------
    alpha
        Chance of any false alarm over the run (one look's level for ``none``).
    method
        ``bonferroni``, ``spending``, ``open`` or ``none`` (module docstring).
    look
        1-based index of the look.
    looks
        Number L of scheduled looks (``bonferroni`` and ``spending``).

    Returns
    -------
    float
        ``alpha_j``; 0 for a look past the L scheduled ones.

    Notes
    -----
    ``bonferroni``: ``alpha / L``. ``spending``: ``a(j/L) - a((j-1)/L)`` with
    ``a(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``, ``a(0) = 0``, ``a(1) = alpha``.
    ``open``: ``alpha / (j (j + 1))``; ``sum_{j >= 1} = alpha``. In every case
    ``sum_j alpha_j <= alpha``, so the union bound caps the run's false-alarm
    probability at ``alpha``.
    """
    _check(alpha, method, looks)
    if isinstance(look, bool) or not isinstance(look, int) or look < 1:
        raise InputError(f"look must be an integer >= 1, got {look!r}", field="look")
    if method == "none":
        return float(alpha)
    if method == "open":
        return float(alpha / (look * (look + 1)))
    if look > looks:
        return 0.0
    if method == "bonferroni":
        return float(alpha / looks)
    return _obf(alpha, look / looks) - _obf(alpha, (look - 1) / looks)


def _obf(alpha: float, t: float) -> float:
    """Lan-DeMets O'Brien-Fleming-type spending function ``2 - 2 Phi(z_{1-alpha/2} / sqrt t)``."""
    from scipy.stats import norm

    if t <= 0:
        return 0.0
    if t >= 1:
        return float(alpha)
    z = norm.isf(alpha / 2)
    return float(2 * norm.sf(z / math.sqrt(t)))


def look_alphas(alpha: float, method: str, looks: int) -> list[float]:
    """``[alpha_1, ..., alpha_L]`` of :func:`look_alpha` for ``L = looks`` looks."""
    return [look_alpha(alpha, method, j, looks) for j in range(1, looks + 1)]


def rule_fires(rule: Rule, loss_budgets: list[int], k_star: int | None) -> bool:
    """Whether ``rule`` fires on a look whose corrected band supports ``loss_budgets``.

    ``loss_at`` fires when some supported loss lies at ``k >= loss_at``;
    ``k_star_below`` when the point estimate ``k*`` exists and is below the value.
    """
    if rule.loss_at is not None:
        return any(k >= rule.loss_at for k in loss_budgets)
    return k_star is not None and k_star < rule.k_star_below
