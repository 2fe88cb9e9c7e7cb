#!/usr/bin/env bash
# GRPO-style training in verl with the pass@k advantage (k = 4), the position
# shaping of the RUC report in its plateau window (200 < step < 300) and the
# perplexity shaping in the policy loss. Needs a GPU machine with verl and vLLM;
# adapt the data and model paths. Not run by the test suite (no GPU there); the
# CPU check of the same registration path is examples/verl_registered_estimators.py.
set -euo pipefail

# 1. Load the adapter in every verl process (driver and Ray workers inherit the env).
export VERL_USE_EXTERNAL_MODULES=rlvr_boundary.shaping.adapters.verl
# 2. Options (fields of rlvr_boundary.shaping.ShapingConfig plus step_offset,
#    base_loss_mode, ppl_group_size). On an existing Ray cluster also pass them as
#    +ray_kwargs.ray_init.runtime_env.env_vars.RLVR_BOUNDARY_SHAPING=...
export RLVR_BOUNDARY_SHAPING='{"estimator": "passk", "k": 4, "position": true, "pos_window": [200, 300], "ppl_alpha": 0.01}'

N=8  # rollouts per prompt

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=rlvr_passk \
    actor_rollout_ref.actor.policy_loss.loss_mode=rlvr_ppl \
    data.train_files="$HOME/data/gsm8k/train.parquet" \
    data.val_files="$HOME/data/gsm8k/test.parquet" \
    data.train_batch_size=256 \
    data.max_prompt_length=512 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=$N \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$((2 * N)) \
    actor_rollout_ref.actor.use_dynamic_bsz=False \
    actor_rollout_ref.actor.shuffle=False \
    trainer.balance_batch=False \
    trainer.n_gpus_per_node=1 \
    trainer.nnodes=1 \
    trainer.total_epochs=1 \
    trainer.logger='["console"]' \
    "$@"
# The three settings above the trainer lines keep each prompt's rollouts contiguous
# in every micro-batch, which the rlvr_ppl loss needs to standardize log-PPL per
# group (it raises if the blocks do not line up). verl 0.9.1's default trainer
# (trainer.use_v1=True) rebalances rows across data-parallel ranks by sequence
# length whatever balance_batch says: with one rank (this recipe) the order is
# kept, with several it splits groups, so for multi-GPU runs of rlvr_ppl add
# trainer.use_v1=False (the legacy trainer honours balance_batch=False).
# When resuming from step S, add "step_offset": S to RLVR_BOUNDARY_SHAPING so the
# position window stays aligned.
