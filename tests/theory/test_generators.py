"""Each generator has the property its docstring states."""

from __future__ import annotations

import numpy as np
import pytest

from rlvr_boundary.theory import generators as G
from rlvr_boundary.theory.specialization import dominance_margin, is_exclusive


@pytest.mark.parametrize("name", list(G.GENERATORS))
def test_shapes_ranges_and_interior_pi0(name):
    rng = np.random.default_rng(0)
    for _ in range(20):
        F, pi0 = G.GENERATORS[name](rng)
        assert F.ndim == 2 and F.min() >= 0 and F.max() <= 1
        assert pi0.shape == (F.shape[0],) and pi0.min() > 0 and pi0.sum() == pytest.approx(1)


def test_documented_properties():
    rng = np.random.default_rng(1)
    for _ in range(50):
        F, _ = G.sparse_binary(rng)
        assert set(np.unique(F)) <= {0.0, 1.0}
        F, _ = G.exclusive_blocks(rng, S=3, X=9, per=2)
        assert is_exclusive(F)
        for s in range(3):
            assert np.all(np.delete(F, s, axis=0)[:, 2 * s:2 * s + 2] == 0)
        F, _, blocks = G.dominant(rng, S=4, X=13, delta=0.15)
        assert dominance_margin(F, blocks) >= 0.15 and np.bincount(blocks).tolist() == [3, 3, 3, 4]
        F, _ = G.universal_plus_specialists(rng, S=3, X=9)
        assert F[0].min() >= 0.5 and F[0].max() <= 0.8
        for s in (1, 2):  # each specialist ranks first on its niche
            assert np.any(F[s] > np.delete(F, s, axis=0).max(axis=0))
        F, _ = G.difficulty_nested(rng, S=4, X=16)
        # within reach fitness >= 0.7, beyond it <= 0.6: each strategy's well-solved set is a
        # prefix of the difficulty order, and the prefixes are nested
        good = F >= 0.7  # (S, X)
        reach = good.sum(axis=1)
        for s in range(4):
            assert good[s, :reach[s]].all() and not good[s, reach[s]:].any()
        assert np.all(np.diff(reach) >= 0)


def test_refuses_impossible_sizes():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        G.exclusive_blocks(rng, S=4, X=5, per=2)
    with pytest.raises(ValueError):
        G.dominant(rng, S=4, X=3)
