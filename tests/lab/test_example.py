"""The shipped lab example: its numbers re-derived from its rollouts (no torch needed)."""

from __future__ import annotations

import json

import pytest

from rlvr_boundary.examples import example_dir
from rlvr_boundary.lab import task as T

EX = example_dir("lab")


@pytest.fixture(scope="module")
def table():
    import pyarrow as pa

    from rlvr_boundary.io.rollouts import iter_rollout_batches

    return pa.concat_tables(list(iter_rollout_batches(EX))).to_pandas()


@pytest.fixture(scope="module")
def expected():
    return json.loads((EX / "expected.json").read_text(encoding="utf-8"))


def test_example_is_small_and_documented():
    size = sum(f.stat().st_size for f in EX.iterdir())
    assert size < 4 * 2**20
    readme = (EX / "README.md").read_text(encoding="utf-8")
    assert "--export-example" in readme and "Source:" in readme


def test_every_stored_verdict_is_the_verifiers(table):
    for row in table.itertuples():
        a, b, c = (int(x) for x in row.prompt_id.split("-")[0])
        v = T.verify(T.Problem(a, b, c, int(row.prompt_id.split("-")[1])), row.text)
        stored = None if not isinstance(row.strategy, str) else row.strategy  # null -> NaN
        assert (v["correct"], v["strategy"], v["verify_status"]) == (
            row.correct, stored, row.verify_status)


def test_pass_at_1_matches_expected(table, expected):
    n = expected["n_samples"]
    got = table.groupby("model").correct.mean()
    assert set(got.index) == set(expected["pass_at_1_by_checkpoint"])
    for m, v in expected["pass_at_1_by_checkpoint"].items():
        assert got[m] == pytest.approx(v, abs=1e-12)
    assert (table.groupby(["model", "prompt_id"]).size() == n).all()


def test_base_mixture_is_the_pretraining_mixture(table):
    """Ground truth: pretraining drew strategies from PRETRAIN_MIX, so the base samples them
    at those rates (binomial error with 7,680 samples is about 0.006)."""
    base = table[table.model == "base"].strategy.value_counts(normalize=True)
    for s, w in T.PRETRAIN_MIX.items():
        assert abs(base[s] - w) < 0.03, (s, base[s], w)


def test_experiment_one_holds_on_the_shipped_rollouts(table, expected):
    """RL narrows the boundary: pass@1 up by >= 10 points, pass@K down, loss supported at K."""
    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.pipelines.compare import CompareOptions
    from rlvr_boundary.io.rollouts import reduce_counts
    from rlvr_boundary.analysis.aligned import align

    last = expected["final_checkpoint"]
    counts = [c for m, c in reduce_counts(EX).items() if m in ("base", last)]
    res = compare_aligned(align(counts), "base", last, CompareOptions(bootstrap=2000, seed=0))
    K = int(res["ks"][-1])
    assert K == expected["n_samples"]
    pb, pr = res["pass_at_k"]["base"], res["pass_at_k"][last]
    assert pr[0] - pb[0] >= 0.10
    assert pb[-1] > pr[-1]
    assert K in res["loss_budgets"]
    assert expected["loss_supported_at_K"] is True
    assert pr[0] == pytest.approx(expected["pass_at_1"]["rl"], abs=1e-12)
    assert pb[-1] == pytest.approx(expected["pass_at_K"]["base"], abs=1e-12)
    # RL moved the mixture towards add, the strategy right most often
    shares = table[table.model == last].strategy.value_counts(normalize=True)
    assert shares["add"] > 0.9


@pytest.mark.slow
def test_report_example_lab_renders(tmp_path):
    from rlvr_boundary.cli import main

    out = tmp_path / "lab.html"
    assert main(["report", "--example", "lab", "--out", str(out), "--bootstrap", "300"]) == 0
    html = out.read_text(encoding="utf-8")
    for section in ("Training evolution", "Answer diversity", "Token statistics", "step-40"):
        assert section in html


def test_the_example_ships_each_problems_text_as_the_lab_wrote_it():
    """_prompts.jsonl holds every audited problem's prompt, in the manifest's order, as
    export_example writes it (the report shows it beside the ids)."""
    from rlvr_boundary.examples import EXAMPLES, example_dir
    from rlvr_boundary.lab.task import problem_of_id, prompt_text

    d = example_dir("lab")
    man = json.loads((d / "_manifest.json").read_text(encoding="utf-8"))
    rows = [json.loads(x) for x in (d / EXAMPLES["lab"]["prompts"]).read_text().splitlines()]
    assert [r["prompt_id"] for r in rows] == man["dataset"] and len(rows) == 120
    assert all(r["prompt"] == prompt_text(problem_of_id(r["prompt_id"])) for r in rows)
    assert rows[0] == {"prompt_id": "835-6", "prompt": "make 6 from 8 3 5:"}
