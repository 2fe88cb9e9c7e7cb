"""Benchmark: tokens per second of the transformers backend (batched, KV cache, per-sample
seeds, exact token statistics) against a naive loop that calls ``model.generate`` on one
sequence at a time.

Model: a small Llama built and saved locally by ``tests/backends/tiny_model.py`` (BPE
tokenizer trained by ``tokenizers``, hidden 256, 4 layers, 16 training steps so that
samples rarely stop early). Prompts: 8 short math prompts x n = 8 samples, 96 new tokens,
temperature 1. Ours: ``TransformersBackend.generate`` with ``batch_size`` sequences per
KV cache, which also computes every step's entropy, RBF, inverse Simpson and log-prob.
Peer, in the same run: ``model.generate(ids, do_sample=True, max_new_tokens=96)`` for each
(prompt, sample) in turn (KV cache on, no statistics). A third line times Hugging Face's own
batched ``generate`` (all 64 sequences left-padded in one call, no statistics) for context.
Tokens counted: generated tokens up to and including the end-of-text token.

Run:  python benchmarks/bench_generate.py [--threads 1] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

QUESTIONS = ["What is 12 + 7?", "Let x + 2 = 5.", "Compute 3 * 4 - 5.", "Find the sum of 1, 2, 3 and 4.",
             "We reason step by step:", "Problem: find 9 / 3.", "What is 3 ^ 2?", "Let x = 3. Then"]


def best(fn, reps: int) -> tuple[float, int]:
    fn()  # warm-up
    times, toks = [], 0
    for _ in range(reps):
        t = time.perf_counter()
        toks = fn()
        times.append(time.perf_counter() - t)
    return min(times), toks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()

    import torch
    import transformers

    from rlvr_boundary.backends import SamplingParams, get_backend
    from tests.backends.tiny_model import build_tiny_model

    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as d:
        path = build_tiny_model(Path(d) / "m", hidden=256, layers=4, train_steps=16)
        b = get_backend("transformers", model=str(path), batch_size=args.batch_size,
                        num_threads=args.threads)
        prompts = [{"prompt_id": f"p{i}", "prompt": q} for i, q in enumerate(QUESTIONS)]
        params = SamplingParams(max_new_tokens=args.max_new_tokens, seed=0)

        def ours() -> int:
            return sum(r["num_tokens"] for r in b.generate(prompts, args.n, params))

        model, tok = b.model, b.tok
        eos = tok.eos_token_id

        def gen_len(seq) -> int:
            seq = seq.tolist()
            return seq.index(eos) + 1 if eos in seq else len(seq)

        def naive() -> int:
            total = 0
            torch.manual_seed(0)
            for p in prompts:
                ids = torch.tensor([b.encode_prompt(p)])
                for _ in range(args.n):
                    with torch.no_grad():
                        out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                             max_new_tokens=args.max_new_tokens, top_k=0, top_p=1.0,
                                             temperature=1.0, pad_token_id=b.pad_id)
                    total += gen_len(out[0, ids.shape[1]:])
            return total

        def hf_batched() -> int:
            torch.manual_seed(0)
            seqs = [b.encode_prompt(p) for p in prompts for _ in range(args.n)]
            total = 0
            for s in range(0, len(seqs), args.batch_size):
                ids, mask, _ = b._left_pad(seqs[s:s + args.batch_size])
                with torch.no_grad():
                    out = model.generate(ids, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0,
                                         max_new_tokens=args.max_new_tokens, temperature=1.0,
                                         pad_token_id=b.pad_id)
                total += sum(gen_len(o) for o in out[:, ids.shape[1]:])
            return total

        t_ours, n_ours = best(ours, args.reps)
        t_naive, n_naive = best(naive, args.reps)
        t_hf, n_hf = best(hf_batched, args.reps)
    print(f"machine: {platform.machine()} {platform.processor() or ''}, python {platform.python_version()}, "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads), transformers {transformers.__version__}")
    print(f"{len(prompts)} prompts x n={args.n}, {args.max_new_tokens} new tokens, batch {args.batch_size}")
    r_ours, r_naive, r_hf = n_ours / t_ours, n_naive / t_naive, n_hf / t_hf
    print(f"ours (batched, KV cache, exact stats): {n_ours} tokens in {t_ours:.2f} s = {r_ours:,.0f} tokens/s")
    print(f"naive one-at-a-time generate loop:     {n_naive} tokens in {t_naive:.2f} s = {r_naive:,.0f} tokens/s")
    print(f"HF batched generate (no stats):        {n_hf} tokens in {t_hf:.2f} s = {r_hf:,.0f} tokens/s")
    print(f"ratio ours / naive loop: {r_ours / r_naive:.1f}x; ours / HF batched: {r_ours / r_hf:.2f}x")


if __name__ == "__main__":
    main()
