"""Screenshots of the report page for the README (headless system chromium, no network).

    python benchmarks/report_screenshot.py --out docs/figures

writes the lab example's report (``rlvr-boundary report --example lab``) into a
temporary folder, opens it in chromium (``/usr/bin/chromium`` or
``RLVR_BOUNDARY_CHROMIUM``; every non-file request is aborted), and saves

- ``report-lab.png``: the top of the page (title, summary, pass@k curves),
- ``report-lab-strategies.png``: the Strategies section,
- with ``--sections A B ...``: ``report-lab-<id>.png`` of each section named by its
  id (e.g. ``summary glossary frontier cover``).

Not a test; run it after changing the page to refresh the README's images.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/figures", help="folder for the PNG files")
    ap.add_argument("--height", type=int, default=1500, help="height of the top view in px")
    ap.add_argument("--sections", nargs="*", default=[],
                    help="also screenshot these sections by id (summary, cover, frontier, ...)")
    ns = ap.parse_args(argv)
    chromium = (os.environ.get("RLVR_BOUNDARY_CHROMIUM") or shutil.which("chromium")
                or shutil.which("chromium-browser"))
    if chromium is None:
        print("chromium not found (apt-get install chromium, or set RLVR_BOUNDARY_CHROMIUM)")
        return 2
    import playwright.sync_api as sync

    from rlvr_boundary.cli import main as cli

    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "lab.html"
        if cli(["report", "--example", "lab", "--out", str(page_path), "--no-figures"]) != 0:
            return 1
        with sync.sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = b.new_page(viewport={"width": 1200, "height": ns.height})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://")
                       else r.abort())
            page.goto(page_path.as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(out / "report-lab.png"))
            page.locator("section#strategies").screenshot(
                path=str(out / "report-lab-strategies.png"))
            for sid in ns.sections:
                page.locator(f"section#{sid}").screenshot(path=str(out / f"report-lab-{sid}.png"))
                print(f"wrote {out / f'report-lab-{sid}.png'}")
            b.close()
    print(f"wrote {out / 'report-lab.png'} and {out / 'report-lab-strategies.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
