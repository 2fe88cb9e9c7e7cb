"""The rollout data model: validated streaming readers, count reduction, sharded store."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.rollouts import (
    iter_rollout_batches,
    read_manifest,
    read_rollouts,
    reduce_counts,
    write_rollouts,
)
from rlvr_boundary.io.store import ShardedWriter


def make_rollouts(rng, prompts=30, models=("base", "rl"), n=8):
    rows = {"prompt_id": [], "model": [], "sample_idx": [], "correct": []}
    truth = {}
    for m in models:
        for p in range(prompts):
            ok = rng.random(n) < rng.random()
            truth[(m, f"q{p:03d}")] = int(ok.sum())
            for i in range(n):
                rows["prompt_id"].append(f"q{p:03d}")
                rows["model"].append(m)
                rows["sample_idx"].append(i)
                rows["correct"].append(bool(ok[i]))
    order = rng.permutation(len(rows["model"]))  # file order must not matter
    return pa.table({k: [v[i] for i in order] for k, v in rows.items()}), truth


@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "jsonl.gz"])
def test_reduce_counts_any_format_small_batches(tmp_path, suffix):
    rng = np.random.default_rng(0)
    table, truth = make_rollouts(rng)
    path = tmp_path / f"r.{suffix}"
    if suffix == "parquet":
        write_rollouts(table, path, manifest={"sampling": {"temperature": 0.6}})
        assert read_manifest(path)["sampling"]["temperature"] == 0.6
    else:
        opener = gzip.open if suffix.endswith("gz") else open
        with opener(path, "wt") as fh:
            for row in table.to_pylist():
                fh.write(json.dumps(row) + "\n")
    counts = reduce_counts(path, batch_rows=37)  # many partial aggregates
    assert set(counts) == {"base", "rl"}
    for m, ct in counts.items():
        assert list(ct.prompt_ids) == sorted(ct.prompt_ids)
        assert np.all(ct.n == 8)
        assert [int(x) for x in ct.c] == [truth[(m, p)] for p in ct.prompt_ids]


def test_shard_directory_and_resume(tmp_path):
    rng = np.random.default_rng(1)
    table, truth = make_rollouts(rng, prompts=10)
    out = tmp_path / "store"
    w = ShardedWriter(out, manifest={"seed": 1}, must_match=("seed",))
    for m in ("base", "rl"):
        w.write(m, table.filter(pa.compute.equal(table["model"], m)))
    assert w.done() == {"base", "rl"} and not w.complete
    w.finish({"rows": table.num_rows})
    assert w.complete
    counts = reduce_counts(out)
    assert int(counts["rl"].c.sum()) == sum(v for (m, _), v in truth.items() if m == "rl")
    # Resuming with a different seed would mix incompatible samples: refused.
    with pytest.raises(InputError, match="cannot resume"):
        ShardedWriter(out, manifest={"seed": 2}, must_match=("seed",))
    assert ShardedWriter(out, manifest={"seed": 1}, must_match=("seed",)).done() == {"base", "rl"}


def test_duplicated_or_missing_samples_are_refused(tmp_path):
    t = pa.table({"prompt_id": ["a"] * 3, "model": ["m"] * 3, "sample_idx": [0, 1, 1],
                  "correct": [True, False, True]})
    write_rollouts(t, tmp_path / "dup.parquet")
    with pytest.raises(InputError, match="sample_idx 1 more than once"):
        reduce_counts(tmp_path / "dup.parquet")
    t2 = pa.table({"prompt_id": ["a"] * 2, "model": ["m"] * 2, "sample_idx": [0, 2],
                   "correct": [True, False]})
    write_rollouts(t2, tmp_path / "gap.parquet")
    with pytest.raises(InputError, match="sample_idx"):
        reduce_counts(tmp_path / "gap.parquet")


def test_coercions_and_located_errors(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"prompt_id": 7, "model": "m", "sample_idx": 0, "correct": 1}\n'
                 '{"prompt_id": 7, "model": "m", "sample_idx": 1, "correct": 0}\n')
    t = read_rollouts(p)
    assert t["prompt_id"].to_pylist() == ["7", "7"] and t["correct"].to_pylist() == [True, False]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt_id": "a", "model": "m", "sample_idx": 0, "correct": true}\n'
                   '{"prompt_id": "a", "model": "m", "sample_idx": 1, "correct": "yes"}\n')
    with pytest.raises(InputError) as e:
        list(iter_rollout_batches(bad))
    assert e.value.line == 2 and e.value.field == "correct"
    missing = tmp_path / "missing.jsonl"
    missing.write_text('{"prompt_id": "a", "model": "m", "sample_idx": 0}\n')
    with pytest.raises(InputError, match="correct"):
        list(iter_rollout_batches(missing))
    neg = tmp_path / "neg.parquet"
    pq.write_table(pa.table({"prompt_id": ["a"], "model": ["m"], "sample_idx": [-1],
                             "correct": [True]}), neg)
    with pytest.raises(InputError, match="sample_idx must be >= 0") as e:
        list(iter_rollout_batches(neg))
    assert e.value.line == 1


def test_write_rollouts_is_atomic_on_bad_table(tmp_path):
    out = tmp_path / "o.parquet"
    with pytest.raises(InputError):
        write_rollouts(pa.table({"prompt_id": ["a"], "model": ["m"]}), out)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ten_million_rows_reduce_in_bounded_memory(tmp_path):
    """10M sample rows (10,000 prompts x 1,000 samples) reduce without loading the table."""
    path = tmp_path / "big"
    w = ShardedWriter(path)
    rng = np.random.default_rng(0)
    n = 1000
    expect_c = 0
    for shard in range(20):
        P = 500
        pids = np.repeat([f"p{shard:02d}-{i:04d}" for i in range(P)], n)
        corr = rng.random(P * n) < 0.3
        expect_c += int(corr.sum())
        w.write(f"{shard:02d}", pa.table({
            "prompt_id": pids, "model": np.full(P * n, "m"),
            "sample_idx": np.tile(np.arange(n), P), "correct": corr}))
    # Peak memory measured in a fresh process, so the writing above does not count.
    # VmHWM of the child: ru_maxrss survives execve on Linux and would report our own peak.
    code = ("import re, json; from rlvr_boundary.io.rollouts import reduce_counts; "
            f"c = reduce_counts({str(path)!r})['m']; "
            "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
            "print(json.dumps([len(c), int(c.n.min()), int(c.n.max()), int(c.c.sum()), hwm / 1024]))")
    # The system allocator makes the peak reproducible: Arrow's default jemalloc pool keeps
    # freed batches for a while, so its peak varies with timing.
    env = dict(os.environ, ARROW_DEFAULT_MEMORY_POOL="system")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    P, nmin, nmax, c_sum, peak_mb = json.loads(out.stdout)
    assert (P, nmin, nmax, c_sum) == (10_000, n, n, expect_c)
    # The whole table is 251 MB in Arrow and read_rollouts peaks at ~385 MB; streaming
    # peaks at ~142 MB, of which ~71 MB is the interpreter with numpy and pyarrow.
    print(f"10M rows reduced with peak RSS {peak_mb:.0f} MB")
    assert peak_mb < 250, peak_mb


def test_lone_surrogates_are_replaced_and_reported(tmp_path, caplog):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps({"prompt_id": "a", "model": "m", "sample_idx": 0, "correct": True,
                             "text": "\udcff ok \U0001F600"}) + "\n")
    t = read_rollouts(p)
    assert t["text"][0].as_py() == "\ufffd ok \U0001F600"  # pairs kept, the lone one replaced
    assert "1 value(s) held lone surrogates" in caplog.text and "field 'text'" in caplog.text


def test_lone_surrogates_are_reported_once_per_file(tmp_path, caplog):
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    p = tmp_path / "many.jsonl"
    p.write_text("".join(json.dumps({"prompt_id": f"a{i}", "model": "m", "sample_idx": 0,
                                     "correct": True, "text": "\udcff"}) + "\n"
                         for i in range(30)))
    batches = list(iter_rollout_batches(p, ["text"], batch_rows=4))
    assert len(batches) == 8
    assert caplog.text.count("held lone surrogates") == 1


def test_write_rollouts_writes_the_coerced_table_and_fresh_versions(tmp_path):
    from rlvr_boundary import __version__
    from rlvr_boundary.io.results import SCHEMA_VERSION
    from rlvr_boundary.io.schema import manifest_path_for

    t = pa.table({"prompt_id": [7, 8], "model": ["m", "m"], "sample_idx": [0, 0],
                  "correct": [1, 0]})  # integer ids and 0/1 verdicts: coerced on write
    copied = {"schema_version": "0.1", "tool_version": "0.0.1", "engine": "vllm"}
    path = write_rollouts(t, tmp_path / "r.parquet", manifest=copied)
    schema = pq.read_schema(path)
    assert schema.field("prompt_id").type == pa.string()
    assert schema.field("correct").type == pa.bool_()
    man = json.loads(manifest_path_for(path).read_text())
    assert man == {"schema_version": SCHEMA_VERSION, "tool_version": __version__,
                   "engine": "vllm"}
    j = write_rollouts(t, tmp_path / "r.jsonl")
    assert json.loads(j.read_text().splitlines()[0])["correct"] is True


# ----------------------------------------------------------------------------- exact sample_idx


def test_duplicate_and_gap_with_the_moments_of_a_permutation_are_refused(tmp_path):
    """{0,1,1,4,5,5,6,6,8,9} has the count, min, max, sum and sum of squares of 0..9."""
    bad = [0, 1, 1, 4, 5, 5, 6, 6, 8, 9]
    assert (len(bad), min(bad), max(bad), sum(bad), sum(i * i for i in bad)) == \
        (10, 0, 9, sum(range(10)), sum(i * i for i in range(10)))
    t = pa.table({"prompt_id": ["p"] * 10, "model": ["m"] * 10, "sample_idx": bad,
                  "correct": [True] * 10})
    write_rollouts(t, tmp_path / "r.parquet")
    with pytest.raises(InputError, match="sample_idx 1 more than once"):
        reduce_counts(tmp_path / "r.parquet")


def _reference_ok(rows) -> bool:
    from collections import defaultdict

    groups = defaultdict(list)
    for g, i in rows:
        groups[g].append(i)
    return all(sorted(v) == list(range(len(v))) for v in groups.values())


def _reduce_in_batches(rows, cuts, monkeypatch=None):
    from rlvr_boundary.io.rollouts import CountReducer

    red = CountReducer("x")
    bounds = [0, *sorted(set(cuts)), len(rows)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        part = rows[a:b]
        red.add(pa.table({"prompt_id": pa.array([f"p{g % 3}" for g, _ in part], pa.string()),
                          "model": pa.array([f"m{g // 3}" for g, _ in part], pa.string()),
                          "sample_idx": pa.array([i for _, i in part], pa.int64()),
                          "correct": pa.array([i % 2 == 0 for _, i in part])}))
    return red.result("x")


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6)), min_size=1, max_size=60),
       st.lists(st.integers(0, 60), max_size=8), st.booleans(), st.randoms(use_true_random=False))
def test_exact_check_equals_brute_force(rows, cuts, complete, rnd):
    """Any multiset of (group, index), in any order and any batching: refused exactly
    when some group is not 0..n-1 once each (reference: sort each group)."""
    import rlvr_boundary.io.rollouts as R

    if complete:  # also many valid tables: each group a shuffled 0..n-1
        sizes = {g: 1 + i for g, i in rows}
        rows = [(g, i) for g, n in sizes.items() for i in range(n)]
        rnd.shuffle(rows)
    old = R.SampleIndexSet.MAX_RUNS
    R.SampleIndexSet.MAX_RUNS = 1  # merge runs at every batch: the compaction path too
    try:
        try:
            _reduce_in_batches(rows, [c % (len(rows) + 1) for c in cuts])
            ok = True
        except InputError as exc:
            assert "sample_idx" in str(exc)
            ok = False
    finally:
        R.SampleIndexSet.MAX_RUNS = old
    assert ok == _reference_ok(rows)


def test_in_order_tables_hold_one_integer_per_group():
    from rlvr_boundary.io.rollouts import SampleIndexSet

    s = SampleIndexSet()
    # groups interleaved (p0 #0, p1 #0, ..., p0 #1, ...): each group ascending
    for i in range(8):
        s.add(pa.table({"prompt_id": [f"p{j}" for j in range(100)], "model": ["m"] * 100,
                        "sample_idx": [i] * 100}))
    assert s.pending == 0 and s.runs == [] and s.prefix[:100].tolist() == [8] * 100
    s.add(pa.table({"prompt_id": ["p0"], "model": ["m"], "sample_idx": [10]}))  # ahead of 8, 9
    assert s.pending == 1
    s.add(pa.table({"prompt_id": ["p0", "p0"], "model": ["m", "m"], "sample_idx": [9, 8]}))
    s._compact()
    assert s.pending == 0 and s.prefix[0] == 11
    with pytest.raises(InputError, match="sample_idx 10 more than once"):
        s.add(pa.table({"prompt_id": ["p0"], "model": ["m"], "sample_idx": [10]}))


def test_keys_do_not_collide_across_prompt_and_model_boundaries():
    """("a:b", "c") and ("a", "b:c") are different groups."""
    from rlvr_boundary.io.rollouts import SampleIndexSet

    s = SampleIndexSet()
    s.add(pa.table({"prompt_id": ["a:b", "a"], "model": ["c", "b:c"], "sample_idx": [0, 0]}))
    assert s.groups == 2


def test_too_far_out_of_order_is_refused_with_advice(monkeypatch):
    from rlvr_boundary.io.rollouts import SampleIndexSet

    monkeypatch.setattr(SampleIndexSet, "MAX_PENDING", 5)
    monkeypatch.setattr(SampleIndexSet, "MAX_RUNS", 0)
    s = SampleIndexSet()
    with pytest.raises(InputError, match="sort the table by prompt_id, model, sample_idx"):
        s.add(pa.table({"prompt_id": ["p"] * 10, "model": ["m"] * 10,
                        "sample_idx": list(range(1, 11))}))


def test_empty_batch_with_verify_status_validates():
    """rft-select keeps no row: the empty table (with verify_status) is valid, not an
    IndexError."""
    from rlvr_boundary.io.rollouts import validate_batch

    t = pa.table({"prompt_id": pa.array([], pa.string()), "model": pa.array([], pa.string()),
                  "sample_idx": pa.array([], pa.int64()), "correct": pa.array([], pa.bool_()),
                  "verify_status": pa.array([], pa.string()),
                  "truncated": pa.array([], pa.int64()), "num_tokens": pa.array([], pa.float64())})
    out = validate_batch(t, "x", 1)
    assert out.num_rows == 0 and out.schema.field("truncated").type == pa.bool_()


@pytest.mark.parametrize("name", ["o.csv", "o.jsonl.gz", "o.json", "o"])
def test_write_rollouts_refuses_an_ending_it_would_not_honour(tmp_path, name):
    t = pa.table({"prompt_id": ["a"], "model": ["m"], "sample_idx": [0], "correct": [True]})
    with pytest.raises(InputError, match="format follows the ending"):
        write_rollouts(t, tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    write_rollouts(t, tmp_path / "o.JSONL")
    assert json.loads((tmp_path / "o.JSONL").read_text())["prompt_id"] == "a"


def test_write_rollout_batches_streams_and_conforms(tmp_path):
    from rlvr_boundary.io.rollouts import table_schema, write_rollout_batches

    a = pa.table({"prompt_id": ["a", "a"], "model": ["m", "m"], "sample_idx": [0, 1],
                  "correct": [True, False], "answer": pa.array([None, None], pa.null())})
    b = pa.table({"prompt_id": ["b"], "model": ["m"], "sample_idx": [0], "correct": [True],
                  "answer": ["4"]})
    shards = tmp_path / "s"
    w = ShardedWriter(shards)
    w.write("0", a)
    w.write("1", b.drop(["answer"]))
    w.write("2", b)
    schema = table_schema(shards)
    assert schema.field("answer").type == pa.string()
    out = write_rollout_batches(iter_rollout_batches(shards), tmp_path / "o.parquet",
                                schema=schema)
    got = pq.read_table(out)
    assert got.column("answer").to_pylist() == [None, None, None, "4"]
    assert got.column("prompt_id").to_pylist() == ["a", "a", "b", "b"]
    with pytest.raises(InputError, match="columns the others lack"):
        write_rollout_batches([b.drop(["answer"]), b], tmp_path / "p.parquet")
    assert not (tmp_path / "p.parquet").exists()
    j = write_rollout_batches([a, b], tmp_path / "o.jsonl")
    assert [json.loads(x)["prompt_id"] for x in j.read_text().splitlines()] == ["a", "a", "b"]
