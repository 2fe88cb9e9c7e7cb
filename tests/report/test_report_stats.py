"""``report`` with clusters, several runs, verifier error and extrapolation: JSON, page, redraw."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest

from rlvr_boundary.analysis.structure import split_runs
from rlvr_boundary.cli import main
from rlvr_boundary.core.passk import pass_at_k
from rlvr_boundary.errors import InputError
from rlvr_boundary.report import words as W
from rlvr_boundary.report.html import OPTIONAL_SECTIONS
from tests.report.test_browser import _check_figures, _open, browser  # noqa: F401 (fixture)


def _text(page: str) -> str:
    """The page's visible text, tags dropped and entities decoded, whitespace collapsed."""
    no_svg = re.sub(r"<svg.*?</svg>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", no_svg)).split())


def _section(page: str, sid: str) -> str:
    m = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert m, f"no section {sid}"
    return m.group(1)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The DeepScaleR example clustered by the source in its ids (fresh32k-<source>-<i>)."""
    d = tmp_path_factory.mktemp("stats")
    out = d / "r.html"
    args = ["report", "--example", "--cluster-by", "id-prefix:-", "--verifier-error",
            "0.02,0.05", "--extrapolate", "512", "--extrapolate-method", "npmle",
            "--bootstrap", "12", "--ks", "pow2", "--no-figures", "--out", str(out)]
    assert main(args) == 0
    return {"dir": d, "out": out, "page": out.read_text(),
            "json": json.loads(out.with_suffix(".json").read_text())}


def test_clusters_by_source_on_the_example(example, tmp_path):
    data, page = example["json"], example["page"]
    rl = data["checkpoints"][0]
    res = data["comparisons"][rl]
    assert data["options"]["compare"]["cluster_by"] == "id-prefix:-"
    su = res["sampling_unit"]
    assert su["unit"] == "clusters of prompts" and su["n_clusters"] == 4
    assert res["band"]["n_clusters"] == 4
    # Four sources leave 3 degrees of freedom: the clustered band is much wider and
    # supports fewer budgets than the band over independent prompts.
    assert su["critical_values"][0] > su["independent"]["critical_value"]
    assert su["critical_values"][0] > res["band"]["critical_value"]  # the t correction
    assert set(su["gain_budgets"]) <= set(su["independent"]["gain_budgets"])
    assert su["moved_gain"] == [k for k in su["independent"]["gain_budgets"]
                                if k not in su["gain_budgets"]]
    # The independent verdicts are those of compare without clusters (same multipliers).
    plain = tmp_path / "plain.json"
    assert main(["compare", "--example", "--bootstrap", "12", "--ks", "pow2",
                 "--json", str(plain)]) == 0
    p = json.loads(plain.read_text())
    assert su["independent"]["gain_budgets"] == p["gain_budgets"]
    assert su["independent"]["loss_budgets"] == p["loss_budgets"]
    assert su["independent"]["critical_value"] == pytest.approx(p["band"]["critical_value"])
    # The page shows the block with these numbers.
    text = _text(_section(page, "sampling"))
    assert "4 clusters of the 1060 prompts" in text
    for sentence in W.sampling_unit_sentences(su, data["n_prompts"]):
        assert sentence in text
    assert f"{su['critical_values'][0]:.2f}" in text
    assert f"{su['independent']['critical_value']:.2f}" in text


def test_verifier_error_block_on_the_example(example):
    data, page = example["json"], example["page"]
    res = data["comparisons"][data["checkpoints"][0]]
    ve = res["verifier_error"]
    assert (ve["fp"], ve["fn"]) == (0.02, 0.05) and ve["model_based"] is True
    assert set(ve["gain_survives"]) <= set(res["gain_budgets"])
    assert ve["verdicts_survive"] == (ve["gain_survives"] == res["gain_budgets"]
                                      and ve["loss_survives"] == res["loss_budgets"])
    text = _text(_section(page, "verifier"))
    assert W.verifier_error_sentence(ve) in text
    ks = res["ks"]
    j = ks.index(ks[-1])
    row = (f"{ks[-1]} {W.pts(res['diff'][j])} {W.pts(res['band']['lower'][j])} to "
           f"{W.pts(res['band']['upper'][j])} {W.pts(ve['diff'][j])} {W.pts(ve['lower'][j])} "
           f"to {W.pts(ve['upper'][j])}")
    assert row in text


def test_extrapolation_block_on_the_example(example):
    data, page = example["json"], example["page"]
    res = data["comparisons"][data["checkpoints"][0]]
    ex = res["extrapolation"]
    assert ex["ks"][-1] == 512 and ex["observed_up_to"] == 128 and ex["method"] == "npmle"
    sec = _section(page, "extrapolation")
    text = _text(sec)
    assert "Model-based prediction, not a measurement" in text
    assert W.extrapolation_sentence(ex) in text
    j = len(ex["ks"]) - 1
    # The prompts are clustered here, which the intervals were not validated for: the
    # prediction is shown without an interval, and the reason is given.
    assert ex["reach"]["reasons"] == ["clusters"] and ex["pass_base_lower"][j] is None
    assert f"512 {ex['pass_base'][j]:.4f} (not calibrated)" in text
    assert "Not calibrated: the intervals were not validated with clustered prompts" in text
    assert f"{ex['power_law']['diff'][j]:+.4f}" in text
    # The fit follows the measured D(128) (within fit error) and the figure is inline.
    assert abs(ex["diff"][ex["ks"].index(128)] - res["diff"][res["ks"].index(128)]) < 0.01
    assert "Model-based prediction beyond the samples drawn" in sec  # the figure's SVG title


def test_from_redraws_the_new_blocks_byte_for_byte(example, tmp_path):
    again = tmp_path / "r.html"  # same name: the figure folder named on the page is the same
    assert main(["report", "--from", str(example["out"].with_suffix(".json")), "--no-figures",
                 "--out", str(again)]) == 0
    assert again.read_bytes() == example["out"].read_bytes()


def _counts(path, c, n):
    path.write_text("".join(json.dumps({"id": f"q{i}", "n": int(n), "c": int(x)}) + "\n"
                            for i, x in enumerate(c)))


def test_runs_by_label_average_the_curves(tmp_path):
    rng = np.random.default_rng(4)
    P, n = 60, 8
    p = rng.beta(0.7, 1.0, P)
    cb, c1, c2 = (rng.binomial(n, np.clip(p + s, 0, 1)) for s in (0.0, 0.1, 0.05))
    files = {name: tmp_path / f"{name}.jsonl" for name in ("b", "r1", "r2")}
    for (name, f), c in zip(files.items(), (cb, c1, c2)):
        _counts(f, c, n)
    out = tmp_path / "runs.html"
    assert main(["report", str(files["b"]), str(files["r1"]), str(files["r2"]),
                 "--label", f"{files['b']}=base", "--label", f"{files['r1']}=ckpt",
                 "--label", f"{files['r2']}=ckpt#run2", "--bootstrap", "200", "--no-figures",
                 "--verifier-error", "0.01,0.01", "--out", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["models"] == ["base", "ckpt"] and data["checkpoints"] == ["ckpt"]
    assert data["runs"] == {"ckpt": ["ckpt#run2"]}
    res = data["comparisons"]["ckpt"]
    assert res["band"]["n_runs"] == {"base": 1, "rl": 2}
    assert res["band"]["unit"] == "prompts and runs"
    ks = np.arange(1, n + 1)
    ref = ((pass_at_k(np.full(P, n), c1, ks) + pass_at_k(np.full(P, n), c2, ks)) / 2
           - pass_at_k(np.full(P, n), cb, ks)).mean(axis=0)
    np.testing.assert_allclose(res["diff"], ref, rtol=1e-12, atol=1e-15)
    # Coverage and the rest describe the first run only.
    assert set(data["coverage"]["table_2x2"]) == {"ckpt"}
    page = out.read_text()
    text = _text(_section(page, "sampling"))
    assert "runs per model: base 1, checkpoint 2" in text
    # The verifier-error block is fitted to the first runs, and says so.
    assert W.FIRST_RUN_ONLY in _text(_section(page, "verifier"))
    assert '<section id="extrapolation">' not in page and 'href="#extrapolation"' not in page


def test_split_runs_and_its_errors():
    assert split_runs(["base", "a", "a#run3", "a#run2", "b"]) == (
        ["base", "a", "b"], {"a": ["a#run2", "a#run3"]})
    assert split_runs(["base", "x#y"]) == (["base", "x#y"], {})
    with pytest.raises(InputError, match="no model is labelled 'ckpt'"):
        split_runs(["base", "ckpt#run2"])


def test_optional_sections_absent_without_the_flags(tmp_path):
    rng = np.random.default_rng(5)
    b, r = tmp_path / "b.jsonl", tmp_path / "r.jsonl"
    _counts(b, rng.integers(0, 5, 30), 4)
    _counts(r, rng.integers(0, 5, 30), 4)
    out = tmp_path / "plain.html"
    assert main(["report", str(b), str(r), "--label", f"{b}=base", "--label", f"{r}=rl",
                 "--bootstrap", "100", "--no-figures", "--out", str(out)]) == 0
    page = out.read_text()
    for sid, _ in OPTIONAL_SECTIONS[1]:
        assert f'<section id="{sid}">' not in page
    assert "sampling_unit" not in json.loads(out.with_suffix(".json").read_text())[
        "comparisons"]["rl"]


def test_a_run_with_fewer_samples_is_refused(tmp_path, capsys):
    rng = np.random.default_rng(6)
    files = {name: tmp_path / f"{name}.jsonl" for name in ("b", "r1", "r2")}
    for (name, f), n in zip(files.items(), (8, 8, 4)):
        _counts(f, rng.integers(0, n + 1, 20), n)
    out = tmp_path / "x.html"
    capsys.readouterr()
    assert main(["report", *map(str, files.values()), "--label", f"{files['b']}=base",
                 "--label", f"{files['r1']}=ckpt", "--label", f"{files['r2']}=ckpt#run2",
                 "--bootstrap", "50", "--no-figures", "--out", str(out)]) == 2
    assert "the run 'ckpt#run2' has fewer samples" in " ".join(capsys.readouterr().err.split())
    assert not out.exists() and not out.with_suffix(".json").exists()


@pytest.mark.browser
def test_statistics_sections_in_chromium(browser, example):
    page, ev = _open(browser, example["out"])
    for sid, title in OPTIONAL_SECTIONS[1]:
        assert page.locator(f"section#{sid} h2").inner_text() == title
        assert page.locator(f'nav a[href="#{sid}"]').count() == 1
    text = page.locator("section#extrapolation").inner_text()
    assert "Model-based prediction, not a measurement" in text
    assert not ev["requests"] and not ev["dialogs"] and not ev["errors"]
    assert not [c for c in ev["console"] if c[0] in ("error", "warning")]
    _check_figures(page)  # the extrapolation figure fills the column like the others
    page.close()
