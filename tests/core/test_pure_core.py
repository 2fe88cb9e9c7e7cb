"""The numeric core depends on numpy and scipy only (SPEC: pure core, IO at the edge)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import rlvr_boundary.core as core

BLOCKED = ["torch", "pyarrow", "rich", "matplotlib", "pandas", "polars", "transformers"]


def test_core_imports_with_heavy_packages_blocked():
    modules = [f"rlvr_boundary.core.{m.name}" for m in pkgutil.iter_modules(core.__path__)]
    assert {"rlvr_boundary.core.passk", "rlvr_boundary.core.compare"} <= set(modules)
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {BLOCKED!r}:\n"
        "            raise ImportError(f'blocked: {name}')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {modules!r}:\n"
        "    __import__(m)\n"
        "import numpy as np\n"
        "from rlvr_boundary.core.passk import pass_at_k\n"
        "print(pass_at_k([4], [2], [2])[0, 0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert abs(float(out.stdout) - 5 / 6) < 1e-15  # 1 - C(2,2)/C(4,2)
