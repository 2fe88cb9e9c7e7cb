"""verl: an unbiased best@k and the boundary monitor in verl's validation metrics.

Load it into the driver with::

    export VERL_USE_EXTERNAL_MODULES=rlvr_boundary.monitor.verl
    export RLVR_BOUNDARY_MONITOR='{"out": "runs/x/boundary", "rules": ["warn:loss>=8"]}'
    python3 -m verl.trainer.main_ppo trainer.val_before_train=True trainer.test_freq=10 ...

verl imports the modules named in ``VERL_USE_EXTERNAL_MODULES`` when ``verl`` is
imported. This module then patches the trainer classes (now if they are already
imported, else as soon as their modules are: an import hook watches for
``verl.trainer.ppo.ray_trainer`` and ``verl.trainer.ppo.v1.trainer_base``):

- ``_maybe_log_val_generations`` (called once per validation with every prompt
  text, completion and score) also keeps the texts for us;
- ``_val_metrics_update`` (which turns the validation samples into the metrics
  dict) runs as before, then:

  1. every ``best@n/mean`` and ``worst@n/mean`` is replaced by the unbiased
     estimate of the best (worst) of n draws: verl's value is a bootstrap
     *with replacement* over the N samples of a prompt, biased low (one correct
     of four gives best@4 = 1 - (3/4)^4 = 0.684, where the samples show a
     correct answer among 4 for sure: 1.0). For 0/1 scores this is the unbiased
     pass@n of Chen et al.; for any score it is the mean over n-subsets (drawn
     without replacement) of their maximum, :func:`best_of_n`. The bootstrap's
     ``best@n/std`` and ``worst@n/std`` are dropped (they describe the biased
     resampling, not the estimate); ``maj@n`` is left as verl computes it;
  2. the samples go to a :class:`~rlvr_boundary.monitor.BoundaryMonitor`: the
     validation at step 0 (``trainer.val_before_train``) is the base, and each
     later validation is a look; its ``boundary/...`` metrics (pass@k, D(k) and
     the simultaneous band, k*, price, coverage, SRR/NDR, zero-variance share,
     alarm) join the metrics dict that verl logs.

A prompt's identity across validations is the sha256 of its decoded prompt text
(verl draws new uids at every validation); identical prompt texts are told apart
by their order. Correctness comes from the ``acc`` values when the reward
function returns them, else from the reward when every reward is 0 or 1, else
from ``reward >= correct_threshold`` (an option; refused when unset).

Options (JSON in ``RLVR_BOUNDARY_MONITOR``): ``out`` (the monitor's folder;
default ``<trainer.default_local_dir>/boundary``), ``base`` (a file of the base's
samples or counts, keyed by the same prompt ids, when the run does not validate
at step 0), ``correct_threshold``, and any :class:`MonitorOptions` field
(``ks``, ``bootstrap``, ``alpha``, ``seed``, ``correction``, ``looks``, ``rules``,
``K``, ``log_ks``). With ``bonferroni`` or ``spending`` and no ``looks``, the
looks are ``total_training_steps // trainer.test_freq``.

Rules: ``warn`` prints; ``save`` calls the trainer's ``_save_checkpoint()``;
``stop`` makes the next training step the last (verl decides at the start of a
step whether it is the last one, so the run ends one step after the alarm, with
the checkpoint and validation verl does at its last step).

Tested here against the real verl 0.9.1 package: the legacy ``RayPPOTrainer``'s
own ``_validate`` on CPU with a stand-in rollout manager, and verl's
``process_validation_metrics``/``bootstrap_metric``. Not run here: a real verl
training run (GPU rollout engine), the v1 trainer (``trainer.use_v1``, verl's
default; it needs ``transferqueue``, whose ``hydra-core`` dependency clashes with
math-verify's antlr pin in our environment: the same two methods are patched),
and the ``save`` and ``stop`` actions inside a real ``fit`` loop.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import json
import os
import re
import sys
from collections import defaultdict

import numpy as np

from rlvr_boundary.errors import InputError

__all__ = ["ENV_VAR", "best_of_n", "unbiased_best_metrics", "correctness", "prompt_ids",
           "install", "patch_trainer_class", "MonitorHook"]

#: Environment variable holding the JSON options.
ENV_VAR = "RLVR_BOUNDARY_MONITOR"
#: Modules whose trainer classes are patched, and the class names.
TARGETS = {"verl.trainer.ppo.ray_trainer": "RayPPOTrainer",
           "verl.trainer.ppo.v1.trainer_base": "PPOTrainer"}
_HOOK_KEYS = {"out", "base", "correct_threshold"}
_METRIC = re.compile(r"^(val-core|val-aux)/(.+)/([^/]+)/(best|worst)@(\d+)/(mean|std)$")


# ----------------------------------------------------------------------------- math


def best_of_n(values, n: int, *, worst: bool = False) -> float:
    """Unbiased estimate of the expected best (or worst) of ``n`` draws, from N samples.

    Parameters
    ----------
    values
        ``(N,)`` scores of one prompt's samples.
    n
        Draws, ``1 <= n <= N``.
    worst
        The minimum instead of the maximum.

    Returns
    -------
    float
        ``sum_i v_(i) C(i-1, n-1) / C(N, n)`` over the scores sorted increasingly
        (decreasingly for the worst): the mean of the maximum over all n-subsets.

    Notes
    -----
    The i-th smallest of N values is the maximum of an n-subset in exactly
    ``C(i-1, n-1)`` of the ``C(N, n)`` subsets, so the sum is the average over
    subsets, an unbiased estimate of ``E[max of n draws]`` (a U-statistic). For
    0/1 scores with c ones it equals ``1 - C(N-c, n)/C(N, n)``, the pass@n
    estimator of Chen et al., "Evaluating Large Language Models Trained on Code"
    (arXiv 2107.03374). Weights are computed in log space (exact for N up to
    tens of thousands).
    """
    v = np.sort(np.asarray(values, dtype=float))  # (N,)
    if worst:
        v = v[::-1]
    N = v.size
    if not 1 <= n <= N:
        raise ValueError(f"n must lie in 1..{N}, got {n}")
    i = np.arange(1, N + 1)
    ok = i >= n
    from scipy.special import gammaln

    logw = np.full(N, -np.inf)
    logw[ok] = (gammaln(i[ok]) - gammaln(n) - gammaln(i[ok] - n + 1)
                - (gammaln(N + 1) - gammaln(n + 1) - gammaln(N - n + 1)))
    return float(np.sum(np.exp(logw) * v))


def unbiased_best_metrics(metric_dict: dict, data_sources, sample_uids,
                          infos: dict) -> dict:
    """verl's metrics with ``best@n``/``worst@n`` replaced by :func:`best_of_n` averages.

    For every ``val-*/<source>/<var>/best@n/mean`` (and ``worst@n/mean``) in
    ``metric_dict``, the value becomes the mean over the source's prompts of
    :func:`best_of_n` of the prompt's ``var`` values (None values dropped, as
    verl does); the matching ``/std`` keys are removed. Other keys are kept.
    """
    groups: dict = defaultdict(lambda: defaultdict(list))  # (source, var) -> uid -> values
    sources = [str(s) for s in np.asarray(data_sources, dtype=object).tolist()]
    for var, vals in infos.items():
        vals = list(vals)
        if len(vals) != len(sources):
            continue
        for s, u, v in zip(sources, sample_uids, vals):
            if v is not None and not isinstance(v, str):
                groups[(s, var)][u].append(float(v))
    out = {}
    for key, value in metric_dict.items():
        m = _METRIC.match(key)
        if m is None:
            out[key] = value
            continue
        _, source, var, kind, n, stat = m.groups()
        if stat == "std":
            continue
        per_uid = groups.get((source, var))
        if not per_uid:
            out[key] = value
            continue
        n = int(n)
        est = [best_of_n(v, n, worst=kind == "worst") for v in per_uid.values() if len(v) >= n]
        out[key] = float(np.mean(est)) if est else value
    return out


def correctness(infos: dict, threshold: float | None = None) -> list[bool]:
    """Per-sample verdicts: ``acc`` if present, else 0/1 rewards, else ``reward >= threshold``."""
    acc = infos.get("acc")
    if acc is not None and len(acc) and all(a is not None for a in acc):
        return [bool(float(a) > 0.5) for a in acc]
    reward = [float(r) for r in infos.get("reward", [])]
    if threshold is not None:
        return [r >= threshold for r in reward]
    if all(r in (0.0, 1.0) for r in reward):
        return [r == 1.0 for r in reward]
    raise InputError("the validation rewards are not 0/1 and there is no 'acc': set "
                     f"correct_threshold in {ENV_VAR} (a reward >= it counts as correct)",
                     field="correct_threshold")


def prompt_ids(inputs: list[str], uids: list) -> list[str]:
    """A stable id per sample: sha256 of the prompt text (16 hex digits), ``#j`` for the
    j-th distinct uid with the same text (verl's uids change at every validation)."""
    first_uid: dict[str, list] = {}
    out = []
    for text, uid in zip(inputs, uids):
        h = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
        seen = first_uid.setdefault(h, [])
        if uid not in seen:
            seen.append(uid)
        j = seen.index(uid)
        out.append(h if j == 0 else f"{h}#{j + 1}")
    return out


# ----------------------------------------------------------------------------- the hook


def _options() -> dict:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"{ENV_VAR} is not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{ENV_VAR} must be a JSON object")
    return doc


class MonitorHook:
    """The state the patched trainer keeps between validations (one per trainer object)."""

    def __init__(self, trainer, options: dict | None = None) -> None:
        from dataclasses import fields

        from rlvr_boundary.monitor.options import MonitorOptions

        opts = dict(_options() if options is None else options)
        known = {f.name for f in fields(MonitorOptions)} | _HOOK_KEYS
        unknown = sorted(set(opts) - known)
        if unknown:
            raise InputError(f"unknown options in {ENV_VAR}: {', '.join(unknown)}")
        self.trainer = trainer
        self.hook = {k: opts.pop(k) for k in list(opts) if k in _HOOK_KEYS}
        self.monitor_opts = opts
        self.monitor = None
        self.pending: list[dict] = []

    def _out(self) -> str:
        if self.hook.get("out"):
            return str(self.hook["out"])
        cfg = getattr(self.trainer, "config", None)
        root = None
        try:
            root = cfg.trainer.get("default_local_dir", None)
        except AttributeError:
            pass
        return os.path.join(str(root or "."), "boundary")

    def _looks(self) -> int | None:
        try:
            freq = int(self.trainer.config.trainer.get("test_freq", 0))
            total = int(self.trainer.total_training_steps)
        except (AttributeError, TypeError, ValueError):
            return None
        return max(1, total // freq) if freq > 0 and total > 0 else None

    def _make_monitor(self, prompts: list[dict], n: int):
        from rlvr_boundary.monitor.monitor import BoundaryMonitor
        from rlvr_boundary.monitor.options import MonitorOptions

        kw = dict(self.monitor_opts)
        kw.setdefault("n", n)
        kw.setdefault("every", 1)
        if kw.get("looks") is None and kw.get("correction", "bonferroni") in ("bonferroni",
                                                                              "spending"):
            looks = self._looks()
            if looks is None:
                kw["correction"] = "open"  # the length of the run is unknown
            else:
                kw["looks"] = looks
        return BoundaryMonitor(prompts, _no_grading, self._out(), MonitorOptions(**kw),
                               base=self.hook.get("base"))

    def keep(self, inputs, outputs, scores) -> None:
        self.pending.append({"inputs": list(inputs), "outputs": list(outputs)})

    def metrics(self, metric_dict: dict, data_sources, sample_uids, infos: dict) -> dict:
        """Rewrite best@n, then run the monitor on this validation's samples."""
        out = unbiased_best_metrics(metric_dict, data_sources, sample_uids, infos)
        inputs = [t for p in self.pending for t in p["inputs"]]
        outputs = [t for p in self.pending for t in p["outputs"]]
        self.pending = []
        uids = list(sample_uids)
        if len(inputs) != len(uids):
            print(f"rlvr-boundary monitor: {len(inputs)} prompt texts for {len(uids)} samples; "
                  "no boundary metrics at this validation")
            return out
        correct = correctness(infos, self.hook.get("correct_threshold"))
        ids = prompt_ids(inputs, uids)
        rows = [{"prompt_id": pid, "text": text, "correct": ok}
                for pid, text, ok in zip(ids, outputs, correct)]
        step = int(getattr(self.trainer, "global_steps", 0) or 0)
        if self.monitor is None:
            order = list(dict.fromkeys(ids))
            text_of = dict(zip(ids, inputs))
            counts = defaultdict(int)
            for pid in ids:
                counts[pid] += 1
            prompts = [{"prompt_id": pid, "prompt": text_of[pid]} for pid in order]
            self.monitor = self._make_monitor(prompts, min(counts.values()))
        mon = self.monitor
        if not mon.has_base:
            if step == 0:
                mon.base_from_samples(rows)
                print("rlvr-boundary monitor: the validation at step 0 is the base")
                return out
            print(f"rlvr-boundary monitor: no base (the first validation is at step {step}); "
                  f"give base= in {ENV_VAR} for boundary metrics")
            return out
        if step == 0:
            return out
        doc = mon.step(step, samples=rows)
        out.update(doc["metrics"])
        self._act(doc)
        return out

    def _act(self, doc: dict) -> None:
        for r in doc["fired"]:
            print(f"rlvr-boundary monitor: rule {r['rule']} fired at step {doc['step']}")
            if r["action"] == "save" and hasattr(self.trainer, "_save_checkpoint"):
                self.trainer._save_checkpoint()
            elif r["action"] == "stop" and hasattr(self.trainer, "total_training_steps"):
                # verl reads is_last_step = global_steps >= total_training_steps at the start
                # of the next step; validation runs before global_steps is incremented.
                self.trainer.total_training_steps = min(self.trainer.total_training_steps,
                                                        int(doc["step"]) + 1)


def _no_grading(prompt, text):  # the validation samples carry verl's own verdicts
    raise InputError("the verl hook grades with verl's reward; a sample came without one")


def _hook_of(trainer) -> MonitorHook:
    hook = trainer.__dict__.get("_rlvr_monitor_hook")
    if hook is None:
        hook = MonitorHook(trainer)
        trainer.__dict__["_rlvr_monitor_hook"] = hook
    return hook


def patch_trainer_class(cls) -> None:
    """Wrap the class's ``_maybe_log_val_generations`` and ``_val_metrics_update`` (once)."""
    if getattr(cls, "_rlvr_monitor_patched", False):
        return
    keep_orig = cls._maybe_log_val_generations
    update_orig = cls._val_metrics_update

    def _maybe_log_val_generations(self, inputs, outputs, scores):
        _hook_of(self).keep(inputs, outputs, scores)
        return keep_orig(self, inputs, outputs, scores)

    def _val_metrics_update(self, data_sources, sample_uids, reward_extra_infos_dict,
                            sample_turns, *args, **kwargs):
        metric_dict = update_orig(self, data_sources, sample_uids, reward_extra_infos_dict,
                                  sample_turns, *args, **kwargs)
        return _hook_of(self).metrics(metric_dict, data_sources, sample_uids,
                                      reward_extra_infos_dict)

    cls._maybe_log_val_generations = _maybe_log_val_generations
    cls._val_metrics_update = _val_metrics_update
    cls._rlvr_monitor_originals = (keep_orig, update_orig)
    cls._rlvr_monitor_patched = True


class _Finder(importlib.abc.MetaPathFinder):
    """Patches a trainer class right after its module is executed."""

    def find_spec(self, name, path, target=None):
        if name not in TARGETS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, TARGETS[name])
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, cls_name: str) -> None:
        self.inner, self.cls_name = inner, cls_name

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        patch_trainer_class(getattr(module, self.cls_name))


def install() -> None:
    """Patch the trainer classes now (if imported) or when their modules are imported."""
    for mod, cls in TARGETS.items():
        if mod in sys.modules:
            patch_trainer_class(getattr(sys.modules[mod], cls))
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


install()
