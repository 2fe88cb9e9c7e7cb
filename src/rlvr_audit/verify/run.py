"""Grade a rollout table of raw completions: the job behind ``rlvr-audit verify``.

Input: a rollout table with ``prompt_id``, ``model``, ``sample_idx`` and
``text`` (``correct`` may be absent), and a gold file mapping prompt ids to a
math answer or to code tests. Output: a shard directory with the same rows plus
``answer`` (math), ``correct``, ``verify_status`` and the ``q_*`` quality
flags. Every input batch becomes one shard, written atomically, so a killed run
resumes where it stopped (finished shards are skipped) and never duplicates or
loses rows. The manifest records the verifier and its version; resuming with a
different verifier, gold file or input is refused.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from rlvr_audit.errors import InputError
from rlvr_audit.verify.math import MathOptions, backend_name, grade_math
from rlvr_audit.verify.quality import quality_flags
from rlvr_audit.verify.sandbox import SandboxOptions

QUALITY_COLUMNS = ("q_no_boxed", "q_multi_boxed", "q_text_after_answer", "q_cjk_share",
                   "q_language_mix", "q_redundancy3")


@dataclass
class VerifyOptions:
    """Options of ``rlvr-audit verify`` (recorded in the output manifest)."""

    task: str = "math"
    """'math' (answer equivalence) or 'code' (run tests in the sandbox)."""
    workers: int = 2
    """Worker processes (math) or concurrent sandboxes (code)."""
    timeout: float = 10.0
    """Hard wall-clock seconds per item."""
    gold_id: str | None = None
    """Field of the gold file holding the prompt id (default: prompt_id, id, unique_id, idx)."""
    gold_field: str | None = None
    """Field holding the gold answer or tests (default: answer/gold, or tests/test)."""
    math: MathOptions = field(default_factory=MathOptions)
    """Math grading (backend, extraction)."""
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    """Code sandbox limits."""
    batch_rows: int = 4096
    """Rows per shard (the unit of resumption)."""


ID_FIELDS = ("prompt_id", "id", "unique_id", "idx", "task_id")
MATH_FIELDS = ("answer", "gold", "gt", "solution_answer")
CODE_FIELDS = ("tests", "test", "test_code")


def read_gold(path: Path, opts: VerifyOptions) -> dict[str, str]:
    """Prompt id -> gold answer (math) or test code (code), from JSONL or CSV/TSV."""
    from rlvr_audit.io.rollouts import is_jsonl, iter_json_lines

    wanted = (opts.gold_field,) if opts.gold_field else (
        MATH_FIELDS if opts.task == "math" else CODE_FIELDS)
    ids = (opts.gold_id,) if opts.gold_id else ID_FIELDS
    out: dict[str, str] = {}

    def take(rec: dict, line: int) -> None:
        key = next((k for k in ids if rec.get(k) not in (None, "")), None)
        if key is None:
            raise InputError(f"no prompt id field (tried {list(ids)})", path=path, line=line)
        val_key = next((k for k in wanted if k in rec), None)
        if val_key is None or rec[val_key] is None:
            raise InputError(f"no gold field (tried {list(wanted)}; set --gold-field)",
                             path=path, line=line)
        pid = str(rec[key])
        if pid in out:
            raise InputError(f"duplicate prompt id '{pid}'", path=path, line=line, field=key)
        value = rec[val_key]
        if isinstance(value, list):  # a list of test statements
            value = "\n".join(map(str, value))
        out[pid] = str(value)

    if not path.exists():
        raise InputError("file not found", path=path)
    if is_jsonl(path) or path.suffix == ".json":
        for line, rec in iter_json_lines(path):
            take(rec, line)
    else:
        text = path.read_text(encoding="utf-8")
        dialect = "excel-tab" if path.suffix == ".tsv" else "excel"
        for i, rec in enumerate(csv.DictReader(io.StringIO(text), dialect=dialect), start=2):
            take(rec, i)
    if not out:
        raise InputError("gold file has no records", path=path)
    return out


def _grade_math_item(gold: str, text: str, opts: MathOptions) -> dict:
    return grade_math(gold, text, opts)


def verify_table(src: Path, gold_path: Path, out: Path, opts: VerifyOptions, *,
                 progress=None) -> dict:
    """Grade every row of ``src`` into the shard directory ``out``; return a status summary."""
    from rlvr_audit.io.rollouts import iter_rollout_batches, sha256_of, table_columns
    from rlvr_audit.io.store import ShardedWriter

    if opts.task not in ("math", "code"):
        raise InputError(f"--task must be 'math' or 'code', got {opts.task!r}", field="task")
    cols = set(table_columns(src))
    if "text" not in cols:
        raise InputError("the rollout table has no 'text' column to grade", path=src, field="text")
    gold = read_gold(gold_path, opts)
    verifier = (backend_name(opts.math) if opts.task == "math" else "sandbox (rlvr-audit)")
    manifest = {"verifier": {"task": opts.task, "name": verifier, "timeout": opts.timeout,
                             "extract": list(opts.math.extract.fallbacks)},
                "input_sha256": sha256_of(src), "gold_sha256": sha256_of(gold_path),
                "batch_rows": opts.batch_rows}
    # Shards are keyed by batch number: resuming is only sound with the same input,
    # the same batching and the same verifier.
    writer = ShardedWriter(out, manifest, must_match=("verifier", "input_sha256", "gold_sha256",
                                                      "batch_rows"))
    done = writer.done()
    statuses: Counter = Counter()
    required = ("prompt_id", "model", "sample_idx", "text")
    for b, batch in enumerate(iter_rollout_batches(src, None, batch_rows=opts.batch_rows,
                                                   required=required)):
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
        texts = batch.column("text").to_pylist()
        prompts = batch.column("prompt").to_pylist() if "prompt" in batch.column_names else None
        results = _grade_batch(texts, [gold[p] for p in ids], opts, progress)
        table = _with_results(batch, results, texts, prompts, opts)
        writer.write(key, table)
        statuses.update(r["verify_status"] for r in results)
    # Statuses of shards finished in an earlier run, so the summary covers everything.
    if done:
        from rlvr_audit.io.rollouts import iter_rollout_batches as it

        statuses = Counter()
        for t in it(out, ["verify_status"]):
            statuses.update(t.column("verify_status").to_pylist())
    summary = {"rows": sum(statuses.values()), "statuses": dict(statuses), "verifier": verifier}
    writer.finish(summary)
    return summary


def _grade_batch(texts: list, golds: list, opts: VerifyOptions, progress) -> list[dict]:
    results: list = [None] * len(texts)
    if opts.task == "math":
        from rlvr_audit.verify.pool import TimeoutPool

        items = [(g, t if t is not None else "", opts.math) for g, t in zip(golds, texts)]
        with TimeoutPool(_grade_math_item, workers=opts.workers, timeout=opts.timeout,
                         preload=("rlvr_audit.verify.math", "math_verify", "sympy")) as pool:
            for i, res in pool.map(items):
                results[i] = res
                if progress:
                    progress(1)
        return results
    from concurrent.futures import ThreadPoolExecutor

    from rlvr_audit.verify.sandbox import grade_code

    sb = SandboxOptions(**{**opts.sandbox.__dict__, "timeout": opts.timeout})
    # Threads only wait on sandbox subprocesses; the code never runs in this process.
    with ThreadPoolExecutor(max_workers=opts.workers) as ex:
        futs = {ex.submit(grade_code, t or "", g, sb): i for i, (t, g) in enumerate(zip(texts, golds))}
        for f, i in futs.items():
            r = f.result()
            results[i] = {"answer": None, "correct": r["correct"],
                          "verify_status": r["verify_status"]}
            if progress:
                progress(1)
    return results


def _with_results(batch: pa.Table, results: list[dict], texts: list, prompts, opts) -> pa.Table:
    new = {
        "correct": pa.array([r["correct"] for r in results], pa.bool_()),
        "verify_status": pa.array([r["verify_status"] for r in results], pa.string()),
    }
    if opts.task == "math":
        new["answer"] = pa.array([r["answer"] for r in results], pa.string())
    flags = [quality_flags(t or "", prompts[i] if prompts else None) for i, t in enumerate(texts)]
    for c in QUALITY_COLUMNS:
        new[c] = pa.array([f[c] for f in flags])
    for name, arr in new.items():
        if name in batch.column_names:
            batch = batch.set_column(batch.column_names.index(name), name, arr)
        else:
            batch = batch.append_column(name, arr)
    return batch
