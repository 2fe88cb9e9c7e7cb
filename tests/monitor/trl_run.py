"""A GRPO run of TRL on CPU with the boundary callback (run by tests/monitor/test_trl_callback.py).

The toy task of examples/trl_shaped_grpo.py (a 2-layer Qwen2, "a + b =" prompts,
reward 1 when the completion contains the sum) with TRL's own GRPOTrainer, the
monitor looking every 2 steps at the 25 prompts of the task, logging through
``report_to``. Run in a subprocess so W&B and trackio keep their state (and their
folders, set by the caller's environment) out of the test process.

    python trl_run.py OUT --report tensorboard,wandb,trackio [--base-all-correct] [--max-steps 6]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_example():
    spec = importlib.util.spec_from_file_location("trl_shaped_grpo",
                                                  ROOT / "examples/trl_shaped_grpo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def contains_sum(prompt: dict, text: str) -> bool:
    """The task's verifier: the completion contains the right sum."""
    return prompt["target"] in re.findall(r"\d+", text)


def heldout() -> list[dict]:
    return [{"prompt_id": f"{a}+{b}", "prompt": f"{a} + {b} =", "target": str(a + b)}
            for a in range(5) for b in range(5)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--report", default="tensorboard")
    p.add_argument("--max-steps", type=int, default=6)
    p.add_argument("--every", type=int, default=2)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--base-all-correct", action="store_true",
                   help="give the monitor a base that solves every prompt (a loss must be found)")
    p.add_argument("--rule", action="append", default=[])
    args = p.parse_args(argv)

    from trl import GRPOConfig, GRPOTrainer

    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions
    from rlvr_boundary.monitor.trl import BoundaryCallback

    ex = load_example()
    out = Path(args.out)
    tok = ex.build_tokenizer()
    model = ex.build_model(tok, seed=0)
    report = [r for r in args.report.split(",") if r]
    cfg = GRPOConfig(
        output_dir=str(out / "trainer"), use_cpu=True, max_steps=args.max_steps,
        per_device_train_batch_size=16, num_generations=4, max_completion_length=6,
        learning_rate=1e-2, logging_steps=1, report_to=report,
        save_strategy="no", seed=0, bf16=False, temperature=1.0, beta=0.0,
        dataloader_num_workers=0, run_name="monitor-test", project="rlvr-monitor-test",
        trackio_space_id=None, trackio_static_space_id=False)
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=ex.correct_sum,
                          args=cfg, train_dataset=ex.build_dataset(seed=0))
    base = None
    if args.base_all_correct:
        base = out / "base_counts.jsonl"
        base.parent.mkdir(parents=True, exist_ok=True)
        base.write_text("".join(json.dumps({"id": q["prompt_id"], "n": args.n, "c": args.n}) + "\n"
                                for q in heldout()))
    opts = MonitorOptions(n=args.n, every=args.every, bootstrap=500, max_new_tokens=6,
                          batch_size=200, rules=tuple(args.rule))
    monitor = BoundaryMonitor(heldout(), contains_sum, out / "monitor", opts, base=base)
    BoundaryCallback.attach(trainer, monitor)
    trainer.train()
    print(json.dumps({"global_step": trainer.state.global_step,
                      "alarms": monitor.alarms(),
                      "looks": sorted(monitor.history)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
