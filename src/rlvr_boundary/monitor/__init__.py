"""Watch the reasoning boundary while training (docs/monitor.md).

- :class:`BoundaryMonitor` (:mod:`.monitor`): at a training step, sample the
  policy on held-out prompts (or take the trainer's own generations), grade,
  and compare with the base: pass@k, D(k) with the simultaneous band, k*, the
  price, coverage, support, entropy and the share of zero-variance groups, as a
  ``monitor-step`` result document; each look's samples are kept as a rollout
  table labelled ``step-N``.
- :mod:`.rules`: alarms (warn, save, stop) and the correction for repeated looks.
- :mod:`.assess`: the numbers of one look from counts (no sampling, no files).
- :mod:`.trl`: a ``TrainerCallback`` for TRL; :mod:`.verl`: a validation hook
  for verl (loaded with ``VERL_USE_EXTERNAL_MODULES``).

This package sits beside the pipelines: it uses the backends, the verifiers,
the readers and the analysis, and nothing below it imports it.
"""

import importlib

__all__ = ["BoundaryMonitor", "MonitorOptions", "Rule", "parse_rule", "look_alpha",
           "look_alphas", "step_label", "STEP_KIND", "RUN_KIND"]

#: Where each public name lives; imported on first use, so that the command line can
#: read the options (``rlvr_boundary.monitor.options``) without loading numpy.
_WHERE = {"BoundaryMonitor": "monitor", "step_label": "monitor", "STEP_KIND": "monitor",
          "RUN_KIND": "monitor", "MonitorOptions": "options", "Rule": "rules",
          "parse_rule": "rules", "look_alpha": "rules", "look_alphas": "rules"}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"rlvr_boundary.monitor.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'rlvr_boundary.monitor' has no attribute {name!r}")
