"""End to end: ``rlvr-boundary lab run --preset quick`` and its mechanics (CI runs it).

The run is the ``entropy`` experiment: the narrowing stages plus experiment 4's stage
(entropy table and figure, where learning landed), so one quick run tests both.
"""

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
    assert main(["lab", "run", "--preset", "quick", "--experiment", "entropy",
                 "--out", str(out)]) == 0
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
    assert set(doc["timings"]) == {"pretrain", "rl", "sample", "report", "entropy"}
    assert all(v["cpu_s"] > 0 for v in doc["timings"].values())
    audit = json.loads((quick_run / "report.json").read_text())
    assert audit["models"] == ["base", "step-3", "step-6"]
    # the lab's numbers are the report's numbers
    assert doc["pass_at_1"]["rl"] == audit["pass_at_k"]["step-6"][0]


def test_rerun_resumes_without_redoing_work(quick_run):
    from rlvr_boundary.cli import main

    stamp = {p: p.stat().st_mtime_ns for p in (quick_run / "rollouts").glob("part-*.parquet")}
    stamp.update({quick_run / f: (quick_run / f).stat().st_mtime_ns
                  for f in ("entropy.json", "entropy.png", "learning.json")})
    base_stamp = (quick_run / "base" / "model.safetensors").stat().st_mtime_ns
    before = json.loads((quick_run / "lab_result.json").read_text())["entropy"]
    assert main(["lab", "run", "--preset", "quick", "--experiment", "entropy",
                 "--out", str(quick_run)]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp
    assert json.loads((quick_run / "lab_result.json").read_text())["entropy"] == before
    assert (quick_run / "base" / "model.safetensors").stat().st_mtime_ns == base_stamp


def test_other_options_in_the_same_folder_are_refused(quick_run):
    from rlvr_boundary.cli import main

    assert main(["lab", "run", "--preset", "quick", "--seed", "1", "--experiment", "entropy",
                 "--out", str(quick_run)]) == 2
    # the narrowing experiment's options differ too (experiment is an option)
    assert main(["lab", "run", "--preset", "quick", "--out", str(quick_run)]) == 2


def test_entropy_stage_writes_experiment_4(quick_run):
    """The entropy table is the report's numbers; where learning landed is the score
    --before computation on the last checkpoint's samples."""
    import numpy as np
    import pyarrow.parquet as pq

    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.lab import entropy as E

    for f in E.STAGE_FILES:
        assert (quick_run / f).stat().st_size > 0
    assert (quick_run / "entropy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = read_result(quick_run / "lab_result.json", kind="lab-run")
    audit = json.loads((quick_run / "report.json").read_text())
    rows = doc["entropy"]["table"]
    assert [r["model"] for r in rows] == ["base", "step-3", "step-6"]
    assert [r["step"] for r in rows] == [0, 3, 6]
    assert rows[0]["problem"] is None and rows[2]["problem"] is not None
    for r in rows:
        assert r["pass_at_1"] == audit["pass_at_k"][r["model"]][0]
        # the table's token entropy is the mean of the samples' entropy_mean
        t = pq.read_table(quick_run / "rollouts" / f"part-{r['model']}.parquet",
                          columns=["entropy_mean"]).column("entropy_mean").to_numpy()
        assert r["token_entropy"] == pytest.approx(float(np.mean(t)), rel=1e-6)
    # preserved + shrunk + expanded: problems solved by either model at K (of 24)
    p = rows[2]["problem"]
    assert 0 <= p["P"] + p["S"] + p["E"] <= 24 and min(p[k] for k in "PESO") >= 0
    table = json.loads((quick_run / "entropy.json").read_text())
    assert len(table["training"]) == 6  # one record per GRPO step
    assert "| step-6 |" in (quick_run / "entropy.md").read_text()
    lr = read_result(quick_run / "learning.json", kind="learning_landed")
    assert lr["options"]["rows"] == lr["texts"] == 24 * 8  # all of step-6's samples
    assert lr["labels"] == {"before": "base", "after": "step-6"}
    assert doc["entropy"]["learning"]["tokens"] == lr["tokens"] > 0
    shares = [lr["barely_moved"][t] for t in ("0.01", "0.05", "0.1")]
    assert 0 <= shares[0] <= shares[1] <= shares[2] <= 1
    assert doc["entropy"]["learning"]["by_position"] == lr["by_position"]
