"""The report in a real headless Chromium: no console errors, no network, nothing runs.

Needs Debian's ``chromium`` and the ``playwright`` Python package (driving the
system browser; no browser download). Skipped when either is missing; CI
installs both (.ci/run). A screenshot of the page is saved under
``test-artifacts/`` for a person to look at.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import write_rollouts
from rlvr_boundary.report.html import SECTIONS
from tests.report.fixtures import synthetic_rollouts

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("RLVR_BOUNDARY_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))


@pytest.fixture(scope="module")
def browser():
    sync = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed")
    with sync.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, html: Path):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    events = {"console": [], "requests": [], "dialogs": [], "errors": []}
    page.on("console", lambda m: events["console"].append((m.type, m.text)))
    page.on("pageerror", lambda e: events["errors"].append(str(e)))
    page.on("dialog", lambda d: (events["dialogs"].append(d.message), d.dismiss()))

    def route(r):
        if not r.request.url.startswith("file://"):
            events["requests"].append(r.request.url)
        r.continue_() if r.request.url.startswith("file://") else r.abort()

    page.route("**/*", route)
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    return page, events


def test_example_report_in_chromium(browser, tmp_path):
    out = tmp_path / "example.html"
    assert main(["report", "--example", "--out", str(out), "--bootstrap", "500"]) == 0
    page, ev = _open(browser, out)
    for sid, title in SECTIONS:
        assert page.locator(f"section#{sid} h2").inner_text() == title
    assert page.locator("svg").count() >= 4
    assert not ev["requests"] and not ev["dialogs"] and not ev["errors"]
    assert not [c for c in ev["console"] if c[0] in ("error", "warning")]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-example.png"), full_page=True)
    page.close()


def test_hostile_completion_text_runs_nothing(browser, tmp_path):
    path = tmp_path / "r.parquet"
    write_rollouts(synthetic_rollouts(prompts=12, n=8), path)
    out = tmp_path / "hostile.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "200"]) == 0
    page, ev = _open(browser, out)
    # Open every <details> so the sample texts are rendered.
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.locator("script").count() == 0
    assert page.locator("img").count() == 0
    body = page.locator("body").inner_text()
    assert '<script>alert("x")</script>' in body
    assert '"><img src=x onerror=alert(1)>' in body
    assert not ev["dialogs"] and not ev["errors"] and not ev["requests"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-rollouts.png"), full_page=True)
    page.close()
