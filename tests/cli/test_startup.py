"""What a whole ``rlvr-boundary`` process loads: start-up cost as a user feels it.

Each check runs a fresh interpreter (imports are per process) and reads
``sys.modules`` after the command: scipy, pyarrow and matplotlib each cost more
to import than the whole DeepScaleR comparison, so ``compare`` on count files
must not load them unless asked (figures, Parquet inputs, --extrapolate).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _run(code: str, env: dict | None = None) -> dict:
    full = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if env is None or var not in env:
            full.pop(var, None)
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _modules_after(argv: list[str]) -> dict:
    code = ("import contextlib, io, json, sys\n"
            "from rlvr_boundary.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = main({argv!r})\n"
            "names = ('numpy', 'scipy', 'scipy.special', 'pyarrow', 'matplotlib', "
            "'matplotlib.pyplot', 'rich', 'rich.progress')\n"
            "print(json.dumps({'code': code, **{n: n in sys.modules for n in names}}))\n")
    return _run(code)


def test_help_loads_no_numeric_stack_and_no_rich():
    code = ("import contextlib, io, json, sys\n"
            "from rlvr_boundary.cli import main\n"
            "try:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(json.dumps({n: n in sys.modules for n in ('numpy', 'rich', 'scipy')}))\n")
    assert _run(code) == {"numpy": False, "rich": False, "scipy": False}


def test_compare_on_count_files_loads_no_scipy_pyarrow_or_matplotlib(tmp_path):
    seen = _modules_after(["compare", "--example", "--bootstrap", "200",
                           "--json", str(tmp_path / "r.json")])
    assert seen["code"] == 0 and seen["numpy"] and seen["rich"]
    assert not any(seen[n] for n in ("scipy", "pyarrow", "matplotlib", "rich.progress")), seen
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]


def test_compare_figures_need_no_pyplot(tmp_path):
    seen = _modules_after(["compare", "--example", "--bootstrap", "200",
                           "--out", str(tmp_path / "out")])
    assert seen["code"] == 0 and seen["matplotlib"] and not seen["matplotlib.pyplot"], seen
    assert not seen["scipy"]
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["curves.csv", "difference.png", "passk.png", "result.json"]


def test_pdf_figures_when_asked(tmp_path, capsys):
    from rlvr_boundary.cli import main

    out = tmp_path / "out"
    assert main(["compare", "--example", "--bootstrap", "200", "--out", str(out), "--pdf"]) == 0
    assert "figures (PNG and PDF)" in capsys.readouterr().out
    for name in ("passk", "difference"):
        png, pdf = (out / f"{name}.png").read_bytes(), (out / f"{name}.pdf").read_bytes()
        assert png.startswith(b"\x89PNG") and pdf.startswith(b"%PDF")
        assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # embedded TrueType
    assert main(["compare", "--example", "--bootstrap", "200", "--pdf"]) == 2
    assert "--pdf" in capsys.readouterr().err


def _blas_threads(env: dict | None) -> list:
    code = ("import contextlib, io, json, sys, tempfile\n"
            "from rlvr_boundary.cli import main\n"
            "d = tempfile.mkdtemp()\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['compare', '--example', '--bootstrap', '50', '--json', d + '/r.json'])\n"
            "import threadpoolctl\n"
            "print(json.dumps([i['num_threads'] for i in threadpoolctl.threadpool_info() "
            "if i['user_api'] == 'blas']))\n")
    return _run(code, env)


def test_compare_runs_blas_on_one_thread_unless_the_user_says_otherwise():
    pytest.importorskip("threadpoolctl")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: BLAS has one thread anyway")
    assert set(_blas_threads(None)) == {1}
    assert set(_blas_threads({"OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})) == {2}


def test_figure_files_do_not_depend_on_the_skipped_relayout(tmp_path):
    """Saving without the placeholder layout engine gives the same PNG and PDF bytes."""
    from rlvr_boundary.cli import main
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.report import figures as F

    out = tmp_path / "out"
    assert main(["compare", "--example", "--bootstrap", "100", "--out", str(out)]) == 0
    doc = read_result(out / "result.json", kind="compare")
    base, rl = doc["models"]["base"], doc["models"]["rl"]
    view = {"models": [base, rl], "base": base, "checkpoints": [rl], "ks": doc["ks"],
            "n_prompts": doc["n_prompts"], "pass_at_k": doc["pass_at_k"],
            "comparisons": {rl: doc}}
    for fn in (F.passk_curves, F.difference_curves):
        plain, kept = fn(view), fn(view)
        assert kept.get_layout_engine() is not None  # tight_layout's placeholder
        F.save(plain, tmp_path / "a", "f")  # drops it
        assert plain.get_layout_engine() is None
        for ext, kw in (("png", {"dpi": 200}), ("pdf", {"metadata": {"CreationDate": None}})):
            kept.savefig(tmp_path / f"b.{ext}", format=ext, **kw)  # matplotlib re-lays out
            assert (tmp_path / "a" / f"f.{ext}").read_bytes() == (tmp_path / f"b.{ext}").read_bytes()
