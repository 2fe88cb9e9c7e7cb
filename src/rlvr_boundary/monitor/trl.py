"""TRL (and any transformers ``Trainer``): run the boundary monitor every N steps.

Usage::

    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions
    from rlvr_boundary.monitor.trl import BoundaryCallback

    trainer = GRPOTrainer(model=..., args=GRPOConfig(..., report_to=["tensorboard"]), ...)
    monitor = BoundaryMonitor(heldout, verifier="math", out_dir="runs/x/boundary",
                              options=MonitorOptions(n=16, every=20, rules=["stop:loss>=8"]))
    BoundaryCallback.attach(trainer, monitor)
    trainer.train()

What it does:

- at ``on_train_begin``, samples the base (the model before its first optimizer
  step) unless the monitor already has the base's counts (given as a file, or
  stored by an earlier run in the same folder); with the ``bonferroni`` or
  ``spending`` correction and no ``looks`` given, the scheduled looks are
  ``max_steps // every``;
- at ``on_step_end`` of every ``every``-th optimizer step, samples the live
  model (eval mode, no gradients; its training mode is restored), grades, and
  compares (:meth:`BoundaryMonitor.step`);
- logs the look's ``boundary/...`` scalars through the trainer's own
  ``Trainer.log``, so every ``report_to`` integration (TensorBoard, W&B,
  trackio, ...) receives them at that step. Those integrations add their own
  prefix to training logs: in TensorBoard and W&B the names read
  ``train/boundary/pass@k/1``, ``train/boundary/price``, ...;
- acts on the rules that fired: ``warn`` logs a warning, ``save`` sets
  ``control.should_save`` (the trainer writes a checkpoint at this step),
  ``stop`` sets ``control.should_training_stop`` (the trainer ends after this
  step). The rule and the step are in the look's result and in ``monitor.json``.

The metrics logged come from ``Trainer.log`` of ``transformers.Trainer`` itself,
not from a subclass's override (TRL's ``GRPOTrainer.log`` would fold its own
averaged metrics into our call and clear them).

Tested in one process on CPU. In a multi-process run the monitor samples on the
main process only, and a ``stop`` decided there is not broadcast to the other
processes: run multi-GPU jobs with ``warn``/``save`` rules, or look from outside
with ``rlvr-boundary watch``.
"""

from __future__ import annotations

import logging

from rlvr_boundary.errors import InputError, require

_tf = require("transformers", "trl", "the TRL monitor callback")

from rlvr_boundary.monitor.monitor import BoundaryMonitor

__all__ = ["BoundaryCallback"]

log = logging.getLogger("rlvr_boundary.monitor")


class BoundaryCallback(_tf.TrainerCallback):
    """A ``TrainerCallback`` that runs a :class:`BoundaryMonitor` on the live model.

    Parameters
    ----------
    monitor
        The monitor (held-out prompts, verifier, options, output folder).
    trainer
        The trainer whose ``log`` receives the metrics (:meth:`attach` sets it).
    """

    def __init__(self, monitor: BoundaryMonitor, trainer=None) -> None:
        self.monitor = monitor
        self.trainer = trainer
        self.last: dict | None = None

    @classmethod
    def attach(cls, trainer, monitor: BoundaryMonitor) -> "BoundaryCallback":
        """Create the callback for ``trainer`` and add it to the trainer's callbacks."""
        cb = cls(monitor, trainer)
        trainer.add_callback(cb)
        return cb

    def on_train_begin(self, args, state, control, model=None, processing_class=None, **kwargs):
        if self.trainer is None:
            raise InputError("BoundaryCallback needs its trainer to log through report_to: "
                             "use BoundaryCallback.attach(trainer, monitor)")
        if not state.is_world_process_zero:
            return control
        mon = self.monitor
        if mon.opts.looks is None and mon.opts.correction in ("bonferroni", "spending"):
            mon.set_looks(max(1, int(state.max_steps) // mon.opts.every))
        if not mon.has_base:
            if state.global_step > 0:
                raise InputError(
                    f"training resumes at step {state.global_step}: the model is no longer the "
                    "base. Give the monitor the base's samples (base=FILE) or the folder of the "
                    "first run")
            mon.sample_base(model, processing_class or getattr(self.trainer,
                                                               "processing_class", None))
        return control

    def on_step_end(self, args, state, control, model=None, processing_class=None, **kwargs):
        if not state.is_world_process_zero or not self.monitor.due(state.global_step):
            return control
        tok = processing_class or getattr(self.trainer, "processing_class", None)
        doc = self.monitor.step(state.global_step, model, tok)
        self.last = doc
        # transformers.Trainer.log itself: TRL's override would flush its own metrics here.
        _tf.Trainer.log(self.trainer, dict(doc["metrics"]))
        for rule in doc["fired"]:
            if rule["action"] == "warn":
                log.warning("boundary monitor: rule %s fired at step %d", rule["rule"],
                            state.global_step)
            elif rule["action"] == "save":
                control.should_save = True
            elif rule["action"] == "stop":
                log.warning("boundary monitor: rule %s fired at step %d; stopping training",
                            rule["rule"], state.global_step)
                control.should_training_stop = True
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self.monitor.close()
        return control
