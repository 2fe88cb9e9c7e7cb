"""Seed inputs of every format and one-at-a-time mutations of them, for the fuzz tests.

A *case* is a set of input files (a small valid example of one format) plus the
command line that reads them. A mutation changes one JSON field, one CSV cell,
one Parquet column's type or one byte of one input file; the CLI must then either
succeed (exit 0) or stop with the tool's own :class:`~rlvr_boundary.errors.InputError`
(exit 2). Any other exception escaping ``main`` is a bug.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tests.io.fixtures import tool_formats as tf

#: Replacement values tried for one JSON field: wrong types, out of range, huge,
#: non-ASCII digits, float forms of integers, control and bidi characters.
BAD_VALUES: list = [
    None, True, False, 0, -1, 4.0, 2.5, 1e30, -1e30, 10**30, 2**63, -(2**63) - 1,
    float("nan"), float("inf"), "", "x", "3", "4.0", "1e30", "\u0663", "\uff13", " 3 ",
    "\u202eevil", "\x00", "a" * 131_072, [], [1], [None], {}, {"a": 1}, [[1]],
]

#: Replacement strings tried for one CSV cell.
BAD_CELLS: list[str] = [
    "", "x", "-1", "4.0", "2.5", "1e30", "1" + "0" * 40, "\u0663", "\uff13", "nan", "inf",
    " 3 ", '"', "a,b", "\u202eevil", "a" * 131_072, "\ufeff3", "0x10", "1_000",
]

#: (what, Arrow array builder of length n) for replacing one Parquet column.
def bad_columns(n: int) -> list[tuple[str, pa.Array]]:
    return [
        ("uint64 huge", pa.array([2**64 - 1] * n, pa.uint64())),
        ("int8", pa.array([1] * n, pa.int8())),
        ("float", pa.array([2.5] * n, pa.float64())),
        ("float nan", pa.array([float("nan")] * n, pa.float64())),
        ("bool", pa.array([True] * n, pa.bool_())),
        ("string", pa.array(["x"] * n, pa.string())),
        ("binary", pa.array([b"\xff\xfe"] * n, pa.binary())),
        ("struct", pa.array([{"a": 1}] * n, pa.struct([("a", pa.int64())]))),
        ("list", pa.array([[1]] * n, pa.list_(pa.int64()))),
        ("null", pa.nulls(n, pa.null())),
        ("timestamp", pa.array([0] * n, pa.timestamp("s"))),
        ("dictionary", pa.array(["a"] * n).dictionary_encode()),
        ("large_string", pa.array(["x"] * n, pa.large_string())),
    ]


@dataclass
class Case:
    """One seed: the files written and the argv that reads them (paths relative to root)."""

    name: str
    files: list[str]
    argv: list[str]
    kind: dict = field(default_factory=dict)  # file -> "jsonl" | "json" | "csv" | "parquet"


def _V(P: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((P, n)) < 0.5


def _counts_jsonl(path: Path, V: np.ndarray) -> None:
    path.write_text("".join(json.dumps({"id": f"p{i}", "n": int(v.size), "c": int(v.sum())})
                            + "\n" for i, v in enumerate(V)))


def _rollout_rows(model: str, V: np.ndarray) -> list[dict]:
    rows = []
    for i, v in enumerate(V):
        for j, ok in enumerate(v):
            rows.append({"prompt_id": f"p{i}", "model": model, "sample_idx": j,
                         "correct": bool(ok), "text": f"so \\boxed{{{i if ok else -1}}}",
                         "answer": str(i if ok else -1), "finish_reason": "stop",
                         "num_tokens": 10 + j, "truncated": False})
    return rows


def build(root: Path, name: str) -> Case:
    """Write seed ``name`` under ``root`` and return its case."""
    root.mkdir(parents=True, exist_ok=True)
    Vb, Vr = _V(4, 4, 1), _V(4, 4, 2)
    r = root
    if name == "count-jsonl":
        _counts_jsonl(r / "base.jsonl", Vb)
        _counts_jsonl(r / "rl.jsonl", Vr)
        return Case(name, ["base.jsonl", "rl.jsonl"],
                    ["compare", "--base", "base.jsonl", "--rl", "rl.jsonl", "--ks", "1-4",
                     "--bootstrap", "20", "--json", "out.json"],
                    {"base.jsonl": "jsonl", "rl.jsonl": "jsonl"})
    if name == "count-csv":
        lines = ["prompt_id,model,n,c"]
        for m, V in (("base", Vb), ("rl", Vr)):
            lines += [f"p{i},{m},{v.size},{int(v.sum())}" for i, v in enumerate(V)]
        (r / "counts.csv").write_text("\n".join(lines) + "\n")
        return Case(name, ["counts.csv"],
                    ["report", "counts.csv", "--no-figures", "--bootstrap", "20", "--out",
                     "rep.html"], {"counts.csv": "csv"})
    if name == "count-parquet":
        rows = [{"prompt_id": f"p{i}", "model": m, "n": int(v.size), "c": int(v.sum())}
                for m, V in (("base", Vb), ("rl", Vr)) for i, v in enumerate(V)]
        pq.write_table(pa.Table.from_pylist(rows), r / "counts.parquet")
        return Case(name, ["counts.parquet"],
                    ["report", "counts.parquet", "--no-figures", "--bootstrap", "20", "--out",
                     "rep.html"], {"counts.parquet": "parquet"})
    if name == "rollouts-jsonl":
        rows = _rollout_rows("base", Vb) + _rollout_rows("rl", Vr)
        (r / "roll.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
        return Case(name, ["roll.jsonl"],
                    ["report", "roll.jsonl", "--no-figures", "--bootstrap", "20", "--out",
                     "rep.html"], {"roll.jsonl": "jsonl"})
    if name == "rollouts-parquet":
        rows = _rollout_rows("base", Vb) + _rollout_rows("rl", Vr)
        pq.write_table(pa.Table.from_pylist(rows), r / "roll.parquet")
        return Case(name, ["roll.parquet"],
                    ["compare", "--base", "roll.parquet", "--base-model", "base", "--rl",
                     "roll.parquet", "--rl-model", "rl", "--ks", "1-4", "--bootstrap", "20"],
                    {"roll.parquet": "parquet"})
    if name == "rft-select":
        rows = _rollout_rows("base", Vb)
        (r / "roll.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
        return Case(name, ["roll.jsonl"],
                    ["rft-select", "roll.jsonl", "--budget", "4", "--by", "random",
                     "--out", "sel.jsonl"], {"roll.jsonl": "jsonl"})
    if name == "price":
        (r / "rates.csv").write_text("base,rl\n" + "".join(
            f"{a:.3f},{b:.3f}\n" for a, b in zip(Vb.mean(1), Vr.mean(1))))
        return Case(name, ["rates.csv"], ["price", "rates.csv", "--ks", "1-8", "--json",
                                          "price.json"], {"rates.csv": "csv"})
    if name == "price-curve":
        (r / "curve.csv").write_text("k,base,rl\n1,0.3,0.4\n4,0.5,0.55\n16,0.7,0.66\n")
        return Case(name, ["curve.csv"], ["price", "curve.csv"], {"curve.csv": "csv"})
    if name == "theory-matrix":
        (r / "m.csv").write_text("strategy,pi0,p1,p2,p3\nA,0.5,0.9,0.1,0.5\nB,0.3,0.2,0.8,0.5\n"
                                 "C,0.2,0.5,0.5,0.6\n")
        return Case(name, ["m.csv"], ["theory", "diagnose", "m.csv"], {"m.csv": "csv"})
    # adapters: two files of the same format, labelled base and rl
    writers = {
        "lm-eval": lambda d, V: tf.write_lm_eval_repeats(tf.lm_eval_dir(d, "org/m"), V),
        "lighteval": lambda d, V: tf.write_lighteval_new(tf.lighteval_path(d, "m", "math"), V),
        "lighteval-old": lambda d, V: tf.write_lighteval_old(tf.lighteval_path(d, "m", "math"),
                                                             V),
        "verl": lambda d, V: tf.write_verl_dump(d, 10, V),
        "limit-of-rlvr": lambda d, V: tf.write_qwen_math_eval(d, V),
        "vllm": lambda d, V: tf.write_vllm_request_outputs(d / "gen.jsonl", V),
        "openai-batch": lambda d, V: tf.write_openai_batch_output(d / "batch.jsonl", V),
    }
    if name not in writers:
        raise KeyError(name)
    b = writers[name](r / "b", Vb).relative_to(r)
    l = writers[name](r / "l", Vr).relative_to(r)
    kind = "parquet" if str(b).endswith(".parquet") else "jsonl"
    return Case(name, [str(b), str(l)],
                ["compare", "--base", str(b), "--rl", str(l), "--label", f"{b}=base",
                 "--label", f"{l}=rl", "--intersect", "--bootstrap", "20"],
                {str(b): kind, str(l): kind})


SEEDS = ["count-jsonl", "count-csv", "count-parquet", "rollouts-jsonl", "rollouts-parquet",
         "rft-select", "price", "price-curve", "theory-matrix", "lm-eval", "lighteval",
         "lighteval-old", "verl", "limit-of-rlvr", "vllm", "openai-batch"]


# ----------------------------------------------------------------------------- mutations


def json_paths(obj, prefix=()) -> list[tuple]:
    """Every key/index path inside a JSON value (containers and leaves)."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += json_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += json_paths(v, prefix + (i,))
    return out


def set_path(obj, path: tuple, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def mutate_jsonl_field(file: Path, line_idx: int, path_idx: int, value) -> str:
    lines = file.read_text(encoding="utf-8").splitlines()
    line_idx %= len(lines)
    obj = json.loads(lines[line_idx])
    paths = json_paths(obj)
    p = paths[path_idx % len(paths)]
    set_path(obj, p, value)
    # allow_nan: NaN/Infinity tokens are what Python's json writes and reads
    lines[line_idx] = json.dumps(obj, ensure_ascii=False, allow_nan=True)
    file.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return f"{file.name}:{line_idx + 1} {'/'.join(map(str, p))} = {_short(value)}"


def mutate_csv_cell(file: Path, row: int, col: int, value: str) -> str:
    import csv

    with open(file, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    row %= len(rows)
    col %= len(rows[row])
    rows[row][col] = value
    with open(file, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return f"{file.name} row {row + 1} col {col + 1} = {_short(value)}"


def mutate_parquet_column(file: Path, col: int, which: int) -> str:
    t = pq.read_table(file)
    col %= t.num_columns
    what, arr = bad_columns(t.num_rows)[which % len(bad_columns(1))]
    t = t.set_column(col, t.column_names[col], arr)
    pq.write_table(t, file)
    return f"{file.name} column {t.column_names[col]} -> {what}"


def mutate_byte(file: Path, pos: int, op: str, byte: int) -> str:
    data = bytearray(file.read_bytes())
    pos %= max(len(data), 1)
    if op == "flip" and data:
        data[pos] ^= (byte % 255) + 1
    elif op == "insert":
        data.insert(pos, byte)
    elif op == "delete" and data:
        del data[pos]
    elif op == "truncate":
        data = data[:pos]
    file.write_bytes(bytes(data))
    return f"{file.name} byte {pos} {op} {byte:#04x}"


def _short(v) -> str:
    s = repr(v)
    return s if len(s) < 40 else s[:37] + "..."


# ----------------------------------------------------------------------------- running


class Crash(AssertionError):
    pass


def run_cli(root: Path, argv: list[str], stdin: str | None = None) -> tuple[int, str]:
    """Run ``main(argv)`` in ``root``; return (exit code, stderr). Other exceptions propagate."""
    from rlvr_boundary.cli import main

    old = os.getcwd()
    err, out = io.StringIO(), io.StringIO()
    from rlvr_boundary import console as con

    # the private attribute: None means 'follow sys.stdout/stderr', which must survive us
    saved = (con.console._file, con.err_console._file)
    try:
        os.chdir(root)
        con.console.file, con.err_console.file = out, err
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: exit 2 on a bad flag value
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(old)
        con.console._file, con.err_console._file = saved
    return code, err.getvalue()


def check_outcome(code: int, err: str, what: str) -> None:
    if code not in (0, 2):
        raise Crash(f"{what}: exit code {code}\n{err[-2000:]}")
    if code == 2 and "Traceback" in err:
        raise Crash(f"{what}: traceback\n{err[-2000:]}")
