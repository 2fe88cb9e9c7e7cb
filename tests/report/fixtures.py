"""A synthetic rollout table with every optional column, for report tests.

The numbers are arbitrary but fixed by the seed; the tests check the report
against values recomputed here from the same rows, never against the report.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

EVIL = '<script>alert("x")</script> and "><img src=x onerror=alert(1)>'


def synthetic_rollouts(*, prompts=40, n=16, models=("base", "step-100", "step-200"), seed=0,
                       evil_prompt="p000") -> pa.Table:
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {k: [] for k in (
        "prompt_id", "model", "sample_idx", "text", "answer", "correct", "verify_status",
        "num_tokens", "truncated", "entropy_mean", "rbf_mean", "log_ppl", "entropy_bins",
        "q_no_boxed", "q_multi_boxed", "q_text_after_answer", "q_cjk_share", "q_language_mix",
        "q_redundancy3")}
    difficulty = rng.uniform(size=prompts)
    for mi, m in enumerate(models):
        for p in range(prompts):
            pid = f"p{p:03d}"
            # Later checkpoints sharpen: easy problems get easier, the hardest ones are lost.
            rate = difficulty[p] ** (1 + 0.8 * mi) if difficulty[p] > 0.15 else difficulty[p] * (1 - 0.5 * mi)
            ok = rng.random(n) < rate
            for i in range(n):
                good = bool(ok[i])
                none = (not good) and rng.random() < 0.1
                ans = None if none else ("42" if good else str(int(rng.integers(0, 5 - mi))))
                text = (EVIL if pid == evil_prompt else f"Reasoning for {pid} by {m}.") + (
                    "" if ans is None else f" So the answer is \\boxed{{{ans}}}.")
                rows["prompt_id"].append(pid)
                rows["model"].append(m)
                rows["sample_idx"].append(i)
                rows["text"].append(text)
                rows["answer"].append(ans)
                rows["correct"].append(good)
                rows["verify_status"].append("ok" if good else ("no_answer" if none else "ok"))
                rows["num_tokens"].append(int(rng.integers(50, 400)))
                rows["truncated"].append(bool(none))
                rows["entropy_mean"].append(float(rng.gamma(2, 0.2) / (1 + mi)))
                rows["rbf_mean"].append(float(1 + rng.gamma(1, 0.5)))
                rows["log_ppl"].append(float(rng.gamma(2, 0.1)))
                rows["entropy_bins"].append([float(x) for x in rng.gamma(2, 0.2, 10)])
                rows["q_no_boxed"].append(ans is None)
                rows["q_multi_boxed"].append(False)
                rows["q_text_after_answer"].append(False)
                rows["q_cjk_share"].append(0.0)
                rows["q_language_mix"].append(False)
                rows["q_redundancy3"].append(float(rng.uniform(0, 0.2)))
    return pa.table(rows)
