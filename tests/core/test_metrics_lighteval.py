"""G-Pass@k and mG-Pass@k against lighteval's own implementation, where lighteval installs.

lighteval is not a dependency (its install pulls a large evaluation stack, so CI does
not install it); the test runs wherever it is present. It was run with lighteval 0.13.0.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.core.metrics import g_pass_at_k, mg_pass_at_k

ms = pytest.importorskip("lighteval.metrics.metrics_sample")

THRESHOLDS = [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize("n", [1, 2, 5, 8, 16, 33])
def test_g_pass_and_mg_pass_equal_lighteval(n):
    ks = [k for k in (1, 2, 3, 4, 8, 16, 32) if k <= n]
    metric = ms.GPassAtK(k=ks, n=n, thresholds=THRESHOLDS)
    for c in range(n + 1):
        ref = metric.g_pass_at_k([1] * c + [0] * (n - c))
        for k in ks:
            for t in THRESHOLDS:
                ours = g_pass_at_k(np.array([n]), np.array([c]), k, t)[0]
                assert ours == pytest.approx(ref[f"g-pass@{k}_{t}"], abs=1e-12), (n, c, k, t)
            ours = mg_pass_at_k(np.array([n]), np.array([c]), k)[0]
            assert ours == pytest.approx(ref[f"mg-pass@{k}"], abs=1e-12), (n, c, k)
