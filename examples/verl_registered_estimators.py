"""Load rlvr-boundary's estimators into verl the way a training run does, and call them.

verl imports every module listed in ``VERL_USE_EXTERNAL_MODULES`` when ``verl``
itself is imported, in the driver and in each Ray worker. This script sets the
variable, imports verl, and runs verl's own ``compute_advantage`` (the function
the PPO trainer calls every step) with ``adv_estimator=rlvr_passk`` and position
shaping on a toy batch of 2 prompts x 4 rollouts; then the ``rlvr_ppl`` policy
loss on the same batch. It needs verl and torch, not a GPU. For a real run see
``examples/verl_grpo_passk.sh``.

    # verl 0.9.1 pins transformers < 5.11 (TRL 1.16 brings 5.24) and pulls wandb,
    # tensorboard and ray[default]; to run this check next to TRL, install verl
    # alone plus the modules its trainer imports (as .ci/run does):
    pip install 'rlvr-boundary[trl]' torch==2.13.0   # torch, transformers, datasets
    pip install --no-deps verl==0.9.1
    pip install ray tensordict omegaconf codetiming orjson torchdata peft cachetools \
        uvicorn fastapi torch==2.13.0
    python examples/verl_registered_estimators.py
"""

from __future__ import annotations

import json
import os


def main() -> int:
    os.environ["VERL_USE_EXTERNAL_MODULES"] = "rlvr_boundary.shaping.adapters.verl"
    # Options for the estimators and the policy loss (any ShapingConfig field).
    os.environ["RLVR_BOUNDARY_SHAPING"] = json.dumps(
        {"estimator": "passk", "k": 2, "position": True, "pos_window": [0, 10],
         "ppl_alpha": 0.01})

    import numpy as np
    import torch
    import verl  # noqa: F401  (imports rlvr_boundary.shaping.adapters.verl)
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.core_algos import get_policy_loss_fn
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.workers.config import ActorConfig

    # 2 prompts x 4 rollouts, outcome reward on each response's last token.
    scores = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    lengths = torch.tensor([5, 3, 6, 2, 6, 4, 1, 5])
    mask = (torch.arange(6)[None, :] < lengths[:, None]).float()  # (8, 6)
    rewards = torch.zeros(8, 6)
    rewards[torch.arange(8), lengths - 1] = scores
    batch = DataProto.from_dict(
        tensors={"token_level_rewards": rewards, "response_mask": mask},
        non_tensors={"uid": np.array(["p0"] * 4 + ["p1"] * 4, dtype=object)})
    # The algorithm config is a Hydra node; +algorithm.rlvr_boundary.* overrides the env JSON.
    algo = OmegaConf.create({"adv_estimator": "rlvr_passk", "gamma": 1.0, "lam": 1.0,
                             "norm_adv_by_std_in_grpo": True,
                             "rlvr_boundary": {"k": 2}})
    batch = compute_advantage(batch, adv_estimator="rlvr_passk", config=algo)
    adv = batch.batch["advantages"]
    print("pass@2 advantages with position shaping (first and last response token):")
    for i in range(8):
        L = int(lengths[i])
        print(f"  rollout {i}: reward {scores[i]:.0f}  A[first] {adv[i, 0]:+.4f}  "
              f"A[last] {adv[i, L - 1]:+.4f}")

    # The perplexity shaping runs inside the policy loss, from old_log_prob.
    torch.manual_seed(0)
    old_log_prob = -torch.rand(8, 6) * 3 * mask
    log_prob = old_log_prob + 0.01 * torch.randn(8, 6) * mask
    actor = ActorConfig(strategy="fsdp", rollout_n=4, ppo_mini_batch_size=8,
                        ppo_micro_batch_size_per_gpu=8)
    loss, metrics = get_policy_loss_fn("rlvr_ppl")(
        old_log_prob=old_log_prob, log_prob=log_prob, advantages=adv, response_mask=mask,
        loss_agg_mode="token-mean", config=actor)
    lo, hi = metrics["actor/rlvr_ppl_factor_min"], metrics["actor/rlvr_ppl_factor_max"]
    print(f"rlvr_ppl policy loss {float(loss):+.5f}; perplexity factors in [{lo:.4f}, {hi:.4f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
