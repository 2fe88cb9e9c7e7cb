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
  rejection-sampling fine-tuning data (``rlvr-boundary rft-select``).
"""

from rlvr_boundary.shaping.config import ShapingConfig
from rlvr_boundary.shaping.estimators import (
    ESTIMATORS,
    compute_advantages,
    dr_grpo_advantages,
    grpo_advantages,
    passk_advantages,
    reinforce_pp_advantages,
    reinforce_pp_baseline_advantages,
    remax_advantages,
    rloo_advantages,
    whiten,
)
from rlvr_boundary.shaping.pipeline import sequence_advantages, token_advantages
from rlvr_boundary.shaping.shapings import (
    apply_perplexity_shaping,
    apply_position_shaping,
    broadcast_to_tokens,
    log_perplexity,
    perplexity_multipliers,
    perplexity_zscores,
    position_bias,
    relative_positions,
)

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
