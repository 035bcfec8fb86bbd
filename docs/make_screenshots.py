"""Regenerate the screenshots in docs/ from the real app: ``make docs``.

Starts ``panel serve app`` on loopback (tests/browser_support.py), drives Debian's Chromium with
Playwright, and saves one PNG per view. Nothing here is drawn by hand.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser_support import launch_chromium, served_app, wait_for_app  # noqa: E402

OUT = Path(__file__).resolve().parent
VIEWPORT = {"width": 1500, "height": 1000}
# tab label, and something that is only drawn once the tab's view is there
TABS = {
    "values": ("Values", "text=aligned − shard"),
    "storage_groups": ("Storage groups", "text=hand-over"),
    "editor": ("What-if editor", ".ts-handle"),
    "placement": ("Placement", "[data-testid=ts-tile-head]"),
    "export": ("Export", "text=Report (PNG)"),
}


def _shot(page, name: str, locator=None) -> Path:
    path = OUT / f"{name}.png"
    page.wait_for_timeout(1200)  # let Bokeh finish drawing after the last change
    (locator or page).screenshot(path=str(path), **({} if locator else {"full_page": True}))
    print(path.relative_to(ROOT))
    return path


def main() -> int:
    with sync_playwright() as pw, served_app() as server:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(server.url)
        wait_for_app(page)
        _shot(page, "overview")
        _shot(page, "summary", page.locator("[data-testid=ts-summary]").first)
        for name, (label, ready) in TABS.items():
            page.locator(".bk-tab", has_text=label).click()
            try:
                page.wait_for_selector(ready, timeout=30_000)
            except Exception:  # still take the picture: a missing view should show as missing
                print(f"warning: {label} did not show {ready!r}", file=sys.stderr)
            _shot(page, f"tab_{name}")
        page.goto(f"{server.url}?file=flash_attention.search_state.json")
        page.wait_for_selector("text=alternative 128", timeout=60_000)
        _shot(page, "search_state")
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
