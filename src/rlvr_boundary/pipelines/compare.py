"""The compare workflow: a base model's and a trained model's results in, one result out.

:func:`run` is the whole of ``rlvr-boundary compare`` between parsing and
printing, and what the app and the library call:

1. check the outputs before any work, detect and read both inputs (any
   format, one model each) and the further runs (``--rl-run``, ``--base-run``);
2. choose the scorer when the inputs carry several scorers' verdicts;
3. align the prompts (``--intersect``), cluster them (``--cluster-by``);
4. compute the comparison (:func:`rlvr_boundary.analysis.pairwise.compare_aligned`)
   and the scorer-sensitivity block;
5. build the ``compare`` result document (validated against its kind) and
   write it: the JSON file(s), and with an output folder ``curves.csv`` and the
   figures, both drawn from the document alone.

The options are :class:`CompareOptions`: the dataclass *is* the command line
(:mod:`rlvr_boundary.options`), and ``rlvr-boundary report`` reuses it for its
pairwise part. Heavy imports sit inside :func:`run`: importing this module (as
``rlvr-boundary --help`` does) loads no numeric library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlvr_boundary.core import grid as G
from rlvr_boundary.errors import InputError
from rlvr_boundary.io.adapters import FORMATS, Choice
from rlvr_boundary.options import check, option

__all__ = ["CompareOptions", "MAX_BOOTSTRAP", "CURVES_HEADER", "run", "write_curves_csv",
           "parse_rates", "parse_labels"]

#: Largest bootstrap / multiplier count accepted (its arrays take 8 bytes per draw).
MAX_BOOTSTRAP = 1_000_000

#: Columns of ``curves.csv``.
CURVES_HEADER = ["k", "base_pass_at_k", "rl_pass_at_k", "diff", "band_lower", "band_upper",
                 "verdict"]


def parse_rates(text: str) -> tuple[float, float]:
    """``"0.02,0.05"`` -> ``(0.02, 0.05)``: a verifier's false-positive and false-negative rates."""
    try:
        fp, fn = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"expected FP,FN such as 0.02,0.05, got {text!r}") from None
    check_rates(fp, fn)
    return fp, fn


def check_rates(fp: float, fn: float) -> None:
    """A verifier's error rates must lie in [0, 1) with FP + FN < 1 (else no signal is left)."""
    if not (0 <= fp < 1 and 0 <= fn < 1 and fp + fn < 1):
        raise InputError("--verifier-error rates must lie in [0, 1) with FP + FN < 1")


def parse_labels(specs) -> dict[str, str]:
    """``["PATH=NAME", ...]`` (or a dict already) -> ``{path: name}``."""
    if isinstance(specs, dict):
        return dict(specs)
    out: dict[str, str] = {}
    for spec in specs or ():
        if not isinstance(spec, str) or "=" not in spec:
            raise InputError(f"--label needs PATH=NAME, got {spec!r}", field="label")
        path, name = spec.rsplit("=", 1)
        if not name:
            raise InputError(f"--label {spec!r} gives an empty name", field="label")
        out[path] = name
    return out


def _adapter_option(fmt: str, key: str):
    """The option that sets an adapter's choice, declared by the format registry."""
    c: Choice = next(c for c in FORMATS[fmt].choices if c.key == key)
    return option(None, help=c.help, metavar=c.metavar, kind=c.kind, group="inputs",
                  low=0 if c.kind == "int" else None)


def _format_names() -> tuple[str, ...]:
    return ("auto", *FORMATS)


@dataclass
class CompareOptions:
    """Options of a base-vs-RL comparison (``rlvr-boundary compare``; recorded in every result).

    Declared once here: each field is a flag of ``compare`` (and, but for the
    runs, of ``report``), validated when the object is built, by whoever builds
    it. ``grid`` is derived from ``ks``. The input fields (format, labels,
    adapter choices) say how the files were read, so a result records
    everything needed to reproduce it.
    """

    ks: str | None = option(None, metavar="GRID", group="statistics",
                            help="budgets: '1-128', '1,2,4,8' or 'pow2' (default: 1 to the "
                                 "smallest n)")
    bootstrap: int = option(4000, metavar="B", group="statistics", low=2, high=MAX_BOOTSTRAP,
                            what=f"an integer >= 2 and at most {MAX_BOOTSTRAP:,}",
                            help="Gaussian multipliers of the band and paired-bootstrap resamples")
    alpha: float = option(0.05, group="statistics", low=0, high=1, low_open=True,
                          high_open=True, help="1 - confidence level")
    seed: int = option(0, group="statistics", low=0, high=2**63 - 1,
                       what="an integer from 0 to 2**63 - 1", help="random seed")
    K_se: int | None = option(None, metavar="K", group="statistics", low=1,
                              help="base budget of the sampling-efficiency gap pass@K(base) - "
                                   "pass@1(RL) (default 256, or the largest k)")
    intersect: bool = option(False, group="inputs",
                             help="keep only prompts present for every model (else differing "
                                  "sets are an error)")
    format: str = option("auto", metavar="NAME", group="inputs", choices=_format_names,
                         help="input format (default: detect); one of "
                              + ", ".join(FORMATS))
    labels: dict = option(default_factory=dict, flag="--label", kind="list",
                          metavar="PATH=NAME", group="inputs",
                          help="model label of a single-model input file; the path matches "
                               "as given or resolved (repeatable)")
    lm_eval_filter: str | None = _adapter_option("lm-eval", "filter")
    lm_eval_metric: str | None = _adapter_option("lm-eval", "metric")
    lighteval_metric: str | None = _adapter_option("lighteval", "metric")
    verl_step: int | None = _adapter_option("verl", "step")
    cluster_by: str | None = option(None, metavar="FIELD", group="statistics",
                                    help="prompts that share FIELD (e.g. source) form a "
                                         "cluster; the band and bootstrap then resample "
                                         "clusters. 'id-prefix:SEP' clusters by the id up to "
                                         "its last SEP")
    rl_runs: tuple[str, ...] = option((), flag="--rl-run", metavar="FILE", group="statistics",
                                      help="another run of the trained model on the same "
                                           "prompts (training seed or sampling run); repeat "
                                           "for more. Curves are averaged over runs and the "
                                           "band covers run-to-run variance")
    base_runs: tuple[str, ...] = option((), flag="--base-run", metavar="FILE",
                                        group="statistics",
                                        help="another run of the base model; repeat for more")
    extrapolate: int | None = option(None, metavar="K", group="statistics", low=1,
                                     help="also predict pass@k and D(k) up to budget K beyond "
                                          "the samples drawn (a model-based prediction from "
                                          "fitted success-rate distributions, with a "
                                          "bootstrap band)")
    extrapolate_method: str = option("beta_mixture", group="statistics",
                                     choices=("beta_mixture", "npmle"),
                                     help="rate distribution for --extrapolate")
    verifier_error: tuple[float, float] | None = option(
        None, metavar="FP,FN", group="statistics", kind="text", parse=parse_rates,
        help="the verifier's false-positive and false-negative rates, e.g. 0.02,0.05: the "
             "band is also drawn for the true success rates and the result says whether "
             "the verdicts survive")
    scorer: str | None = option(None, metavar="NAME", group="inputs",
                                help="grade the main analysis with the verdict column "
                                     "correct__NAME of tables graded by several backends, "
                                     "e.g. canonical (default: the correct column)")
    grid: list | str | None = field(init=False, default=None)
    """Derived: the parsed ``ks`` (a sorted list, "pow2", or None for 1..n)."""

    def __post_init__(self) -> None:
        self.labels = parse_labels(self.labels)
        self.rl_runs, self.base_runs = tuple(self.rl_runs), tuple(self.base_runs)
        check(self)
        if self.verifier_error is not None:
            fp, fn = self.verifier_error
            check_rates(fp, fn)
            self.verifier_error = (float(fp), float(fn))
        if self.scorer is not None and not (self.scorer and all(
                ch.isalnum() or ch in "_-." for ch in self.scorer)):
            raise InputError(f"--scorer must name a verdict column's scorer, such as "
                             f"math-verify or canonical, got {self.scorer!r}")
        try:
            self.grid = G.parse_grid(self.ks)
        except G.GridError as exc:
            raise InputError(f"--ks: {exc}") from None

    def adapter_choices(self) -> dict[str, dict]:
        """Keyword arguments of each adapter's ``read``, by format name (from the registry)."""
        return {name: {c.key: getattr(self, c.field) for c in f.choices}
                for name, f in FORMATS.items() if f.choices}


def run(base: str | Path, rl: str | Path, opts: CompareOptions, *, base_model: str | None = None,
        rl_model: str | None = None, json_path: str | Path | None = None,
        out_dir: str | Path | None = None, pdf: bool = False, warn=None) -> dict:
    """Compare a trained model with its base; write and return the ``compare`` result document.

    Parameters
    ----------
    base, rl
        Result files of the base and the trained model (any input format).
    opts
        Validated options.
    base_model, rl_model
        Model to take from a file that holds several.
    json_path
        Where to write the result document (None: not written there).
    out_dir
        Folder for ``result.json``, ``curves.csv`` and the figures (PNG; ``pdf``:
        also PDF). The files are drawn from the document read back from
        ``result.json``.
    warn
        Called with a sentence when prompt sets were intersected.

    Returns
    -------
    dict
        The result document, as written (envelope and payload).
    """
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.analysis.structure import cluster_groups
    from rlvr_boundary.io.formats import (
        check_choices_used,
        check_labels,
        detect_format,
        label_for,
        load_model_counts,
    )
    from rlvr_boundary.io.outputs import check_outputs, removed_on_failure
    from rlvr_boundary.io.results import envelope, read_result, write_doc
    from rlvr_boundary.report import words as W

    if pdf and not out_dir:
        raise InputError("--pdf writes the figures' PDFs into the --out folder: give --out DIR")
    paths = [Path(base), Path(rl)]
    check_labels(opts.labels, paths)
    out = Path(out_dir) if out_dir else None
    check_outputs({"--json": json_path,
                   "--out (result.json)": out / "result.json" if out else None,
                   "--out (curves.csv)": out / "curves.csv" if out else None},
                  [*paths, *opts.rl_runs, *opts.base_runs], folders={"--out": out})
    choices = opts.adapter_choices()
    run_paths = [Path(p) for p in (*opts.base_runs, *opts.rl_runs)]
    formats = [detect_format(p) if opts.format == "auto" else opts.format
               for p in (*paths, *run_paths)]
    check_choices_used(choices, formats)
    counts = [load_model_counts(path, model=model, fmt=fmt, label=label_for(path, opts.labels),
                                choices=choices.get(fmt), flag=flag)
              for path, fmt, model, flag in ((paths[0], formats[0], base_model, "--base-model"),
                                             (paths[1], formats[1], rl_model, "--rl-model"))]
    b, r = counts
    if b.model == r.model:
        b.model, r.model = f"base:{b.model}", f"rl:{r.model}"
    primary = False  # several scorers' verdicts in the inputs: the primary one (else False)
    if opts.scorer or b.scorers or r.scorers:
        from rlvr_boundary.io.verdicts import choose_scorer

        primary = choose_scorer([b, r], opts.scorer)
    # Further runs: read like the main inputs (format, adapter choices), labelled MODEL#runJ.
    extra, runs = [], {"base": [], "rl": []}
    fmt_of = dict(zip(run_paths, formats[2:]))
    for key, main, files, model in (("base", b, opts.base_runs, base_model),
                                    ("rl", r, opts.rl_runs, rl_model)):
        for j, path in enumerate(map(Path, files), start=2):
            label = f"{main.model}#run{j}"
            extra.append(load_model_counts(path, model=model, fmt=fmt_of[path], label=label,
                                           choices=choices.get(fmt_of[path])))
            runs[key].append(label)
    aligned = align([b, r, *extra], intersect=opts.intersect)
    note = W.dropped_note(aligned.dropped, aligned.n.shape[1])
    if note and warn is not None:
        warn(note)
    groups = cluster_groups(opts.cluster_by, aligned.prompt_ids, [b, r])
    res = compare_aligned(aligned, b.model, r.model, opts, runs=runs, groups=groups)
    res["inputs"] = {"base": str(paths[0]), "rl": str(paths[1]), "dropped": aligned.dropped}
    if formats[0] == formats[1] == "rollouts":
        maj = _majority_of(paths, (base_model, rl_model), (b.model, r.model),
                           aligned.prompt_ids.tolist(), res["ks"])
        if maj is not None:
            res["maj_at_k"] = maj
    cot = _cot_of(paths, formats[:2], (base_model, rl_model), (b.model, r.model), opts,
                  aligned, res, groups, runs)
    if cot is not None:
        res["cot"] = cot
    if primary is not False:
        from rlvr_boundary.pipelines.common import scorer_section

        block = scorer_section([b, r], aligned.prompt_ids, b.model, [r.model], res["ks"], opts,
                               primary)
        if block is not None:
            res["scorers"] = block
    made = [json_path] + ([out] if out is not None and not out.exists() else
                          [out / "result.json", out / "curves.csv"] if out else [])
    with removed_on_failure(*made):  # a failed run leaves none of the outputs it created
        targets = []
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            targets.append(out / "result.json")
        if json_path:
            targets.append(Path(json_path))
        doc = envelope("compare", opts, res)  # validates the payload before anything is written
        for t in targets:
            write_doc(t, doc)
        if out is not None:
            doc = read_result(targets[0], kind="compare")  # the files come from the result alone
            write_curves_csv(out / "curves.csv", doc)
            from rlvr_boundary.report import compare_figures as CF

            CF.render_compare_figures(doc, out, pdf=pdf)
    return doc


def _majority_of(paths, models, labels, prompt_ids: list, ks) -> dict | None:
    """maj@k of the two rollout tables beside pass@k (None when either has no answers).

    Each table's answer classes are read in one streaming pass; a table holding several
    models gives the one chosen with --base-model / --rl-model, else its only model.
    """
    from rlvr_boundary.analysis.audit import majority_curves
    from rlvr_boundary.io.rollouts import iter_rollout_batches
    from rlvr_boundary.io.samples import SampleFacts

    answers: dict = {"all": {}, "correct": {}}
    for path, model, label in zip(paths, models, labels):
        facts = SampleFacts(keep_texts=False)
        names: set = set()
        for t in iter_rollout_batches(path, ["answer", "correct"]):
            if "answer" not in t.column_names:
                return None
            names.update(t.column("model").unique().to_pylist())
            facts.add_batch(t, derive_quality=False)
        name = model if model is not None else (next(iter(names)) if len(names) == 1 else None)
        got = None if name is None else facts.answer_classes([name], prompt_ids)
        if got is None:
            return None
        answers["all"][label], answers["correct"][label] = got["all"][name], got["correct"][name]
    return majority_curves(list(labels), answers, ks)


def _cot_of(paths, formats, models, labels, opts, aligned, res: dict, groups,
            runs: dict) -> dict | None:
    """The CoT-pass@k block when a rollout input carries ``cot_correct`` (None when neither does).

    One narrow streaming pass per rollout table (:func:`rlvr_boundary.io.cot.read_cot_counts`);
    a table holding several models gives the one chosen with --base-model / --rl-model,
    else its only model. The comparison is :func:`rlvr_boundary.analysis.cot.cot_block`.
    """
    if "rollouts" not in formats:  # count files carry no chains: and no pyarrow import
        return None
    from rlvr_boundary.analysis.cot import cot_block
    from rlvr_boundary.io.cot import read_cot_counts, verdict_column
    from rlvr_boundary.io.formats import label_for

    prompt_ids = aligned.prompt_ids.tolist()
    cot: dict = {}
    verdict = verdict_column(opts.scorer)  # the verdicts of the main counts (--scorer)
    for path, fmt, model, label in zip(paths, formats, models, labels):
        if fmt != "rollouts":
            continue
        given = label_for(path, opts.labels)
        got = read_cot_counts(path, prompt_ids, label=given, verdict=verdict)
        if not got:
            continue
        name = given if given is not None else model if model is not None else (
            next(iter(got)) if len(got) == 1 else None)
        if name in got:
            cot[label] = got[name]
    if not cot:
        return None
    return cot_block(aligned, labels[0], labels[1], cot, opts, answer=res, groups=groups,
                     runs=runs)


def write_curves_csv(path, doc: dict) -> None:
    """k, pass@k of each model, D(k), band and verdict per budget (model labels in result.json)."""
    import csv

    from rlvr_boundary.io.atomic import atomic_open

    base, rl = doc["models"]["base"], doc["models"]["rl"]
    band = doc.get("band") or {}
    n = len(doc["ks"])
    lower, upper = band.get("lower") or [None] * n, band.get("upper") or [None] * n
    with atomic_open(path, "w") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CURVES_HEADER)
        for j, k in enumerate(doc["ks"]):
            w.writerow([k, repr(doc["pass_at_k"][base][j]), repr(doc["pass_at_k"][rl][j]),
                        repr(doc["diff"][j]), "" if lower[j] is None else repr(lower[j]),
                        "" if upper[j] is None else repr(upper[j]), doc["verdict_per_k"][j]])
