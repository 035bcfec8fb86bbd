"""Regenerate the screenshots in docs/ from the real app: ``make docs``.

Starts ``panel serve app`` on loopback (tests/browser_support.py), drives Debian's Chromium with
Playwright at 1440×900 and 1024×768, and saves one PNG per view and width, in the light theme and
(``*_dark.png``) the dark one: ``NAME.png`` / ``NAME_dark.png`` at 1440 px, ``NAME_1024.png`` /
``NAME_1024_dark.png`` at 1024 px. Each view is opened by its URL (``?tab=…``: app/url_state.py), as a
user would share it. Nothing here is drawn by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser_support import launch_chromium, served_app, wait_for_app  # noqa: E402

OUT = Path(__file__).resolve().parent
# the page's two supported widths: (viewport, the pictures' name suffix)
SIZES = (({"width": 1440, "height": 900}, ""), ({"width": 1024, "height": 768}, "_1024"))
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


# The theme as drawn (the body's background, painted by panel_material_ui) and no finite animation
# or transition running, shadow roots included (the theme's colours fade in over 0.8 s).
JS_DARK = """() => { const m = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g).map(Number);
  return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) < 100; }"""
JS_SETTLED = """() => document.getAnimations().every((a) => a.playState !== 'running'
  || a.effect === null || a.effect.getComputedTiming().endTime === Infinity)"""


def _shot(page, name: str, locator=None) -> Path:
    path = OUT / f"{name}.png"
    page.wait_for_function(JS_SETTLED, timeout=30_000)
    page.wait_for_timeout(1000)  # Bokeh paints its canvases after the last message: no event says when
    (locator or page).screenshot(path=str(path))
    print(path.relative_to(ROOT), f"{path.stat().st_size / 1024:,.0f} KiB")
    return path


def _use_theme(page, dark: bool) -> None:
    """The theme asked for, by the header's toggle if the page opened in the other one (the page may
    follow the browser's ``prefers-color-scheme`` or a remembered choice)."""
    if page.evaluate(JS_DARK) != dark:
        page.locator("[aria-label*='theme' i]").first.click()
    page.wait_for_function(f"() => ({JS_DARK})() === {'true' if dark else 'false'}", timeout=30_000)


def _new_page(browser, viewport: dict, dark: bool):
    return browser.new_page(viewport=viewport, color_scheme="dark" if dark else "light")


def placement_files(browser) -> None:
    """A placement dump (the compiler's ``fragmented.json`` from ``../shared/bench``) and a generated
    placement profile (``tests/placement_profile_gen.py``), served from a temporary data root."""
    import json
    import shutil
    import tempfile

    sys.path.insert(0, str(ROOT / "tests"))
    import os

    from placement_profile_gen import placement_profile

    bench = Path(
        os.environ.get("TILESCOPE_SHARED_BENCH", ROOT.parent / "shared" / "bench")
    )  # (a worktree elsewhere names it)
    dump = bench / "ipu-stack-placement" / "fragmented.json"
    with tempfile.TemporaryDirectory() as root:
        if dump.exists():
            shutil.copy(dump, Path(root) / dump.name)
        (Path(root) / "placement-4242.json").write_text(json.dumps(placement_profile(tiles=3, seed=11)))
        with served_app("--data-root", root) as server:
            for (viewport, size), dark in ((size, dark) for size in SIZES for dark in (False, True)):
                page = _new_page(browser, viewport, dark)
                suffix = size + ("_dark" if dark else "")
                shots = [
                    (
                        "placement_profile",
                        "placement-4242.json",
                        "[data-testid=ts-pp-solver]:has-text('tilescope placed')",
                    )
                ]
                if dump.exists():
                    shots.insert(0, ("placement_dump", dump.name, "[data-testid=ts-dump-verdict]:has-text('placed')"))
                for name, file, ready in shots:
                    page.goto(f"{server.url}?file={file}")
                    page.wait_for_selector(ready, timeout=60_000)
                    _use_theme(page, dark)
                    _shot(page, name + suffix)
                page.close()


def main() -> int:
    if sys.argv[1:] == ["placement"]:  # only the placement files' pictures
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            placement_files(browser)
            browser.close()
        return 0
    with sync_playwright() as pw, served_app() as server:
        browser = launch_chromium(pw)
        for (viewport, size), dark in ((size, dark) for size in SIZES for dark in (False, True)):
            page = _new_page(browser, viewport, dark)
            suffix = size + ("_dark" if dark else "")
            for name, (query, ready) in VIEWS.items():
                page.goto(server.url + query)
                wait_for_app(page)
                _use_theme(page, dark)
                try:
                    page.wait_for_selector(ready, timeout=30_000)
                except Exception:  # still take the picture: a missing view should show as missing
                    print(f"warning: {name} did not show {ready!r}", file=sys.stderr)
                _shot(page, name + suffix)
                if name == "overview":
                    _shot(page, "summary" + suffix, page.locator("[data-testid=ts-summary]").first)
            page.goto(f"{server.url}?file=flash_attention.search_state.json")
            page.wait_for_selector("text=alternative 128", timeout=60_000)
            _use_theme(page, dark)
            _shot(page, "search_state" + suffix)
            page.close()
        placement_files(browser)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
