"""Read the ``cot_correct`` column of rollout tables: the counts behind CoT-pass@k.

CoT-pass@k (Wen et al., "Reinforcement Learning with Verifiable Rewards
Implicitly Incentivizes Correct Reasoning in Base LLMs", arXiv 2506.14245)
counts a sample as correct only when both its final answer and its chain of
thought are correct. This module makes one narrow streaming pass over a rollout
table that carries the chain-of-thought verdict and returns, per model and
prompt, the samples and the CoT-correct samples
``c_cot = #(correct AND cot_correct)``. The comparison itself is the answer-only
one on these counts (:mod:`rlvr_boundary.analysis.cot`).

Rules (docs/schema.md):

- a null ``cot_correct`` is an error naming the file, line and field
  (:func:`rlvr_boundary.io.rollouts.validate_batch`), never a dropped sample;
- a row with ``cot_correct`` true and ``correct`` false is not CoT-correct
  (Wen et al. require both); such rows are counted and reported, not hidden.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.rollouts import COT_COLUMN, iter_rollout_batches, table_schema
from rlvr_boundary.io.text import _check_exists, is_jsonl
from rlvr_boundary.io.verdicts import verdict_array

__all__ = ["COT_COLUMN", "carries_cot", "read_cot_counts", "verdict_column"]

#: Bytes read at a time when looking for the column's key in a JSONL file.
_CHUNK = 16 << 20


def verdict_column(scorer: str | None) -> str:
    """The answer verdict column the main counts use: ``correct``, or ``correct__<scorer>``
    for the scorer chosen with ``--scorer`` (a backend name such as ``math-verify`` or a
    column suffix)."""
    return "correct" if scorer is None else "correct__" + scorer.replace("-", "_")


def carries_cot(path: str | Path) -> bool:
    """True when the rollout table has a ``cot_correct`` column.

    Parquet: the column is in the schema of some shard. JSONL: the key occurs on
    some line, found by a byte search over the whole file (not only the first
    line, so a file whose first rows lack the key is not mistaken for one
    without the column; a false hit costs one pass that then finds no column).
    """
    path = Path(path)
    _check_exists(path)
    if not is_jsonl(path):
        return COT_COLUMN in table_schema(path).names
    key = f'"{COT_COLUMN}"'.encode()
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    tail = b""
    try:
        with opener(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                if key in tail + chunk[:len(key)] or key in chunk:
                    return True
                tail = chunk[-(len(key) - 1):]
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file ({exc})", path=path) from None
    return False


def read_cot_counts(path: str | Path, prompt_ids: list[str], *, label: str | None = None,
                    verdict: str = "correct") -> dict | None:
    """Per model: samples, CoT-correct samples and answer-wrong CoT-right rows, per prompt.

    Parameters
    ----------
    path
        A rollout table (Parquet, JSONL or shard directory).
    prompt_ids
        The prompts of the comparison, in its order; rows of other prompts (dropped
        by ``--intersect``) are skipped.
    label
        The model label given with ``--label`` for a single-model table (its
        ``model`` column is then ignored, as by the main reader).
    verdict
        The answer verdict column: ``correct``, or ``correct__<scorer>`` when the main
        counts use another scorer's verdicts (``--scorer``).

    Returns
    -------
    dict or None
        None when the table has no ``cot_correct`` column. Else ``{model: {"n":
        (P,) int64, "c": (P,) int64, "cot_without_answer": int}}``: ``c`` counts
        the rows with ``correct`` and ``cot_correct`` both true, and
        ``cot_without_answer`` the rows (on these prompts) with ``cot_correct``
        true and ``correct`` false, which count as not CoT-correct.

    Raises
    ------
    InputError
        A null ``cot_correct`` (file, line, field), or a stretch of rows without the
        column in a table whose other rows have it.
    """
    path = Path(path)
    if not carries_cot(path):
        return None
    xi = {p: i for i, p in enumerate(map(str, prompt_ids))}
    P = len(xi)
    out: dict[str, dict] = {}
    row, seen, lacking = 1, False, None  # lacking: (first row, rows) of a batch without it
    for batch in iter_rollout_batches(path, [COT_COLUMN, verdict]):
        first, row = row, row + batch.num_rows
        if COT_COLUMN not in batch.column_names:
            if batch.num_rows and lacking is None:
                lacking = (first, batch.num_rows)
            continue
        seen = True
        if verdict not in batch.column_names:
            raise InputError(f"no verdict column '{verdict}' (--scorer)", path=path,
                             field=verdict)
        ok, cot = verdict_array(batch, verdict), batch.column(COT_COLUMN)  # as the counts read it
        models = (pa.array([label] * batch.num_rows, pa.string()) if label is not None
                  else batch.column("model"))
        t = pa.table({"model": models, "prompt_id": batch.column("prompt_id"),
                      "one": pa.array(np.ones(batch.num_rows, np.int64)),
                      "both": pc.and_(ok, cot).cast(pa.int64()),
                      "cot_only": pc.and_(pc.invert(ok), cot).cast(pa.int64())})
        g = t.group_by(["model", "prompt_id"]).aggregate(
            [("one", "sum"), ("both", "sum"), ("cot_only", "sum")]).to_pydict()
        for m, p, n, c, w in zip(g["model"], g["prompt_id"], g["one_sum"], g["both_sum"],
                                 g["cot_only_sum"]):
            i = xi.get(p)
            if i is None:
                continue
            acc = out.setdefault(m, {"n": np.zeros(P, np.int64), "c": np.zeros(P, np.int64),
                                     "cot_without_answer": 0})
            acc["n"][i] += n
            acc["c"][i] += c
            acc["cot_without_answer"] += int(w)
    if seen and lacking is not None:
        raise InputError(
            f"no {COT_COLUMN} on the {lacking[1]} rows read from row {lacking[0]} on, while "
            "other rows of the table have it: CoT-pass@k needs the chain-of-thought verdict "
            "on every row", path=path, field=COT_COLUMN)
    return out if seen else None
