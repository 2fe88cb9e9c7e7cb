"""The boundary monitor: sample the policy on held-out prompts, grade, compare with the base.

Usage from any training loop::

    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions

    mon = BoundaryMonitor(prompts, verifier="math", out_dir="runs/x/monitor",
                          options=MonitorOptions(n=16, every=20, looks=10,
                                                 rules=["stop:loss>=8"]))
    mon.sample_base(model, tokenizer)          # once, before training (or base="base.parquet")
    for step in range(1, steps + 1):
        train_one_step(...)
        if mon.due(step):
            doc = mon.step(step, model, tokenizer)   # a "monitor-step" result document
            if mon.should_stop(doc):
                break

Design decisions:

- **Fresh samples at every look, independent of the base's.** Each look samples
  with its own run seed (derived from the monitor seed and the step), the base
  with another. Reusing the base's seeds would make the samples of a policy equal
  to the base identical to the base's, and the band would claim certainty it does
  not have.
- **Everything is kept.** The samples of each look are a rollout table
  (``rollouts/part-step-N.parquet``, model label ``step-N``; the base's is
  ``part-base.parquet``), so ``rlvr-boundary report <out>/rollouts --base base`` draws the
  training evolution from them and ``rlvr-boundary compare --base
  <out>/rollouts/part-base.parquet --rl <out>/rollouts/part-step-N.parquet`` gives the
  numbers of look N again. Each look's result is ``steps/step-N.json`` (kind
  ``monitor-step``); ``monitor.json`` (kind ``monitor-run``) lists the looks and
  the alarms.
- **Resumable.** A monitor built on an existing folder reads the looks already
  done; asking for a stored step returns its result without sampling again. The
  options, prompts and verifier must be the same (refused otherwise).
- **The trainer's own generations** can replace the monitor's sampling when they
  are on the held-out prompts (verl's validation): ``step(step, samples=rows)``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import InputError
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.counts import Counts
from rlvr_boundary.monitor.assess import assess, scalars
from rlvr_boundary.monitor.grading import Grader
from rlvr_boundary.monitor.options import MonitorOptions

__all__ = ["BoundaryMonitor", "STEP_KIND", "RUN_KIND", "step_label"]

#: Result kind of one look, and of the run summary.
STEP_KIND = "monitor-step"
RUN_KIND = "monitor-run"
#: Columns of a trainer-provided sample row that are kept (besides the key columns).
_ROW_KEEP = ("text", "answer", "correct", "verify_status", "finish_reason", "num_tokens",
             "truncated", "seed", "entropy_mean", "entropy_mean_lo", "entropy_mean_hi",
             "entropy_kind", "rbf_mean", "rbf_lower_bound", "inv_simpson_mean", "log_ppl",
             "entropy_bins")


def step_label(step: int) -> str:
    """The model label of a look's samples: ``step-N`` (the report's training evolution)."""
    return f"step-{int(step)}"


class BoundaryMonitor:
    """Watch the reasoning boundary of a policy during training.

    Parameters
    ----------
    prompts
        Held-out prompts: dicts with ``prompt_id`` and ``prompt`` (a string, used
        as is), or ``question`` (rendered with ``options.template``), or chat
        ``messages``; ``gold`` (the answer) when ``verifier="math"``. Any other
        key is passed to a callable verifier.
    verifier
        ``"math"`` (our math grading in worker processes) or a function
        ``verify(prompt, text) -> bool | dict`` (:mod:`.grading`).
    out_dir
        Folder of the samples, results and run summary (created; resumed if it exists).
    options
        :class:`MonitorOptions`.
    base
        The base's counts: None (call :meth:`sample_base`), a file or folder any
        ``rlvr-boundary`` reader takes (rollout table, counts file, adapter
        output), or a :class:`rlvr_boundary.io.counts.Counts`.
    base_label
        Label of the base model in ``base`` (a file may hold several models).
    workers, timeout, math_options
        Math grading: worker processes, hard seconds per item, options.
    """

    def __init__(self, prompts: list[dict], verifier, out_dir: str | Path,
                 options: MonitorOptions | None = None, *, base=None, base_label: str = "base",
                 workers: int = 2, timeout: float = 10.0, math_options=None) -> None:
        self.opts = options if options is not None else MonitorOptions()
        self.out = Path(out_dir)
        self.prompts = _check_prompts(prompts, self.opts.template)
        self.grader = Grader(verifier, workers=workers, timeout=timeout,
                             math_options=math_options)
        self.base_label = base_label
        self.base_counts: Counts | None = None
        self.base_source: dict | None = None
        if base is not None:
            self.base_counts, self.base_source = self._read_base(base, base_label)
        self.history: dict[int, dict] = {}
        self._writer = None
        self._load_existing()

    # ----------------------------------------------------------------- state

    def _manifest(self) -> dict:
        """What the stored samples depend on; resuming with any of it changed is refused."""
        ids = [p["prompt_id"] for p in self.prompts]
        prompt_hash = hashlib.sha256(json.dumps(
            [[p["prompt_id"], p.get("prompt"), p.get("messages"), p.get("gold")]
             for p in self.prompts], sort_keys=True, default=str).encode()).hexdigest()
        o = self.opts
        return {"dataset": {"prompt_ids": ids, "sha256": prompt_hash},
                "sampling": {"n": o.n, "temperature": o.temperature, "top_p": o.top_p,
                             "top_k": o.top_k, "max_new_tokens": o.max_new_tokens,
                             "seed": o.seed, "template": o.template},
                "verifier": self.grader.describe(),
                "base_source": self.base_source,
                "source": "rlvr-boundary monitor"}

    def _writer_(self):
        if self._writer is None:
            from rlvr_boundary.io.store import ShardedWriter

            self._writer = ShardedWriter(self.out / "rollouts", self._manifest(),
                                         must_match=("dataset", "sampling", "verifier",
                                                     "base_source"))
        return self._writer

    def _load_existing(self) -> None:
        from rlvr_boundary.io.results import read_result
        from rlvr_boundary.io.schema import find_manifest

        if find_manifest(self.out / "rollouts") is not None:
            self._writer_()  # refuses a folder made with other prompts, options or verifier
        base_shard = self.out / "rollouts" / "part-base.parquet"
        if self.base_counts is None and base_shard.exists():
            self.base_counts = self._counts_of_file(base_shard, self.base_label)
        for f in sorted((self.out / "steps").glob("step-*.json")):
            doc = read_result(f, kind=STEP_KIND)
            self.history[int(doc["step"])] = doc

    def _read_base(self, base, label: str) -> tuple[Counts, dict]:
        if isinstance(base, Counts):
            ct = Counts(self.base_label, base.prompt_ids, base.n, base.c, base.source)
            return self._restrict(ct), {"kind": "counts", "model": base.model}
        from rlvr_boundary.io.inputs import load_inputs
        from rlvr_boundary.io.text import sha256_of

        path = Path(base)
        got = load_inputs([path])
        found = {ct.model: ct for ct in got.counts}
        if label not in found:
            if len(found) == 1:
                ct = next(iter(found.values()))
            else:
                raise InputError(f"no model labelled {label!r} in the base input (it holds "
                                 f"{', '.join(found)}); name it with base_label", path=path)
        else:
            ct = found[label]
        ct = Counts(self.base_label, ct.prompt_ids, ct.n, ct.c, str(path))
        return self._restrict(ct), {"kind": "file", "path": str(path),
                                    "sha256": sha256_of(path), "model": label}

    def _restrict(self, ct: Counts) -> Counts:
        """The base's counts on the held-out prompts (every held-out prompt must be there)."""
        ids = [p["prompt_id"] for p in self.prompts]
        pos = {str(p): i for i, p in enumerate(ct.prompt_ids)}
        missing = [p for p in ids if p not in pos]
        if missing:
            raise InputError(f"the base's counts lack {len(missing)} held-out prompt(s), e.g. "
                             f"{', '.join(missing[:5])}", path=ct.source, field="prompt_id")
        idx = np.array([pos[p] for p in ids], dtype=np.int64)
        return Counts(ct.model, np.array(ids, dtype=object), ct.n[idx], ct.c[idx], ct.source)

    @staticmethod
    def _counts_of_file(path: Path, label: str) -> Counts:
        from rlvr_boundary.io.rollouts import reduce_counts

        got = reduce_counts(path)
        if label not in got:
            raise InputError(f"no model labelled {label!r} in the stored samples", path=path)
        return got[label]

    @property
    def has_base(self) -> bool:
        """Whether the base's counts are known (given, sampled, or read back)."""
        return self.base_counts is not None

    def due(self, step: int) -> bool:
        """Whether ``step`` is a scheduled look (a multiple of ``every``, not yet done)."""
        return step > 0 and step % self.opts.every == 0 and step not in self.history

    def set_looks(self, looks: int) -> None:
        """Fix the number of scheduled looks L (before the first look; the TRL callback
        derives it from ``max_steps``)."""
        if self.history and self.opts.looks not in (None, looks):
            raise InputError(f"the looks of this run were scheduled as {self.opts.looks}; "
                             f"cannot change them to {looks} after a look", field="looks")
        if isinstance(looks, bool) or not isinstance(looks, int) or looks < 1:
            raise InputError(f"looks must be an integer >= 1, got {looks!r}", field="looks")
        self.opts.looks = looks

    # ----------------------------------------------------------------- sampling

    def _seed(self, what: str) -> int:
        from rlvr_boundary.backends.base import sample_seed

        return sample_seed(self.opts.seed, f"rlvr-boundary monitor {what}", 0)

    def _params(self, seed: int):
        from rlvr_boundary.backends.base import SamplingParams

        o = self.opts
        return SamplingParams(temperature=o.temperature, top_p=o.top_p, top_k=o.top_k,
                              max_new_tokens=o.max_new_tokens, seed=seed, logprobs_mode="raw")

    def _sample(self, model, tokenizer, label: str, seed: int) -> list[dict]:
        """Draw ``n`` samples per held-out prompt from ``model`` (a folder, or a model object)."""
        from rlvr_boundary.backends import get_backend

        payload = [{"prompt_id": p["prompt_id"],
                    **({"messages": p["messages"]} if "messages" in p else
                       {"prompt": p["prompt"]})} for p in self.prompts]
        params = self._params(seed)
        if isinstance(model, (str, Path)):
            backend = get_backend("transformers", model=str(model), device="cpu",
                                  batch_size=self.opts.batch_size)
            try:
                return list(backend.generate(payload, self.opts.n, params))
            finally:
                backend.close()
        if tokenizer is None:
            raise InputError("sampling a model object needs its tokenizer", field="tokenizer")
        from rlvr_boundary.monitor.live import LiveBackend, sampling_mode

        with sampling_mode(model) as inner:
            backend = LiveBackend(inner, tokenizer, batch_size=self.opts.batch_size, label=label)
            return list(backend.generate(payload, self.opts.n, params))

    def _table(self, rows: list[dict], label: str):
        """Grade rows that need it, label them, and validate them as a rollout table."""
        import pyarrow as pa

        from rlvr_boundary.io.rollouts import validate_batch

        by_id = {p["prompt_id"]: p for p in self.prompts}
        todo = [i for i, r in enumerate(rows) if r.get("correct") is None]
        if todo:
            if any(rows[i].get("text") is None for i in todo):
                raise InputError("a sample has neither a verdict ('correct') nor a 'text' to "
                                 "grade", field="correct")
            graded = self.grader.grade(by_id, [rows[i] for i in todo])
            for i, g in zip(todo, graded):
                rows[i] = {**rows[i], **g}
        keep = [{"prompt_id": r["prompt_id"], "model": label, "sample_idx": r["sample_idx"],
                 **{k: r[k] for k in _ROW_KEEP if k in r}} for r in rows]
        table = pa.Table.from_pylist(keep)
        return validate_batch(table, self.out / "rollouts" / f"part-{label}.parquet", 1)

    def _store(self, rows: list[dict], label: str) -> Counts:
        from rlvr_boundary.io.rollouts import CountReducer

        table = self._table(rows, label)
        path = self._writer_().write(label, table)
        reducer = CountReducer()
        reducer.add(table)
        return self._restrict(reducer.result(path)[label])

    def _check_schedule(self) -> None:
        """Refuse, before any sampling, rules whose correction needs looks that are not set."""
        o = self.opts
        if o.rules and o.correction in ("bonferroni", "spending") and o.looks is None:
            raise InputError(f"the {o.correction} correction of the rules needs the number of "
                             "scheduled looks: give MonitorOptions(looks=...) (the TRL callback "
                             "sets it from max_steps), or use correction='open'", field="looks")

    def sample_base(self, model, tokenizer=None) -> Counts:
        """Sample the base once (skipped when its counts are already known); return its counts."""
        self._check_schedule()
        if self.base_counts is not None:
            return self.base_counts
        rows = self._sample(model, tokenizer, self.base_label, self._seed("base"))
        self.base_counts = self._store(rows, self.base_label)
        return self.base_counts

    def base_from_samples(self, samples) -> Counts:
        """Store the base's samples given by the trainer (rows as for :meth:`step`, e.g.
        verl's validation before the first step); skipped when the base is known."""
        if self.base_counts is not None:
            return self.base_counts
        rows = _number_samples(samples, {p["prompt_id"] for p in self.prompts})
        self.base_counts = self._store(rows, self.base_label)
        return self.base_counts

    # ----------------------------------------------------------------- looks

    def step(self, step: int, model=None, tokenizer=None, *, samples=None) -> dict:
        """Look at the policy at training step ``step``; return the ``monitor-step`` result.

        Parameters
        ----------
        step
            Training step (>= 0). A step already looked at returns its stored result.
        model, tokenizer
            The policy: a model object and its tokenizer, or a checkpoint folder.
        samples
            Instead of sampling: the trainer's own generations on the held-out
            prompts, a list of dicts with ``prompt_id``, ``text`` and/or ``correct``
            (graded when absent), optional ``sample_idx`` (else the order within
            each prompt) and token summaries such as ``entropy_mean``.

        Returns
        -------
        dict
            The enveloped result (also written to ``steps/step-N.json``).
        """
        from rlvr_boundary.io.results import envelope, read_result, write_doc

        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
            raise InputError(f"step must be an integer >= 0, got {step!r}", field="step")
        step = int(step)
        if step in self.history:
            return self.history[step]
        if self.base_counts is None:
            raise InputError("the monitor has no base counts: call sample_base(model) before "
                             "the first look, or give base= a file of the base's samples")
        self._check_schedule()
        label = step_label(step)
        if samples is not None:
            rows = _number_samples(samples, {p["prompt_id"] for p in self.prompts})
        elif model is not None:
            rows = self._sample(model, tokenizer, label, self._seed(label))
        else:
            raise InputError("step() needs the model (or samples=) to look at", field="model")
        counts = self._store(rows, label)
        ent = [r.get("entropy_mean") for r in rows if r.get("entropy_mean") is not None]
        aligned = align([self.base_counts, counts])
        look = len(self.history) + 1  # the order of looking: every look its own level
        payload = assess(aligned, self.base_label, label, self.opts, step=step, look=look,
                         entropy=float(np.mean(ent)) if ent else None)
        payload["samples"] = {"rollouts": str(self.out / "rollouts" / f"part-{label}.parquet"),
                              "base": self.base_source or {
                                  "kind": "sampled",
                                  "path": str(self.out / "rollouts" / "part-base.parquet")},
                              "source": "trainer" if samples is not None else "monitor"}
        payload["metrics"] = scalars(payload, self.opts)
        doc = envelope(STEP_KIND, self.opts, payload)
        path = self.out / "steps" / f"{label}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_doc(path, doc)
        doc = read_result(path, kind=STEP_KIND)
        self.history[step] = doc
        self._write_summary()
        return doc

    def alarms(self) -> list[dict]:
        """Every rule that fired, with the step and look it fired at, in step order."""
        return [{"step": s, "look": d["look"], **r}
                for s, d in sorted(self.history.items()) for r in d["fired"]]

    @staticmethod
    def actions(doc: dict) -> set[str]:
        """The actions of the rules that fired at this look ('warn', 'save', 'stop')."""
        return {r["action"] for r in doc["fired"]}

    def should_stop(self, doc: dict) -> bool:
        """Whether a 'stop' rule fired at this look."""
        return "stop" in self.actions(doc)

    def _write_summary(self) -> None:
        from rlvr_boundary.io.results import write_result

        looks = [{"step": s, "look": d["look"], "alpha_look": d["alpha_look"],
                  "metrics": d["metrics"], "result": f"steps/{step_label(s)}.json"}
                 for s, d in sorted(self.history.items())]
        write_result(self.out / "monitor.json", RUN_KIND, self.opts,
                     {"looks": looks, "alarms": self.alarms(),
                      "first_alarm": self.alarms()[0] if self.alarms() else None,
                      "base": self.base_source or {"kind": "sampled"},
                      "n_prompts": len(self.prompts)})

    def close(self) -> None:
        """Stop the grading workers (the stored results stay)."""
        self.grader.close()

    def __enter__(self) -> "BoundaryMonitor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _check_prompts(prompts, template: str) -> list[dict]:
    """Held-out prompts as dicts with a string ``prompt_id`` and a ``prompt`` or ``messages``."""
    from rlvr_boundary.backends.base import render_prompt

    if not isinstance(prompts, (list, tuple)) or not prompts:
        raise InputError("the monitor needs a non-empty list of held-out prompts", field="prompts")
    out, seen = [], set()
    for i, p in enumerate(prompts):
        if not isinstance(p, dict) or p.get("prompt_id") in (None, ""):
            raise InputError(f"held-out prompt {i + 1}: expected a dict with a 'prompt_id'",
                             line=i + 1, field="prompt_id")
        pid = str(p["prompt_id"])
        if pid in seen:
            raise InputError(f"duplicate held-out prompt id {pid!r}", line=i + 1,
                             field="prompt_id")
        seen.add(pid)
        q = dict(p, prompt_id=pid)
        if not isinstance(q.get("prompt"), str) and not isinstance(q.get("messages"), list):
            if not isinstance(q.get("question"), str):
                raise InputError(f"held-out prompt {pid!r}: expected a 'prompt' or 'question' "
                                 "string, or chat 'messages'", line=i + 1, field="prompt")
            q.update(render_prompt(template, q["question"]))
        out.append(q)
    return out


def _number_samples(samples, ids: set[str]) -> list[dict]:
    """Trainer samples as row dicts with ``sample_idx`` (order within each prompt if absent)."""
    rows = samples.to_pylist() if hasattr(samples, "to_pylist") else list(samples)
    counter: dict[str, int] = {}
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or r.get("prompt_id") in (None, ""):
            raise InputError(f"sample {i + 1}: expected a dict with a 'prompt_id'", line=i + 1,
                             field="prompt_id")
        pid = str(r["prompt_id"])
        if pid not in ids:
            raise InputError(f"sample {i + 1}: prompt {pid!r} is not a held-out prompt of the "
                             "monitor", line=i + 1, field="prompt_id")
        j = r.get("sample_idx")
        if j is None:
            j = counter.get(pid, 0)
        counter[pid] = max(counter.get(pid, 0), int(j) + 1)
        out.append({**r, "prompt_id": pid, "sample_idx": int(j)})
    missing = sorted(ids - set(counter))
    if missing:
        raise InputError(f"the samples lack {len(missing)} held-out prompt(s), e.g. "
                         f"{', '.join(missing[:5])}", field="prompt_id")
    return out
