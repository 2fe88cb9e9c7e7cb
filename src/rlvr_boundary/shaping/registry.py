"""The registry of advantage estimators: each one's name, function, options and help.

Read by the numpy estimators (:data:`rlvr_boundary.shaping.estimators.ESTIMATORS`),
the torch mirror, :class:`~rlvr_boundary.shaping.config.ShapingConfig` and any
command line that offers a choice of estimator. Standard library only, so a
parser can list the estimators without loading numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Estimator", "ESTIMATOR_REGISTRY", "estimator_names", "estimator_help"]


@dataclass(frozen=True)
class Estimator:
    """One advantage estimator."""

    function: str
    """Name of its function in :mod:`rlvr_boundary.shaping.estimators` (and the torch mirror)."""
    help: str
    """One line: what it does."""
    needs: tuple[str, ...] = ()
    """Options it needs besides the rewards (``k`` of pass@k, the greedy rewards of ReMax)."""


ESTIMATOR_REGISTRY: dict[str, Estimator] = {
    "grpo": Estimator("grpo_advantages", "GRPO: reward minus the group mean, over the group's "
                                         "sample standard deviation"),
    "dr_grpo": Estimator("dr_grpo_advantages", "Dr. GRPO: reward minus the group mean, no "
                                               "standard deviation"),
    "rloo": Estimator("rloo_advantages", "RLOO: reward minus the mean of the group's others"),
    "reinforce_pp": Estimator("reinforce_pp_advantages", "REINFORCE++: the reward whitened "
                                                         "over the batch"),
    "reinforce_pp_baseline": Estimator("reinforce_pp_baseline_advantages",
                                       "REINFORCE++-baseline: minus the group mean, then "
                                       "whitened over the batch"),
    "remax": Estimator("remax_advantages", "ReMax: reward minus the greedy completion's reward",
                       ("greedy_rewards",)),
    "passk": Estimator("passk_advantages", "the closed-form pass@k advantage (Pass@k Training)",
                       ("k",)),
}


def estimator_names() -> tuple[str, ...]:
    """The registered names, in order."""
    return tuple(ESTIMATOR_REGISTRY)


def estimator_help() -> str:
    """``name: help; ...`` for a command line's help text."""
    return "; ".join(f"{n}: {e.help}" for n, e in ESTIMATOR_REGISTRY.items())
