"""The verify workflow: a rollout table of raw completions and a gold file in, graded rollouts out.

Input: a rollout table with ``prompt_id``, ``model``, ``sample_idx`` and the
completion text (``text``, the canonical column, or ``completion``;
``correct`` may be absent), and a gold file mapping prompt ids to a math answer
or to code tests. Output: the same rows plus ``answer`` (math), ``correct``,
``verify_status`` and the ``q_*`` quality flags, written as a shard directory
(the default, for long runs) or as one Parquet/JSONL file.

Every input batch becomes one shard, written atomically, so a killed run
resumes where it stopped (finished shards are skipped) and never duplicates or
loses rows. A single-file output is assembled atomically from its shards
(kept in the hidden ``.OUT.parts/`` beside it until then) once every batch is
graded; a rerun on a finished output grades nothing and returns its stored
summary. With several math backends (``MathOptions.also``) every verdict is
stored (``correct__<backend>``, ``verify_status__<backend>``) and the summary
gives each backend's total and the disagreement rate by answer type. The manifest
records the verifier, its version and configuration; resuming with a different
verifier, gold file, input or batching is refused.

Untrusted text never runs in this process: math items go to
:class:`~rlvr_boundary.verify.pool.TimeoutPool` workers (hard timeout, memory
limit, JSON over the pipe), code to :mod:`~rlvr_boundary.verify.sandbox`
subprocesses. Only the quality flags are computed here, by linear-time string
scans (:func:`rlvr_boundary.verify.quality.quality_flags`).

:func:`run` is ``rlvr-boundary verify`` between parsing and printing: it grades
(:func:`verify_table`) and returns the ``verify`` result document, written when
asked. :class:`VerifyOptions` declares the workflow's flags and their bounds;
the math backends and extraction methods come from their registries
(:data:`rlvr_boundary.verify.math.BACKENDS`, :data:`rlvr_boundary.verify.extract.FALLBACKS`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

if TYPE_CHECKING:
    from rlvr_boundary.verify.math import MathOptions
    from rlvr_boundary.verify.sandbox import SandboxOptions

# The graders and pyarrow load inside the functions that use them: the command line
# imports this module (for its options) to build its parser.

TEXT_FIELDS = ("text", "completion")
ID_FIELDS = ("prompt_id", "id", "unique_id", "idx", "task_id")
MATH_FIELDS = ("answer", "gold", "gt", "solution_answer")
KEY_COLUMNS = ("prompt_id", "model", "sample_idx")


#: Most worker processes (math) or concurrent sandboxes (code): four per core of this machine.
MAX_WORKERS = 4 * (os.cpu_count() or 1)


def _math_options():
    from rlvr_boundary.verify.math import MathOptions

    return MathOptions()


def _sandbox_options():
    from rlvr_boundary.verify.sandbox import SandboxOptions

    return SandboxOptions()


@dataclass
class VerifyOptions:
    """Options of ``rlvr-boundary verify`` (recorded in the output manifest and the result)."""

    task: str = option("math", choices=("math", "code"),
                       help="math: answer equivalence; code: run tests in the sandbox")
    workers: int = option(2, low=1, high=MAX_WORKERS,
                          what="an integer from 1 to {high} (4 per core of this machine)",
                          help="worker processes (math) or concurrent sandboxes (code)")
    timeout: float = option(10.0, low=0, low_open=True, high=86_400,
                            help="hard wall-clock seconds per item, or per sandboxed run for "
                                 "code")
    memory_mb: int = option(2048, low=1, high=1 << 20, group="math",
                            help="extra address space per math worker, MB")
    text_field: str | None = option(None, metavar="COL", group="input fields",
                                    help="completion column (text, else completion)")
    gold_id: str | None = option(None, metavar="FIELD", group="input fields",
                                 help="id field of the gold file (default: prompt_id, id, "
                                      "unique_id, idx, task_id)")
    gold_field: str | None = option(None, metavar="FIELD", group="input fields",
                                    help="answer/tests field of the gold file (default: "
                                         "answer/gold/gt, or the code test fields)")
    math: MathOptions = option(default_factory=_math_options, cli=False,
                               help="math grading (backend, extraction)")
    sandbox: SandboxOptions = option(default_factory=_sandbox_options, cli=False,
                                     help="code sandbox limits (its timeout is replaced by "
                                          "timeout)")
    batch_rows: int = option(4096, cli=False, low=1, high=1_000_000,
                             help="rows per shard (the unit of resumption)")
    runner: str = option("local", choices=("local", "ray"), group="cluster",
                         help="where the workers run: local processes, or actors of a Ray "
                              "cluster (--workers actors, the same limits per item)")
    ray_address: str | None = option(None, metavar="ADDR", group="cluster",
                                     help="Ray cluster to grade on (implies --runner ray); "
                                          "default: a running local instance, else a new one")
    ray_block_rows: int = option(32, cli=False, low=1, high=1_000_000,
                                 help="items per block handed to a Ray actor (what Ray redoes "
                                      "when an actor dies)")
    ray_window_rows: int = option(65_536, cli=False, low=1, high=100_000_000,
                                  help="most items of the shards graded in one Ray dataset")

    def __post_init__(self) -> None:
        check(self)
        if self.ray_address and self.runner != "ray":
            self.runner = "ray"


def read_gold(path: Path, opts: VerifyOptions) -> dict:
    """Prompt id -> gold answer (math, a string) or test spec (code, a dict).

    JSONL (one object per line) or CSV/TSV with a header.
    """
    from rlvr_boundary.io.rollouts import is_jsonl, iter_json_lines
    from rlvr_boundary.verify.code import code_spec

    ids = (opts.gold_id,) if opts.gold_id else ID_FIELDS
    wanted = (opts.gold_field,) if opts.gold_field else MATH_FIELDS
    out: dict = {}

    def take(rec: dict, line: int) -> None:
        key = next((k for k in ids if rec.get(k) not in (None, "")), None)
        if key is None:
            raise InputError(f"no prompt id field (tried {list(ids)}; set --gold-id)",
                             path=path, line=line)
        pid = str(rec[key])
        if pid in out:
            raise InputError(f"duplicate prompt id '{pid}'", path=path, line=line, field=key)
        if opts.task == "code":
            try:
                out[pid] = code_spec(rec, opts.gold_field)
            except ValueError as exc:
                raise InputError(str(exc), path=path, line=line) from None
            return
        val_key = next((k for k in wanted if rec.get(k) is not None), None)
        if val_key is None:
            raise InputError(f"no gold answer field (tried {list(wanted)}; set --gold-field)",
                             path=path, line=line)
        value = rec[val_key]
        if isinstance(value, (dict, list)):
            raise InputError("a gold answer must be a string or a number", path=path, line=line,
                             field=val_key)
        out[pid] = str(value)

    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a directory; expected a gold file (JSONL or CSV/TSV)", path=path)
    try:
        if is_jsonl(path):
            for line, rec in iter_json_lines(path):
                take(rec, line)
        else:  # streamed, each line bounded (a 2 GB file without newlines is refused)
            from rlvr_boundary.io.text import iter_csv_records

            for i, rec in iter_csv_records(path):
                take(rec, i)
    except OSError as exc:
        raise InputError(f"cannot read the gold file ({exc.strerror or exc})", path=path) from None
    if not out:
        raise InputError("gold file has no records", path=path)
    return out


def count_rows(src: Path) -> int | None:
    """Rows of a table without reading it (Parquet metadata; JSONL: non-blank lines)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlvr_boundary.io.rollouts import is_jsonl, parquet_files
    from rlvr_boundary.io.text import count_nonblank_lines

    try:
        if is_jsonl(src):
            return count_nonblank_lines(src)
        return sum(pq.ParquetFile(f).metadata.num_rows for f in parquet_files(src))
    except (OSError, UnicodeDecodeError, pa.ArrowInvalid, InputError):
        return None  # the reader will say what is wrong


def backend_column(backend: str) -> str:
    """Column suffix of a backend: 'math-verify' -> 'math_verify'."""
    return backend.replace("-", "_")


def verifier_record(opts: VerifyOptions) -> dict:
    """Name, version and configuration of the verifier (for the manifest)."""
    from rlvr_boundary.verify.math import KNOWN_LIMITS, backend_label, backend_name

    if opts.task == "math":
        rec = {"task": "math", "name": backend_name(opts.math), "timeout": opts.timeout,
               "memory_mb": opts.memory_mb, "extract": list(opts.math.extract.fallbacks),
               "float_rounding": opts.math.float_rounding,
               "inner_timeout": opts.math.inner_timeout,
               "known_limits": {b: KNOWN_LIMITS[b] for b in opts.math.backends}}
        if opts.math.backend == "math-verify":
            rec["guards"] = opts.math.guards
        if opts.math.also:
            rec["also"] = [backend_label(b) for b in opts.math.also]
        return rec
    from rlvr_boundary.verify.sandbox import isolation_status, public_url

    sb = {**opts.sandbox.__dict__, "timeout": opts.timeout}
    sb["fusion_url"] = public_url(sb["fusion_url"])  # never a password in a manifest
    st = isolation_status(opts.sandbox)
    return {"task": "code", "name": "sandbox (rlvr-boundary)", "isolation": st["isolation"],
            "cgroup": st["cgroup"], "uid": st["uid"], "url": st.get("url"),
            "unsafe_no_isolation": st["unsafe_no_isolation"], "limits": sb}


def verify_table(src: Path, gold_path: Path, out: Path, opts: VerifyOptions, *,
                 progress=None, total=None) -> dict:
    """Grade every row of ``src`` into ``out``; return a summary.

    Parameters
    ----------
    src
        Rollout table (Parquet, JSONL or shard directory).
    gold_path
        Gold file (JSONL or CSV/TSV).
    out
        A directory (shards) or a ``.parquet``/``.jsonl`` file.
    opts
        See :class:`VerifyOptions`.
    progress
        Called with the number of rows just finished.
    total
        Called once with the number of rows to grade (None if unknown).

    Returns
    -------
    dict
        ``rows``, ``correct``, ``statuses`` (status -> rows), ``verifier``,
        ``seconds``, ``known_limits`` (math); with several backends
        ``backends`` (backend -> label and correct rows) and ``disagreement``
        (:func:`rlvr_boundary.analysis.scorers.disagreement_by_type`);
        ``already_complete`` is True when ``out`` was finished before and
        nothing was graded.
    """
    from rlvr_boundary.io.rollouts import sha256_of, table_columns
    from rlvr_boundary.io.store import ShardedWriter

    t_start = time.monotonic()  # the options checked themselves when they were built
    src, gold_path, out = Path(src), Path(gold_path), Path(out)
    cols = set(table_columns(src))
    text_field = opts.text_field or next((c for c in TEXT_FIELDS if c in cols), None)
    if text_field is None or text_field not in cols:
        tried = [opts.text_field] if opts.text_field else list(TEXT_FIELDS)
        raise InputError(f"the rollout table has no completion text column (tried {tried})",
                         path=src, field=tried[0])
    gold = read_gold(gold_path, opts)
    single = out.suffix in (".parquet", ".jsonl") or out.name.endswith(".jsonl.gz")
    if single and out.name.endswith(".jsonl.gz"):
        raise InputError("write JSONL uncompressed or Parquet", path=out)
    shard_dir = parts_dir(out) if single else out
    _refuse_overwrite(src, gold_path, out, shard_dir)
    if opts.task == "code":
        from rlvr_boundary.verify.sandbox import require_isolation

        require_isolation(opts.sandbox)  # refuse before any output exists
    verifier = verifier_record(opts)
    manifest = {"verifier": verifier, "text_field": text_field,
                "input_sha256": sha256_of(src), "gold_sha256": sha256_of(gold_path),
                "batch_rows": opts.batch_rows}
    finished = _finished_summary(out, single, manifest)
    if finished is not None:
        return {**finished, "already_complete": True}
    # Shards are keyed by batch number: resuming is only sound with the same input,
    # the same batching and the same verifier.
    existed = shard_dir.exists()
    _forget_empty_attempt(shard_dir)
    writer = ShardedWriter(shard_dir, manifest, must_match=("verifier", "text_field",
                                                            "input_sha256", "gold_sha256",
                                                            "batch_rows"))
    done = writer.done()
    if total is not None:
        total(count_rows(src))
    try:
        run_info = _grade_batches(src, gold, gold_path, opts, writer, done, text_field,
                                  progress)
    except BaseException:
        # Failed before grading anything (bad input, interrupt): leave nothing that
        # would make the rerun with a fixed input look like an incompatible resume.
        if not writer.done():
            _forget_empty_attempt(shard_dir)
            if not existed:
                import shutil

                shutil.rmtree(shard_dir, ignore_errors=True)
        raise
    summary = _summary(shard_dir, opts, verifier, gold)
    summary["seconds"] = round(time.monotonic() - t_start, 3)
    if run_info:  # Ray: where it ran and the results ignored as repeats
        summary["ray"] = run_info
    if opts.task == "code":  # what protected the runs, also in the result file
        summary["isolation"] = {k: verifier[k] for k in ("isolation", "cgroup", "uid", "url",
                                                         "unsafe_no_isolation")}
    writer.finish(summary)
    if single:
        _assemble(shard_dir, out, {**writer.manifest, "verify_summary": summary})
    return summary


def _refuse_overwrite(src: Path, gold_path: Path, out: Path, shard_dir: Path) -> None:
    """An output that is, or would write into, the input or the gold file is refused."""
    inputs = [src.resolve(), gold_path.resolve()]
    for p in (out, shard_dir):
        r = p.resolve()
        for i in inputs:
            if r == i or (i.is_dir() and i in r.parents):
                raise InputError(f"the output would overwrite the input {i}; choose another --out",
                                 path=p)


def _forget_empty_attempt(shard_dir: Path) -> None:
    """Drop the manifest of an output with no graded shard (nothing to resume)."""
    from rlvr_boundary.io.schema import SHARD_MANIFEST_NAMES

    if shard_dir.is_dir() and not any(shard_dir.glob("part-*.parquet")) and \
            not (shard_dir / "_COMPLETE").exists():
        for name in SHARD_MANIFEST_NAMES:
            (shard_dir / name).unlink(missing_ok=True)


def _pending_batches(src, gold, gold_path, opts, done, text_field, progress):
    """``(key, batch, texts, prompts, golds)`` of every batch not yet written."""
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    for b, batch in enumerate(iter_rollout_batches(src, None, batch_rows=opts.batch_rows,
                                                   required=KEY_COLUMNS)):
        key = f"{b:06d}"
        if key in done:
            if progress:
                progress(batch.num_rows)
            continue
        ids = batch.column("prompt_id").to_pylist()
        missing = sorted({p for p in ids if p not in gold})
        if missing:
            raise InputError(f"{len(missing)} prompt id(s) have no gold entry, e.g. "
                             f"{', '.join(missing[:5])}", path=gold_path, field="prompt_id")
        texts = _texts(batch.column(text_field), src, text_field)
        prompts = batch.column("prompt").to_pylist() if "prompt" in batch.column_names else None
        yield key, batch, texts, prompts, [gold[p] for p in ids]


def _grade_batches(src, gold, gold_path, opts, writer, done, text_field, progress) -> dict:
    pending = _pending_batches(src, gold, gold_path, opts, done, text_field, progress)
    if opts.runner == "ray":
        return _grade_on_ray(pending, opts, writer, progress)
    with _Grader(opts) as grader:
        for key, batch, texts, prompts, golds in pending:
            results = grader.grade(texts, golds, progress)
            writer.write(key, _with_results(batch, results, texts, prompts, opts, golds))
    return {}


def _grade_on_ray(pending, opts: VerifyOptions, writer, progress) -> dict:
    """Grade the pending batches on Ray, a window of shards per dataset.

    Each shard is written when every one of its items has its (first) result, so
    none is written with an item missing or twice (see
    :mod:`rlvr_boundary.verify.ray_grade`).
    """
    from rlvr_boundary.verify.math import as_text, options_to_json
    from rlvr_boundary.verify.ray_grade import RayGrader, grader_config

    sb = {**opts.sandbox.__dict__, "timeout": opts.timeout}
    config = grader_config(opts.task, opts.timeout, opts.memory_mb,
                           options_to_json(opts.math) if opts.task == "math" else None,
                           sb if opts.task == "code" else None)
    info = {"runner": "ray", "workers": opts.workers, "block_rows": opts.ray_block_rows,
            "duplicates_ignored": 0, "datasets": 0}

    def flush(window: list, grader: RayGrader) -> None:
        where, left, results = [], [], []  # item -> (shard, row); per shard: items left
        for s, (_, _, texts, _, golds) in enumerate(window):
            where += [(s, r) for r in range(len(texts))]
            left.append(len(texts))
            results.append([None] * len(texts))
        items = ((g, as_text(t)) for w in window for t, g in zip(w[2], w[4]))
        for i, res in grader.map(items):
            s, r = where[i]
            results[s][r] = res
            left[s] -= 1
            if progress:
                progress(1)
            if left[s] == 0:
                key, batch, texts, prompts, golds = window[s]
                writer.write(key, _with_results(batch, results[s], texts, prompts, opts, golds))
        info["datasets"] += 1

    with RayGrader(config, workers=opts.workers, block_rows=opts.ray_block_rows,
                   address=opts.ray_address) as grader:
        window: list = []
        for w in pending:
            window.append(w)
            if sum(len(x[2]) for x in window) >= opts.ray_window_rows:
                flush(window, grader)
                window = []
        if window:
            flush(window, grader)
        info["duplicates_ignored"] = grader.duplicates
    return info


_RESUME_KEYS = ("verifier", "text_field", "input_sha256", "gold_sha256", "batch_rows")


def parts_dir(out: Path) -> Path:
    """The hidden shard folder of a single-file output: ``.NAME.parts`` beside it."""
    return out.with_name(f".{out.name}.parts")


def _finished_summary(out: Path, single: bool, manifest: dict) -> dict | None:
    """The stored summary when ``out`` is a finished run of the same job, else None."""
    import json

    from rlvr_boundary.io.rollouts import read_manifest
    from rlvr_boundary.io.schema import find_manifest

    if single:
        if not out.exists():
            return None
        old = read_manifest(out) if out.is_file() else None
        if not old or "verify_summary" not in old:
            raise InputError("the output exists and is not a finished verify output; "
                             "choose another --out or remove it", path=out)
        stored = old["verify_summary"]
    else:
        done, mpath = out / "_COMPLETE", find_manifest(out)
        if not done.is_file() or mpath is None or not mpath.is_file():
            return None
        old = json.loads(mpath.read_text(encoding="utf-8"))
        stored = json.loads(done.read_text(encoding="utf-8") or "{}")
    from rlvr_boundary.io.results import to_jsonable

    now = to_jsonable(manifest)
    diff = [k for k in _RESUME_KEYS if old.get(k) != now.get(k)]
    if diff and single:
        raise InputError(f"the output exists and was made with different {diff}; choose "
                         "another --out or remove it", path=out)
    return None if diff else stored  # a directory: the writer refuses it with the reason


def _summary(shard_dir: Path, opts: VerifyOptions, verifier: dict, gold: dict) -> dict:
    """Statuses and totals of the finished shards; per-backend totals and disagreement."""
    from rlvr_boundary.verify.math import backend_label

    from rlvr_boundary.io.rollouts import iter_rollout_batches

    statuses: Counter = Counter()
    n_correct = 0
    backends = opts.math.backends if opts.task == "math" and opts.math.also else ()
    cols = [f"correct__{backend_column(b)}" for b in backends]
    verdicts: dict = {b: [] for b in backends}
    types, examples = [], []
    extra = ["prompt_id", "answer", "model", "sample_idx"] if backends else []
    if opts.task == "code":
        extra.append("check_mode")
    modes: Counter = Counter()
    for t in iter_rollout_batches(shard_dir, ["verify_status", "correct", *cols, *extra]):
        statuses.update(t.column("verify_status").to_pylist())
        if opts.task == "code":
            modes.update(m or "none" for m in t.column("check_mode").to_pylist())
        n_correct += sum(t.column("correct").to_pylist())
        for b, c in zip(backends, cols):
            verdicts[b].extend(bool(x) for x in t.column(c).to_pylist())
        if backends:
            from rlvr_boundary.verify.canonical import answer_type

            for pid, ans, m, i in zip(*(t.column(x).to_pylist() for x in extra)):
                types.append(answer_type(gold[pid]))
                examples.append({"prompt_id": pid, "model": m, "sample_idx": i,
                                 "gold": gold[pid], "answer": ans})
    summary = {"rows": sum(statuses.values()), "correct": n_correct, "statuses": dict(statuses),
               "verifier": verifier["name"]}
    if opts.task == "math":
        summary["known_limits"] = verifier["known_limits"]
    else:  # records graded in the program's own interpreter can be forged by it
        summary["check_modes"] = dict(modes)
    if backends:
        from rlvr_boundary.analysis.scorers import disagreement_by_type

        summary["backends"] = {b: {"label": backend_label(b), "correct": sum(verdicts[b])}
                               for b in backends}
        summary["disagreement"] = disagreement_by_type(types, verdicts,
                                                       reference=opts.math.backend,
                                                       examples=examples)
    return summary


def _texts(col, src: Path, name: str) -> list:
    import pyarrow as pa

    from rlvr_boundary.verify.math import as_text

    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or \
            pa.types.is_null(col.type):
        return col.to_pylist()
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        return [None if b is None else as_text(b) for b in col.to_pylist()]  # invalid UTF-8
    raise InputError(f"completion text must be strings, found type {col.type}", path=src,
                     field=name)


def _assemble(shard_dir: Path, out: Path, manifest: dict) -> None:
    """Write the shards as one table atomically, then drop the shard directory."""
    from rlvr_boundary.io.rollouts import iter_rollout_batches, table_schema, write_rollout_batches

    for k in ("schema_version", "tool_version"):
        manifest.pop(k, None)
    # shard by shard: the table is never held whole (it was, at about 3x its size)
    write_rollout_batches(iter_rollout_batches(shard_dir, None, required=KEY_COLUMNS), out,
                          manifest, required=KEY_COLUMNS, schema=table_schema(shard_dir))
    shutil.rmtree(shard_dir)


class _Grader:
    """Grades batches with one long-lived worker pool (math) or thread pool (code)."""

    def __init__(self, opts: VerifyOptions) -> None:
        self.opts = opts
        self.pool = None

    def __enter__(self) -> "_Grader":
        from rlvr_boundary.verify.math import options_to_json
        from rlvr_boundary.verify.sandbox import SandboxOptions

        if self.opts.task == "math":
            from rlvr_boundary.verify.pool import TimeoutPool

            preload = ["rlvr_boundary.verify.math"]
            if "math-verify" in self.opts.math.backends:
                preload += ["math_verify", "sympy"]
            from rlvr_boundary.verify.math import grade_math_job

            self.pool = TimeoutPool(grade_math_job, workers=self.opts.workers,
                                    timeout=self.opts.timeout, preload=tuple(preload),
                                    memory_mb=self.opts.memory_mb).__enter__()
            self.mopts = options_to_json(self.opts.math)
        else:
            from concurrent.futures import ThreadPoolExecutor

            # Threads only wait on sandbox subprocesses; the code never runs in this process.
            self.pool = ThreadPoolExecutor(max_workers=self.opts.workers)
            self.sb = SandboxOptions(**{**self.opts.sandbox.__dict__, "timeout": self.opts.timeout})
        return self

    def __exit__(self, *exc) -> None:
        if self.opts.task == "math":
            self.pool.__exit__(*exc)
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def grade(self, texts: list, golds: list, progress) -> list[dict]:
        from rlvr_boundary.verify.math import as_text

        results: list = [None] * len(texts)
        if self.opts.task == "math":
            items = ((g, as_text(t), self.mopts) for g, t in zip(golds, texts))
            for i, res in self.pool.map(items):
                results[i] = res
                if progress:
                    progress(1)
            return results
        from concurrent.futures import as_completed

        from rlvr_boundary.verify.code import grade_code

        futs = {self.pool.submit(grade_code, as_text(t), g, self.sb): i
                for i, (t, g) in enumerate(zip(texts, golds))}
        for f in as_completed(futs):
            try:
                results[futs[f]] = f.result()
            except Exception as exc:  # noqa: BLE001 - the sandbox itself failed (disk full...)
                results[futs[f]] = {"answer": None, "correct": False, "verify_status": "error",
                                    "detail": f"{type(exc).__name__}: {exc}"[:300]}
            if progress:
                progress(1)
        return results


def _with_results(batch, results: list[dict], texts: list, prompts,
                  opts: VerifyOptions, golds: list | None = None):
    import pyarrow as pa

    from rlvr_boundary.io.samples import QUALITY_COLUMNS
    from rlvr_boundary.verify.math import as_text
    from rlvr_boundary.verify.quality import quality_flags

    new = {
        "correct": pa.array([r["correct"] for r in results], pa.bool_()),
        "verify_status": pa.array([r["verify_status"] for r in results], pa.string()),
    }
    if opts.task == "code":  # where each verdict was made: "outside" or "in-process"
        new["check_mode"] = pa.array([r.get("check_mode") for r in results], pa.string())
    if opts.task == "math":
        new["answer"] = pa.array([r["answer"] for r in results], pa.string())
        if opts.math.also:  # every backend's verdict, the primary one included
            for b in opts.math.backends:
                got = [r if b == opts.math.backend else (r.get("also") or {}).get(b) or
                       {"correct": False, "verify_status": r["verify_status"]} for r in results]
                new[f"correct__{backend_column(b)}"] = pa.array([g["correct"] for g in got],
                                                                 pa.bool_())
                new[f"verify_status__{backend_column(b)}"] = pa.array(
                    [g["verify_status"] for g in got], pa.string())
            if golds is not None:  # what compare and report need for the disagreement table
                from rlvr_boundary.verify.canonical import answer_type

                types = {g: answer_type(g) for g in set(golds)}  # a few distinct golds
                new["answer_type"] = pa.array([types[g] for g in golds], pa.string())
                if "gold" not in batch.column_names:
                    new["gold"] = pa.array([str(g) for g in golds], pa.string())
    # A missing completion has no flags (null), not the flags of an empty string.
    flags = [None if t is None else quality_flags(as_text(t), prompts[i] if prompts else None)
             for i, t in enumerate(texts)]
    for c in QUALITY_COLUMNS:
        new[c] = pa.array([None if f is None else f[c] for f in flags],
                          pa.float64() if c in ("q_cjk_share", "q_redundancy3") else pa.bool_())
    for name, arr in new.items():
        if name in batch.column_names:
            batch = batch.set_column(batch.column_names.index(name), name, arr)
        else:
            batch = batch.append_column(name, arr)
    return batch


def math_options(backends: str | list[str] = "math-verify",
                 extract: str | list[str] = "boxed,answer_is,last_number",
                 timeout: float = 10.0) -> MathOptions:
    """The math grading of ``--backend A[,B]`` and ``--extract M1,M2``, refused by name.

    The backends come from :data:`rlvr_boundary.verify.math.BACKENDS`, the methods from
    :data:`rlvr_boundary.verify.extract.FALLBACKS`; math-verify's own signal timeout
    is one second under the pool's hard ``timeout``.
    """
    from rlvr_boundary.verify.extract import FALLBACKS, ExtractOptions
    from rlvr_boundary.verify.math import BACKENDS, MathOptions

    def items(x):
        return [v.strip() for v in (x.split(",") if isinstance(x, str) else x) if v.strip()]

    methods = tuple(items(extract))
    unknown = sorted(set(methods) - set(FALLBACKS))
    if unknown or not methods:
        raise InputError(f"--extract: unknown or no methods {unknown}; known: {list(FALLBACKS)}",
                         field="extract")
    names = items(backends)
    bad = sorted(set(names) - set(BACKENDS))
    if bad or not names or len(set(names)) != len(names):
        raise InputError(f"--backend: unknown, repeated or no backends {bad or names}; "
                         f"known: {list(BACKENDS)}", field="backend")
    return MathOptions(backend=names[0], also=tuple(names[1:]),
                       extract=ExtractOptions(fallbacks=methods),
                       inner_timeout=max(1, int(timeout) - 1))


def default_out(src: Path) -> Path:
    """``ROLLOUTS.verified.parquet`` beside the input."""
    return src.with_name(src.name.split(".")[0] + ".verified.parquet")


def run(src: str | Path, gold_path: str | Path, opts: VerifyOptions, *,
        out: str | Path | None = None, json_path: str | Path | None = None, progress=None,
        total=None) -> dict:
    """Grade a rollout table into ``out`` (default :func:`default_out`); the ``verify`` document.

    Rerunning on a finished output grades nothing (``already_complete``); an
    interrupted one resumes (see :func:`verify_table`).
    """
    from rlvr_boundary.io.outputs import check_outputs
    from rlvr_boundary.io.results import envelope, write_doc

    src = Path(src)
    out = Path(out) if out else default_out(src)
    single = out.suffix in (".parquet", ".jsonl") or out.name.endswith(".jsonl.gz")
    gold = Path(gold_path)  # a gold folder is refused by its reader, with its own message
    check_outputs({"--json": json_path, "--out": out if single else None},
                  [src] + ([] if gold.is_dir() else [gold]),
                  folders={"--out": None if single else out})
    summary = verify_table(src, Path(gold_path), out, opts, progress=progress, total=total)
    doc = envelope("verify", opts, {**summary, "output": str(out)})
    if json_path:
        write_doc(json_path, doc)
    return doc

