"""End to end: ``lab run --preset quick --experiment ...`` for the experiments other than narrowing (mechanics)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = [pytest.mark.slow, pytest.mark.torch]


def _run(out, experiment):
    from rlvr_boundary.cli import main

    assert main(["lab", "run", "--preset", "quick", "--experiment", experiment,
                 "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def distill_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("lab") / "distill", "distillation")


@pytest.fixture(scope="module")
def replace_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("lab") / "replace", "token-replacement")


def test_distillation_models_load_and_rollouts_validate(distill_run):
    import pyarrow as pa
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from rlvr_boundary.io.rollouts import iter_rollout_batches, read_manifest
    from rlvr_boundary.lab import distill as D
    from rlvr_boundary.lab import task as T

    from transformers import AutoTokenizer

    for name in ("teacher", "distilled"):
        AutoModelForCausalLM.from_pretrained(distill_run / name)
    tok = AutoTokenizer.from_pretrained(distill_run / "base")
    assert len(tok(" mad", add_special_tokens=False)["input_ids"]) == 1
    base = load_file(str(distill_run / "base" / "model.safetensors"))
    dist = load_file(str(distill_run / "distilled" / "model.safetensors"))
    assert any(not torch.equal(base[k], dist[k]) for k in base)

    table = pa.concat_tables(list(iter_rollout_batches(distill_run / "rollouts")))
    models = ["base", "step-6", "distilled", "teacher"]
    assert set(table.column("model").to_pylist()) == set(models)
    assert table.num_rows == 4 * 24 * 8
    rows = table.to_pylist()
    for r in rows[::13]:  # verdicts and labels are the four-strategy verifier's
        a, b, c = (int(x) for x in r["prompt_id"].split("-")[0])
        v = D.verify4(T.Problem(a, b, c, int(r["prompt_id"].split("-")[1])), r["text"])
        assert (v["correct"], v["strategy"]) == (r["correct"], r["strategy"])
    # the teacher writes the fourth strategy; the base never saw it
    share = {m: np.mean([r["strategy"] == "mad" for r in rows if r["model"] == m])
             for m in models}
    assert share["teacher"] > 0.05 and share["base"] == 0
    assert read_manifest(distill_run / "rollouts")["engine"] == "transformers"


def test_distillation_result_matches_the_rollouts(distill_run):
    import pyarrow as pa

    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.io.rollouts import iter_rollout_batches
    from rlvr_boundary.lab import distill as D
    from rlvr_boundary.lab import task as T

    doc = read_result(distill_run / "lab_result.json", kind="lab-run")
    assert doc["options"]["experiment"] == "distillation"
    assert doc["experiment_options"]["sft_steps"] == 40
    assert doc["models"] == ["base", "step-6", "distilled", "teacher"]
    assert set(doc["timings"]) == {"pretrain", "rl", "teacher", "distill", "sample", "report"}
    table = pa.concat_tables(list(iter_rollout_batches(distill_run / "rollouts"))).to_pylist()
    for m in doc["models"]:
        solved = {r["prompt_id"] for r in table if r["model"] == m and r["correct"]}
        assert sorted(solved) == sorted(doc["solved_prompt_ids"][m])
        assert doc["solved_at_K"]["by_model"][m]["all"] == len(solved)
        mad_only = solved & set(doc["mad_only_prompt_ids"])
        assert doc["solved_at_K"]["by_model"][m]["mad_only"] == len(mad_only)
    problems = [T.Problem(*(int(x) for x in pid.split("-")[0]), int(pid.split("-")[1]))
                for pid in sorted({r["prompt_id"] for r in table})]
    F = D.fitness4(problems)
    assert doc["solved_at_K"]["sizes"]["mad_only"] == int(((F[3] == 1) & ~F[:3].any(0)).sum())
    assert doc["pass_at_k"]["base"][-1] == len(doc["solved_prompt_ids"]["base"]) / 24
    assert (distill_run / "distillation.png").stat().st_size > 10_000
    assert (distill_run / "report.html").is_file()


def test_distillation_resumes(distill_run):
    stamp = {p: p.stat().st_mtime_ns for p in (distill_run / "rollouts").glob("part-*.parquet")}
    teacher = (distill_run / "teacher" / "model.safetensors").stat().st_mtime_ns
    _run(distill_run, "distillation")
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp
    assert (distill_run / "teacher" / "model.safetensors").stat().st_mtime_ns == teacher


def test_token_replacement_records_and_summary(replace_run):
    import pyarrow.parquet as pq

    from rlvr_boundary.analysis.replacement import replacement_effects
    from rlvr_boundary.io.results import read_result

    doc = read_result(replace_run / "lab_result.json", kind="lab-run")
    assert doc["options"]["experiment"] == "token-replacement"
    opts = doc["experiment_options"]
    assert opts == {"prompts": 12, "samples_per_prompt": 2, "n_bins": 5, "resamples": 1,
                    "alternative": "second", "positions": "every"}
    assert doc["models"] == ["base", "step-6"]
    for m in doc["models"]:
        rec = pq.read_table(replace_run / "replacement" / f"{m}.parquet").to_pydict()
        smp = pq.read_table(replace_run / "replacement" / f"{m}.samples.parquet").to_pydict()
        assert len(smp["text"]) == 12 * 2
        assert all(t != a for t, a in zip(rec["token"], rec["alternative"]))
        assert all(0 <= b < 5 for b in rec["bin"])
        for r in range(len(rec["sample"])):
            assert rec["replaced_text"][r].startswith(rec["prefix"][r] + rec["alternative"][r])
        # the stored summary is the aggregation of the stored records
        again = replacement_effects(rec["sample"], rec["bin"], np.array(rec["original"], float),
                                    rec["replaced"], rec["control"], smp["log_ppl"], 5)
        res = doc["results"][m]
        assert res["by_position"] == again["by_position"]
        assert res["by_tertile"] == again["by_tertile"]
        assert res["accuracy"] == pytest.approx(np.mean(smp["correct"]))
    assert (replace_run / "token_replacement.png").stat().st_size > 10_000


def test_token_replacement_resumes_and_refuses_other_options(replace_run):
    from rlvr_boundary.cli import main

    f = replace_run / "replacement" / "base.parquet"
    stamp = f.stat().st_mtime_ns
    _run(replace_run, "token-replacement")
    assert f.stat().st_mtime_ns == stamp
    assert main(["lab", "run", "--preset", "quick", "--experiment", "distillation",
                 "--out", str(replace_run)]) == 2


@pytest.fixture(scope="module")
def seeds_run(tmp_path_factory):
    """The seeds experiment at quick size on the cued family: 2 bases x 2 RL seeds."""
    from rlvr_boundary.cli import main

    out = tmp_path_factory.mktemp("lab") / "seeds"
    assert main(["lab", "run", "--preset", "quick", "--experiment", "seeds", "--task", "cued",
                 "--out", str(out)]) == 0
    return out


def _shard_numbers(folder):
    """(label, pass@1, share of prompts solved) of every shard in a rollout folder, by hand."""
    import pyarrow.parquet as pq

    out = []
    for f in sorted(folder.glob("part-*.parquet")):
        t = pq.read_table(f, columns=["model", "prompt_id", "correct"]).to_pydict()
        solved = {}
        for p, c in zip(t["prompt_id"], t["correct"]):
            solved[p] = solved.get(p, False) or bool(c)
        out.append((t["model"][0], float(np.mean(t["correct"])),
                    sum(solved.values()) / len(solved)))
    return out


def test_seeds_feeds_every_run_to_the_band(seeds_run):
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.report import words as W

    doc = read_result(seeds_run / "lab_result.json", kind="lab-run")
    audit = json_of(seeds_run / "report.json")
    assert audit["runs"] == {"base": ["base#run2"], "rl": ["rl#run2", "rl#run3", "rl#run4"],
                             "sharpened": ["sharpened#run2"], "cue-sft": ["cue-sft#run2"]}
    band = audit["comparisons"]["rl"]["band"]
    assert band["unit"] == "prompts and runs" and band["n_runs"] == {"base": 2, "rl": 4}
    dirs = {"base": [seeds_run / f"p{s}" / "rollouts-base" for s in (0, 1)],
            "rl": [seeds_run / f"p{s}" / f"rollouts-rl-s{r}" for s in (0, 1) for r in (0, 1)],
            "random-template": [seeds_run / "rollouts-random"]}
    for arm, folders in dirs.items():
        rows = [x for f in folders for x in _shard_numbers(f)]
        got = doc["arms"][arm]
        assert got["labels"] == [r[0] for r in rows]
        assert got["pass_at_1"]["runs"] == pytest.approx([r[1] for r in rows], abs=1e-12)
        # K = n = 8: pass@8 is the share of prompts with a correct sample
        assert got["pass_at_K"]["runs"] == pytest.approx([r[2] for r in rows], abs=1e-12)
        assert got["pass_at_1"]["mean"] == pytest.approx(np.mean([r[1] for r in rows]))
    assert doc["arms"]["rl"]["verdict"] == W.headline(audit["comparisons"]["rl"])
    assert (seeds_run / "seeds.md").read_text().count("\n| ") >= 5


def test_seeds_controls(seeds_run):
    import pyarrow.parquet as pq

    from rlvr_boundary.io.rollouts import read_manifest
    from rlvr_boundary.lab import task as T

    for s in (0, 1):  # the sharpened base is sampled at the temperature the match chose
        match = json_of(seeds_run / f"p{s}" / "sharpened.json")
        man = read_manifest(seeds_run / f"p{s}" / "rollouts-sharpened")
        assert man["sampling"]["temperature"] == match["temperature"]
        assert 0.1 <= match["temperature"] <= 1.0 and match["trace"][0]["temperature"] == 1.0
    t = pq.read_table(seeds_run / "rollouts-random" / "part-random-template.parquet").to_pydict()
    for pid, text, c in list(zip(t["prompt_id"], t["text"], t["correct"]))[::5]:
        assert T.verify(T.problem_of_id(pid), text)["correct"] == c
    doc = json_of(seeds_run / "lab_result.json")
    # the cue view: the base ignores the cue; the cue-following fine-tune reads it
    base, sft = doc["arms"]["base"], doc["arms"]["cue-sft"]
    assert abs(base["cue_following"]["mean"] - base["cue_blind"]["mean"]) < 0.1
    assert max(sft["cue_following"]["runs"]) > 0.8 > max(sft["cue_blind"]["runs"])
    assert doc["nesting"]["pass_at_1"]["total_ss"] == pytest.approx(
        doc["nesting"]["pass_at_1"]["between_ss"] + doc["nesting"]["pass_at_1"]["within_ss"])


def test_seeds_resumes_without_redoing_work(seeds_run):
    from rlvr_boundary.cli import main

    shards = sorted(seeds_run.rglob("part-*.parquet"))
    stamp = {p: p.stat().st_mtime_ns for p in shards}
    assert main(["lab", "run", "--preset", "quick", "--experiment", "seeds", "--task", "cued",
                 "--out", str(seeds_run)]) == 0
    assert {p: p.stat().st_mtime_ns for p in shards} == stamp
    assert main(["lab", "run", "--preset", "quick", "--experiment", "seeds", "--task", "cued",
                 "--rl-seeds", "0", "--out", str(seeds_run)]) == 2  # other options: refused


def test_prolonged_audits_every_checkpoint_over_rl_seeds(tmp_path):
    from rlvr_boundary.cli import main

    out = tmp_path / "prolonged"
    assert main(["lab", "run", "--preset", "quick", "--experiment", "prolonged",
                 "--out", str(out)]) == 0
    doc = json_of(out / "lab_result.json")
    audit = json_of(out / "report.json")
    assert [r["step"] for r in doc["trajectory"]] == [0, 4, 8]
    assert audit["runs"] == {"step-4": ["step-4#run2"], "step-8": ["step-8#run2"]}
    for r in doc["trajectory"][1:]:
        rows = [x for j, rl in enumerate((0, 1))
                for x in _shard_numbers(out / f"rl-s{rl}" / "rollouts" / f"step-{r['step']}")]
        assert [x[0] for x in rows] == [f"step-{r['step']}", f"step-{r['step']}#run2"]
        assert r["pass_at_1"]["runs"] == pytest.approx([x[1] for x in rows], abs=1e-12)
        c = audit["comparisons"][r["model"]]
        assert r["loss_budgets"] == c["loss_budgets"] and c["band"]["n_runs"]["rl"] == 2
    for r in ("0", "1"):  # KL to the reset reference, reset every 4 steps
        log = doc["training"][r]
        assert [x["step"] for x in log if x["ref_reset"]] == [4, 8]
        assert log[4]["kl"] == 0.0 < log[3]["kl"]  # step 5 starts at the reference
    assert (out / "prolonged.md").read_text().count("\n| ") == 3


def json_of(path):
    import json

    return json.loads(path.read_text(encoding="utf-8"))


def test_monitor_looks_at_every_checkpoint_and_agrees_with_its_stored_looks(tmp_path):
    """The monitored experiment: one look per RL checkpoint at the corrected level, the
    alarm step equal to the first look whose band supports the rule's loss, each look's
    counts equal to its stored samples, and a rerun that samples nothing again."""
    import pyarrow.parquet as pq

    from rlvr_boundary.cli import main
    from rlvr_boundary.io.results import read_result

    out = tmp_path / "monitor"
    assert main(["lab", "run", "--preset", "quick", "--experiment", "monitor",
                 "--out", str(out)]) == 0
    doc = read_result(out / "lab_result.json", kind="lab-run")
    sec = doc["monitor"]
    assert [x["step"] for x in sec["looks"]] == [3, 6]  # the quick preset's checkpoints
    assert [x["alpha_look"] for x in sec["looks"]] == pytest.approx([0.025, 0.025])
    K = 8  # the quick preset's rule: stop:loss>=8
    fires = [x["step"] for x in sec["looks"] if any(k >= K for k in x["look_loss_budgets"])]
    assert sec["first_alarm_step"] == (fires[0] if fires else None)
    for x in sec["looks"]:
        assert bool(x["fired"]) == (x["step"] in fires)
        t = pq.read_table(out / "monitor" / "rollouts" / f"part-step-{x['step']}.parquet")
        correct = np.array(t.column("correct").to_pylist(), float)
        assert t.num_rows == 8 * doc["n_problems"]  # n = 8 samples per audited problem
        assert x["pass_at_1"] == pytest.approx(correct.mean(), abs=1e-12)
    stamp = {p: p.stat().st_mtime_ns for p in (out / "monitor").rglob("*.parquet")}
    assert main(["lab", "run", "--preset", "quick", "--experiment", "monitor",
                 "--out", str(out)]) == 0
    assert {p: p.stat().st_mtime_ns for p in (out / "monitor").rglob("*.parquet")} == stamp
