"""The token-replacement model part on a tiny untrained model: positions, alternatives, resampling."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from rlvr_boundary.lab import replace as RP  # noqa: E402
from rlvr_boundary.lab import task as T  # noqa: E402
from rlvr_boundary.lab.model import ModelConfig, build_model  # noqa: E402
from rlvr_boundary.lab.splits import traces  # noqa: E402
from rlvr_boundary.lab.tokenizer import train_tokenizer  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def tiny():
    prompts, comps = traces(600, np.random.default_rng(0), None, cued=False)
    tok = train_tokenizer([p + c for p, c in zip(prompts, comps)])
    model = build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=0)
    model.eval()
    return model, tok


def test_positions_are_bin_centres_and_bins_cover_every_token():
    assert [RP._bin_of(j, 20, 10) for j in range(20)] == [j // 2 for j in range(20)]
    assert [RP._bin_of(j, 7, 3) for j in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    assert RP._positions(20, 10) == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert RP._positions(10, 4) == [1, 3, 6, 8]
    assert RP._positions(1, 3) == [0, 0, 0]  # never past the last token
    assert RP._positions(3, 5) == [0, 0, 1, 2, 2]


def test_generate_continues_each_prefix_and_does_not_depend_on_the_others(tiny):
    model, tok = tiny
    from rlvr_boundary.lab.grpo import prompt_ids

    p = T.Problem(1, 2, 3, 6)
    head = prompt_ids(tok, [p])[0].tolist()
    n_prompt = len(head)
    body = tok(" add: 1+2", add_special_tokens=False)["input_ids"]
    prefixes = [head + body[:2], head + body, head + body[:1]]
    outs = RP._generate(model, tok, prefixes, n_prompt, n_prompt + 12, seed=5)
    for pre, text in zip(prefixes, outs):
        assert text.startswith(tok.decode(pre[n_prompt:]))
    # the same prefix alone gives the same continuation (groups are seeded by length)
    alone = RP._generate(model, tok, [prefixes[1]], n_prompt, n_prompt + 12, seed=5)
    assert alone[0] == outs[1]


@pytest.mark.parametrize("alternative", ["second", "random"])
def test_records_replace_every_position_with_another_ordinary_token(tiny, alternative):
    model, tok = tiny
    problems = [T.Problem(1, 2, 3, 6), T.Problem(9, 9, 9, 7)]
    cfg = RP.ReplaceConfig(prompts=2, samples_per_prompt=2, n_bins=3, resamples=2,
                           alternative=alternative)
    res = RP.replace_and_resample(model, tok, problems, cfg, seed=0, max_new_tokens=10)
    smp, rec = res["samples"], res["records"]
    assert len(smp["text"]) == 4
    expected = sum(smp["length"])  # every token before the end token
    assert len(rec["sample"]) == expected
    specials = {tok.bos_token, tok.eos_token, tok.pad_token}
    for r in range(expected):
        i = rec["sample"][r]
        assert rec["prompt_id"][r] == problems[i // 2].prompt_id
        assert rec["alternative"][r] != rec["token"][r]
        assert rec["alternative"][r] not in specials
        assert rec["bin"][r] == RP._bin_of(rec["index"][r], rec["length"][r], 3)
        assert rec["original"][r] == smp["correct"][i]
        assert rec["replaced"][r] in (0.0, 0.5, 1.0) and rec["control"][r] in (0.0, 0.5, 1.0)
        if alternative == "second":
            # the most likely other token: rank 0 or 1, or just below the special tokens
            assert rec["alt_rank"][r] <= 1 + len(specials)
    # every sample's log-PPL is finite and positive (an untrained model is unsure)
    assert all(np.isfinite(smp["log_ppl"])) and min(smp["log_ppl"]) > 0
    # the replaced continuation starts with the kept prefix and the alternative token
    for r in range(expected):
        assert rec["replaced_text"][r].startswith(rec["prefix"][r] + rec["alternative"][r])
        if rec["token"][r] not in specials:  # an untrained model may sample <pad> (not decoded)
            assert smp["text"][rec["sample"][r]].startswith(rec["prefix"][r] + rec["token"][r])
    with pytest.raises(ValueError):
        RP.ReplaceConfig(alternative="third")


def test_cli_refuses_the_example_export_for_other_experiments(tmp_path):
    from rlvr_boundary.cli import main

    assert main(["lab", "run", "--experiment", "token-replacement", "--out", str(tmp_path / "x"),
                 "--export-example", str(tmp_path / "ex")]) == 2
    assert not (tmp_path / "x").exists()
