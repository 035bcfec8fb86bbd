"""Regenerate the screenshots in docs/ from the real app: ``make docs``.

Starts ``panel serve app`` on loopback (tests/browser_support.py), drives Debian's Chromium with
Playwright at 1440×900, and saves one PNG per view, in the light theme and (``*_dark.png``) the
dark one. Each view is opened by its URL (``?tab=…``: app/url_state.py), as a user would share it.
Nothing here is drawn by hand.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser_support import launch_chromium, served_app, wait_for_app  # noqa: E402

OUT = Path(__file__).resolve().parent
VIEWPORT = {"width": 1440, "height": 900}
# picture name → (the URL's query, something that is only drawn once the view is there)
VIEWS = {
    "overview": ("", "[data-testid=ts-step-header]"),
    "tab_lifetimes": ("?tab=lifetimes", "text=largest values drawn one lane each"),
    "tab_editor": ("?tab=editor&value=84&step=45", ".ts-handle"),
    "tab_values": ("?tab=values", "text=aligned − shard"),
    "tab_storage_groups": ("?tab=groups&value=84", "text=hand-over"),
    "tab_export": ("?tab=export", "text=Report (PNG)"),
    "tab_placement": ("?tab=placement", "[data-testid=ts-tile-head]"),
}


def _shot(page, name: str, locator=None) -> Path:
    path = OUT / f"{name}.png"
    page.wait_for_timeout(1500)  # let Bokeh finish drawing after the last change
    (locator or page).screenshot(path=str(path))
    print(path.relative_to(ROOT))
    return path


def _to_dark(page) -> None:
    page.locator("[aria-label*='theme' i]").first.click()
    page.wait_for_timeout(800)


def main() -> int:
    with sync_playwright() as pw, served_app() as server:
        browser = launch_chromium(pw)
        for dark in (False, True):
            page = browser.new_page(viewport=VIEWPORT)
            suffix = "_dark" if dark else ""
            for name, (query, ready) in VIEWS.items():
                page.goto(server.url + query)
                wait_for_app(page)
                if dark:
                    _to_dark(page)
                try:
                    page.wait_for_selector(ready, timeout=30_000)
                except Exception:  # still take the picture: a missing view should show as missing
                    print(f"warning: {name} did not show {ready!r}", file=sys.stderr)
                _shot(page, name + suffix)
                if name == "overview":
                    _shot(page, "summary" + suffix, page.locator("[data-testid=ts-summary]").first)
            page.goto(f"{server.url}?file=flash_attention.search_state.json")
            page.wait_for_selector("text=alternative 128", timeout=60_000)
            if dark:
                _to_dark(page)
            _shot(page, "search_state" + suffix)
            page.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
