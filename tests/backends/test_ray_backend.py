"""Ray Data on a local Ray instance with the transformers backend: same samples as one process."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.backends import SamplingParams, get_backend

pytest.importorskip("ray")
pytest.importorskip("ray.data")
pytest.importorskip("pandas")

PROMPTS = [{"prompt_id": f"p{i}", "prompt": q} for i, q in enumerate(
    ["What is 12 + 7?", "Let x + 2 = 5.", "Compute 3 * 4 - 5.", "Find the sum of 1, 2, 3 and 4."])]


@pytest.mark.slow
def test_ray_data_gives_the_single_process_samples(tiny_model, tmp_path):
    params = SamplingParams(max_new_tokens=16, seed=9, token_arrays=True)
    local = get_backend("transformers", model=str(tiny_model), batch_size=4, num_threads=1)
    ref = list(local.generate(PROMPTS, 3, params))
    rb = get_backend("ray", inner="transformers",
                     inner_kwargs={"model": str(tiny_model), "batch_size": 2, "num_threads": 1},
                     num_workers=2, batch_size=5)
    try:
        rows = list(rb.generate(PROMPTS, 3, params))
        info = rb.info()
        # through the sharded writer: one actor pool for all shards, same samples
        from rlvr_boundary.pipelines.sample import SampleOptions, sample_run

        qs = [{"prompt_id": p["prompt_id"], "question": p["prompt"]} for p in PROMPTS]
        summary = sample_run(rb, qs, tmp_path / "s", SampleOptions(n=3, params=params, shard_size=5))
    finally:
        rb.close()
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.concat_tables([pq.read_table(f) for f in sorted((tmp_path / "s").glob("part-*.parquet"))])
    assert summary["shards"] == 3 and t.num_rows == 12
    assert t.column("token_ids").to_pylist() == [r["token_ids"] for r in ref]
    assert [(r["prompt_id"], r["sample_idx"]) for r in rows] == [(r["prompt_id"], r["sample_idx"]) for r in ref]
    for a, b in zip(rows, ref):
        assert a["seed"] == b["seed"] and a["token_ids"] == b["token_ids"] and a["text"] == b["text"]
        assert a["finish_reason"] == b["finish_reason"] and a["num_tokens"] == b["num_tokens"]
        assert a["log_ppl"] == pytest.approx(b["log_ppl"], rel=1e-6)
        nan = lambda v: np.array([np.nan if x is None else x for x in v], dtype=float)  # noqa: E731
        np.testing.assert_allclose(nan(a["entropy_bins"]), nan(b["entropy_bins"]), atol=1e-5)
    assert info["engine"] == "ray+transformers" and info["model_hash"]
