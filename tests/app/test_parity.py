"""The command line and the app run the same workflows: on the same inputs they write the same
result documents (``created`` aside, and the name of where a pasted table came from)."""

from __future__ import annotations

import json

from rlvr_boundary.app import compute as C
from rlvr_boundary.cli import main
from rlvr_boundary.examples import example_files


def _same(a: dict, b: dict, *, ignore: tuple[str, ...] = ()) -> None:
    drop = {"created", *ignore}
    a = {k: v for k, v in a.items() if k not in drop}
    b = {k: v for k, v in b.items() if k not in drop}
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k], k


def _counts(tmp_path):
    """Two small count files cut from the DeepScaleR example (fast, real data)."""
    ex = example_files("deepscaler32k")
    paths = []
    for name in ("base", "rl"):
        lines = ex[name].read_text().splitlines()[:150]
        p = tmp_path / f"{name}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)
    return paths


def test_audit_and_its_comparison_equal_report_and_compare(tmp_path):
    base, rl = _counts(tmp_path)
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    app = C.audit_job([str(base), str(rl)], {}, {"bootstrap": 300, "seed": 3}, str(app_dir))
    (tmp_path / "cli").mkdir()
    # The app runs the report as --no-figures does (inline SVG only; PNG and PDF are drawn
    # from the result JSON when a visitor asks, as report --from draws them).
    assert main(["report", str(base), str(rl), "--bootstrap", "300", "--seed", "3",
                 "--no-figures", "--out", str(tmp_path / "cli" / "report.html")]) == 0
    cli = json.loads((tmp_path / "cli" / "report.json").read_text())
    _same(app["audit"], cli)
    # the page too, byte for byte but for its creation time
    pages = [(d / "report.html").read_text().replace(doc["created"], "")
             for d, doc in ((app_dir, app["audit"]), (tmp_path / "cli", cli))]
    assert pages[0] == pages[1]
    # compare: the same comparison as the audit's (its payload adds where the inputs were)
    assert main(["compare", "--base", str(base), "--rl", str(rl), "--bootstrap", "300",
                 "--seed", "3", "--json", str(tmp_path / "cmp.json")]) == 0
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    inside = app["audit"]["comparisons"]["rl"]
    assert {k: v for k, v in cmp.items() if k in inside} == inside
    assert set(cmp) - set(inside) == {"schema_version", "tool", "tool_version", "kind",
                                      "created", "options", "versions", "inputs"}


def test_price_of_a_pasted_table_equals_the_command_on_the_file(tmp_path):
    for text in (C.OMNI_MATH_CURVE, "".join(f"{i / 50:.2f},{(i * 7 % 50) / 50:.2f}\n"
                                            for i in range(50))):
        f = tmp_path / "t.csv"
        f.write_text(text)
        assert main(["price", str(f), "--json", str(tmp_path / "cli.json")]) == 0
        app = C.paste_job(text, "auto", ("", ""), {"bootstrap": 10}, str(tmp_path / "app"))
        cli = json.loads((tmp_path / "cli.json").read_text())
        assert app["result"]["input"] == C.PASTE_SOURCE and cli["input"] == str(f)
        _same(app["result"], cli, ignore=("input",))


def test_theory_diagnosis_frontier_and_figure_equal_the_commands(tmp_path):
    text = C.example_matrix()
    m = tmp_path / "m.csv"
    m.write_text(text)
    app = C.matrix_job(text, 7, 256, str(tmp_path / "app"))
    assert main(["theory", "frontier", str(m), "--taus", "7", "--kmax", "256",
                 "--json", str(tmp_path / "f.json"), "--out", str(tmp_path / "f.png")]) == 0
    assert main(["theory", "diagnose", str(m), "--json", str(tmp_path / "d.json")]) == 0
    _same(app["frontier"], json.loads((tmp_path / "f.json").read_text()))
    d = json.loads((tmp_path / "d.json").read_text())
    assert app["diagnosis"]["options"] == {"matrix": "strategy matrix"}
    assert d["options"] == {"matrix": str(m)}
    _same(app["diagnosis"], d, ignore=("options",))
    assert app["svgs"]["frontier"].startswith("<svg")
    # The PNG download, drawn on request from the app's result JSON, is the command's figure.
    figs = C.figures_job(str(tmp_path / "app"), str(tmp_path / "dl"))
    import zipfile

    with zipfile.ZipFile(figs["files"][0]) as zf:
        assert zf.read("figures/frontier.png") == (tmp_path / "f.png").read_bytes()
