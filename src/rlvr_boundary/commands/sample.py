"""``rlvr-boundary sample``: draw n samples per prompt from a checkpoint (resumable)."""

from __future__ import annotations

import argparse


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """Backend options shared by ``sample`` and ``score``."""
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=["transformers", "vllm", "openai", "ray"],
                   default="transformers", help="engine (transformers)")
    g.add_argument("--device", default="cpu", help="transformers/vllm device (cpu)")
    g.add_argument("--dtype", default="auto", help="weights dtype: auto, float32, bfloat16, ... (auto)")
    g.add_argument("--batch-size", type=int, default=16,
                   help="sequences decoded together by the transformers backend (16)")
    g.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: torch's choice)")
    g.add_argument("--base-url", default=None,
                   help="openai: server URL, e.g. http://127.0.0.1:8000/v1")
    g.add_argument("--served-model", default=None,
                   help="openai: model name the server knows (default: --model)")
    g.add_argument("--concurrency", type=int, default=8, help="openai: requests in flight (8)")
    g.add_argument("--request-timeout", type=float, default=120.0,
                   help="openai: seconds per request (120)")
    g.add_argument("--ray-inner", default="transformers", choices=["transformers", "vllm"],
                   help="ray: backend each Ray worker runs (transformers)")
    g.add_argument("--ray-workers", type=int, default=2, help="ray: worker actors (2)")
    g.add_argument("--ray-address", default=None, help="ray: cluster address (default: local)")


def build_backend(args: argparse.Namespace):
    from rlvr_boundary.backends import get_backend

    if args.backend == "transformers":
        return get_backend("transformers", model=args.model, device=args.device, dtype=args.dtype,
                           batch_size=args.batch_size, num_threads=args.threads)
    if args.backend == "vllm":
        return get_backend("vllm", model=args.model, dtype=args.dtype)
    if args.backend == "openai":
        return get_backend("openai", base_url=args.base_url, model=args.served_model or args.model,
                           concurrency=args.concurrency, timeout=args.request_timeout)
    inner = {"model": args.model, "dtype": args.dtype}
    if args.ray_inner == "transformers":
        inner.update(device=args.device, batch_size=args.batch_size, num_threads=args.threads)
    return get_backend("ray", inner=args.ray_inner, inner_kwargs=inner,
                       num_workers=args.ray_workers, address=args.ray_address)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sample", help="draw n samples per prompt from a model (sharded, resumable)",
        description="Draws n samples per prompt with the chosen backend and writes them as a "
                    "directory of Parquet shards in the canonical rollout schema, with the token "
                    "summaries (entropy, branching factor, inverse Simpson, log-PPL, entropy by "
                    "position) and a manifest of every setting. Each sample has its own seed, "
                    "derived from --seed, the prompt id and the sample index, so rerunning the "
                    "same command after an interruption (even SIGKILL) finishes the run with no "
                    "duplicated and no lost samples.")
    p.add_argument("--model", required=True, metavar="PATH",
                   help="Hugging Face model folder (or the served model name with --backend openai)")
    p.add_argument("--prompts", required=True, metavar="FILE",
                   help="JSONL or CSV of prompts: an id (prompt_id, id, unique_id, ...) and a text "
                        "(prompt, problem, question, ...)")
    p.add_argument("--n", type=int, required=True, help="samples per prompt")
    p.add_argument("--out", required=True, metavar="DIR", help="output shard directory")
    p.add_argument("--template", choices=["plain", "chat", "qwen-boxed"], default="plain",
                   help="prompt template (plain)")
    p.add_argument("--label", default=None,
                   help="value of the 'model' column (default: the model folder's name)")
    p.add_argument("--id-field", default=None, help="id field of the prompt file")
    p.add_argument("--prompt-field", default=None, help="text field of the prompt file")
    s = p.add_argument_group("sampling")
    s.add_argument("--temperature", type=float, default=1.0, help="(1.0; 0 = greedy)")
    s.add_argument("--top-p", type=float, default=1.0, help="(1.0 = off)")
    s.add_argument("--top-k", type=int, default=0, help="(0 = off)")
    s.add_argument("--max-new-tokens", type=int, default=256, help="(256)")
    s.add_argument("--stop", action="append", default=[], metavar="STRING",
                   help="stop string (repeatable)")
    s.add_argument("--seed", type=int, default=0, help="run seed (0)")
    s.add_argument("--logprobs", type=int, default=0, metavar="K",
                   help="keep the top-K logprobs of every step (0 = summaries only)")
    s.add_argument("--logprobs-mode", choices=["raw", "processed"], default="raw",
                   help="summaries of the model's distribution (raw) or of the sampled one "
                        "after temperature/top-k/top-p (processed)")
    s.add_argument("--token-arrays", action="store_true",
                   help="keep token ids and their logprobs in every row")
    s.add_argument("--position-bins", type=int, default=10,
                   help="relative-position bins of entropy_bins (10)")
    s.add_argument("--match-entropy-of", metavar="ROLLOUTS", default=None,
                   help="first find the temperature at which this model's mean token entropy on the "
                        "prompts equals the mean entropy_mean of ROLLOUTS (e.g. the RL model's "
                        "samples), then sample at it (--temperature is ignored)")
    s.add_argument("--match-n", type=int, default=4,
                   help="samples per prompt for each temperature probe (4)")
    s.add_argument("--shard-size", type=int, default=256,
                   help="samples per shard, the unit of resumption (256)")
    add_backend_args(p)
    p.add_argument("--json", metavar="FILE", help="also write the run summary as a result JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlvr_boundary.backends.base import SamplingParams
    from rlvr_boundary.backends.runner import SampleOptions, _sha256_file, read_prompts, sample_run
    from rlvr_boundary.console import console
    from rlvr_boundary.commands._progress import sample_progress

    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k,
                            max_new_tokens=args.max_new_tokens, stop=tuple(args.stop),
                            seed=args.seed, logprobs=args.logprobs,
                            logprobs_mode=args.logprobs_mode, token_arrays=args.token_arrays,
                            position_bins=args.position_bins)
    label = args.label or Path(str(args.model).rstrip("/")).name
    opts = SampleOptions(n=args.n, params=params, template=args.template, label=label,
                         shard_size=args.shard_size)
    from rlvr_boundary.io.outputs import check_outputs

    check_outputs({"--json": args.json}, [args.prompts, args.match_entropy_of],
                  folders={"--out": args.out})
    prompts = read_prompts(args.prompts, args.id_field, args.prompt_field)
    backend = build_backend(args)
    matched = None
    if args.match_entropy_of:
        from dataclasses import replace

        from rlvr_boundary.backends.base import render_prompt
        from rlvr_boundary.backends.runner import entropy_matched_temperature, mean_entropy_of

        target = mean_entropy_of(args.match_entropy_of)
        payload = [{"prompt_id": p["prompt_id"], **render_prompt(args.template, p["question"])}
                   for p in prompts]
        matched = entropy_matched_temperature(backend, payload, target, params, n=args.match_n)
        matched["target_rollouts"] = str(args.match_entropy_of)
        console.print(f"entropy matched: temperature {matched['temperature']:.3f} gives "
                      f"{matched['entropy']:.4f} nats (target {target:.4f})")
        params = replace(params, temperature=round(matched["temperature"], 4))
        opts = SampleOptions(n=args.n, params=params, template=args.template, label=label,
                             shard_size=args.shard_size)
    try:
        with sample_progress("sampling", "samples") as (advance, set_total):
            summary = sample_run(backend, prompts, args.out, opts,
                                 prompts_hash=_sha256_file(Path(args.prompts)),
                                 progress=advance, total=set_total)
    finally:
        backend.close()
    rate = summary["samples_per_second"]
    console.print(f"{summary['samples']} samples ({len(prompts)} prompts x {args.n}) in "
                  f"{summary['shards']} shards; drew {summary['generated_now']} now"
                  + (f" at {rate:.1f} samples/s" if rate else "")
                  + (f", {summary['resumed_from']} kept from an earlier run"
                     if summary["resumed_from"] else ""))
    console.print(f"wrote {args.out}/")
    if matched is not None:
        import json

        from rlvr_boundary.io.atomic import atomic_open

        with atomic_open(Path(args.out) / "entropy_match.json", "w") as fh:
            json.dump(matched, fh, indent=1)
    if args.json:
        from rlvr_boundary.io.results import write_result

        write_result(args.json, "sample", opts.to_dict(), {**summary, "entropy_match": matched})
    return 0
