"""The shaping core imports and runs with only NumPy and SciPy (torch, pyarrow, trainers absent)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_shaping_core_needs_only_numpy_and_scipy():
    code = textwrap.dedent("""
        import sys
        for name in ("torch", "pyarrow", "pandas", "trl", "transformers", "verl", "rich"):
            sys.modules[name] = None  # any import of these now raises ImportError
        import numpy as np
        import rlvr_boundary.shaping as sh
        from rlvr_boundary.shaping import rft
        r = np.array([[1, 0, 0, 0]])
        mask = np.ones((4, 5))
        cfg = sh.ShapingConfig(estimator="passk", k=2, position=True, pos_window=None)
        out = sh.token_advantages(cfg, r, mask)
        assert out.shape == (4, 5) and out[0, 0] > 0 > out[1, 0]
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_torch_mirror_names_the_extra_when_torch_is_missing():
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None
        from rlvr_boundary.errors import MissingExtraError
        try:
            import rlvr_boundary.shaping.torch_ops
        except MissingExtraError as exc:
            print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "rlvr-boundary[torch]" in proc.stdout, proc.stderr


def test_the_estimator_registry_loads_no_numpy_and_names_every_estimator():
    code = textwrap.dedent("""
        import sys
        from rlvr_boundary.shaping.registry import ESTIMATOR_REGISTRY, estimator_help
        assert "numpy" not in sys.modules
        from rlvr_boundary.shaping.estimators import ESTIMATORS
        assert list(ESTIMATORS) == list(ESTIMATOR_REGISTRY)
        assert all(f"{n}: " in estimator_help() for n in ESTIMATOR_REGISTRY)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
