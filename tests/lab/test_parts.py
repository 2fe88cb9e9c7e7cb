"""Lab parts with torch: tokenizer, HF folder round trip, GRPO pieces, checkpoint sampling."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from rlvr_boundary.lab import grpo as G  # noqa: E402
from rlvr_boundary.lab import task as T  # noqa: E402
from rlvr_boundary.lab.model import (ModelConfig, build_model, is_complete,  # noqa: E402
                                     load_checkpoint, save_checkpoint)
from rlvr_boundary.lab.pretrain import PretrainConfig, encode  # noqa: E402
from rlvr_boundary.lab.splits import traces  # noqa: E402
from rlvr_boundary.lab.tokenizer import train_tokenizer  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def tok():
    prompts, comps = traces(600, np.random.default_rng(0), None, cued=False)
    return train_tokenizer([p + c for p, c in zip(prompts, comps)])


def test_tokenizer_round_trips_and_splits_digits(tok):
    for p in T.make_problems(50, np.random.default_rng(1)):
        for s in T.STRATEGIES:
            text = p.prompt + T.trace(p, s)
            ids = tok(text, add_special_tokens=False)["input_ids"]
            assert tok.decode(ids) == text
            pieces = tok.convert_ids_to_tokens(ids)
            assert all(sum(ch.isdigit() for ch in piece) <= 1 for piece in pieces)
    # every task word is a single token
    for word in (" add", " mul", " sub", " ends", " answer", "make", " from"):
        assert len(tok(word, add_special_tokens=False)["input_ids"]) == 1, word
    # the cued family's tokenizer: every cue word is one token, so all prompts have one length
    from rlvr_boundary.lab import splits
    from rlvr_boundary.lab.config import LabConfig

    cued_tok = train_tokenizer(splits.tokenizer_corpus(LabConfig.from_preset("quick", task="cued")))
    for cue in T.CUES.values():
        assert len(cued_tok(" " + cue, add_special_tokens=False)["input_ids"]) == 1, cue
    lengths = {len(cued_tok(q.prompt)["input_ids"])
               for q in T.make_problems(200, np.random.default_rng(0), cued=True)}
    assert len(lengths) == 1
    # prompt + completion tokenize the same apart and together (GRPO relies on it)
    p = T.Problem(7, 8, 4, 9)
    both = tok(p.prompt + T.trace(p, "mul"), add_special_tokens=False)["input_ids"]
    apart = (tok(p.prompt, add_special_tokens=False)["input_ids"]
             + tok(T.trace(p, "mul"), add_special_tokens=False)["input_ids"])
    assert both == apart


def test_checkpoint_is_a_plain_hf_folder(tok, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=0)
    folder = save_checkpoint(model, tok, tmp_path / "ck", extra={"step": 3})
    assert is_complete(folder)
    assert (folder / "model.safetensors").is_file() and not list(folder.glob("*.bin"))
    m2 = AutoModelForCausalLM.from_pretrained(folder)
    t2 = AutoTokenizer.from_pretrained(folder)
    ids = G.prompt_ids(t2, [T.Problem(1, 2, 3, 6)])
    with torch.no_grad():
        np.testing.assert_allclose(m2(ids).logits.numpy(), model(ids).logits.numpy(), atol=1e-6)
    assert json.loads((folder / "lab_state.json").read_text())["step"] == 3
    assert m2.generation_config.top_k == 0 and m2.generation_config.do_sample
    model2, tok2 = load_checkpoint(folder)
    assert not model2.training and tok2.eos_token_id == tok.eos_token_id


def test_completion_mask_stops_after_first_end_token():
    gen = torch.tensor([[5, 6, 2, 0, 0], [5, 2, 7, 2, 0], [5, 6, 7, 8, 9]])
    assert G.completion_mask(gen, eos_id=2).tolist() == [
        [1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]]


def test_token_logprobs_match_a_plain_loop(tok):
    model = build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=1)
    model.eval()
    probs = [T.Problem(1, 2, 3, 6), T.Problem(9, 9, 9, 7)]
    seq, n_prompt, mask, texts = G.rollout(model, tok, probs, 2, 12)
    logp, ent = G.token_logprobs(model, seq, n_prompt, mask)
    for b in range(seq.shape[0]):
        for t in range(int(mask[b].sum())):
            with torch.no_grad():
                lg = model(seq[b:b + 1, :n_prompt + t]).logits[0, -1]
            ref = torch.log_softmax(lg, -1)
            assert abs(float(ref[seq[b, n_prompt + t]]) - float(logp[b, t].detach())) < 1e-4
            assert abs(float(-(ref.exp() * ref).sum()) - float(ent[b, t].detach())) < 1e-4


def test_rewards_are_the_verifier_verdicts_group_major():
    probs = [T.Problem(1, 2, 3, 6), T.Problem(2, 3, 4, 4)]
    texts = [T.trace(probs[0], "add"), T.trace(probs[0], "mul"),
             T.trace(probs[1], "add"), T.trace(probs[1], "mul")]
    r, s = G.rewards_of(probs, texts, 2)
    assert r.tolist() == [[1.0, 1.0], [0.0, 1.0]]  # 1+2+3=6, 1*2*3=6; 2+3+4=9, 2*3*4=24
    assert s == ["add", "mul", "add", "mul"]


def test_grpo_config_is_validated():
    with pytest.raises(ValueError):
        G.GRPOConfig(group_size=1)
    with pytest.raises(ValueError):
        G.GRPOConfig(kl_coef=-1)
    with pytest.raises(ValueError):
        G.GRPOConfig(shaping={"estimator": "remax"})
    assert G.GRPOConfig(shaping={"estimator": "rloo"}).shaping.estimator == "rloo"
    with pytest.raises(ValueError):
        PretrainConfig(steps=0)
    with pytest.raises(ValueError):
        ModelConfig(hidden=30, heads=4)


@pytest.mark.slow
def test_grpo_steps_run_resume_and_use_the_shaping_estimator(tok, tmp_path):
    """Three steps, stop, resume to five: the resumed run equals an uninterrupted one."""
    cfg = dict(prompts_per_step=4, group_size=4, max_new_tokens=24, save_every=3, lr=1e-3,
               shaping={"estimator": "dr_grpo"}, kl_coef=0.05)
    tr, _ = T.eval_split(200)

    def problems_at(step):
        return T.make_problems(4, np.random.default_rng([0, step]), triples=tr)

    def fresh():
        return build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=2)

    def saver(folder):
        return lambda m, s: save_checkpoint(m, tok, folder / f"step-{s}")

    ref = fresh()
    a = fresh()
    (tmp_path / "a").mkdir()
    log_a = G.train(a, tok, G.GRPOConfig(steps=5, **cfg), problems_at, tmp_path / "a", ref_model=ref,
                    save=saver(tmp_path / "a"))
    b = fresh()
    (tmp_path / "b").mkdir()
    G.train(b, tok, G.GRPOConfig(steps=3, **cfg), problems_at, tmp_path / "b", ref_model=ref,
            save=saver(tmp_path / "b"))
    b2 = fresh()
    log_b = G.train(b2, tok, G.GRPOConfig(steps=5, **cfg), problems_at, tmp_path / "b", ref_model=ref,
                    save=saver(tmp_path / "b"))
    assert [r["step"] for r in log_b] == [1, 2, 3, 4, 5]
    for ra, rb in zip(log_a, log_b):
        assert ra["reward"] == rb["reward"]
        assert ra["loss"] == pytest.approx(rb["loss"], rel=1e-4, abs=1e-6)
    for pa, pb in zip(a.parameters(), b2.parameters()):
        torch.testing.assert_close(pa, pb, atol=1e-5, rtol=1e-4)
    assert all(r["kl"] >= 0 for r in log_a)
    assert (tmp_path / "a" / "step-3").is_dir() and (tmp_path / "a" / "step-5").is_dir()


@pytest.mark.slow
def test_reference_resets_restart_the_kl_and_resume_exactly(tok, tmp_path):
    """ProRL's reset: after step 3 the reference is the policy and the optimizer starts
    afresh; a run resumed after the reset equals an uninterrupted one.

    The tiny untrained policy never earns a reward, so only the KL term moves it: towards
    a reference with other initial weights (KL > 0) until the reset, not at all after it
    (the reference is then the policy itself: KL exactly 0, gradient 0)."""
    cfg = dict(prompts_per_step=4, group_size=4, max_new_tokens=24, save_every=3, lr=1e-3,
               kl_coef=0.1, ref_reset_every=3)
    tr, _ = T.eval_split(200)

    def problems_at(step):
        return T.make_problems(4, np.random.default_rng([1, step]), triples=tr)

    def fresh(seed=2):
        return build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=seed)

    def saver(folder):
        return lambda m, s: save_checkpoint(m, tok, folder / f"step-{s}")

    assert G.reset_steps(G.GRPOConfig(steps=7, **cfg)) == [3, 6]
    (tmp_path / "a").mkdir()
    a = fresh()
    log_a = G.train(a, tok, G.GRPOConfig(steps=6, **cfg), problems_at, tmp_path / "a",
                    ref_model=fresh(3), save=saver(tmp_path / "a"))
    assert [r.get("ref_reset", False) for r in log_a] == [False, False, True, False, False, True]
    assert all(r["reward"] == 0 for r in log_a)
    assert all(r["kl"] > 0 for r in log_a[:3]) and log_a[0]["kl"] > log_a[2]["kl"]
    assert [r["kl"] for r in log_a[3:]] == [0.0, 0.0, 0.0]
    (tmp_path / "b").mkdir()
    G.train(fresh(), tok, G.GRPOConfig(steps=3, **cfg), problems_at, tmp_path / "b",
            ref_model=fresh(3), save=saver(tmp_path / "b"))
    b = fresh()  # resumed at step 3: the reference is reloaded from step-3, not the base
    log_b = G.train(b, tok, G.GRPOConfig(steps=6, **cfg), problems_at, tmp_path / "b",
                    ref_model=fresh(3), save=saver(tmp_path / "b"))
    for ra, rb in zip(log_a, log_b):
        assert ra["reward"] == rb["reward"]
        assert ra["kl"] == pytest.approx(rb["kl"], rel=1e-4, abs=1e-7)
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError):
        G.GRPOConfig(ref_reset_every=3, save_every=3)  # no KL: nothing to reset
    with pytest.raises(ValueError):
        G.GRPOConfig(ref_reset_every=5, save_every=3, kl_coef=0.1)  # not at a checkpoint


def test_checkpoint_samples_through_the_transformers_backend(tok, tmp_path):
    """The audit's path: a saved checkpoint, loaded by the backend, prompts start with BOS
    as in pretraining, rows carry token summaries, and samples do not depend on the batch."""
    from rlvr_boundary.backends import SamplingParams, get_backend

    model = build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), tok, seed=3)
    save_checkpoint(model, tok, tmp_path / "ck")
    problems = [T.Problem(1, 2, 3, 6), T.Problem(4, 5, 6, 5)]
    prompts = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]
    params = SamplingParams(max_new_tokens=10, seed=4, top_k=0, top_p=1.0)
    b3 = get_backend("transformers", model=tmp_path / "ck", device="cpu", batch_size=3)
    want = [tok.bos_token_id] + tok(problems[0].prompt, add_special_tokens=False)["input_ids"]
    assert b3.encode_prompt(prompts[0]) == want
    rows = list(b3.generate(prompts, 3, params))
    assert [(r["prompt_id"], r["sample_idx"]) for r in rows] == [
        (p.prompt_id, j) for p in problems for j in range(3)]
    for r in rows:
        assert 1 <= r["num_tokens"] <= 10
        assert r["truncated"] == (r["finish_reason"] == "length")
        assert r["entropy_kind"] == "exact" and r["entropy_mean"] > 0
        assert r["log_ppl"] > 0 and len(r["entropy_bins"]) == 10
    b5 = get_backend("transformers", model=tmp_path / "ck", device="cpu", batch_size=5)
    again = list(b5.generate(prompts, 3, params))
    assert [r["text"] for r in again] == [r["text"] for r in rows]  # seeded per sample


def test_encode_refuses_too_long(tok):
    with pytest.raises(ValueError, match="max_len"):
        encode(tok, ["make 1 from 1 1 1:"], [T.trace(T.Problem(1, 1, 1, 1), "add")], max_len=5)


def test_lab_config_presets_and_validation(tmp_path):
    from rlvr_boundary.cli import main
    from rlvr_boundary.lab.config import PRESETS, LabConfig
    from rlvr_boundary.lab.splits import audit_problems as eval_problems

    for name in PRESETS:
        cfg = LabConfig.from_preset(name, seed=3)
        assert cfg.preset == name and cfg.pretrain.seed == 3 and cfg.grpo.seed == 3
    cfg = LabConfig.from_preset("quick", shaping={"estimator": "rloo"}, kl_coef=0.2)
    assert cfg.grpo.shaping.estimator == "rloo" and cfg.grpo.kl_coef == 0.2
    with pytest.raises(ValueError):
        LabConfig(preset="huge")
    with pytest.raises(ValueError):
        LabConfig(n_samples=1)
    # audit problems: distinct, held out from RL's triples, fixed by the seed
    probs = eval_problems(LabConfig.from_preset("full"))
    tr, _ = T.eval_split(200, seed=0)
    assert len({p.prompt_id for p in probs}) == len(probs) == 120
    assert not {(p.a, p.b, p.c) for p in probs} & set(tr)
    assert probs == eval_problems(LabConfig.from_preset("full"))
    # bad options are input errors (exit 2), before any work
    assert main(["lab", "run", "--estimator", "passk", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


def test_sample_stage_refuses_a_tokenizer_without_bos(tok, tmp_path):
    """A run folder from before the tokenizer added BOS would be sampled off-distribution."""
    import copy

    from rlvr_boundary.errors import InputError
    from rlvr_boundary.lab import stages as S
    from rlvr_boundary.lab.config import LabConfig

    old = copy.deepcopy(tok)
    old._tokenizer.post_processor = None
    assert old("make 1", add_special_tokens=True)["input_ids"][0] != old.bos_token_id
    model = build_model(ModelConfig(hidden=16, layers=1, heads=2, mlp=32), old, seed=3)
    save_checkpoint(model, old, tmp_path / "base")
    cfg = LabConfig(eval_prompts=2, n_samples=2)
    with pytest.raises(InputError, match="BOS"):
        ctx = S.Context(cfg=cfg, out=tmp_path, clock=S.Clock(tmp_path / "t.json"),
                        say=lambda *a: None)
        S.stage_sample(ctx, {"base": tmp_path / "base"})
    assert not list((tmp_path / "rollouts").glob("part-*.parquet"))
