"""Issue #27 item 10: the first session after the server restarts, with the profile already in the
content-hash cache, must take clicks on the timeline (they were ignored: the selection stayed at
the peak step while the keys still moved it).

A server opens the sample once (so the cache holds it and its overview), stops; a second server
with the same cache folder serves it again; a click on the timeline at a known step must move the
step header there. Expected steps come from the raw JSON (the stdlib), not from the app."""

from __future__ import annotations

import shutil

import pytest
from browser_support import JS_DATA_TO_PAGE, SAMPLE, AppServer, wait_for_app
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SELECTED = "[data-testid=ts-selected-step]"


def click_step(page, raw: dict, step: int) -> None:
    usage = raw["timeline"]["steps"][step]["usage"]
    x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", step, (usage["standard"] + usage["interleaved"]) / 2])
    page.mouse.click(x, y)


def test_the_first_session_after_a_restart_takes_timeline_clicks(browser, raw, tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    shutil.copy(SAMPLE, root / SAMPLE.name)
    env = {"TILESCOPE_CACHE_DIR": str(tmp_path / "cache")}
    peak = raw["total_peak_step"]
    step = 20
    assert step != peak
    for _server in ("cold cache", "after the restart: staged open from the cache"):
        server = AppServer(["--data-root", str(root)], env=env)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        try:
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{server.url}?file={SAMPLE.name}")
            wait_for_app(page)
            expect(page.locator(SELECTED)).to_contain_text(f"Step {peak} ", timeout=60_000)
            # the whole page is there (the at-step tab's header at the peak) before the click
            expect(page.locator("[data-testid=ts-step-index]").first).to_have_text(str(peak), timeout=60_000)
            click_step(page, raw, step)
            expect(page.locator(SELECTED)).to_contain_text(f"Step {step} ", timeout=30_000)
            expect(page.locator("[data-testid=ts-step-index]").first).to_have_text(str(step), timeout=30_000)
            page.keyboard.press("ArrowRight")
            expect(page.locator(SELECTED)).to_contain_text(f"Step {step + 1} ", timeout=30_000)
        finally:
            context.close()
            server.stop()
        assert list((tmp_path / "cache").rglob("*.overview.arrow")), "the first server cached the sample's overview"
