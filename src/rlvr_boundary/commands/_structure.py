"""Flags and loading for clustered prompts and several runs, shared by verbs that draw a band."""

from __future__ import annotations

import argparse


def add_arguments(group: argparse._ArgumentGroup, *, runs: bool = True) -> None:
    """Add ``--cluster-by``, ``--verifier-error``, ``--extrapolate`` (and ``--extrapolate-method``).

    With ``runs``, also ``--rl-run`` and ``--base-run`` (``compare``); a report
    takes further runs as models labelled ``NAME#runJ`` instead.
    """
    group.add_argument("--cluster-by", dest="cluster_by", metavar="FIELD",
                       help="prompts that share FIELD (e.g. source) form a cluster; the band and "
                            "bootstrap then resample clusters. 'id-prefix:SEP' clusters by the id "
                            "up to its last SEP")
    if runs:
        add_run_arguments(group)
    _add_model_arguments(group)


def add_run_arguments(group: argparse._ArgumentGroup) -> None:
    """``--rl-run`` and ``--base-run``: further runs of the two models of ``compare``."""
    group.add_argument("--rl-run", dest="rl_runs", action="append", metavar="FILE", default=[],
                       help="another run of the trained model on the same prompts (training seed "
                            "or sampling run); repeat for more. Curves are averaged over runs and "
                            "the band covers run-to-run variance")
    group.add_argument("--base-run", dest="base_runs", action="append", metavar="FILE", default=[],
                       help="another run of the base model; repeat for more")


def _add_model_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--extrapolate", type=_positive, metavar="K",
                       help="also predict pass@k and D(k) up to budget K beyond the samples "
                            "drawn (a model-based prediction from fitted success-rate "
                            "distributions, with a bootstrap band)")
    group.add_argument("--verifier-error", dest="verifier_error", metavar="FP,FN",
                       type=_rates,
                       help="the verifier's false-positive and false-negative rates, e.g. "
                            "0.02,0.05: the band is also drawn for the true success rates and the "
                            "result says whether the verdicts survive")
    group.add_argument("--extrapolate-method", dest="extrapolate_method", default="beta_mixture",
                       choices=["beta_mixture", "npmle"],
                       help="rate distribution for --extrapolate (beta_mixture)")


def load_runs(args: argparse.Namespace, base, rl) -> tuple[list, dict]:
    """Counts of the extra runs (labelled ``MODEL#run2``, ...) and the ``runs`` mapping."""
    from rlvr_boundary.io.formats import load_model_counts

    extra, runs = [], {"base": [], "rl": []}
    for key, main, files, model in (("base", base, args.base_runs, args.base_model),
                                    ("rl", rl, args.rl_runs, args.rl_model)):
        for j, path in enumerate(files, start=2):
            label = f"{main.model}#run{j}"
            extra.append(load_model_counts(path, model=model, fmt=args.format, label=label))
            runs[key].append(label)
    return extra, runs


def cluster_groups(rule: str | None, aligned, counts: list):
    """``(P,)`` cluster labels for ``aligned`` from the rule, or None without one."""
    from rlvr_boundary.analysis.structure import cluster_groups as groups_of

    return groups_of(rule, aligned.prompt_ids, counts)


def _rates(text: str) -> tuple[float, float]:
    try:
        fp, fn = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected FP,FN such as 0.02,0.05, got {text!r}") from None
    if not (0 <= fp < 1 and 0 <= fn < 1 and fp + fn < 1):
        raise argparse.ArgumentTypeError("rates must lie in [0, 1) with FP + FN < 1")
    return fp, fn


def print_extras(res: dict, console) -> None:
    """Console lines for clusters, runs, verifier error and extrapolation, when asked for."""
    from rlvr_boundary.report import words as W

    lines = [W.band_unit_sentence(res)]
    if res.get("verifier_error"):
        lines.append(W.verifier_error_sentence(res["verifier_error"]))
    if res.get("extrapolation"):
        lines.append(W.extrapolation_sentence(res["extrapolation"]))
    for line in lines:
        if line:
            console.print(line)


def _positive(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a budget such as 1024, got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError("the budget must be >= 1")
    return k
