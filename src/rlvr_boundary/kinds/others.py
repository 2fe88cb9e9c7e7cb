"""Result kinds of the theory lab, grading, sampling and the RLVR lab.

``theory-verify``, ``theory-diagnose``, ``theory-frontier``; ``verify`` and
``rft-select``; ``sample``, ``entropy-match`` and ``learning_landed``; ``lab-run``.
"""

# No "from __future__ import annotations": the declarations are evaluated once, here,
# rather than compiled from strings on every typing lookup.

from typing import Annotated as A
from typing import Any, Literal, TypedDict

from rlvr_boundary.kinds._types import OPTIONAL, open_keys

Floats = list[float]

# --------------------------------------------------------------------------- theory


class Claim(TypedDict):
    claim: A[str, "the claim, in words"]
    kind: A[Literal["theorem", "anchor", "measured"], "a theorem must pass on every instance; "
                                                     "a measured property is reported as found"]
    instances: A[int, "instances checked"]
    figure: A[str, "what was found, with counts"]
    status: A[Literal["PASS", "FAIL", "MEASURED"], "the verdict"]
    details: A[dict[str, Any], "counterexamples and numbers behind the figure"]
    seconds: A[float, "time taken"]


class TheoryVerifyResult(TypedDict):
    """Every claim of the No Free Lunch suite on fixed seeds."""

    claims: A[list[Claim], "one row per claim, in order"]
    passed: A[int, "claims with PASS"]
    failed: A[int, "claims with FAIL"]


class TheoryDiagnoseResult(TypedDict):
    """Is there a free lunch in a strategy matrix? The direction, or the Stiemke certificate."""

    strategies: A[list[str], "strategy names (rows)"]
    prompts: A[list[str], "prompt ids (columns)"]
    pi0: A[Floats, "prior weights of the strategies"]
    free_lunch: A[bool, "a direction d (sum 0) raises some prompts and lowers none"]
    direction: A[Floats | None, "that direction d (null without a free lunch)"]
    prompt_change: A[Floats | None, "F^T d: each prompt's change of success per unit step"]
    max_step: A[float | None, "how far from pi0 the step along d can go before a weight "
                              "hits 0"]
    weights: A[Floats | None, "Stiemke certificate: strictly positive prompt weights that "
                              "equalize every strategy (null with a free lunch)"]
    c: A[float | None, "the equal weighted fitness of every strategy under those weights"]
    exclusive: A[bool, "every strategy has a prompt only it solves"]
    exclusive_prompts: A[list[list[int]], "those prompts, per strategy"]
    dominance_margin: A[float | None, "margin of our dominant-specialization condition (> 0: "
                                      "it holds)"]
    dominant: A[bool, "the dominance condition holds"]


class FrontierPoint(TypedDict):
    gain: A[float, "pass@1 gain over pi0 (a proportion)"]
    price: A[float, "worst plug-in pass@k loss over the budgets (a proportion)"]
    price_k: A[float | None, "its budget (null when nothing is lost)"]
    floor: A[float, "the smallest p_x / p_x(pi0) over prompts"]
    pi: A[Floats, "the mixture"]
    tau: A[float, "the floor imposed (frontier points)", OPTIONAL]
    beta: A[float, "the tilt's inverse temperature (tilt points)", OPTIONAL]


class AboveFrontier(TypedDict):
    index: A[int, "index of the tilt point"]
    beta: A[float, "its beta"]
    floor: A[float, "its floor"]
    excess: A[float, "how far its gain lies above the drawn frontier line"]
    reason: A[Literal["floor grid", "floor, not price"], "why (docs/theory.md)"]
    lp_gain: A[float, "the LP's gain at the tilt point's own floor"]
    lp_price: A[float, "the LP's price there"]


class TheoryFrontierResult(TypedDict):
    """The price frontier over floors tau and the exponential-tilt path of a strategy matrix."""

    strategies: A[list[str], "strategy names"]
    prompts: A[list[str], "prompt ids"]
    pi0: A[Floats, "prior weights"]
    frontier: A[list[FrontierPoint], "the LP's best pass@1 gain at each floor tau"]
    tilt_path: A[list[FrontierPoint], "the exponential tilt pi_beta at increasing beta"]
    tilt_above_frontier: A[list[AboveFrontier], "tilt points above the frontier line, and why"]
    frontier_at_floors: A[list[FrontierPoint], "the frontier at every grid floor and every "
                                               "tilt point's own floor (the theorem's "
                                               "comparison)"]


# --------------------------------------------------------------------------- grading


@open_keys
class VerifyResult(TypedDict):
    """Grading a rollout table: totals, statuses and, with several backends, disagreement."""

    rows: A[int, "completions graded"]
    correct: A[int, "completions graded correct"]
    statuses: A[dict[str, int], "completions per verify_status"]
    verifier: A[str, "the verifier's name and version"]
    seconds: A[float, "time taken", OPTIONAL]
    known_limits: A[dict[str, list[str]], "known limits of each math backend", OPTIONAL]
    backends: A[dict[str, dict[str, Any]], "per backend: label and correct completions "
                                           "(several backends)", OPTIONAL]
    disagreement: A[dict[str, Any], "disagreement with the reference backend by answer type, "
                                    "with examples (several backends)", OPTIONAL]
    isolation: A[dict[str, Any], "what isolated the code runs (code)", OPTIONAL]
    check_modes: A[dict[str, int], "code: completions per check_mode (outside: the verdict "
                                   "made outside the program's process; in-process)",
                   OPTIONAL]
    already_complete: A[bool, "the output was finished before: nothing graded", OPTIONAL]
    ray: A[dict[str, Any], "graded on Ray: runner, workers, block rows, datasets and the "
                           "repeated results ignored", OPTIONAL]
    output: A[str, "the graded table"]


class RftResult(TypedDict):
    """RFT data selection: what was kept and why the rest was dropped."""

    input: A[str, "the rollout table read"]
    output: A[str, "the selected rows"]
    n_input: A[int, "samples read"]
    n_selected: A[int, "samples selected"]
    n_positive_selected: A[int, "correct ones"]
    n_negative_selected: A[int, "incorrect ones"]
    shortfall: A[int, "samples short of the budget"]
    drops: A[dict[str, int], "samples dropped per reason, in the order the rules apply"]
    rank_column: A[str | None, "the column positives are ranked by (null: random)"]


# --------------------------------------------------------------------------- models


class EntropyMatchResult(TypedDict):
    """The temperature at which a model's mean token entropy matches a target."""

    temperature: A[float, "the temperature found"]
    entropy: A[float, "mean token entropy there (nats)"]
    target: A[float, "the target entropy"]
    converged: A[bool, "within tolerance of the target"]
    trace: A[list[dict[str, float]], "every probe: temperature, entropy"]
    samples_per_probe: A[int, "samples drawn per probe"]
    target_rollouts: A[str, "the rollouts whose entropy was matched"]


class SampleResult(TypedDict):
    """A sampling run: how many samples, shards, how fast, and what was resumed."""

    samples: A[int, "samples of the run"]
    generated_now: A[int, "drawn by this invocation"]
    resumed_from: A[int, "kept from an earlier, interrupted invocation"]
    shards: A[int, "shards of the output directory"]
    seconds: A[float, "time spent sampling"]
    samples_per_second: A[float | None, "speed"]
    tokens_generated_now: A[int, "tokens drawn by this invocation"]
    tokens_per_second: A[float | None, "speed in tokens"]
    without_token_summaries: A[int, "samples drawn now with no token summaries (entropy_mean "
                                    "NaN): the server returned no logprobs"]
    prompts: A[int, "prompts"]
    n: A[int, "samples per prompt"]
    entropy_match: A[EntropyMatchResult | None, "the entropy match, when asked"]


@open_keys
class LearningResult(TypedDict):
    """Where learning landed: the same texts scored before and after RL, token by token."""

    analysis: A[str, "learning_landed"]
    description: A[str, "what was compared, in words"]
    definitions: A[dict[str, str], "the quantities"]
    labels: A[dict[str, str], "before and after"]
    settings: A[dict[str, Any], "eps, thresholds, position bins, perplexity groups, top, "
                                "min_count"]
    texts: A[int, "texts compared"]
    tokens: A[int, "tokens compared"]
    barely_moved: A[dict[str, float], "share of tokens with |dp| <= threshold, per threshold"]
    overall: A[dict[str, Any], "mean dlogp, |dp|, shares up/down/barely moved, dH"]
    by_category: A[dict[str, dict[str, Any]], "the same per kind of token"]
    by_position: A[list[dict[str, Any]], "the same per relative-position bin"]
    by_ppl_group: A[list[dict[str, Any]], "the same per perplexity group of the text"]
    entropy_fell_most: A[list[dict[str, Any]], "tokens whose next-token entropy fell most"]
    dlogp_histogram: A[dict[str, Any], "histogram of dlogp"]
    models: A[dict[str, Any], "the two backends' descriptions", OPTIONAL]


# --------------------------------------------------------------------------- the lab


@open_keys
class LabRunResult(TypedDict):
    """A run of the RLVR lab; each experiment adds its own numbers."""

    experiment: A[str, "which experiment ran"]


class LabEntropyResult(TypedDict):
    """Experiment 4 of the lab: entropy and support at every checkpoint (entropy.json)."""

    K: A[int, "the audit budget"]
    diversity_k: A[int | None, "budget of the answer entropy"]
    rows: A[list[dict[str, Any]], "the base, then each checkpoint by step: pass@1, pass@K, "
                                  "token entropy (all, correct, incorrect), log-PPL, entropy "
                                  "by position, answer and strategy entropy, P/E/S/O"]
    training: A[list[dict[str, Any]], "the RL log: step, reward, entropy"]


# --------------------------------------------------------------------------- the monitor


@open_keys
class MonitorStepResult(TypedDict):
    """One look of the boundary monitor at a training step (``steps/step-N.json``)."""

    step: A[int, "the training step"]
    look: A[int, "the order of the look (1 = first); each look spends its own level"]
    labels: A[dict[str, str], "model labels: base and policy (step-N)"]
    n_prompts: A[int, "held-out prompts in the look"]
    comparison: A[dict[str, Any], "the pairwise comparison of the look's samples against the "
                                  "base's (the compare result's payload)"]
    alpha_look: A[float, "the level this look spends under the correction"]
    correction: A[str, "how the level is spread over looks: bonferroni, spending, open, none"]
    looks: A[int | None, "the scheduled number of looks the correction spreads over"]
    rule_band: A[dict[str, Any] | None, "the band at the look's level (null without band "
                                        "rules): lower, upper, critical value, method, gain "
                                        "and loss budgets"]
    rules: A[list[dict[str, Any]], "every alarm rule with its value and whether it fired"]
    fired: A[list[dict[str, Any]], "the rules that fired at this look"]
    coverage: A[dict[str, Any], "problems solved at the audit budget by base, policy, both"]
    support: A[dict[str, Any], "support kept, shrunk and gained against the base"]
    zero_variance_share: A[float | None, "share of prompts whose samples all agree"]
    entropy_mean: A[float | None, "mean token entropy of the look's samples, when recorded"]
    samples: A[dict[str, Any], "where the look's samples are stored and who drew them"]
    metrics: A[dict[str, float | None], "the boundary/... scalars logged to the trainer"]


@open_keys
class MonitorRunResult(TypedDict):
    """The boundary monitor's summary of a run (``monitor.json``)."""

    looks: A[list[dict[str, Any]], "every look: step, order, level spent, metrics, its file"]
    alarms: A[list[dict[str, Any]], "every rule that fired, with step and look, in step order"]
    first_alarm: A[dict[str, Any] | None, "the first alarm, or null"]
    base: A[dict[str, Any], "where the base's samples came from"]
    n_prompts: A[int, "held-out prompts"]
