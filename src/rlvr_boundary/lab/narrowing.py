"""Experiment 1: RL raises pass@1 and narrows pass@k at large k (and experiment 3's strategy view).

``rlvr-boundary lab run --preset full --out lab-full`` pretrains the base,
runs GRPO, samples the base and every checkpoint on the held-out problems and
audits them (:func:`rlvr_boundary.lab.stages.train_and_audit`), then writes
``lab_result.json``: the headline of the last checkpoint against the base, the
strategy mixtures against the exponential tilt and, in the cued family, how
far each checkpoint chooses its strategy by the cue.

:func:`export_example` copies a finished run into the shipped ``lab`` example.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rlvr_boundary.lab import stages as S
from rlvr_boundary.lab import versions as V

def run(ctx: S.Context, options=None) -> dict:
    """Run (or resume) experiment 1 in ``ctx.out``; return the ``lab_result.json`` document."""
    from rlvr_boundary.io.results import write_result

    audit, labels = S.train_and_audit(ctx)
    payload = S.run_summary(ctx, audit, labels)
    return write_result(ctx.out / "lab_result.json", "lab-run", ctx.cfg, payload)


def export_example(out: str | Path, dest: str | Path) -> Path:
    """Copy a finished run's rollouts, manifest and numbers into an example folder ``dest``.

    The folder is what ``rlvr-boundary report --example lab`` reads: the rollout
    shards, ``_manifest.json``, ``_prompts.jsonl`` (each problem's text),
    ``expected.json`` (the run's ``lab_result.json`` numbers, which the tests check
    against the shards) and a README.
    """
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.io.schema import SHARD_MANIFEST, find_manifest

    out, dest = Path(out), Path(dest)
    doc = read_result(out / "lab_result.json", kind="lab-run")
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for f in sorted((out / "rollouts").glob("part-*.parquet")):
        shutil.copy2(f, tmp / f.name)
    man = json.loads(find_manifest(out / "rollouts").read_text(encoding="utf-8"))
    (tmp / SHARD_MANIFEST).write_text(json.dumps(man, indent=1), encoding="utf-8")
    # Each problem's text, for the report to show beside its id (example "prompts").
    from rlvr_boundary.examples import EXAMPLES
    from rlvr_boundary.lab.task import problem_of_id, prompt_text

    (tmp / EXAMPLES["lab"]["prompts"]).write_text(
        "".join(json.dumps({"prompt_id": pid, "prompt": prompt_text(problem_of_id(pid))}) + "\n"
                for pid in man["dataset"]), encoding="utf-8")
    keep = ("options", "task", "pass_at_1", "pass_at_K", "k_star", "loss_supported_at_K",
            "pass_at_1_by_checkpoint", "final_checkpoint", "n_problems", "n_samples", "strategy",
            "tool_version", "schema_version")
    expected = {k: doc[k] for k in keep if k in doc}
    expected["versions"] = doc["lab_versions"]  # the run's environment
    (tmp / "expected.json").write_text(json.dumps(expected, indent=1), encoding="utf-8")
    o = doc["options"]
    (tmp / "README.md").write_text(
        "# Lab example: a tiny model before and after GRPO\n\n"
        f"Rollouts of the RLVR lab's `{o['preset']}` preset ({o['task']} task, seed "
        f"{o['seed']}): the base model and {len(doc['pass_at_1_by_checkpoint']) - 1} GRPO "
        f"checkpoints, {doc['n_problems']} held-out problems x {doc['n_samples']} samples "
        "each, with texts, answers, verdicts, strategies and token summaries. No audited "
        "problem occurs in the tokenizer's texts, the pretraining corpus or the RL "
        "problems.\n\n"
        "Source: synthetic task and models trained from scratch by rlvr-boundary's lab "
        "(Apache-2.0); no external data. Library versions: "
        + ", ".join(f"{k} {v}" for k, v in doc["lab_versions"].items() if k in
                    ("python", *V.PACKAGES)) + ".\n\n"
        "Regenerate (seeded; the numbers in expected.json are re-derived by the tests):\n\n"
        "    rlvr-boundary lab run --preset full --out lab-full "
        "--export-example src/rlvr_boundary/examples/data/lab\n", encoding="utf-8")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest
