"""verl's own validation (RayPPOTrainer._validate, legacy trainer) on CPU with the monitor hook.

Run by tests/monitor/test_verl_hook.py in a subprocess with
VERL_USE_EXTERNAL_MODULES=rlvr_boundary.monitor.verl, as verl loads plug-ins. A
stand-in rollout manager answers each validation prompt with 0/1 verdicts drawn
from per-prompt rates (a policy equal to the base at step 2, collapsed at step 4);
everything else is verl's code: DataProto, repeat/union/padding, extract_reward,
process_validation_metrics, _val_metrics_update.

    python verl_run.py OUT  -> one JSON line: metrics per step, verl's own numbers, state
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
P, N = 24, 8


def main(out: str) -> int:
    import torch
    import verl  # noqa: F401  (loads the plug-in named in VERL_USE_EXTERNAL_MODULES)
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    spec = importlib.util.spec_from_file_location("ex", ROOT / "examples/trl_shaped_grpo.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    tok = ex.build_tokenizer()
    rng = np.random.default_rng(0)
    base_rates = rng.uniform(0.2, 0.9, P)
    prompt_ids = [tok(f"{a % 5} + {a // 5 % 5} = {a}")["input_ids"] for a in range(P)]
    L = max(map(len, prompt_ids))
    prompt_ids = [[tok.pad_token_id] * (L - len(r)) + r for r in prompt_ids]

    class Rollout:
        """Stands in for verl's rollout workers: 0/1 verdicts from the step's rates."""

        def __init__(self):
            self.rates = base_rates

        def generate_sequences(self, gen):
            index = [e["index"] for e in gen.non_tensor_batch["extra_info"]]
            ok = np.array([rng.random() < self.rates[i] for i in index])
            digit = [tok.convert_tokens_to_ids(str(int(o))) for o in ok]
            scores = torch.zeros(len(index), 3)
            scores[:, -1] = torch.tensor(ok, dtype=torch.float32)
            return DataProto.from_dict(
                tensors={"prompts": torch.tensor([prompt_ids[i] for i in index]),
                         "responses": torch.tensor([[d, d, tok.eos_token_id] for d in digit]),
                         "rm_scores": scores},
                non_tensors={"acc": ok.astype(np.float64)},
                meta_info={"reward_extra_keys": ["acc"]})

    captured = {}
    patched = RayPPOTrainer._val_metrics_update

    def capture(self, *args, **kwargs):  # keep verl's inputs to recompute its own numbers
        captured["args"] = args
        return patched(self, *args, **kwargs)

    RayPPOTrainer._val_metrics_update = capture
    t = RayPPOTrainer.__new__(RayPPOTrainer)
    t.config = OmegaConf.create({
        "trainer": {"log_val_generations": 0, "validation_data_dir": None, "test_freq": 2,
                    "default_local_dir": out},
        "actor_rollout_ref": {"rollout": {"val_kwargs": {"n": N, "do_sample": True},
                                          "agent": {"num_workers": 1}}}})
    t.tokenizer, t.use_rm, t.total_training_steps = tok, False, 6
    t.val_dataloader = [{
        "input_ids": torch.tensor(prompt_ids),
        "attention_mask": torch.ones(P, L, dtype=torch.long),
        "data_source": np.array(["toy"] * P, dtype=object),
        "reward_model": np.array([{"ground_truth": "1"}] * P, dtype=object),
        "extra_info": np.array([{"index": i} for i in range(P)], dtype=object)}]
    t.async_rollout_manager = Rollout()
    saves = []
    t._save_checkpoint = lambda: saves.append(t.global_steps)
    result = {"patched": bool(getattr(RayPPOTrainer, "_rlvr_monitor_patched", False)),
              "steps": {}, "verl_own": {}, "total_training_steps": {}}
    original = RayPPOTrainer._rlvr_monitor_originals[1]
    for step, rates in ((0, base_rates), (2, base_rates), (4, base_rates * 0.15)):
        t.global_steps = step
        t.async_rollout_manager.rates = rates
        metrics = t._validate()
        result["steps"][step] = {k: float(v) for k, v in metrics.items()}
        own = original(t, *captured["args"])
        result["verl_own"][step] = {k: float(v) for k, v in own.items()}
        result["total_training_steps"][step] = t.total_training_steps
    result["saves"] = saves
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
