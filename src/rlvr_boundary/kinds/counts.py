"""Result kinds of the count workflows: ``compare``, ``report``, ``price`` and ``plan``.

Dict keys that are model labels are written ``<model>`` in the documentation; a
``float`` may be ``null`` where a number is undefined (JSON has no NaN).
"""

# No "from __future__ import annotations": the declarations are evaluated once, here,
# rather than compiled from strings on every typing lookup.

from typing import Annotated as A
from typing import Any, Literal, TypedDict

from rlvr_boundary.kinds._types import OPTIONAL, open_keys

Floats = list[float]
Ints = list[int]


class NSummary(TypedDict):
    min: A[int, "fewest samples of a prompt"]
    max: A[int, "most samples of a prompt"]
    total: A[int, "samples over all prompts"]


class Crossing(TypedDict):
    k_before: A[int | float, "last budget before the sign change"]
    k_after: A[int | float, "first budget after it"]
    direction: A[Literal["gain_to_loss", "loss_to_gain"], "which way D(k) changes sign"]
    k_continuous: A[float, "the crossing by linear interpolation of D in log k"]


class Band(TypedDict):
    lower: A[Floats, "lower end of the simultaneous band of D(k), per budget"]
    upper: A[Floats, "upper end, per budget"]
    se: A[Floats, "standard error of D(k) per budget (over the sampling unit)"]
    critical_value: A[float, "sup-t critical value (Monte Carlo quantile of the multipliers)"]
    critical_values: A[Floats, "per-budget critical values (small-sample t correction with "
                               "clusters or runs; all equal otherwise)"]
    method: A[str, "how the band was drawn, in words"]
    unit: A[str, "what the multipliers are drawn over: prompts, clusters of prompts, runs"]
    n_clusters: A[int | None, "clusters of prompts (--cluster-by), else null"]
    n_runs: A[dict[str, int], "runs per model: base and rl"]
    level: A[float, "simultaneous coverage, 1 - alpha"]
    small_sample: A[Any, "the small-sample correction applied (t quantiles with few units), "
                         "or null", OPTIONAL]
    df_range: A[list[float] | None, "smallest and largest degrees of freedom of that "
                                    "correction, or null", OPTIONAL]
    too_few_prompts: A[bool, "true when no gain or loss can be supported at this level with "
                             "so few prompts (see min_prompts)", OPTIONAL]
    min_prompts: A[int, "fewest prompts with which an exact sign-flip test can reach the "
                        "level", OPTIONAL]
    no_variance: A[list[int], "indices of budgets where every prompt has the same nonzero "
                              "difference: no band and no verdict there", OPTIONAL]
    warning: A[dict[str, Any] | None, "below the prompts from which the level is validated: "
                                      "prompts, validated_from, level and the coverage "
                                      "measured in simulation; else null", OPTIONAL]


class CoverModel(TypedDict):
    cover: A[Floats, "cover@tau at each tau: the share of problems with c/n >= tau"]
    lower: A[Floats | None, "lower end of the simultaneous DKW band (null: no band)"]
    upper: A[Floats | None, "upper end (null: no band)"]


class CoverDiff(TypedDict):
    diff: A[Floats, "cover@tau of the trained model minus the base's, per tau"]
    lower: A[Floats | None, "lower end of its simultaneous band (null: no band)"]
    upper: A[Floats | None, "upper end (null: no band)"]
    verdict: A[list[Literal["gain", "loss", "unclear"]] | None,
               "per tau: the band above 0, below 0, or neither (null: no band)"]


class CoverCurve(TypedDict):
    taus: A[Floats, "the thresholds tau (0.01 to 1 by 0.01)"]
    level: A[float, "simultaneous coverage of the bands, 1 - alpha"]
    halfwidth: A[float | None, "half-width of each model's band (null: no band)"]
    estimand: A[str, "what the band covers, in words"]
    calibrated: A[bool, "the band's coverage is measured in docs/statistics.md"]
    no_band: A[str | None, "why there is no band (clustered prompts), else null"]
    models: A[dict[str, CoverModel], "per model (<model>): the curve and its band"]
    diff: A[CoverDiff, "trained minus base, with the union-bound band"]


@open_keys
class BootstrapCI(TypedDict):
    n_boot: A[int, "paired-bootstrap resamples"]
    alpha: A[float, "1 - confidence level"]
    seed: A[int, "seed of the resamples"]
    resampled: A[str, "what is resampled: prompts or clusters"]
    k_star: A[dict[str, Any], "ci: interval of k* (null end: beyond the grid); undefined_frac: "
                              "share of resamples without a crossing"]
    price: A[dict[str, Any], "ci: interval of the price; k_ci: of the budget where it occurs"]


class Scorers(TypedDict):
    scorers: A[list[str], "the scorers, named by their verdict column's suffix (math_verify, "
                          "canonical, ...)"]
    primary: A[str | None, "the scorer whose verdicts the main numbers use (--scorer, else the "
                           "one whose verdicts equal the correct column); null when none does"]
    reference: A[str | None, "the scorer the disagreement table compares the others with (the "
                             "primary one, else the first)"]
    comparisons: A[dict[str, dict[str, Any]],
                   "per checkpoint: per_scorer (pass_at_k per model, diff, crossings, k_star, "
                   "price, price_k, band_lower, band_upper, gain_budgets, loss_budgets, "
                   "first_loss_set), pass_at_k_spread, robust (gain_budgets, loss_budgets, "
                   "first_loss_all, loss_any, loss_depends_on_scorer, k_star, k_star_agree, "
                   "price_range), ks, models, n_prompts, options"]
    disagreement: A[dict[str, Any] | None,
                    "by answer type and overall, per scorer against the reference: rows, "
                    "disagree, rate, only_reference, only_other; examples (model, prompt_id, "
                    "sample_idx, gold, answer, both verdicts); null without verdict tallies"]


class CotBlock(TypedDict):
    carried_by: A[list[str], "which of the two models' rollouts carry a cot_correct column"]
    cot_without_answer: A[dict[str, int], "per model that carries it: rows with cot_correct "
                                          "true and correct false on the compared prompts, "
                                          "counted as not CoT-correct (both must hold)"]
    skipped: A[Literal["not_both", "runs"] | None, "why CoT-pass@k was not computed: only one "
                                                   "model (or none) carries the column, or "
                                                   "further runs were given; null when it was"]
    comparison: A[dict[str, Any], "the comparison on the CoT counts c_cot = #(correct AND "
                                  "cot_correct): the keys of compare (pass_at_k, diff, band, "
                                  "verdict_per_k, k_star, price, ...) without verifier_error, "
                                  "extrapolation and cot; absent when skipped", OPTIONAL]
    answer_minus_cot: A[dict[str, Floats], "answer-only pass@k minus CoT-pass@k per model "
                                           "and budget: the share reached by a flawed chain; "
                                           "absent when skipped", OPTIONAL]


class CompareResult(TypedDict):
    """One trained model against its base on a common prompt set."""

    models: A[dict[str, str], "labels of the two models: base and rl"]
    n_prompts: A[int, "prompts compared"]
    n_samples: A[dict[str, NSummary], "samples per prompt of each model (<model>)"]
    ks: A[Ints, "the budget grid k"]
    pass_at_k: A[dict[str, Floats], "unbiased pass@k of each model (<model>), averaged over runs"]
    solved_at_n: A[dict[str, int], "prompts with at least one correct sample, per model"]
    diff: A[Floats, "D(k) = pass@k(rl) - pass@k(base) per budget (a proportion)"]
    crossings: A[list[Crossing], "sign changes of D over the grid (zeros skipped)"]
    n_crossings: A[int, "number of crossings on the grid"]
    crossing_bound: A[int, "bound on the crossings of the plug-in curves (generalized "
                           "Descartes rule, sharpened when the coefficients sum to 0)"]
    crossing_bound_V: A[int, "sign changes V of the exponential-sum coefficients"]
    crossing_bound_note: A[str, "what the bound is a bound of"]
    gain_at_1: A[bool | None, "D(1) > 0 (null when 1 is not a budget)"]
    k_star: A[int | None, "crossover budget: the first k with D(k) < 0"]
    k_star_continuous: A[float | None, "k* by interpolation in log k"]
    price: A[float, "largest loss max(0, -D(k)) over the grid (a proportion)"]
    price_k: A[int | None, "the budget of the price"]
    delta_se: A[float | None, "sampling-efficiency gap pass@K(base) - pass@1(rl)"]
    delta_se_K: A[int | None, "its base budget K"]
    degenerate: A[list[bool], "per budget: no spread of the per-prompt differences (the band "
                              "there is the point D(k))"]
    band: A[Band | None, "the simultaneous band (null with a single prompt)"]
    gain_budgets: A[Ints, "budgets where the band supports a gain"]
    loss_budgets: A[Ints, "budgets where the band supports a loss"]
    inconclusive_budgets: A[Ints, "budgets where it supports neither"]
    first_loss_set: A[list[int | None] | None, "[first k not a supported gain, first supported "
                                              "loss]: where RL first becomes truly worse"]
    first_loss_scope: A[str, "what the first-loss set covers", OPTIONAL]
    certified_crossing: A[bool, "a supported gain followed by a supported loss", OPTIONAL]
    bootstrap_ci: A[BootstrapCI, "paired-bootstrap intervals of k*, price and Delta_SE",
                    OPTIONAL]
    verdict_per_k: A[list[Literal["gain", "loss", "tie", "inconclusive"]],
                     "verdict of the band per budget"]
    gain_run_end: A[int | None, "last budget of the run of supported gains from the first "
                                "budget (what the headline says)"]
    within_prompt_se: A[dict[str, list[float | None]], "within-prompt (sampling) standard error "
                                                       "of each mean curve where n >= 2k"]
    metrics: A[dict[str, Any], "cover@tau, pass^k, G-Pass@k, mG-Pass@k and the pass@k "
                               "posterior of each model (<model>), at the taus listed"]
    cover: A[CoverCurve, "cover@tau over tau (Dragoi et al., arXiv 2510.08325) of both "
                         "models and their difference, with simultaneous DKW bands",
             OPTIONAL]
    verifier_error: A[dict[str, Any], "the band under the verifier's error rates and whether "
                                      "the verdicts survive (--verifier-error)", OPTIONAL]
    extrapolation: A[dict[str, Any], "model-based pass@k and D(k) beyond n with a bootstrap "
                                     "band, beside a power law (--extrapolate)", OPTIONAL]
    sampling_unit: A[dict[str, Any], "how the verdicts move when the band is drawn over "
                                     "clusters or runs instead of prompts (report)", OPTIONAL]
    maj_at_k: A[dict[str, Any], "majority-vote accuracy maj@k beside pass@k (both inputs "
                                "rollout tables with extracted answers): budgets (the grid's "
                                "first and its powers of two up to 16) and the mean over prompts "
                                "of the exact expectation over k-subsets, per model", OPTIONAL]
    scorers: A[Scorers, "scorer sensitivity: the same completions graded by several scorers "
                        "(tables with two or more correct__<scorer> columns)", OPTIONAL]
    cot: A[CotBlock, "CoT-pass@k (Wen et al., arXiv 2506.14245): the same comparison on the "
                     "samples whose answer and chain of thought are both correct, when a "
                     "rollout table carries cot_correct", OPTIONAL]
    inputs: A[dict[str, Any], "the base and rl files and the prompts each lost to "
                              "--intersect (compare)", OPTIONAL]


class Coverage(TypedDict):
    K: A[int, "audit budget"]
    tau: A[float, "a problem is solved at K when pass@K >= tau (1 - zeta)"]
    solved: A[dict[str, int], "problems solved per model"]
    union: A[int, "problems some model solves"]
    intersections: A[list[dict[str, Any]], "every intersection of solved sets (models, count)"]
    table_2x2: A[dict[str, dict[str, int]], "per checkpoint: both, base_only, rl_only, neither"]
    ranked: A[dict[str, dict[str, list[dict[str, Any]]]],
              "per checkpoint: the most regressed and most improved problems (by c/n)"]
    histogram: A[dict[str, Any], "accuracy histograms: edges, labels (0 and 1 apart), counts "
                                 "per model"]


class Support(TypedDict):
    K: A[int, "audit budget"]
    zeta: A[float, "miss probability"]
    epsilon: A[float, "support threshold 1 - zeta^(1/K)"]
    problem: A[dict[str, dict[str, Any]], "per checkpoint: P, E, S, O, SRR, NDR, SDS, NSCR "
                                          "per problem, and the E and S prompts"]
    answer: A[dict[str, dict[str, Any]] | None, "the same per distinct correct answer (null "
                                                "without extracted answers)"]


class AdvisorRow(TypedDict):
    k: A[int, "deployment budget"]
    best: A[str, "model with the largest mean pass@k"]
    pass_at_k: A[float, "its pass@k"]
    runner_up: A[str, "second model", OPTIONAL]
    lead: A[float, "best minus runner-up", OPTIONAL]
    band: A[Floats, "simultaneous band of the lead at k", OPTIONAL]
    tie: A[bool, "every prompt agrees between the two at k", OPTIONAL]
    supported: A[bool, "the band's lower end is above 0", OPTIONAL]


class ReportResult(TypedDict):
    """The audit of a base model and any number of checkpoints (the report page's numbers)."""

    models: A[list[str], "models audited (further runs NAME#runJ excluded)"]
    base: A[str, "the base model"]
    checkpoints: A[list[str], "the other models"]
    n_prompts: A[int, "prompts common to every model"]
    prompt_ids: A[list[str], "those prompts, in order"]
    n_samples: A[dict[str, dict[str, int]], "fewest and most samples per prompt, per model"]
    ks: A[Ints, "the budget grid"]
    K: A[int, "audit budget of coverage and support"]
    zeta: A[float, "support miss probability"]
    pass_at_k: A[dict[str, Floats], "pass@k of every model"]
    dropped: A[dict[str, int], "prompts each model lost to --intersect"]
    comparisons: A[dict[str, CompareResult], "each checkpoint against the base (a compare "
                                             "payload without its inputs)"]
    runs: A[dict[str, list[str]], "further runs of each model (NAME#runJ)"]
    coverage: A[Coverage, "solved sets at K"]
    support: A[Support, "support dynamics (Wu et al., The Invisible Leash, arXiv 2507.14843)"]
    frontier: A[dict[str, Any], "the hard frontier at K: problems no model solves, and per "
                                "checkpoint the 0 -> 1 (gained) and 1 -> 0 (lost) transitions, "
                                "each count with its share and a Wilson interval over prompts "
                                "(calibrated: true, coverage measured in docs/statistics.md)",
                OPTIONAL]
    diversity: A[dict[str, Any] | None, "answer diversity at k (null without answers)"]
    maj_at_k: A[dict[str, Any], "majority-vote accuracy maj@k beside pass@k: budgets "
                                "(the grid's first and its powers of two up to 16) and the mean over "
                                "prompts of the exact expectation over k-subsets, per model "
                                "(when the rollouts carry extracted answers)", OPTIONAL]
    evolution: A[dict[str, Any] | None, "pass@1 and pass@K over training steps (null "
                                        "without step labels)"]
    advisor: A[list[AdvisorRow], "best model per deployment budget"]
    lucky: A[list[dict[str, Any]], "problems a model solves rarely (0 < c/n < lucky_below)"]
    quality: A[dict[str, Any] | None, "quality flags per model and verdict"]
    quality_sampling: A[dict[str, dict[str, int]] | None, "completions the text-derived flags "
                                                          "come from, per model"]
    tokens: A[dict[str, Any] | None, "token statistics per model and verdict"]
    samples_shown: A[list[dict[str, Any]], "the sample texts the page shows (model output, "
                                           "raw)"]
    problems: A[dict[str, dict[str, Any]], "the text of each problem the page lists "
                                           "(<prompt_id>: text cut to 600 characters, cut, "
                                           "and differs when the rollouts gave one id two "
                                           "texts), from --prompts or the rollouts' prompt "
                                           "column; raw user data", OPTIONAL]
    scorers: A[Scorers, "scorer sensitivity (as in compare)", OPTIONAL]
    learning: A[list[dict[str, Any]], "where-learning-landed results carried in", OPTIONAL]
    strategies: A[dict[str, Any], "strategy mixture and minority-only problems (a strategy "
                                  "column)", OPTIONAL]
    provenance: A[dict[str, Any], "inputs (path, format, models, sha256, manifest) and notes"]


class PriceResult(TypedDict):
    """The count-free price diagnostic of rates or of a printed curve."""

    input_kind: A[Literal["rates", "curve"], "two columns of rates, or k and two curves"]
    n_prompts: A[int, "prompts (rates only)", OPTIONAL]
    ks: A[list[int | float], "budgets (rates: the grid; curve: its rows)"]
    pass_at_k: A[dict[str, Floats], "curves of base and rl"]
    diff: A[Floats, "D(k) = rl - base"]
    crossings: A[list[Crossing], "sign changes of D"]
    n_crossings: A[int, "their number"]
    crossing_intervals: A[list[list[int | float]], "(k_before, k_after] of each crossing "
                                                   "(curve only)", OPTIONAL]
    crossing_bound: A[int, "bound on the crossings of the rate curves (rates only)", OPTIONAL]
    crossing_bound_V: A[int, "sign changes V (rates only)", OPTIONAL]
    exponential_sum: A[dict[str, Floats], "q and a of D(k) = sum a_j q_j^k (rates only)",
                       OPTIONAL]
    k_star: A[int | float | None, "first budget with D < 0"]
    price: A[float, "largest loss over the budgets"]
    price_k: A[int | float | None, "its budget"]
    asymptotic_diff: A[float, "limit of D as k -> infinity (rates only)", OPTIONAL]
    note: A[str, "what a printed curve can and cannot say (curve only)", OPTIONAL]
    columns: A[list[str] | None, "the table's header, if any"]
    input: A[str, "where the table came from (a file, <stdin>, pasted table)"]
    labels: A[dict[str, str], "names of the base and rl columns"]


class PlanResult(TypedDict):
    """Samples per prompt that certify the named claims, by simulation from a pilot."""

    pilot: A[dict[str, int], "prompts and samples per prompt of the pilot"]
    prompts: A[int, "prompts of the planned study"]
    claims: A[dict[str, int | None], "gain_at and loss_at"]
    grid: A[Ints, "budgets of the simulated bands"]
    designs: A[list[dict[str, Any]], "per candidate n: power (uniform and allocated) with its "
                                     "Monte Carlo standard error"]
    recommended: A[dict[str, Any] | None, "the smallest design with the power asked, its power "
                                          "re-estimated on fresh simulated studies"]
    unlimited: A[dict[str, Any], "power with unlimited samples per prompt (the prompts' "
                                 "limit)", OPTIONAL]
    reachable: A[bool, "whether unlimited samples reach the power asked", OPTIONAL]
    searched_up_to: A[int, "the largest samples per prompt simulated", OPTIONAL]
    cost: A[dict[str, Any], "estimated peak memory and run time, checked before the run",
            OPTIONAL]
    allocation_by_prompt: A[list[int] | dict[str, Any] | None, "samples per prompt of the "
                                                               "recommended allocated design"]
    model: A[str, "how the simulated truths are drawn from the pilot", OPTIONAL]
    note: A[str, "how to use the plan"]
