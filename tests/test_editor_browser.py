"""The what-if editor in a real Chromium against the served app: pick a value, drag a partition
handle with the mouse, watch the summary's peak follow; a refused drag shows its reason at the
handle and snaps back; undo restores the file's figures.

The expected peak comes from the raw sample JSON by docs/formats.md's rules (tests/editor_support.py).
"""

from __future__ import annotations

import re

import pytest
from browser_support import SAMPLE, drag_to_count, wait_for_app
from editor_support import RawProfile, edited_bytes

pytestmark = pytest.mark.browser

VALUE = 85  # [1, 729, 1152] F8 in the standard region, live over the total peak's step
AXIS = "1"  # FromEnd(2): 365 blocks, 9 partitions in the file (3 × 9 × 54 = 1458 of 1472 tiles)
NEW_PARTITIONS = 5


def figure(n: int) -> str:
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def open_editor(page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    page.locator(".bk-tab", has_text="What-if editor").click()
    page.locator(f".ts-handle[data-axis='{AXIS}']").wait_for(state="visible")


def pick_value(page, value_id: int, name: str) -> None:
    """Type into the editor's value picker and click the completion."""
    field = page.get_by_placeholder("type an id or part of a name…")
    field.click()
    field.fill("")
    field.press_sequentially(f"#{value_id} {name[:9]}", delay=30)
    page.locator(".bk-menu div", has_text=f"#{value_id} {name}").first.click()
    page.locator(".ts-value-head", has_text=f"#{value_id} {name}").wait_for()


def test_drag_replans_refuses_and_undoes(app_server, page):
    from playwright.sync_api import expect

    raw = RawProfile.load(SAMPLE)
    value = raw.value(VALUE)
    recorded_total = raw.doc["peak"]["total"]
    shard, _, cost = edited_bytes(value, {int(AXIS): NEW_PARTITIONS})
    expected_total = raw.peaks_with({VALUE: cost - value["bytes"]})["total"]
    assert expected_total != recorded_total

    open_editor(page, app_server)
    peak = page.locator("[data-testid=ts-peak-total]")
    expect(peak).to_have_text(figure(recorded_total))
    # A value with one (Linear) axis, then ours with two: every band keeps a numeric input beside it.
    pick_value(page, 89, raw.value(89)["name"])
    expect(page.locator(".ts-row")).to_have_count(2)
    expect(page.locator(".ts-row[data-axis='replicas'] input")).to_have_value("1")
    pick_value(page, VALUE, value["name"])
    expect(page.locator(".ts-row")).to_have_count(3)
    for axis, count in (("0", "3"), (AXIS, "9"), ("replicas", "54")):
        expect(page.locator(f".ts-row[data-axis='{axis}'] input")).to_have_value(count)
    handle = page.locator(f".ts-handle[data-axis='{AXIS}']")
    expect(handle).to_have_attribute("data-count", "9")

    # A drag the planner accepts: the summary's peak becomes the hand-computed one.
    drag_to_count(page, AXIS, NEW_PARTITIONS)
    expect(peak).to_contain_text(f"{figure(recorded_total)} → {figure(expected_total)}")
    expect(handle).to_have_attribute("data-count", str(NEW_PARTITIONS))
    expect(page.locator("[data-testid=ts-editor-figures]")).to_contain_text(
        f"{figure(value['shard_bytes'])} → {figure(shard)}"
    )
    expect(page.locator(f".ts-message[data-axis='{AXIS}']")).to_be_hidden()

    # A drag the planner refuses (3 × 365 × 54 tiles > 1472): the reason shows at the handle,
    # which snaps back; the plan stays.
    drag_to_count(page, AXIS, 365)
    message = page.locator(f".ts-message[data-axis='{AXIS}']")
    expect(message).to_be_visible()
    expect(message).to_have_text(re.compile(r"value 85 .*tile count must not exceed the device's tiles .*> 1472"))
    expect(handle).to_have_attribute("data-count", str(NEW_PARTITIONS))
    expect(peak).to_contain_text(f"{figure(recorded_total)} → {figure(expected_total)}")

    # The numeric input: a count above the axis's 365 blocks is refused the same way.
    field = page.locator(f".ts-row[data-axis='{AXIS}'] input")
    field.fill("400")
    field.press("Enter")
    expect(message).to_have_text(re.compile(r"value 85 axis 1: partitions must not exceed the axis's blocks"))
    expect(field).to_have_value(str(NEW_PARTITIONS))
    expect(peak).to_contain_text(f"{figure(recorded_total)} → {figure(expected_total)}")

    # Undo: the file's figures again.
    page.locator("button", has_text="Undo").click()
    expect(peak).to_have_text(figure(recorded_total))
    expect(handle).to_have_attribute("data-count", "9")

    # Keyboard: the focused handle steps to the next stop down (8 partitions: 46 blocks per shard).
    keyed_cost = edited_bytes(value, {int(AXIS): 8})[2]
    keyed_total = raw.peaks_with({VALUE: keyed_cost - value["bytes"]})["total"]
    handle.focus()
    page.keyboard.press("ArrowLeft")
    expect(handle).to_have_attribute("data-count", "8")
    expect(peak).to_contain_text(f"{figure(recorded_total)} → {figure(keyed_total)}")
    assert not page.console_errors, page.console_errors
