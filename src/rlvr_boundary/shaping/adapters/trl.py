"""TRL adapter: a ``GRPOTrainer`` subclass that swaps in any estimator and shaping.

Usage::

    from rlvr_boundary.shaping import ShapingConfig
    from rlvr_boundary.shaping.adapters.trl import ShapedGRPOTrainer

    trainer = ShapedGRPOTrainer(model=..., reward_funcs=..., args=GRPOConfig(...),
                                train_dataset=...,
                                shaping=ShapingConfig(estimator="passk", k=4,
                                                      perplexity=True, position=True,
                                                      pos_window=None))

How it hooks in (TRL 1.x): the trainer computes rewards in ``_calculate_rewards``
(gathered over processes) and advantages in ``_generate_and_score_completions``.
We keep the gathered rewards, let TRL finish, then replace the ``advantages``
of its output with ours: the chosen estimator on the weighted sum of reward
functions, the perplexity factor, and, when position shaping is on, token-level
``(B, T)`` advantages (TRL's loss accepts both shapes). Everything else (loss
type, clipping, KL, importance sampling) stays TRL's; TRL's own advantage options
(``scale_rewards``, ``multi_objective_aggregation``) no longer apply, since the
estimator decides the baseline and the scale.

Details:

- Groups are TRL's: consecutive blocks of ``num_generations`` completions of the
  gathered batch.
- Log-PPL for the perplexity factor is taken from the generating model's
  token log-probs: ``sampling_per_token_logps`` (vLLM) if present, else
  ``old_per_token_logps``, else one extra no-grad forward pass of the current
  model (the same model that generated the batch). Text models only.
- The step for the position window is ``state.global_step`` when the batch is
  generated (one generation may serve several optimizer steps).
- A completion that every reward function left unscored (None/NaN) enters its
  group's statistics with reward 0 (our estimators need finite rewards) and then
  gets advantage 0, as in TRL, so it does not move the policy.
- ReMax needs the greedy completion's reward: give the dataset a column
  ``greedy_reward``.
- TRL's logged "advantages" table still shows TRL's own values; the mean
  absolute value of ours is logged as the metric ``rlvr_boundary/advantage_mean_abs``.
"""

from __future__ import annotations

from typing import Any

from rlvr_boundary.errors import require

torch = require("torch", "trl", "the TRL adapter")
_trl = require("trl", "trl", "the TRL adapter")

from rlvr_boundary.shaping import torch_ops
from rlvr_boundary.shaping.config import ShapingConfig

GRPOTrainer = _trl.GRPOTrainer

__all__ = ["ShapedGRPOTrainer"]


class ShapedGRPOTrainer(GRPOTrainer):
    """``trl.GRPOTrainer`` with an rlvr-boundary estimator and shaping.

    Parameters
    ----------
    *args, **kwargs
        As for ``trl.GRPOTrainer``.
    shaping
        The estimator and shapings (default: GRPO, no shaping; note our GRPO
        uses ``eps = 1e-6`` where TRL uses 1e-4).
    """

    def __init__(self, *args: Any, shaping: ShapingConfig | None = None, **kwargs: Any) -> None:
        self.shaping = shaping if shaping is not None else ShapingConfig()
        self._rlvr_rewards_per_func = None
        super().__init__(*args, **kwargs)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions,
                                                      completion_ids_list)
        self._rlvr_rewards_per_func = rewards_per_func  # (N_global, F)
        return rewards_per_func

    def _generate_and_score_completions(self, inputs):
        from accelerate.utils import gather_object

        output = super()._generate_and_score_completions(inputs)
        cfg = self.shaping
        mode = "train" if self.model.training else "eval"
        rpf = self._rlvr_rewards_per_func
        self._rlvr_rewards_per_func = None
        if rpf is None:  # pragma: no cover - guards a change in TRL's internals
            raise RuntimeError("TRL did not call _calculate_rewards; "
                               "this TRL version is not supported")
        weights = self.reward_weights.to(rpf.device)
        unscored = torch.isnan(rpf).all(dim=1)
        rewards = (rpf * weights.unsqueeze(0)).nansum(dim=1)  # (N,)
        rewards = torch.where(unscored, torch.zeros_like(rewards), rewards)
        num_gen = self.num_generations if mode == "train" else self.num_generations_eval
        n_global = rewards.shape[0]
        if n_global % num_gen:
            raise ValueError(f"{n_global} completions are not whole groups of {num_gen}")
        index = [i // num_gen for i in range(n_global)]

        completion_mask = output["completion_mask"]
        mask = completion_mask  # (B, T); tool-result tokens are not the model's
        if "tool_mask" in output:
            mask = completion_mask * output["tool_mask"]
        n_local = mask.shape[0]
        process_slice = slice(self.accelerator.process_index * n_local,
                              (self.accelerator.process_index + 1) * n_local)
        token_counts = self.accelerator.gather(mask.sum(dim=1).to(rewards.dtype))  # (N,)

        log_ppl = None
        if cfg.perplexity:
            log_ppl = self.accelerator.gather(self._rlvr_local_log_ppl(output, mask))  # (N,)
        greedy = None
        if cfg.estimator == "remax":
            local = [row.get("greedy_reward") for row in inputs]
            if any(v is None for v in local):
                raise ValueError("ReMax in TRL needs a dataset column 'greedy_reward'")
            greedy = torch.tensor(gather_object(local), dtype=rewards.dtype, device=rewards.device)

        seq = torch_ops.sequence_advantages_flat(
            cfg, rewards.double(), index, token_counts=token_counts.double(),
            log_ppl=None if log_ppl is None else log_ppl.double(),
            greedy_rewards=None if greedy is None else greedy.double())  # (N,)
        seq = torch.where(unscored.to(seq.device), torch.zeros_like(seq), seq)
        seq = seq[process_slice].to(torch.float32).to(mask.device)
        if cfg.position:
            tok = torch_ops.broadcast_to_tokens(seq, mask.to(seq.dtype))
            adv = torch_ops.apply_position_shaping(tok, mask.to(seq.dtype),
                                                   step=int(self.state.global_step),
                                                   **cfg.position_kwargs())
        else:
            adv = seq
        output["advantages"] = adv
        self._metrics[mode]["rlvr_boundary/advantage_mean_abs"].append(float(seq.abs().mean()))
        return output

    def _rlvr_local_log_ppl(self, output, mask):
        """Per-sequence log-PPL of this process's completions under the generating model."""
        logps = output.get("sampling_per_token_logps")
        if logps is None:
            logps = output.get("old_per_token_logps")
        if logps is None:
            prompt_completion_ids = torch.cat([output["prompt_ids"], output["completion_ids"]],
                                              dim=1)
            attention_mask = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
            with torch.no_grad():
                logps, _, _ = self._get_per_token_logps_and_entropies(
                    self.model, prompt_completion_ids, attention_mask,
                    output["completion_ids"].size(1))
        m = mask.to(torch.float64)
        lp = torch.nan_to_num(logps.detach().to(torch.float64), nan=0.0)
        return torch_ops.log_perplexity(lp, m)
