"""The header's value search shows the picked value on the current tab (issue #27 item 9), in a real
Chromium: with the Values tab open and its name filter hiding the value, picking it in the header
search selects it, moves the selected step to the step of its live range where the total is
highest, marks that live range on the timeline, and the Values table shows its row again.

Expected steps from the raw JSON (its live lists and per-step usage), not from the app."""

from __future__ import annotations

import pytest
from browser_support import wait_for_app
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

VALUE = 120  # operation 38 result 0: live at steps 98–101, away from the total peak (47)

JS_VALUES_TABLE = """() => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.css_classes && m.css_classes.includes("ts-values-table") && m.source)
      return {filters: m.filters, ids: Array.from(m.source.data.id || [])};
  return null;
}"""

JS_ANNOTATION = """(name) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.name === name) return [m.left, m.right, m.visible];
  return null;
}"""


def test_a_value_picked_in_the_header_search_is_shown_on_the_current_tab(page, app_server, raw):
    steps = raw["timeline"]["steps"]
    live = [s["index"] for s in steps if VALUE in s["live"]]
    first, last = min(live), max(live)
    totals = {i: steps[i]["usage"]["standard"] + steps[i]["usage"]["interleaved"] for i in range(first, last + 1)}
    expected_step = max(totals, key=lambda i: (totals[i], -i))  # the first step of the highest total
    assert not first <= raw["total_peak_step"] <= last

    page.goto(app_server + "?tab=values")
    wait_for_app(page)
    table = page.locator(".ts-values-table")
    ids = table.locator(".tabulator-row .tabulator-cell[tabulator-field=id]")
    expect(ids.first).to_be_visible()
    # a name filter that hides the value
    box = table.locator(".tabulator-col[tabulator-field=name] input")
    box.click()
    box.press_sequentially("qkv", delay=30)
    expect(table.locator(".tabulator-row .tabulator-cell[tabulator-field=name]").first).to_contain_text("qkv")
    expect(ids.filter(has_text=f"{VALUE}")).to_have_count(0)

    search = page.get_by_placeholder("search values: #id or name…")
    search.click()
    search.press_sequentially(f"#{VALUE}", delay=60)
    option = page.locator(".bk-menu div", has_text=f"#{VALUE} ").first
    option.click()

    expect(page.locator("[data-testid=ts-selected-step]")).to_contain_text(f"Step {expected_step} ", timeout=30_000)
    page.wait_for_function(
        f"() => {{ const a = ({JS_ANNOTATION})('ts-timeline-value-live'); "
        f"return a && a[2] && a[0] === {first - 0.5} && a[1] === {last + 0.5}; }}"
    )
    # the Values tab (the current one) holds the value's row on its page: its filter no longer hides it
    page.wait_for_function(
        f"() => {{ const t = ({JS_VALUES_TABLE})(); return t && t.filters.length === 0 && t.ids.includes({VALUE}); }}"
    )
    expect(box).to_have_value("")
    assert page.locator(".bk-tab.bk-active").inner_text() == "Values"
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('value') === '{VALUE}'")
    assert page.console_errors == []
