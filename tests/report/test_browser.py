"""The report in a real headless Chromium: no console errors, no network, nothing runs.

Needs Debian's ``chromium`` (``apt-get install chromium``; another binary via
``RLVR_BOUNDARY_CHROMIUM``) and the ``playwright`` Python package, which drives
that system browser through ``executable_path`` (no browser download, no
``playwright install``). Skipped when either is missing, with a reason that says
which and how to install it; CI installs both (.ci/run). Screenshots of the
pages are saved under ``test-artifacts/`` for a person to look at.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import write_rollouts
from rlvr_boundary.report.figures import COLUMN_PX
from rlvr_boundary.report.html import SECTIONS
from tests.report.fixtures import synthetic_rollouts
from tests.test_user_text import internal_references

CHROMIUM = (os.environ.get("RLVR_BOUNDARY_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
ARTIFACTS = Path(os.environ.get("RLVR_BOUNDARY_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))


def skip_reason(chromium: str | None, have_playwright: bool) -> str | None:
    """Why the browser tests cannot run here, and how to fix it; None when they can."""
    missing = []
    if chromium is None:
        missing.append("the chromium browser is not installed (Debian/Ubuntu: "
                       "'apt-get install chromium'; or set RLVR_BOUNDARY_CHROMIUM to a "
                       "Chromium or Chrome binary)")
    if not have_playwright:
        missing.append("the playwright Python package is missing (pip install "
                       "'rlvr-boundary[test]' or pip install playwright; no 'playwright "
                       "install' needed, the tests drive the system chromium)")
    return "browser tests skipped: " + "; ".join(missing) if missing else None


def _have_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def test_skip_reason_names_what_is_missing_and_how_to_install_it():
    assert skip_reason("/usr/bin/chromium", True) is None
    only_browser = skip_reason(None, True)
    assert "chromium" in only_browser and "apt-get install chromium" in only_browser
    assert "playwright" not in only_browser
    only_pw = skip_reason("/usr/bin/chromium", False)
    assert "pip install" in only_pw and "apt-get" not in only_pw
    assert "chromium" in skip_reason(None, False) and "playwright" in skip_reason(None, False)


def test_readme_says_how_to_get_chromium():
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Browser tests"):]
    section = section[:section.index("\n## ", 5)]
    for needed in ("apt-get install chromium", "executable_path", "RLVR_BOUNDARY_CHROMIUM",
                   "tests/report/test_browser.py", "skip reason", "test-artifacts/"):
        assert needed in section, needed
    # The skip reason gives the same install command as the README.
    assert "apt-get install chromium" in skip_reason(None, True)


@pytest.fixture(scope="module")
def browser():
    reason = skip_reason(CHROMIUM, _have_playwright())
    if reason:
        pytest.skip(reason)
    import playwright.sync_api as sync

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


@pytest.mark.browser
def test_example_report_in_chromium(browser, tmp_path):
    out = tmp_path / "example.html"
    assert main(["report", "--example", "--out", str(out), "--bootstrap", "500"]) == 0
    page, ev = _open(browser, out)
    for sid, title in SECTIONS:  # a section, or a line of the "what would fill" list
        if page.locator(f"section#{sid}").count():
            assert page.locator(f"section#{sid} h2").inner_text() == title
        else:
            assert page.locator(f"section#unfilled li#{sid} b").inner_text() == title
    assert page.locator("svg").count() >= 4
    assert not ev["requests"] and not ev["dialogs"] and not ev["errors"]
    assert not [c for c in ev["console"] if c[0] in ("error", "warning")]
    _check_figures(page)
    assert not internal_references(page.locator("body").inner_text())
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-example.png"), full_page=True)
    page.close()


def _check_figures(page) -> None:
    """Every figure fills the page column exactly (drawn at that size, not scaled) and
    carries a title for screen readers."""
    column = page.evaluate("parseFloat(getComputedStyle(document.body).width)")
    assert column == pytest.approx(COLUMN_PX)  # the 1200 px viewport is wider than the column
    figs = page.locator("figure > svg")
    assert figs.count() >= 4
    for i in range(figs.count()):
        svg = figs.nth(i)
        assert svg.bounding_box()["width"] == pytest.approx(column, abs=1), i
        assert len(svg.locator(":scope > title").text_content()) > 10, i


@pytest.mark.browser
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
    _check_figures(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-rollouts.png"), full_page=True)
    page.close()


@pytest.mark.browser
def test_budget_without_variance_page(browser, tmp_path):
    """Every problem solved at least once in n = 4 by both models: at k = 4 the
    difference has no variance. The page shows the difference figure without a
    [-1, 1] band (its y-scale stays near the data); screenshot for a person."""
    import json

    b, r = tmp_path / "base.jsonl", tmp_path / "rl.jsonl"
    b.write_text("".join(json.dumps({"id": f"p{i}", "n": 4, "c": 1 + i % 4}) + "\n"
                         for i in range(30)))
    r.write_text("".join(json.dumps({"id": f"p{i}", "n": 4, "c": 1 + (i * 3) % 4}) + "\n"
                         for i in range(30)))
    out = tmp_path / "ties.html"
    assert main(["report", str(b), str(r), "--label", f"{b}=base", "--label", f"{r}=rl",
                 "--out", str(out), "--bootstrap", "200"]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    from math import comb

    def pk(c, k):
        return 1 - comb(4 - c, k) / comb(4, k)

    flat = [k for k in (1, 2, 3, 4)
            if len({pk(1 + (i * 3) % 4, k) - pk(1 + i % 4, k) for i in range(30)}) == 1]
    assert flat == [3, 4]  # every difference is 0 there
    res = data["comparisons"]["rl"]
    assert [k for k, d in zip(res["ks"], res["degenerate"]) if d] == flat
    page, ev = _open(browser, out)
    assert not ev["requests"] and not ev["dialogs"] and not ev["errors"]
    _check_figures(page)
    diff = page.locator("section#difference figure > svg")
    assert diff.locator(":scope > title").text_content() == "rl minus base"
    ARTIFACTS.mkdir(exist_ok=True)
    diff.screenshot(path=str(ARTIFACTS / "report-ties-difference.png"))
    page.close()
