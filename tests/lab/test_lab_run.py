"""End to end: ``rlvr-boundary lab run --preset quick`` and its mechanics (CI runs it)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = [pytest.mark.slow, pytest.mark.torch]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    from rlvr_boundary.cli import main

    out = tmp_path_factory.mktemp("lab") / "quick"
    assert main(["lab", "run", "--preset", "quick", "--out", str(out)]) == 0
    return out


def test_checkpoints_load_back_as_hf_folders(quick_run):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folders = [quick_run / "base", quick_run / "rl" / "step-3", quick_run / "rl" / "step-6"]
    for folder in folders:
        model = AutoModelForCausalLM.from_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        ids = tok("make 6 from 1 2 3:", return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=4, do_sample=False,
                                 pad_token_id=tok.pad_token_id)
        assert out.shape[1] > ids.shape[1]
    # the RL checkpoints differ from the base (training moved the weights)
    from safetensors.torch import load_file

    a = load_file(str(folders[0] / "model.safetensors"))
    b = load_file(str(folders[2] / "model.safetensors"))
    assert any(not torch.equal(a[k], b[k]) for k in a)


def test_rollouts_validate_against_the_schema(quick_run):
    import pyarrow as pa

    from rlvr_boundary.io.rollouts import iter_rollout_batches, read_manifest, reduce_counts
    from rlvr_boundary.lab import task as T

    table = pa.concat_tables(list(iter_rollout_batches(quick_run / "rollouts")))
    assert set(table.column("model").to_pylist()) == {"base", "step-3", "step-6"}
    assert table.num_rows == 3 * 24 * 8
    for col in ("text", "answer", "correct", "verify_status", "num_tokens", "entropy_mean",
                "rbf_mean", "log_ppl", "entropy_bins", "strategy"):
        assert col in table.column_names
    rows = table.to_pylist()
    # every verdict is the verifier's on the stored text
    for r in rows[::17]:
        a, b, c = (int(x) for x in r["prompt_id"].split("-")[0])
        p = T.Problem(a, b, c, int(r["prompt_id"].split("-")[1]))
        v = T.verify(p, r["text"])
        assert (v["correct"], v["answer"], v["strategy"]) == (r["correct"], r["answer"],
                                                              r["strategy"])
    counts = reduce_counts(quick_run / "rollouts")
    assert set(counts) == {"base", "step-3", "step-6"}
    assert all(int(c.n.min()) == int(c.n.max()) == 8 and len(c) == 24 for c in counts.values())
    man = read_manifest(quick_run / "rollouts")
    assert man["sampling"]["n"] == 8 and man["engine"] == "transformers"
    assert man["schema_version"] and man["tool_version"]


def test_report_and_result_are_written(quick_run):
    from rlvr_boundary.io.results import read_result

    html = (quick_run / "report.html").read_text(encoding="utf-8")
    for section in ("pass@k curves", "Coverage", "Support dynamics", "Training evolution",
                    "Token statistics", "Provenance"):
        assert section in html
    doc = read_result(quick_run / "lab_result.json", kind="lab-run")
    assert doc["options"]["preset"] == "quick"
    assert doc["final_checkpoint"] == "step-6"
    assert set(doc["timings"]) == {"pretrain", "rl", "sample", "report"}
    assert all(v["cpu_s"] > 0 for v in doc["timings"].values())
    audit = json.loads((quick_run / "report.json").read_text())
    assert audit["models"] == ["base", "step-3", "step-6"]
    # the lab's numbers are the report's numbers
    assert doc["pass_at_1"]["rl"] == audit["pass_at_k"]["step-6"][0]


def test_rerun_resumes_without_redoing_work(quick_run):
    from rlvr_boundary.cli import main

    stamp = {p: p.stat().st_mtime_ns for p in (quick_run / "rollouts").glob("part-*.parquet")}
    base_stamp = (quick_run / "base" / "model.safetensors").stat().st_mtime_ns
    assert main(["lab", "run", "--preset", "quick", "--out", str(quick_run)]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp
    assert (quick_run / "base" / "model.safetensors").stat().st_mtime_ns == base_stamp


def test_other_options_in_the_same_folder_are_refused(quick_run):
    from rlvr_boundary.cli import main

    assert main(["lab", "run", "--preset", "quick", "--seed", "1", "--out", str(quick_run)]) == 2
