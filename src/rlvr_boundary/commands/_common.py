"""Flags shared by ``compare`` and ``report``, with defaults taken from the options dataclasses."""

from __future__ import annotations

import argparse

# The options module imports nothing heavy: building the parser stays fast.
from rlvr_boundary.analysis.options import CompareOptions

D = CompareOptions


def add_input_flags(group: argparse._ArgumentGroup) -> None:
    """--format, --intersect, --label and the adapter choices."""
    group.add_argument("--format", default=D.format, metavar="NAME",
                       help="input format: count-jsonl, count-table, rollouts, lm-eval, "
                            "lighteval, verl, limit-of-rlvr, vllm-jsonl (default: detect)")
    group.add_argument("--label", action="append", default=[], metavar="PATH=NAME",
                       help="model label of a single-model input file; the path matches as "
                            "given or resolved (repeatable)")
    group.add_argument("--intersect", action="store_true", default=D.intersect,
                       help="keep only prompts present for every model (else differing sets "
                            "are an error)")
    group.add_argument("--lm-eval-filter", metavar="NAME", default=D.lm_eval_filter,
                       help="lm-evaluation-harness filter to read (default: the first "
                            "non-majority filter in the file)")
    group.add_argument("--lm-eval-metric", metavar="NAME", default=D.lm_eval_metric,
                       help="lm-evaluation-harness per-document metric (default: exact_match, "
                            "acc, ... whichever is present)")
    group.add_argument("--lighteval-metric", metavar="NAME", default=D.lighteval_metric,
                       help="lighteval metric (default: a sampling metric such as avg@n, else "
                            "a 0/1 match)")
    group.add_argument("--scorer", metavar="NAME", default=D.scorer,
                       help="grade the main analysis with the verdict column correct__NAME of "
                            "tables graded by several backends, e.g. canonical (default: the "
                            "correct column)")
    group.add_argument("--verl-step", type=int, metavar="STEP", default=D.verl_step,
                       help="verl validation step to read from a directory of dumps "
                            "(default: every step, one model each)")


def add_stat_flags(group: argparse._ArgumentGroup) -> None:
    """--ks, --bootstrap, --alpha, --seed."""
    group.add_argument("--ks", metavar="GRID", default=D.ks,
                       help="budgets: '1-128', '1,2,4,8' or 'pow2' (default: 1 to the smallest n)")
    group.add_argument("--bootstrap", type=int, default=D.bootstrap, metavar="B",
                       help=f"Gaussian multipliers of the band and paired-bootstrap resamples "
                            f"(default {D.bootstrap})")
    group.add_argument("--alpha", type=float, default=D.alpha,
                       help=f"1 - confidence level (default {D.alpha})")
    group.add_argument("--seed", type=int, default=D.seed,
                       help=f"random seed (default {D.seed})")


def compare_options(args: argparse.Namespace, labels: dict) -> CompareOptions:
    """The validated :class:`CompareOptions` of parsed flags."""
    return CompareOptions(
        ks=args.ks, bootstrap=args.bootstrap, alpha=args.alpha, seed=args.seed,
        K_se=getattr(args, "K_se", None), intersect=args.intersect, format=args.format,
        labels=labels, lm_eval_filter=args.lm_eval_filter, lm_eval_metric=args.lm_eval_metric,
        lighteval_metric=args.lighteval_metric, verl_step=args.verl_step,
        cluster_by=getattr(args, "cluster_by", None), rl_runs=tuple(getattr(args, "rl_runs", ())),
        base_runs=tuple(getattr(args, "base_runs", ())),
        extrapolate=getattr(args, "extrapolate", None),
        extrapolate_method=getattr(args, "extrapolate_method", "beta_mixture"),
        verifier_error=getattr(args, "verifier_error", None),
        scorer=getattr(args, "scorer", None))
