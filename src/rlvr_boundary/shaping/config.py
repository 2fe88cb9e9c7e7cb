"""One options dataclass for every trainer entry point (numpy, torch, verl, TRL)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlvr_boundary.shaping.registry import ESTIMATOR_REGISTRY as ESTIMATORS


@dataclass
class ShapingConfig:
    """Which advantage estimator to use and which shapings to apply after it.

    The order is fixed: estimator on sequence rewards -> perplexity factor
    (sequence level) -> broadcast to tokens -> position bias (token level).
    """

    estimator: str = "grpo"
    """One of grpo, dr_grpo, rloo, reinforce_pp, reinforce_pp_baseline, remax, passk."""
    k: int | None = None
    """Budget of the pass@k advantage (required for ``passk``)."""
    grpo_std: str = "sample"
    """GRPO's std: "sample" (ddof 1, verl/TRL) or "population" (ddof 0)."""
    eps: float | None = None
    """Override the estimator's epsilon (GRPO 1e-6 on the std; REINFORCE++ 1e-8 on the variance)."""

    perplexity: bool = False
    """Apply the perplexity factor ``1 - ppl_alpha * w`` (needs per-sequence log-PPL)."""
    ppl_alpha: float = 0.01
    """Strength alpha of the perplexity shaping."""
    ppl_iqr_exclude: bool = False
    """Leave 1.5-IQR outliers of log-PPL out of each group's mean/std (and unshaped)."""
    ppl_iqr_factor: float = 1.5
    """Fence factor of the outlier rule."""
    ppl_clamp: tuple[float, float] | None = None
    """Optional bounds on the factor, e.g. (0.8, 1.2)."""

    position: bool = False
    """Apply the position bias ``gamma * sigmoid(d m (l + n))`` (needs the step if windowed)."""
    pos_gamma: float = 0.1
    """gamma: the bias's height."""
    pos_m: float = 15.0
    """m: the sigmoid's slope."""
    pos_n: float = -0.5
    """n: the sigmoid's shift (the paper's code uses -0.5; a published summary flips its sign)."""
    pos_d: float = 1.0
    """d: direction (+1 favours late tokens, -1 early ones)."""
    pos_cap: float = 0.5
    """The bias never exceeds ``pos_cap * |A|``."""
    pos_window: tuple[int | None, int | None] | None = (200, 300)
    """Shape only while ``lo < step < hi``; None shapes at every step."""

    extra: dict[str, Any] = field(default_factory=dict)
    """Unused keys found by :meth:`from_mapping` (kept so typos can be reported)."""

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}; known: {sorted(ESTIMATORS)}")
        if self.estimator == "passk" and self.k is None:
            raise ValueError("the passk estimator needs k")
        if self.k is not None and (isinstance(self.k, bool) or int(self.k) != self.k
                                   or self.k < 1):
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        if self.grpo_std not in ("sample", "population"):
            raise ValueError(f"grpo_std must be 'sample' or 'population', got {self.grpo_std!r}")
        for name in ("ppl_alpha", "ppl_iqr_factor", "pos_gamma", "pos_cap"):
            v = getattr(self, name)
            number = isinstance(v, (int, float)) and not isinstance(v, bool)
            if not (number and 0 <= v < float("inf")):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.eps is not None and not self.eps >= 0:
            raise ValueError(f"eps must be >= 0, got {self.eps!r}")
        for name in ("ppl_clamp", "pos_window"):
            v = getattr(self, name)
            if v is not None:
                v = tuple(v)
                if len(v) != 2:
                    raise ValueError(f"{name} must be a pair, got {v!r}")
                setattr(self, name, v)
        if self.ppl_clamp is not None and not self.ppl_clamp[0] <= self.ppl_clamp[1]:
            raise ValueError(f"ppl_clamp needs low <= high, got {self.ppl_clamp!r}")

    def estimator_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the chosen estimator function."""
        kw: dict[str, Any] = {}
        if self.estimator == "grpo":
            kw["std"] = self.grpo_std
        if self.estimator == "passk":
            kw["k"] = int(self.k)
        if self.eps is not None and self.estimator in (
                "grpo", "reinforce_pp", "reinforce_pp_baseline"):
            kw["eps"] = float(self.eps)
        return kw

    def perplexity_kwargs(self) -> dict[str, Any]:
        return {"alpha": self.ppl_alpha, "iqr_exclude": self.ppl_iqr_exclude,
                "iqr_factor": self.ppl_iqr_factor, "clamp": self.ppl_clamp}

    def position_kwargs(self) -> dict[str, Any]:
        return {"window": self.pos_window, "gamma": self.pos_gamma, "m": self.pos_m,
                "n": self.pos_n, "d": self.pos_d, "cap": self.pos_cap}

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None) -> ShapingConfig:
        """Build from a dict-like (e.g. an OmegaConf node); unknown keys are refused."""
        if mapping is None:
            return cls()
        data = {str(k): mapping[k] for k in mapping}  # works for DictConfig too
        for key in ("ppl_clamp", "pos_window"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown shaping options {unknown}; known: {sorted(known)}")
        return cls(**data)
