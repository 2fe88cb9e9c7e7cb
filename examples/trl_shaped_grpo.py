"""GRPO in TRL with the pass@k advantage and the RUC perplexity/position shapings.

Runs on a laptop CPU with no downloads: a 2-layer Qwen2 with hidden size 32 and
a word-level tokenizer trained here on a toy arithmetic corpus. The reward is 1
when the completion contains the right sum. Swap in your own model, tokenizer
and reward functions for real training; the only line that matters is
``ShapedGRPOTrainer(..., shaping=ShapingConfig(...))``.

    pip install 'rlvr-boundary[trl]'
    python examples/trl_shaped_grpo.py --estimator passk --k 2 --perplexity --position \
        --max-steps 4
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile


def build_tokenizer():
    """A word-level tokenizer over digits, '+', '=' and a few words, trained locally."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [f"{a} + {b} = {a + b} answer {a + b}" for a in range(5) for b in range(5)]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["<pad>", "<eos>", "<unk>"])
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>",
                                   unk_token="<unk>")


def build_model(tokenizer, seed: int = 0):
    """A randomly initialized 2-layer Qwen2 (hidden 32) sized for the tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
                      tie_word_embeddings=True)
    return Qwen2ForCausalLM(cfg)


def build_dataset(n: int = 16, seed: int = 0):
    from datasets import Dataset

    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randrange(5), rng.randrange(5)
        rows.append({"prompt": f"{a} + {b} =", "target": str(a + b)})
    return Dataset.from_list(rows)


def correct_sum(completions, target, **kwargs):
    """1.0 when the completion contains the target number, else 0.0."""
    return [1.0 if t in re.findall(r"\d+", text) else 0.0 for text, t in zip(completions, target)]


def make_trainer(shaping, *, max_steps: int = 4, output_dir: str | None = None, seed: int = 0):
    """A ShapedGRPOTrainer on the toy task (CPU, 4 prompts x 4 completions per step)."""
    from trl import GRPOConfig

    from rlvr_boundary.shaping.adapters.trl import ShapedGRPOTrainer

    tokenizer = build_tokenizer()
    model = build_model(tokenizer, seed)
    args = GRPOConfig(
        output_dir=output_dir or tempfile.mkdtemp(prefix="rlvr-trl-"),
        use_cpu=True, max_steps=max_steps, per_device_train_batch_size=16,
        num_generations=4, max_completion_length=6, learning_rate=1e-2,
        logging_steps=1, report_to=[], save_strategy="no", seed=seed, bf16=False,
        temperature=1.0, beta=0.0, dataloader_num_workers=0,
    )
    return ShapedGRPOTrainer(model=model, processing_class=tokenizer,
                             reward_funcs=correct_sum, args=args,
                             train_dataset=build_dataset(seed=seed), shaping=shaping)


def main(argv: list[str] | None = None) -> int:
    from rlvr_boundary.shaping import ShapingConfig

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimator", default="passk")
    p.add_argument("--k", type=int, default=2)
    p.add_argument("--perplexity", action="store_true")
    p.add_argument("--position", action="store_true")
    p.add_argument("--max-steps", type=int, default=4)
    args = p.parse_args(argv)
    shaping = ShapingConfig(estimator=args.estimator,
                            k=args.k if args.estimator == "passk" else None,
                            perplexity=args.perplexity, position=args.position,
                            pos_window=None)  # the paper's window (200, 300) needs a long run
    trainer = make_trainer(shaping, max_steps=args.max_steps)
    result = trainer.train()
    print(f"trained {trainer.state.global_step} steps; final loss {result.training_loss:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
