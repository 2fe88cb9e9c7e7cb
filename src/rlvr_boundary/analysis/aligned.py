"""The input of every analysis: counts of several models on one common prompt set."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Aligned:
    """Counts of several models on one common, ordered prompt set.

    Built by :func:`rlvr_boundary.io.counts.align` (which checks the counts);
    ``n`` and ``c`` are ``(M, P)``: models x prompts, rows in ``models`` order.
    """

    models: list[str]
    prompt_ids: np.ndarray  # (P,) str
    n: np.ndarray  # (M, P) int64, >= 1
    c: np.ndarray  # (M, P) int64, 0 <= c <= n
    dropped: dict[str, int] = field(default_factory=dict)
    """Prompts each model lost when prompt sets were intersected."""
