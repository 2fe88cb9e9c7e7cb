"""``sample`` and ``score`` verbs: shards, manifest, resume after interruption or SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr_boundary.backends import SamplingParams, get_backend
from rlvr_boundary.io.prompts import read_prompts
from rlvr_boundary.pipelines.sample import SampleOptions, sample_run
from rlvr_boundary.cli import main

ROOT = Path(__file__).parents[2]
QUESTIONS = ["What is 12 + 7?", "Let x + 2 = 5.", "Compute 3 * 4 - 5.", "Find the sum of 1, 2, 3 and 4."]
ANSWERS = ["19", "3", "7", "10"]


@pytest.fixture(scope="module")
def prompt_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("prompts") / "prompts.jsonl"
    p.write_text("".join(json.dumps({"unique_id": f"p{i}", "problem": q, "answer": a}) + "\n"
                         for i, (q, a) in enumerate(zip(QUESTIONS, ANSWERS))), encoding="utf-8")
    return p


def read_dir(d: Path) -> pa.Table:
    t = pa.concat_tables([pq.read_table(f) for f in sorted(Path(d).glob("part-*.parquet"))])
    return t.sort_by([("prompt_id", "ascending"), ("sample_idx", "ascending")])


def assert_reads_as_a_dataset(d: Path, t: pa.Table) -> None:
    """pandas and pyarrow read the output folder as one table: every row of ``t``."""
    pd = pytest.importorskip("pandas")
    import pyarrow.dataset as ds

    keys = sorted(zip(t.column("prompt_id").to_pylist(), t.column("sample_idx").to_pylist()))
    df = pd.read_parquet(d)
    assert sorted(zip(df.prompt_id, df.sample_idx)) == keys
    assert sorted(df.text) == sorted(t.column("text").to_pylist())
    for table in (ds.dataset(d, format="parquet").to_table(), pq.read_table(d)):
        assert table.num_rows == t.num_rows and set(table.column_names) == set(t.column_names)


def check_complete(t: pa.Table, n: int, prompts: int) -> None:
    keys = list(zip(t.column("prompt_id").to_pylist(), t.column("sample_idx").to_pylist()))
    assert len(keys) == len(set(keys)) == n * prompts  # no duplicates, no losses
    assert set(keys) == {(f"p{i}", s) for i in range(prompts) for s in range(n)}


@pytest.fixture(scope="module")
def reference(tiny_model, prompt_file, tmp_path_factory):
    """An uninterrupted in-process run: the samples every resumed run must reproduce."""
    out = tmp_path_factory.mktemp("ref") / "ref"
    b = get_backend("transformers", model=str(tiny_model), batch_size=3, num_threads=1)
    opts = SampleOptions(n=5, params=SamplingParams(max_new_tokens=24, seed=5), template="qwen-boxed",
                         label="tiny", shard_size=4)
    sample_run(b, read_prompts(prompt_file), out, opts)
    return read_dir(out)


def test_sample_cli_writes_shards_and_manifest(tiny_model, prompt_file, tmp_path, reference):
    out = tmp_path / "s"
    code = main(["sample", "--model", str(tiny_model), "--prompts", str(prompt_file), "--n", "5",
                 "--out", str(out), "--max-new-tokens", "24", "--seed", "5", "--template", "qwen-boxed",
                 "--label", "tiny", "--shard-size", "4", "--batch-size", "7", "--threads", "1",
                 "--json", str(tmp_path / "sum.json")])
    assert code == 0
    t = read_dir(out)
    check_complete(t, 5, 4)
    assert not list(out.glob(".part-*.tmp"))  # a killed run's temporary shard is gone
    # a different batch size draws the same samples (per-sample seeds)
    assert t.column("text").to_pylist() == reference.column("text").to_pylist()
    man = json.loads((out / "_manifest.json").read_text())
    assert man["sampling"]["temperature"] == 1.0 and man["sampling"]["n"] == 5
    assert man["model_hash"] and len(man["model_hash"]) == 64
    assert man["engine"] == "transformers" and man["library_versions"]["torch"].startswith("2.")
    assert man["template"] == "qwen-boxed" and man["dataset_hash"]
    assert (out / "_COMPLETE").exists()
    assert_reads_as_a_dataset(out, t)
    from tests.results.schema_check import assert_valid

    doc = assert_valid(tmp_path / "sum.json")
    assert doc["kind"] == "sample" and doc["samples"] == 20 and doc["n"] == 5
    assert len(list(out.glob("part-*.parquet"))) == 5  # ceil(20 / 4)
    assert t.column("seed").null_count == 0 and t.column("entropy_kind").to_pylist()[0] == "exact"
    assert json.loads((tmp_path / "sum.json").read_text())["samples"] == 20
    # resuming a finished run draws nothing and changes nothing
    assert main(["sample", "--model", str(tiny_model), "--prompts", str(prompt_file), "--n", "5",
                 "--out", str(out), "--max-new-tokens", "24", "--seed", "5", "--template",
                 "qwen-boxed", "--label", "tiny", "--shard-size", "4", "--threads", "1"]) == 0
    assert read_dir(out).equals(t)
    # changing a sampling option on resume is refused
    assert main(["sample", "--model", str(tiny_model), "--prompts", str(prompt_file), "--n", "5",
                 "--out", str(out), "--max-new-tokens", "24", "--seed", "6", "--template",
                 "qwen-boxed", "--label", "tiny", "--shard-size", "4"]) == 2
    # A folder whose manifest has the name rlvr-boundary 0.1 gave it: its settings are
    # checked the same way, and a resume renames it (the shards stay as they are).
    (out / "_manifest.json").rename(out / "manifest.json")
    assert main(["sample", "--model", str(tiny_model), "--prompts", str(prompt_file), "--n", "5",
                 "--out", str(out), "--max-new-tokens", "24", "--seed", "6", "--template",
                 "qwen-boxed", "--label", "tiny", "--shard-size", "4"]) == 2
    assert (out / "manifest.json").is_file() and not (out / "_manifest.json").exists()
    assert main(["sample", "--model", str(tiny_model), "--prompts", str(prompt_file), "--n", "5",
                 "--out", str(out), "--max-new-tokens", "24", "--seed", "5", "--template",
                 "qwen-boxed", "--label", "tiny", "--shard-size", "4", "--threads", "1"]) == 0
    assert not (out / "manifest.json").exists()
    assert json.loads((out / "_manifest.json").read_text())["model_hash"] == man["model_hash"]
    assert read_dir(out).equals(t)
    assert_reads_as_a_dataset(out, t)


@pytest.mark.parametrize("stop_after", [1, 6, 13])
def test_interrupted_in_process_resumes_exactly(tiny_model, prompt_file, tmp_path, reference, stop_after):
    b = get_backend("transformers", model=str(tiny_model), batch_size=2, num_threads=1)
    opts = SampleOptions(n=5, params=SamplingParams(max_new_tokens=24, seed=5), template="qwen-boxed",
                         label="tiny", shard_size=4)
    seen = [0]

    def boom(k):
        seen[0] += k
        if seen[0] >= stop_after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sample_run(b, read_prompts(prompt_file), tmp_path / "s", opts, progress=boom)
    assert not (tmp_path / "s" / "_COMPLETE").exists()
    s = sample_run(b, read_prompts(prompt_file), tmp_path / "s", opts)
    assert s["resumed_from"] == 4 * (stop_after // 4)
    t = read_dir(tmp_path / "s")
    check_complete(t, 5, 4)
    assert t.select(["prompt_id", "sample_idx", "seed", "text"]).equals(
        reference.select(["prompt_id", "sample_idx", "seed", "text"]))
    # batch composition changes logits only in the last float bits
    np.testing.assert_allclose(t.column("log_ppl").to_numpy(), reference.column("log_ppl").to_numpy(),
                               rtol=1e-6)


def _sigkill_run(tiny_model, prompt_file, out: Path, kill_at_shards: int | None) -> None:
    cmd = [sys.executable, "-m", "rlvr_boundary.cli", "sample", "--model", str(tiny_model),
           "--prompts", str(prompt_file), "--n", "5", "--out", str(out), "--max-new-tokens", "24",
           "--seed", "5", "--template", "qwen-boxed", "--label", "tiny", "--shard-size", "4",
           "--batch-size", "1", "--threads", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if kill_at_shards is None:
            assert proc.wait(timeout=300) == 0
            return
        # Keyed on progress, not on a clock: wait until the directory holds kill_at_shards
        # shards, then wait a random fraction of the time the last shard took in this run
        # (measured between two landings), so the kill lands inside the next shard however
        # fast or loaded the machine is. With one landing or none measured, kill at once.
        deadline = time.monotonic() + 240  # hang guard only
        landed: list[float] = []  # monotonic times at which this run's shards appeared
        count = len(list(out.glob("part-*.parquet")))
        while time.monotonic() < deadline and proc.poll() is None:
            now = len(list(out.glob("part-*.parquet")))
            if now > count:
                landed += [time.monotonic()] * (now - count)
                count = now
            if count >= kill_at_shards:
                if len(landed) >= 2:
                    shard_time = landed[-1] - landed[-2]
                    time.sleep(random.Random(kill_at_shards).uniform(0.0, 0.9) * shard_time)
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _sigkill_and_resume(tiny_model, prompt_file, out, reference, kill_points):
    for k in kill_points:
        _sigkill_run(tiny_model, prompt_file, out, k)
        assert not (out / "_COMPLETE").exists()
    _sigkill_run(tiny_model, prompt_file, out, None)
    t = read_dir(out)
    check_complete(t, 5, 4)
    assert not list(out.glob(".part-*.tmp"))  # a killed run's temporary shard is gone
    assert t.select(["prompt_id", "sample_idx", "seed", "text"]).equals(
        reference.select(["prompt_id", "sample_idx", "seed", "text"]))


@pytest.mark.slow
def test_sigkill_then_resume(tiny_model, prompt_file, tmp_path, reference):
    _sigkill_and_resume(tiny_model, prompt_file, tmp_path / "k", reference, [2])


@pytest.mark.slow
def test_sigkill_several_points_then_resume(tiny_model, prompt_file, tmp_path, reference):
    _sigkill_and_resume(tiny_model, prompt_file, tmp_path / "k", reference, [0, 1, 3])


def test_score_cli_adds_cross_model_columns(tiny_model, tiny_qwen, prompt_file, tmp_path, reference):
    src = tmp_path / "s"
    b = get_backend("transformers", model=str(tiny_model), batch_size=4, num_threads=1)
    opts = SampleOptions(n=5, params=SamplingParams(max_new_tokens=24, seed=5), template="qwen-boxed",
                         label="tiny", shard_size=4)
    sample_run(b, read_prompts(prompt_file), src, opts)
    # the generating model itself: reproduces the sampler's log-PPL where the text re-tokenizes
    same = tmp_path / "same"
    assert main(["score", str(src), "--model", str(tiny_model), "--out", str(same), "--threads", "1",
                 "--label", "self"]) == 0
    t = read_dir(same)
    assert t.num_rows == 20 and set(t.column("score_model").to_pylist()) == {"self"}
    lp, sp = np.array(t.column("log_ppl").to_pylist()), np.array(t.column("score_log_ppl").to_pylist())
    n_tok, s_tok = t.column("num_tokens").to_numpy(), t.column("score_num_tokens").to_numpy()
    match = n_tok == s_tok
    assert match.sum() >= 10
    np.testing.assert_allclose(sp[match], lp[match], atol=2e-5)
    # another model: a different, finite perplexity, the template taken from the manifest
    other = tmp_path / "other"
    assert main(["score", str(src), "--model", str(tiny_qwen), "--out", str(other), "--threads", "1",
                 "--label", "qwen"]) == 0
    o = read_dir(other)
    q = np.array(o.column("score_log_ppl").to_pylist())
    assert np.all(np.isfinite(q)) and not np.allclose(q, lp)
    assert len(o.column("score_entropy_bins").to_pylist()[0]) == 10
    man = json.loads((other / "_manifest.json").read_text())
    assert man["score_options"]["template"] == "qwen-boxed" and man["score_model_hash"]
    assert_reads_as_a_dataset(other, o)


def test_score_learning_without_out_says_where_the_scored_rows_went(tiny_model, prompt_file,
                                                                    tmp_path, capsys):
    src = tmp_path / "s"
    b = get_backend("transformers", model=str(tiny_model), batch_size=4, num_threads=1)
    sample_run(b, read_prompts(prompt_file), src,
               SampleOptions(n=2, params=SamplingParams(max_new_tokens=8, seed=5),
                             template="qwen-boxed", label="tiny", shard_size=8))
    capsys.readouterr()
    learn = tmp_path / "learning.json"
    assert main(["score", str(src), "--model", str(tiny_model), "--before", str(tiny_model),
                 "--learning", str(learn), "--label", "after", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    default = tmp_path / "s.scored-after"
    assert default.is_dir() and learn.is_file()
    assert f"wrote the scored rows to {default}/ (the default beside ROLLOUTS; choose the " \
           "folder with --out)" in " ".join(out.split())
