"""The search-state view in a real Chromium against the served app (``?file=`` of the sample):
the chosen alternative among all of them, the formats side by side, the chart, and the tiling
editor's numeric input recomputing shard bytes and refusing an invalid count; no console errors.

Expected figures: docs/formats.md §3 (the sample's stated shard sizes) and the hand arithmetic of
tests/test_search_view.py (key, FromEnd(1) at 5 partitions → 2048 B on 20 tiles).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SEARCH_FILE = "flash_attention.search_state.json"


def figure(n: int) -> str:
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def test_search_state_view_renders_the_chosen_plan(app_server, page):
    from playwright.sync_api import expect

    page.goto(f"{app_server}?file={SEARCH_FILE}")
    page.wait_for_selector("[data-testid=ts-search-choice]", timeout=90_000)
    expect(page.locator("[data-testid=ts-source]")).to_have_text(SEARCH_FILE)
    expect(page.locator("[data-testid=ts-search-chosen]")).to_have_text("128")
    expect(page.locator("[data-testid=ts-search-count]")).to_have_text("384")

    # The chosen alternative is pinned above the scrolled rows, inside the table's box.
    pinned = page.locator(".tabulator-frozen-rows-holder .tabulator-row")
    expect(pinned).to_have_count(1)
    expect(pinned.locator("[tabulator-field=alternative]")).to_have_text("128")
    expect(pinned).to_contain_text("★ chosen")
    table_box = page.locator(".tabulator").first.bounding_box()
    row_box = pinned.bounding_box()
    assert table_box["x"] <= row_box["x"] < table_box["x"] + table_box["width"]
    assert table_box["y"] <= row_box["y"] < table_box["y"] + table_box["height"]

    # Formats side by side (docs/formats.md §3).
    expect(page.locator("[data-testid=ts-arrives-0]")).to_have_text(f"{figure(320)} on 64 tiles")
    expect(page.locator("[data-testid=ts-required-0]")).to_have_text(f"{figure(320)} on 64 tiles")
    expect(page.locator("[data-testid=ts-arrives-1]")).to_have_text(f"{figure(3040)} on 4 tiles")
    expect(page.locator("[data-testid=ts-required-1]")).to_have_text(f"{figure(10240)} on 4 tiles")

    # The scatter is drawn.
    expect(page.locator(".bk-Canvas canvas, canvas").first).to_be_visible()

    # The tiling editor (on the key): type a partition count for the FromEnd(1) axis.
    count = page.locator(".ts-count-2 input")
    count.fill("5")
    count.press("Enter")
    expect(page.locator("[data-testid=ts-edit-edited]")).to_have_text(f"{figure(2048)} on 20 tiles")
    expect(page.locator(".ts-handle[data-axis='2']")).to_have_attribute("data-count", "5")
    # An invalid count is refused at its handle, saying why, and the figure stays.
    count.fill("6")
    count.press("Enter")
    message = page.locator(".ts-message[data-axis='2']")
    expect(message).to_contain_text("6 partitions refused")
    expect(message).to_contain_text("5 blocks")
    expect(page.locator("[data-testid=ts-edit-edited]")).to_have_text(f"{figure(2048)} on 20 tiles")
    expect(count).to_have_value("5")

    assert page.console_errors == []
