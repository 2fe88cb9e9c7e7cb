"""lm-eval, lighteval and vLLM JSONL dumps reduced in bounded batches.

The streamed path (:func:`rlvr_boundary.io.formats.read_adapter`, which hands
every batch to the count reducer as it is read) must give the same counts as
the whole-table path (the adapter's table reduced in memory) and as the
verdict matrix the dump was written from, while holding about one batch of
rows: Arrow buffers are measured with pyarrow's allocator (tracemalloc does
not see them), at every batch.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet  # noqa: F401 (pa.parquet)
import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.io import adapters
from rlvr_boundary.io.adapters import _common
from rlvr_boundary.io.formats import counts_from_table, read_adapter
from tests.io.fixtures.tool_formats import (
    _jsonl,
    _lm_eval_record,
    lighteval_path,
    lm_eval_dir,
    write_lighteval_new,
    write_lm_eval_gsm8k,
    write_lm_eval_repeats,
    write_lm_eval_results,
    write_vllm_request_outputs,
)

BATCH = 256  # rows per batch in these tests (65,536 in use): many batches from small files


@pytest.fixture
def small_batches(monkeypatch):
    from rlvr_boundary.io.adapters import lighteval

    monkeypatch.setattr(_common, "BATCH_ROWS", BATCH)
    monkeypatch.setattr(lighteval, "READ_ROWS", BATCH)


def _as_dict(counts) -> dict:
    return {(c.model, str(p)): (int(n), int(k))
            for c in counts for p, n, k in zip(c.prompt_ids, c.n, c.c)}


def _streamed(fmt: str, path, label=None, choices=None):
    """Counts by the streamed path, and the most Arrow memory held at any batch."""
    peak, calls = [0], [0]

    def progress(rows: int) -> None:
        calls[0] += 1
        peak[0] = max(peak[0], pa.total_allocated_bytes())

    before = pa.total_allocated_bytes()
    out = read_adapter(fmt, path, label, choices, progress=progress)
    return out, max(0, peak[0] - before), calls[0]


def _whole(fmt: str, path, label: str, choices=None):
    table = adapters.read(fmt, path, model=label, **(choices or {}))
    return counts_from_table(table, path, label), table


LONG = " ".join(["we add the terms and simplify the expression step by step"] * 30)  # 1.8 kB


def write_lm_eval_long(d, V, task="gsm8k_long", stamp="2025-03-01T12-30-45.123456"):
    """generate_until, one filter, a long reasoning text per document (as a real dump has)."""
    rows = []
    for i, v in enumerate(V[:, 0]):
        args = {"gen_args_0": {"arg_0": f"Question {i}: {LONG[:300]}\nAnswer:",
                               "arg_1": {"until": ["Question:"], "do_sample": False}}}
        rows.append(_lm_eval_record(i, {"question": f"q{i}"}, str(i), args,
                                    [[f"{LONG} The answer is {i if v else -1}."]],
                                    [str(i if v else -1)], "strict-match",
                                    {"exact_match": float(v)}))
    return _jsonl(d / f"samples_{task}_{stamp}.jsonl", rows)


def _text_bytes(table: pa.Table) -> int:
    return sum(table.column(c).nbytes for c in ("text", "prompt", "gold", "answer")
               if c in table.column_names)


def _verdicts(P: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random((P, n)) < rng.beta(0.7, 0.7, (P, 1))


def test_lm_eval_single_sample_dump_streams(tmp_path, small_batches):
    V = _verdicts(4_000, 1, 0)
    d = lm_eval_dir(tmp_path, "org/model")
    write_lm_eval_results(d, "org/model")
    f = write_lm_eval_long(d, V)
    streamed, peak, calls = _streamed("lm-eval", f)
    whole, table = _whole("lm-eval", f, "org/model")
    assert _as_dict(streamed) == _as_dict(whole)
    (c,) = streamed
    assert c.model == "org/model" and c.n.sum() == 4_000 and c.c.sum() == int(V.sum())
    assert calls >= 4_000 // BATCH
    # The texts are never all held: at most a few batches' worth at any time.
    assert peak < _text_bytes(table) / 4, (peak, _text_bytes(table))


def test_lm_eval_filters_read_the_same_streamed(tmp_path, small_batches):
    V = _verdicts(3_000, 1, 6)
    d = lm_eval_dir(tmp_path, "org/model")
    write_lm_eval_results(d, "org/model")
    f = write_lm_eval_gsm8k(d, V)  # two filters: the strict one is read by default
    for choices in (None, {"filter": "flexible-extract"}):
        streamed, _, _ = _streamed("lm-eval", f, choices=choices)
        whole, _ = _whole("lm-eval", f, "org/model", choices)
        assert _as_dict(streamed) == _as_dict(whole)
    assert streamed[0].c.sum() == 3_000  # the flexible filter scores every document 1
    streamed, _, _ = _streamed("lm-eval", f)
    assert streamed[0].c.sum() == int(V.sum())


def test_lm_eval_directory_mixing_single_and_repeated_tasks(tmp_path, small_batches):
    # One task scored per sample (streamed rows), one over 8 repeats (counts only):
    # the streamed counts add the repeated task's counts to the streamed rows.
    V1, V8 = _verdicts(1_500, 1, 1), _verdicts(400, 8, 2)
    d = lm_eval_dir(tmp_path, "org/model")
    write_lm_eval_results(d, "org/model")
    write_lm_eval_gsm8k(d, V1)
    write_lm_eval_repeats(d, V8)
    streamed, _, calls = _streamed("lm-eval", d)
    whole, table = _whole("lm-eval", d, "org/model")
    assert set(table.column_names) == {"prompt_id", "model", "n", "c"}  # whole: a count table
    got = _as_dict(streamed)
    assert got == _as_dict(whole)
    assert got[("org/model", "humaneval_8/7")] == (8, int(V8[7].sum()))
    assert got[("org/model", "gsm8k/3")] == (1, int(V1[3, 0]))
    assert calls >= 1_500 // BATCH


def write_lighteval_long(path, V):
    """lighteval >= 0.11 details with long generations, in row groups of ``BATCH`` rows."""
    write_lighteval_new(path, V, metrics=("extractive_match",))
    t = pa.parquet.read_table(path)
    resp = t.column("model_response").combine_chunks()
    names = [resp.type.field(i).name for i in range(resp.type.num_fields)]
    fields = [resp.field(i) for i in range(len(names))]
    fields[names.index("text")] = pa.array([[LONG + g for g in r]
                                            for r in resp.field("text").to_pylist()])
    t = t.set_column(t.column_names.index("model_response"), "model_response",
                     pa.StructArray.from_arrays(fields, names=names))
    # A Parquet file is decoded a batch at a time within its row groups.
    pa.parquet.write_table(t, path, row_group_size=BATCH)
    return path


def test_lighteval_single_sample_dump_streams(tmp_path, small_batches):
    peaks = []
    for P in (1_000, 6_000):
        V = _verdicts(P, 1, P)
        f = write_lighteval_long(lighteval_path(tmp_path, "org/model", f"lighteval|aime{P}|0"),
                                 V)
        streamed, peak, calls = _streamed("lighteval", f)
        whole, table = _whole("lighteval", f, "org/model")
        assert _as_dict(streamed) == _as_dict(whole)
        assert streamed[0].model == "org/model" and streamed[0].c.sum() == int(V.sum())
        assert calls >= P // BATCH
        peaks.append(peak)
    # Six times the documents, about the same memory; well below the texts it read.
    assert peaks[1] < 1.5 * peaks[0] + (1 << 20), peaks
    assert peaks[1] < _text_bytes(table) / 2, (peaks, _text_bytes(table))


def test_lighteval_sampling_metric_gives_counts_without_rows(tmp_path, small_batches):
    V = _verdicts(500, 16, 4)
    f = write_lighteval_new(lighteval_path(tmp_path, "m", "lighteval|math_500|0"), V)
    streamed, _, calls = _streamed("lighteval", f)
    whole, _ = _whole("lighteval", f, "m")
    assert calls == 0  # nothing to stream: every document is a count
    assert _as_dict(streamed) == _as_dict(whole)
    assert sorted(v for v in _as_dict(streamed).values()) == sorted(
        (16, int(s)) for s in V.sum(axis=1))


def test_vllm_generations_stream(tmp_path, small_batches):
    V = _verdicts(800, 8, 5)
    f = write_vllm_request_outputs(tmp_path / "gen.jsonl", V)
    streamed, peak, calls = _streamed("vllm-jsonl", f, label="policy")
    whole, table = _whole("vllm-jsonl", f, "policy")
    assert _as_dict(streamed) == _as_dict(whole)
    c = streamed[0]
    order = np.argsort(c.prompt_ids.astype(str))
    ids = c.prompt_ids[order]
    assert (c.c[order] == V.sum(axis=1)[ids.astype(int)]).all() and (c.n == 8).all()
    assert calls >= 6_400 // BATCH and peak < table.nbytes / 4, (peak, table.nbytes)
    # the whole-table path holds all of it
    assert table.num_rows == 6_400


def test_streamed_memory_does_not_grow_with_the_dump(tmp_path, small_batches):
    peaks = []
    for P in (500, 2_000):
        f = write_vllm_request_outputs(tmp_path / f"g{P}.jsonl", _verdicts(P, 8, P))
        _, peak, _ = _streamed("vllm-jsonl", f, label="m")
        peaks.append(peak)
    # Four times the rows, about the same memory (a batch or two of rows).
    assert peaks[1] < 2 * peaks[0] + (1 << 20), peaks


def test_ungraded_vllm_generations_are_refused_before_any_batch(tmp_path, small_batches):
    f = write_vllm_request_outputs(tmp_path / "gen.jsonl", None, n=4, P=2_000)
    seen = []
    with pytest.raises(InputError, match="grade them first"):
        read_adapter("vllm-jsonl", f, "m", progress=seen.append)
    assert seen == []
