"""The registry of result kinds: what every result document the tool writes holds.

Each kind (``compare``, ``report``, ``price``, ...) is declared once, as a typed
payload (a ``TypedDict`` whose fields say their type and meaning, in
:mod:`.counts` and :mod:`.others`) with the command that writes it and the
options it records. From that one declaration:

- :func:`check` validates a document when its envelope is built
  (:func:`rlvr_boundary.io.results.envelope`), before anything is written: a
  payload with a missing, undeclared or mistyped key is a bug and stops the run;
- :func:`json_schema` is the kind's JSON Schema (the envelope and the payload);
- :func:`markdown` is its page in ``docs/results/`` (a test keeps the pages equal
  to it);
- :func:`upgrade` adds to a document of an older schema the keys this version's
  words read, so an old result still draws the same page.

Standard library only: a leaf of the package.
"""

# No "from __future__ import annotations": the declarations are evaluated once, here,
# rather than compiled from strings on every typing lookup.

import json
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from rlvr_boundary.kinds import counts as _c
from rlvr_boundary.kinds import others as _o
from rlvr_boundary.kinds._types import KindError, check_value, rows_of, schema_of

__all__ = ["Kind", "KINDS", "KindError", "check", "json_schema", "markdown", "index_markdown",
           "upgrade", "Envelope", "gain_run_end"]


class Envelope(TypedDict):
    schema_version: Annotated[str, "version of the result schema (major.minor; readers refuse "
                                   "another major)"]
    tool: Annotated[str, "rlvr-boundary"]
    tool_version: Annotated[str, "version of rlvr-boundary that wrote the result"]
    kind: Annotated[str, "the result kind"]
    created: Annotated[str, "when, ISO 8601 in UTC"]
    options: Annotated[dict[str, Any], "the options of the workflow, every field (see below)"]
    versions: Annotated[dict[str, str], "versions of numpy and scipy, and of torch and "
                                        "transformers when the run loaded them (from schema 1.1)"]


@dataclass(frozen=True)
class Kind:
    """One result kind."""

    name: str
    payload: type
    """The TypedDict of the payload."""
    writer: str
    """Who writes it (a command, with the flag or file)."""
    options: str
    """The options dataclass it records (``module:Class``), or a description."""
    about: str
    """One paragraph: what the result is."""


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("compare", _c.CompareResult, "rlvr-boundary compare --json FILE (or --out DIR: "
         "result.json)", "rlvr_boundary.pipelines.compare:CompareOptions",
         "A trained model against its base: exact pass@k of both at every budget, D(k), the "
         "crossings and k*, the crossing bound, the price, Delta_SE, the simultaneous band "
         "with the budgets where a gain or a loss is supported, paired-bootstrap intervals."),
    Kind("report", _c.ReportResult, "rlvr-boundary report (OUT.json beside the page); the "
         "app's report.json", "rlvr_boundary.pipelines.audit:ReportOptions",
         "The audit of a base model and any number of checkpoints: every number the report "
         "page shows, and the sample texts it quotes. rlvr-boundary report --from FILE draws "
         "the page from it alone."),
    Kind("price", _c.PriceResult, "rlvr-boundary price --json FILE; the app's price.json",
         "rlvr_boundary.pipelines.price:PriceOptions",
         "The count-free price diagnostic of the No Free Lunch paper, from two columns of "
         "per-prompt success rates or a printed pass@k curve."),
    Kind("plan", _c.PlanResult, "rlvr-boundary plan --json FILE",
         "rlvr_boundary.pipelines.plan:PlanOptions (its simulation's fields; the input format "
         "is not recorded)",
         "How many samples per prompt certify a named gain or loss with the power asked, by "
         "simulation from pilot counts."),
    Kind("theory-verify", _o.TheoryVerifyResult, "rlvr-boundary theory verify --json FILE",
         "rlvr_boundary.pipelines.theory:TheoryVerifyOptions",
         "The fixed-seed verification suite of the No Free Lunch theory lab."),
    Kind("theory-diagnose", _o.TheoryDiagnoseResult, "rlvr-boundary theory diagnose --json "
         "FILE; the app's theory-diagnose.json", "rlvr_boundary.pipelines.theory:DiagnoseOptions",
         "Free lunch or its Stiemke certificate for a strategy matrix, and its specialization."),
    Kind("theory-frontier", _o.TheoryFrontierResult, "rlvr-boundary theory frontier --json "
         "FILE; the app's theory-frontier.json", "rlvr_boundary.pipelines.theory:FrontierOptions",
         "The price frontier of a strategy matrix over floors tau, the exponential-tilt path, "
         "and the tilt points above the frontier line with the reason."),
    Kind("verify", _o.VerifyResult, "rlvr-boundary verify --json FILE",
         "rlvr_boundary.pipelines.verify:VerifyOptions",
         "Grading a rollout table: totals, statuses, the verifier and its known limits, and "
         "with several backends how often they disagree by answer type."),
    Kind("rft-select", _o.RftResult, "rlvr-boundary rft-select (OUT.summary.json, or "
         "--summary FILE)", "rlvr_boundary.pipelines.rft_select:RftOptions",
         "RFT data selection after the RUC report: how many samples were kept, and why the "
         "others were dropped."),
    Kind("sample", _o.SampleResult, "rlvr-boundary sample --json FILE",
         "rlvr_boundary.pipelines.sample:SampleOptions (as a dict, sampling parameters under "
         "params)",
         "A sampling run: samples drawn now and kept from an interrupted run, shards, speed, "
         "and the entropy match when asked."),
    Kind("entropy-match", _o.EntropyMatchResult, "rlvr-boundary sample --match-entropy-of "
         "ROLLOUTS (entropy_match.json in the output folder)",
         "rlvr_boundary.pipelines.sample:SampleOptions",
         "The temperature at which a model's mean token entropy on the prompts matches the "
         "mean of other rollouts."),
    Kind("learning_landed", _o.LearningResult, "rlvr-boundary score --before CKPT (--learning "
         "FILE); the lab's learning.json", "before, after, template, rows (the texts compared)",
         "Where learning landed: the same texts scored under a checkpoint before RL and after "
         "it, token by token (Deng et al., arXiv 2508.07534)."),
    Kind("lab-run", _o.LabRunResult, "rlvr-boundary lab run (lab_result.json)",
         "rlvr_boundary.lab.config:LabConfig",
         "A run of the RLVR lab; each experiment adds its own numbers (docs/lab.md)."),
    Kind("lab-entropy", _o.LabEntropyResult, "rlvr-boundary lab run --experiment entropy "
         "(entropy.json)", "rlvr_boundary.lab.config:LabConfig",
         "Entropy and support at every checkpoint of the lab, beside the RL log."),
    Kind("monitor-step", _o.MonitorStepResult, "the boundary monitor (steps/step-N.json in "
         "its folder: BoundaryMonitor, the trainer callbacks, rlvr-boundary watch)",
         "rlvr_boundary.monitor.options:MonitorOptions",
         "One look of the boundary monitor at a training step: the policy's samples on the "
         "held-out prompts against the base's, the band at the look's level under the "
         "multiple-look correction, and the alarm rules."),
    Kind("monitor-run", _o.MonitorRunResult, "the boundary monitor (monitor.json in its "
         "folder)", "rlvr_boundary.monitor.options:MonitorOptions",
         "The boundary monitor's summary of a training run: its looks and alarms."),
)}


def check(doc: dict) -> None:
    """Refuse a result document whose kind is unknown or whose payload breaks its declaration.

    Raises
    ------
    KindError
        Naming every key at fault (a bug of the tool, not of its input).
    """
    kind = doc.get("kind")
    if kind not in KINDS:
        raise KindError(f"unknown result kind {kind!r}; known: {', '.join(KINDS)}")
    errors: list[str] = []
    head = {k: doc[k] for k in Envelope.__annotations__ if k in doc}
    check_value(head, Envelope, "envelope", errors)
    payload = {k: v for k, v in doc.items() if k not in Envelope.__annotations__}
    check_value(payload, KINDS[kind].payload, kind, errors)
    if errors:
        raise KindError(f"the {kind} result does not match its declaration: "
                        + "; ".join(errors))


def json_schema(name: str) -> dict:
    """The JSON Schema of a result kind: the envelope and the payload in one object."""
    k = KINDS[name]
    env = schema_of(Envelope)
    pay = schema_of(k.payload)
    env["properties"]["kind"] = {**env["properties"]["kind"], "const": name}
    env["properties"]["tool"] = {**env["properties"]["tool"], "const": "rlvr-boundary"}
    required = [r for r in env["required"] if r != "versions"] + pay["required"]
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema",
           "$id": f"https://rlvr-boundary/results/{name}.schema.json",
           "title": f"rlvr-boundary result: {name}", "description": k.about,
           "type": "object", "properties": {**env["properties"], **pay["properties"]},
           "required": required}
    if "additionalProperties" in pay:
        out["additionalProperties"] = False
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(name: str, options_rows: list[dict] | None = None) -> str:
    """The documentation page of a result kind (``docs/results/<name>.md``).

    ``options_rows`` are the recorded options' rows
    (:func:`rlvr_boundary.options.describe` of the options dataclass), when known.
    """
    k = KINDS[name]
    lines = [f"# Result kind `{name}`", "",
             "<!-- Generated from rlvr_boundary.kinds; edit the declaration, not this page "
             "(python tests/results/docs.py --write). -->", "",
             k.about, "", f"Written by: {k.writer}.", "",
             "Every result holds the envelope (`schema_version`, `tool`, `tool_version`, "
             "`kind`, `created`, `options`, `versions`) and the payload below. A number may "
             "be `null` where it is undefined (JSON has no NaN). `<model>` stands for a "
             "model label. Readers should keep keys they do not know: a minor schema version "
             "adds keys.", "", "## Payload", "", "| key | type | required | meaning |",
             "|---|---|---|---|"]
    for path, tp, req, doc in rows_of(k.payload):
        lines.append(f"| `{path}` | {_cell(tp)} | {'yes' if req else 'no'} | {_cell(doc)} |")
    lines += ["", "## Options", "", f"`options` records `{k.options}`."]
    if options_rows:
        lines += ["", "| field | flag | default | accepted | meaning |", "|---|---|---|---|---|"]
        for r in options_rows:
            flag = f"`{r['flag']}`" if r["flag"] else "-"
            default = "-" if r["default"] is None else f"`{json.dumps(r['default'])}`"
            lines.append(f"| `{r['field']}` | {flag} | {_cell(default)} | "
                         f"{_cell(r['accepted'] or '')} | {_cell(r['help'])} |")
    lines += ["", "## JSON Schema", "", "```json", json.dumps(json_schema(name), indent=1),
              "```", ""]
    return "\n".join(lines)


def index_markdown() -> str:
    """``docs/results/README.md``: every kind, who writes it, and its page."""
    lines = ["# Result kinds", "",
             "<!-- Generated from rlvr_boundary.kinds (python tests/results/docs.py --write). "
             "-->", "",
             "Every JSON file rlvr-boundary writes is a result document: an envelope "
             "(`schema_version`, `tool`, `tool_version`, `kind`, `created`, `options`, "
             "`versions`) and the payload of its kind. The payload is checked against its "
             "kind's declaration before the file is written. Each page lists the keys, their "
             "types and meaning, the options recorded, and the JSON Schema.", "",
             "| kind | written by | page |", "|---|---|---|"]
    for name, k in KINDS.items():
        lines.append(f"| `{name}` | {_cell(k.writer)} | [{name}.md]({name}.md) |")
    return "\n".join(lines) + "\n"


def gain_run_end(res: dict) -> int | None:
    """Last budget of the run of supported gains that starts at the first budget, or None.

    Here, not in the analysis, so that upgrading a schema 1.0 comparison (which lacks it)
    needs nothing but this leaf; the comparison itself calls it too.
    """
    ks = list(res["ks"])
    gains = res.get("gain_budgets") or []
    if not gains or gains[0] != ks[0]:
        return None
    end = gains[0]
    for k in gains[1:]:
        if ks.index(k) != ks.index(end) + 1:
            break
        end = k
    return end


def upgrade(doc: dict) -> dict:
    """A document of an older schema with the keys this version's words read, added in place.

    Schema 1.0 comparisons lack ``gain_run_end`` (the end of the run of supported
    gains from the first budget, which the headline says); it is derived here
    from the comparison's own ``ks`` and ``gain_budgets``, exactly as the
    analysis computes it now.
    """
    if str(doc.get("schema_version", "")).split(".")[:2] != ["1", "0"]:
        return doc
    comparisons = [doc] if doc.get("kind") == "compare" else \
        list((doc.get("comparisons") or {}).values()) if doc.get("kind") == "report" else []
    for c in comparisons:
        if "gain_run_end" not in c and c.get("band") is not None:
            c["gain_run_end"] = gain_run_end(c)
    return doc
