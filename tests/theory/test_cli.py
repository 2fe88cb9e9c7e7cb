"""The `rlvr-boundary theory` verb end to end, and the pure-dependency contract."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import numpy as np
import pytest

import rlvr_boundary.theory as theory
from rlvr_boundary.cli import main
from rlvr_boundary.theory.specialization import three_by_three
from rlvr_boundary.theory.stiemke import check_direction, check_weights

THREE = ("strategy,pi0,x1,x2,x3\nspec1,0.4,1.0,0.0,0.6\nspec2,0.4,0.0,1.0,0.6\n"
         "general,0.2,0.6,0.6,0.7\n")


def test_verify_quick_passes_every_theorem(tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["theory", "verify", "--quick", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["kind"] == "theory-verify" and res["options"]["quick"] is True
    kinds = {c["kind"] for c in res["claims"]}
    assert kinds == {"theorem", "anchor", "measured"}
    assert res["failed"] == 0 and res["passed"] == 12 and len(res["claims"]) == 15
    for c in res["claims"]:
        assert c["status"] == ("MEASURED" if c["kind"] == "measured" else "PASS"), c
        assert c["instances"] >= 1 and c["figure"]
    printed = capsys.readouterr().out
    assert "12 PASS, 0 FAIL, 3 MEASURED" in printed
    from rlvr_boundary import console as C

    if isinstance(C.console, C._PipedConsole):  # captured output is piped output
        # the table's cells wrap inside 120 columns (it was 1,935 characters wide)
        assert max(len(line) for line in printed.splitlines()) <= C.PIPED_TABLE_WIDTH
        assert "no free lunch under exclusive" in printed
    by = {c["claim"].split(":")[0].split(" (")[0]: c for c in res["claims"]}
    assert by["constructed instances with exactly 1..6 crossings"]["instances"] == 6


def test_diagnose_free_lunch_and_certificate(tmp_path):
    m = tmp_path / "m.csv"
    m.write_text(THREE)
    assert main(["theory", "diagnose", str(m), "--json", str(tmp_path / "d.json")]) == 0
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["free_lunch"] and check_direction(three_by_three(), d["direction"])
    assert min(d["prompt_change"]) >= -1e-9 and max(d["prompt_change"]) > 0
    e = tmp_path / "e.csv"
    e.write_text("strategy,pi0,a,b,c\ns1,0.5,0.9,0.0,0.3\ns2,0.5,0.0,0.8,0.3\n")
    assert main(["theory", "diagnose", str(e), "--json", str(tmp_path / "e.json")]) == 0
    r = json.loads((tmp_path / "e.json").read_text())
    F = np.array([[0.9, 0.0, 0.3], [0.0, 0.8, 0.3]])
    assert not r["free_lunch"] and r["exclusive"] and check_weights(F, r["weights"])
    np.testing.assert_allclose(F @ np.array(r["weights"]), r["c"], atol=1e-9)


def test_frontier_writes_figure_and_json(tmp_path, capsys):
    m = tmp_path / "m.csv"
    m.write_text(THREE)
    assert main(["theory", "frontier", str(m), "--out", str(tmp_path / "f.png"),
                 "--json", str(tmp_path / "f.json"), "--taus", "5", "--kmax", "100"]) == 0
    f = json.loads((tmp_path / "f.json").read_text())
    assert [r["tau"] for r in f["frontier"]] == [0.0, 0.25, 0.5, 0.75, 1.0]
    # 3x3 with pi0 = (.4, .4, .2): p0 = (.52, .52, .62); at tau = 1 all mass on the generalist
    assert f["frontier"][-1]["gain"] == pytest.approx(0.6333333 - 0.5533333, abs=1e-6)
    assert f["frontier"][-1]["price"] == pytest.approx(0.0, abs=1e-9)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert f"wrote {tmp_path / 'f.png'}" in printed and f"wrote {tmp_path / 'f.json'}" in printed


@pytest.mark.parametrize("text, where", [
    ("strategy,pi0,x1\na,0.5,1.2\nb,0.5,0.1\n", ":2"),
    ("strategy,pi0,x1\na,0.5,0.2\nb,0.6,0.1\n", "pi0"),
    ("strategy,weight,x1\na,1.0,0.2\n", ":1"),
    ("strategy,pi0,x1,x2\na,1.0,0.2\n", ":2"),
    ("strategy,pi0,x1\na,1.0,abc\n", ":2"),
])
def test_bad_matrix_is_refused_with_location(tmp_path, capsys, text, where):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    assert main(["theory", "diagnose", str(bad)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert str(bad) in err and where in err
    assert main(["theory", "frontier", str(bad), "--out", str(tmp_path / "x.png")]) == 2
    assert not (tmp_path / "x.png").exists()


def test_theory_package_imports_with_heavy_packages_blocked():
    modules = [f"rlvr_boundary.theory.{m.name}" for m in pkgutil.iter_modules(theory.__path__)]
    assert len(modules) >= 8
    blocked = ["torch", "pyarrow", "rich", "matplotlib", "pandas", "polars", "transformers"]
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {blocked!r}:\n"
        "            raise ImportError(f'blocked: {name}')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {modules!r}:\n"
        "    __import__(m)\n"
        "from rlvr_boundary.theory.stiemke import alternative\n"
        "from rlvr_boundary.theory.specialization import three_by_three\n"
        "print(alternative(three_by_three())['free_lunch'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_the_docs_example_matrix_is_the_shipped_one(tmp_path):
    """docs/theory.md shows the matrix that --example and the app's example use."""
    from pathlib import Path

    from rlvr_boundary.pipelines.theory import example_matrix

    doc = (Path(__file__).parents[2] / "docs" / "theory.md").read_text(encoding="utf-8")
    block = doc.split("```\nstrategy,pi0", 1)[1].split("```", 1)[0]
    assert "strategy,pi0" + block == example_matrix().read_text(encoding="utf-8") == THREE
    assert main(["theory", "diagnose", "--example", "--json", str(tmp_path / "d.json")]) == 0
    assert json.loads((tmp_path / "d.json").read_text())["free_lunch"] is True


def test_piped_console_wraps_a_wide_table_and_keeps_a_narrow_one():
    import io

    from rich.table import Table

    from rlvr_boundary.console import PIPED_TABLE_WIDTH, _PipedConsole

    buf = io.StringIO()
    c = _PipedConsole(file=buf, highlight=False, width=10_000, soft_wrap=True)
    wide = Table("claim", "figure")
    wide.add_row("a claim " * 30, "figure words " * 60)
    narrow = Table("a", "b")
    narrow.add_row("x", "y")
    c.print(wide)
    c.print(narrow)
    c.print("a message " * 40)
    lines = buf.getvalue().splitlines()
    assert max(len(line) for line in lines[:-1]) == PIPED_TABLE_WIDTH  # wrapped, not cut
    assert sum("figure words" in line for line in lines) > 5
    assert min(len(line) for line in lines[:-1]) == 9      # the narrow table stays narrow
    assert lines[-1].rstrip() == ("a message " * 40).rstrip()  # a message stays on one line
