"""Training-side levers: advantage estimators, pass@k-preserving shaping, RFT selection.

Contract: the modules imported here depend on NumPy and SciPy only. Torch
mirrors live in :mod:`~rlvr_boundary.shaping.torch_ops` (imports torch) and the
trainer adapters in :mod:`~rlvr_boundary.shaping.adapters` (verl, TRL); neither is
imported by this package.

- :mod:`~rlvr_boundary.shaping.estimators`: GRPO, Dr. GRPO, RLOO, REINFORCE++,
  REINFORCE++-baseline, ReMax and the closed-form pass@k advantage on ``(P, G)``
  rewards.
- :mod:`~rlvr_boundary.shaping.shapings`: perplexity and position shaping (RUC
  report), broadcasting to ``(B, T)`` with masks.
- :mod:`~rlvr_boundary.shaping.pipeline`: rewards -> token advantages, as the
  adapters do it.
- :mod:`~rlvr_boundary.shaping.rft`: rule filters and selection strategies for
  rejection-sampling fine-tuning data (``rlvr-boundary rft-select``);
- :mod:`~rlvr_boundary.shaping.registry`: the estimators' names, options and help
  (standard library only).
"""

# The names below load on first use (PEP 562): importing the package, or its registry of
# estimators, loads no numpy; ``from rlvr_boundary.shaping import ShapingConfig`` works as ever.
import importlib

_HOME = {
    "ShapingConfig": "config",
    "sequence_advantages": "pipeline", "token_advantages": "pipeline",
    **dict.fromkeys(("ESTIMATORS", "compute_advantages", "dr_grpo_advantages",
                     "grpo_advantages", "passk_advantages", "reinforce_pp_advantages",
                     "reinforce_pp_baseline_advantages", "remax_advantages", "rloo_advantages",
                     "whiten"), "estimators"),
    **dict.fromkeys(("apply_perplexity_shaping", "apply_position_shaping", "broadcast_to_tokens",
                     "log_perplexity", "perplexity_multipliers", "perplexity_zscores",
                     "position_bias", "relative_positions"), "shapings"),
}


def __getattr__(name: str):
    if name in _HOME:
        value = getattr(importlib.import_module(f"rlvr_boundary.shaping.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rlvr_boundary.shaping' has no attribute {name!r}")


__all__ = [
    "ESTIMATORS",
    "ShapingConfig",
    "apply_perplexity_shaping",
    "apply_position_shaping",
    "broadcast_to_tokens",
    "compute_advantages",
    "dr_grpo_advantages",
    "grpo_advantages",
    "log_perplexity",
    "passk_advantages",
    "perplexity_multipliers",
    "perplexity_zscores",
    "position_bias",
    "reinforce_pp_advantages",
    "reinforce_pp_baseline_advantages",
    "relative_positions",
    "remax_advantages",
    "rloo_advantages",
    "sequence_advantages",
    "token_advantages",
    "whiten",
]
