"""Options of a lab run: :class:`LabConfig` and the presets (no torch needed).

One :class:`LabConfig` decides a run folder: it is written to
``lab_config.json`` when the folder is made and every later call with other
options is refused, so a folder's numbers always come from one set of options.
The seeds are separate on purpose:

- ``split_seed``: which digit triples are held out for the audit and which
  problems the audit samples. Fixed (0) across the runs of a multi-seed
  experiment, so every run is audited on the same problems;
- ``seed``: the pretraining seed (tokenizer texts, corpus, initialisation,
  batch order) and the audit's sampling seeds;
- ``grpo.seed`` (``--rl-seed``): the RL stage's problem draws and rollouts.

Experiment-specific options (distillation, token replacement, seeds,
prolonged RL) live in each experiment's own dataclass
(:mod:`rlvr_boundary.lab.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr_boundary.lab import task as T
from rlvr_boundary.lab.grpo import GRPOConfig
from rlvr_boundary.lab.model import ModelConfig
from rlvr_boundary.lab.pretrain import PretrainConfig

#: Options of each preset (the fields of :class:`LabConfig` they set).
PRESETS: dict[str, dict] = {
    # Mechanics (CI): every stage runs at toy size. The base is trained just long enough
    # to copy the operands on held-out digit triples (at 400 steps it never answers
    # correctly there, and GRPO with all-zero rewards would not move the weights). Six
    # GRPO steps from so fragile a base lower pass@1 (measured at learning rates 1e-4 to
    # 1e-3 and batches up to the full preset's), so the run says on screen that it
    # checks the mechanics only.
    "quick": {
        "model": {"hidden": 64, "layers": 2, "heads": 4, "mlp": 192},
        "pretrain": {"traces": 5000, "steps": 500, "batch_size": 64, "lr": 1e-2},
        "grpo": {"steps": 6, "prompts_per_step": 8, "group_size": 4, "save_every": 3,
                 "lr": 1e-3},
        "eval_prompts": 24, "n_samples": 8, "bootstrap": 200,
    },
    # Experiment 1: RL narrows the boundary.
    "full": {
        "model": {"hidden": 64, "layers": 2, "heads": 4, "mlp": 192},
        "pretrain": {"traces": 20000, "steps": 600, "batch_size": 64, "lr": 1e-2},
        "grpo": {"steps": 40, "prompts_per_step": 16, "group_size": 8, "save_every": 10,
                 "lr": 1e-3},
        "eval_prompts": 120, "n_samples": 64, "bootstrap": 2000,
    },
}


def _positive_int(name: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


@dataclass
class LabConfig:
    """Options of one lab run (written to ``lab_config.json`` and every result)."""

    preset: str = "quick"
    """quick (mechanics, CI) or full (the experiments at their reported size)."""
    experiment: str = "narrowing"
    """Which experiment (:data:`rlvr_boundary.lab.registry.EXPERIMENTS`)."""
    task: str = "plain"
    """Task family: plain (the strategy is decidable from the prompt only by computing all
    three values; the tilt case) or cued (the prompt carries a cue word of its gold
    strategy; a prompt-conditional policy is one token away)."""
    seed: int = 0
    """Pretraining seed (tokenizer texts, corpus, initialisation, batch order) and the
    audit's sampling seed."""
    split_seed: int = 0
    """Seed of the train / audit split of the digit triples and of the audited problems
    (the same for every run of a multi-seed experiment)."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Size of the tiny Llama."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Pretraining options."""
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    """RL options (estimator and shapings inside)."""
    n_eval_triples: int = 200
    """Digit triples held out from the tokenizer, pretraining and RL; the audit's problems
    use only these."""
    eval_prompts: int = 150
    """Distinct held-out problems the audit samples."""
    n_samples: int = 64
    """Samples per problem and checkpoint (the largest k of the audit)."""
    bootstrap: int = 2000
    """Gaussian multipliers of the simultaneous band."""
    threads: int = 1
    """Torch CPU threads (1: on a shared machine, more threads mostly spin and wait)."""
    sample: str = "all"
    """Which models the audit samples: all (the base and every checkpoint) or last (the
    base and the last checkpoint only: enough for a table of runs)."""

    def __post_init__(self) -> None:
        from rlvr_boundary.lab.registry import EXPERIMENTS

        for name, cls in (("model", ModelConfig), ("pretrain", PretrainConfig),
                          ("grpo", GRPOConfig)):
            if isinstance(getattr(self, name), dict):
                setattr(self, name, cls(**getattr(self, name)))
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if self.experiment not in EXPERIMENTS:
            raise ValueError(f"unknown experiment {self.experiment!r}; "
                             f"known: {list(EXPERIMENTS)}")
        if self.task not in T.TASKS:
            raise ValueError(f"unknown task family {self.task!r}; known: {list(T.TASKS)}")
        for name in ("eval_prompts", "n_samples", "bootstrap", "threads", "n_eval_triples"):
            _positive_int(name, getattr(self, name))
        for name in ("seed", "split_seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.n_samples < 2 or self.bootstrap < 2:
            raise ValueError("n_samples and bootstrap must be >= 2")
        if self.sample not in ("all", "last"):
            raise ValueError(f"sample must be 'all' or 'last', got {self.sample!r}")

    @property
    def cued(self) -> bool:
        """True in the cued task family."""
        return self.task == "cued"

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "LabConfig":
        """The preset's options, with ``overrides`` on top.

        ``overrides`` are top-level fields plus these RL options: ``shaping``,
        ``kl_coef``, ``group_size``, ``steps`` (RL steps), ``save_every``,
        ``ref_reset_every`` and ``rl_seed`` (the RL stage's seed; default
        ``seed``).
        """
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
        p = PRESETS[preset]
        seed = overrides.get("seed", 0)
        grpo = dict(p["grpo"])
        for key in ("shaping", "kl_coef", "group_size", "steps", "save_every",
                    "ref_reset_every"):
            value = overrides.pop(key, None)
            if value is not None:
                grpo[key] = value
        # The RL seed alone (problem draws and rollouts of GRPO): the base, the audit's
        # problems and its sampling seeds stay those of ``seed`` and ``split_seed``.
        rl_seed = overrides.pop("rl_seed", None)
        grpo["seed"] = seed if rl_seed is None else rl_seed
        kw = {k: v for k, v in p.items() if k not in ("model", "pretrain", "grpo")}
        kw.update(overrides)
        return cls(preset=preset, model=ModelConfig(**p["model"]),
                   pretrain=PretrainConfig(**p["pretrain"], seed=seed),
                   grpo=GRPOConfig(**grpo), **kw)


#: Options that decide the pretrained base (tokenizer corpus, initialisation, pretraining).
BASE_OPTIONS = ("seed", "split_seed", "task", "model", "pretrain", "n_eval_triples")

#: Options that decide the base model's audit samples (with the base itself).
SAMPLE_OPTIONS = (*BASE_OPTIONS, "eval_prompts", "n_samples")
