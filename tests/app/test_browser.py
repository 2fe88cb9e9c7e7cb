"""The app end to end in a real headless Chromium, against ``rlvr-boundary serve`` on 127.0.0.1.

One server per module (started and stopped here, bounded in time); Debian's
``chromium`` driven by playwright (no browser download). Every request the page
makes is checked: anything not addressed to the loopback server is blocked and
fails the test. A screenshot of each state goes to ``test-artifacts/app/``.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gradio")
sync = pytest.importorskip("playwright.sync_api")

from rlvr_boundary.app import compute  # noqa: E402
from rlvr_boundary.examples import example_files  # noqa: E402
from rlvr_boundary.shaping import passk_advantages, perplexity_multipliers  # noqa: E402
from tests.app.server import port_open, running_server  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("RLVR_BOUNDARY_ARTIFACTS",
                                Path(__file__).parents[2] / "test-artifacts")) / "app"
WAIT = 120_000  # ms: one analysis of the DeepScaleR example on a loaded two-core machine


@pytest.fixture(scope="module")
def server():
    with running_server("--bootstrap", "1000", "--max-upload-mb", "1") as (url, proc, log):
        yield url
    assert proc.poll() is not None, "the server must be stopped by the test"
    assert not port_open(int(url.rsplit(":", 1)[1].strip("/")))


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed")
    with sync.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000}, accept_downloads=True)
    pg = ctx.new_page()
    pg.rb_external = []
    pg.rb_errors = []

    def route(r):
        if r.request.url.startswith(server) or r.request.url.startswith("data:"):
            r.continue_()
        else:
            pg.rb_external.append(r.request.url)
            r.abort()

    pg.route("**/*", route)
    pg.on("pageerror", lambda e: pg.rb_errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#paste-text textarea", timeout=60_000)
    yield pg
    assert not pg.rb_external, f"requests left the machine: {pg.rb_external[:5]}"
    assert not pg.rb_errors, pg.rb_errors
    ctx.close()


def shot(pg, name: str) -> None:
    """Save a screenshot artifact. It documents the state; the assertions test it, so a
    screenshot that times out on a loaded machine is a warning, not a failure."""
    import warnings

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, timeout=120_000)
    except sync.Error as exc:
        warnings.warn(f"screenshot {name} not taken: {exc}", stacklevel=2)


def field(pg, scope: str, name: str, timeout: int = WAIT) -> str:
    loc = pg.locator(f"{scope} [data-field={name}]").first
    loc.wait_for(timeout=timeout)
    return loc.inner_text().strip()


def deepscaler_counts_text() -> str:
    ex = example_files("deepscaler32k")
    base = {r["id"]: r for r in map(json.loads, ex["base"].read_text().splitlines())}
    rl = {r["id"]: r for r in map(json.loads, ex["rl"].read_text().splitlines())}
    return "\n".join(f"{base[i]['c']}/{base[i]['n']}, {rl[i]['c']}/{rl[i]['n']}"
                     for i in sorted(base)) + "\n"


def test_paste_deepscaler_counts_reads_k_star_and_price(page):
    page.locator("#paste-text textarea").fill(deepscaler_counts_text())
    shot(page, "01-paste-deepscaler-input")
    page.click("#paste-go")
    # The progress indicator says where the analysis is (in line, or running).
    page.get_by_text(re.compile(r"analysing|waiting for a free worker")).first.wait_for(
        timeout=60_000)
    # The published figures: the curves cross between k = 21 and 22; the price is 0.0198 at 128.
    assert field(page, "#paste-out", "k_star") == "22"
    assert field(page, "#paste-out", "price") == "1.98"  # points
    assert field(page, "#paste-out", "price_k") == "128"
    assert field(page, "#paste-out", "gain_budgets").startswith("1-")
    # Figures inline as SVG (the report's own), no image files fetched.
    assert page.locator("#paste-out figure.rb-fig svg").count() >= 2
    assert page.locator("#paste-out img").count() == 0
    shot(page, "02-paste-deepscaler-result")


def test_paste_omni_math_points_reads_crossing_interval(page):
    page.locator("#paste-text textarea").fill(
        "k base RL\n1 .102 .251\n4 .224 .368\n16 .392 .496\n64 .578 .608\n256 .691 .683\n")
    page.click("#paste-go")
    assert field(page, "#paste-out", "crossing_intervals") == "(64, 256]"
    assert field(page, "#paste-out", "price") == "0.80"  # points
    assert field(page, "#paste-out", "price_k") == "256"
    shot(page, "03-paste-omni-math")


def test_upload_deepscaler_and_download_report(page, tmp_path):
    ex = example_files("deepscaler32k")
    page.get_by_role("tab", name="Upload").click()
    page.locator("#upload-files input[type=file]").set_input_files([str(ex["base"]),
                                                                    str(ex["rl"])])
    page.wait_for_timeout(500)
    page.click("#upload-go")
    assert field(page, "#upload-out", "k_star") == "22"
    assert field(page, "#upload-out", "price_k") == "128"
    shot(page, "04-upload-deepscaler")
    got = {}
    for name in ("report.html", "report.json"):
        link = page.locator(f"#upload-files-out a[download='{name}']")
        link.wait_for(timeout=30_000)
        with page.expect_download(timeout=30_000) as dl:
            link.click()
        got[name] = tmp_path / name
        dl.value.save_as(got[name])
    html_text = got["report.html"].read_text(encoding="utf-8")
    assert "<html" in html_text.lower() and "k* = 22" in html_text
    doc = json.loads(got["report.json"].read_text(encoding="utf-8"))
    assert doc["kind"] == "report" and doc["schema_version"]
    (res,) = doc["comparisons"].values()
    assert res["k_star"] == 22 and res["price_k"] == 128
    # PNG and PDF are drawn only when asked for.
    assert page.locator("#upload-figures a[download='figures.zip']").count() == 0
    page.click("#upload-figures-go")
    link = page.locator("#upload-figures a[download='figures.zip']")
    link.wait_for(timeout=WAIT)
    with page.expect_download(timeout=30_000) as dl:
        link.click()
    dl.value.save_as(tmp_path / "figures.zip")
    with zipfile.ZipFile(tmp_path / "figures.zip") as zf:
        names = set(zf.namelist())
        assert zf.read("figures/passk.png")[:4] == b"\x89PNG"
    assert {"figures/passk.png", "figures/passk.pdf", "figures/difference.png",
            "figures/difference.pdf"} <= names


def test_shaping_slider_changes_weights_to_the_package_values(page):
    page.get_by_role("tab", name="Shaping explorer").click()
    ppl = np.log([1.2, 1.5, 1.8, 2.1, 2.4])[None, :]
    first = field(page, "#shaping-out", "multiplier-0", timeout=30_000)
    assert first == f"{perplexity_multipliers(ppl, alpha=0.01)[0, 0]:.4f}" == "1.0154"
    shot(page, "05-shaping-default")
    box = page.locator("#sh-alpha input[type=number]")
    box.fill("1")
    box.press("Enter")
    want = perplexity_multipliers(ppl, alpha=1.0)[0]  # 2.54 ... -0.29 (population std)
    loc = page.locator("#shaping-out [data-field=multiplier-0]")
    sync.expect(loc).to_have_text(f"{want[0]:.4f}", timeout=30_000)
    for i, v in enumerate(want):
        assert field(page, "#shaping-out", f"multiplier-{i}") == f"{v:.4f}"
    assert math.isclose(float(field(page, "#shaping-out", "multiplier-4")), -0.29, abs_tol=5e-3)
    # The pass@k advantage's k.
    kbox = page.locator("#sh-k input[type=number]")
    kbox.fill("2")
    kbox.press("Enter")
    pk = passk_advantages(np.array([[1, 0, 0, 0, 0, 0, 0, 0]]), 2)[0]
    sync.expect(page.locator("#shaping-out [data-field=passk-0]")).to_have_text(
        f"{pk[0]:.4f}", timeout=30_000)
    assert field(page, "#shaping-out", "passk-1") == f"{pk[1]:.4f}"
    shot(page, "06-shaping-moved")


def test_malformed_upload_shows_error_and_app_keeps_serving(page, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "c": 1, "n": 4}\n{"id": "b", "c": 7, "n": 4}\n')
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "a", "c": 1, "n": 4}\n{"id": "b", "c": 2, "n": 4}\n')
    page.get_by_role("tab", name="Upload").click()
    page.locator("#upload-files input[type=file]").set_input_files([str(bad), str(other)])
    page.wait_for_timeout(500)
    page.click("#upload-go")
    alert = page.locator("#upload-out [role=alert]")
    alert.wait_for(timeout=WAIT)
    text = alert.inner_text()
    # The CLI's message for the same file, naming the file as the user knows it.
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.formats import load_model_counts

    with pytest.raises(InputError) as cli:
        load_model_counts(bad)
    assert text.strip() == "error: " + str(cli.value).replace(str(bad), "bad.jsonl")
    assert "bad.jsonl:2" in text and str(tmp_path) not in text
    shot(page, "07-upload-malformed")
    # Still serving: a paste analysis right after works.
    page.get_by_role("tab", name="Paste").click()
    page.locator("#paste-text textarea").fill(compute.OMNI_MATH_CURVE)
    page.click("#paste-go")
    assert field(page, "#paste-out", "crossing_intervals") == "(64, 256]"


def test_hostile_labels_are_shown_as_text_and_run_nothing(page, tmp_path):
    evil = "<img src=x onerror=window.__pwned=1>"
    table = tmp_path / "evil.csv"
    rows = ["prompt_id,model,n,c"]
    for j in range(6):
        rows.append(f"{evil}{j},base,8,{j % 4}")
        rows.append(f"{evil}{j},{evil},8,{(j + 2) % 9}")
    table.write_text("\n".join(rows) + "\n")
    page.get_by_role("tab", name="Upload").click()
    page.locator("#upload-files input[type=file]").set_input_files([str(table)])
    page.wait_for_timeout(500)
    page.click("#upload-go")
    field(page, "#upload-out", "k_star")
    assert evil in page.locator("#upload-out").inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#upload-out img[src=x]").count() == 0
    shot(page, "08-upload-hostile-label")


def test_theory_lab_counterexample(page):
    page.get_by_role("tab", name="Theory lab").click()
    page.click("#matrix-example")
    sync.expect(page.locator("#matrix-text textarea")).to_have_value(compute.example_matrix(),
                                                                     timeout=30_000)
    page.click("#matrix-go")
    assert field(page, "#matrix-out", "free_lunch") == "A free lunch exists"
    shot(page, "09-theory-counterexample")


def test_theory_lab_uploaded_matrix(page, tmp_path):
    m = tmp_path / "specialists.csv"
    m.write_text("strategy,pi0,x1,x2,x3\na,0.5,1,0,0.5\nb,0.5,0,1,0.5\n")
    page.get_by_role("tab", name="Theory lab").click()
    page.locator("#matrix-file input[type=file]").set_input_files([str(m)])
    page.wait_for_timeout(500)
    page.click("#matrix-go")
    assert field(page, "#matrix-out", "free_lunch") == "No free lunch"
    assert "The matrix has exclusive specialization" in page.locator("#matrix-out").inner_text()
    shot(page, "11-theory-uploaded")


def test_oversized_upload_is_refused_by_the_server(page, tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join('{"id": "p%d", "c": 1, "n": 4}\n' % i for i in range(60_000)))
    assert big.stat().st_size > 2**20  # the module's server accepts 1 MB
    page.get_by_role("tab", name="Upload").click()
    page.locator("#upload-files input[type=file]").set_input_files([str(big)])
    toast = page.get_by_text("exceed the maximum allowed size")
    toast.wait_for(timeout=30_000)
    assert "big.jsonl" in toast.inner_text()
    shot(page, "10-upload-too-large")
