"""The served app in a real Chromium: figures, linked selection, file refusal, bad files, escaping,
and the timeline's point budget at scale. Expected figures come from the files' recorded fields."""

from __future__ import annotations

import json
import re

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_SOURCE_DATA, JS_STEP_TABLE_IDS, SAMPLE, kib, served_app, wait_for_app

pytestmark = pytest.mark.browser

# Rows the Tabulator with CSS class `css` holds in the browser.
JS_TABLE_ROWS = """(css) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
    if (m.source && (m.css_classes || []).includes(css)) return m.source.get_length();
  return null;
}"""


def text_of(page, testid: str) -> str:
    return page.locator(f"[data-testid={testid}]").first.inner_text().strip()


def test_the_sample_opens_with_its_recorded_peaks(page, app_server, raw):
    page.goto(app_server)
    wait_for_app(page)
    assert text_of(page, "ts-peak-standard") == kib(raw["peak"]["standard"]) == "206,032 B (201.2 KiB)"
    assert text_of(page, "ts-peak-interleaved") == kib(raw["peak"]["interleaved"])
    assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"]) == "429,904 B (419.8 KiB)"
    assert text_of(page, "ts-effective-peak") == kib(raw["effective_peak_bytes"]) == "416,368 B (406.6 KiB)"
    assert text_of(page, "ts-peak-total-step") == f"step {raw['total_peak_step']}"
    assert text_of(page, "ts-peak-standard-step") == f"step {raw['standard_peak_step']}"
    assert text_of(page, "ts-budget") == kib(raw["budget_bytes"])
    assert text_of(page, "ts-exchange-rows") == kib(raw["peak"]["exchange_rows"])
    assert text_of(page, "ts-fits-budget") == ("yes" if raw["fits_budget"] else "no")
    assert text_of(page, "ts-scope") == raw["scope"]
    # the at-step view opens at the total peak with the file's live list
    assert text_of(page, "ts-step-index") == str(raw["total_peak_step"])
    live = raw["timeline"]["steps"][raw["total_peak_step"]]["live"]
    page.wait_for_function(f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length > 0; }}")
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(set(live))
    assert page.console_errors == []


def test_clicking_a_step_in_the_timeline_lists_its_live_values(page, app_server, raw):
    page.goto(app_server)
    wait_for_app(page)
    steps = raw["timeline"]["steps"]
    step = 20
    assert step != raw["total_peak_step"]
    top = steps[step]["usage"]["standard"] + steps[step]["usage"]["interleaved"]
    x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", step, top / 2])
    page.mouse.click(x, y)
    page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
    expected = set(steps[step]["live"])
    page.wait_for_function(
        f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length === {len(expected)}; }}"
    )
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(expected)
    # the largest live value's name is on screen, as text
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    largest = min(expected, key=lambda vid: (-values[vid]["bytes"], vid))
    cell = page.locator(".ts-step-values .tabulator-cell[tabulator-field=name]").filter(
        has_text=values[largest]["name"]
    )
    cell.first.wait_for()
    assert text_of(page, "ts-step-live-count") == str(len(expected))
    assert page.console_errors == []


def test_the_step_input_selects_a_step_too(page, app_server, raw):
    page.goto(app_server)
    wait_for_app(page)
    step = raw["standard_peak_step"]
    field = page.locator(".ts-step-input input").first
    field.fill(str(step))
    field.press("Enter")
    page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
    expected = set(raw["timeline"]["steps"][step]["live"])
    page.wait_for_function(
        f"() => {{ const ids = ({JS_STEP_TABLE_IDS})(); return ids && ids.length === {len(expected)}; }}"
    )
    assert sorted(page.evaluate(JS_STEP_TABLE_IDS)) == sorted(expected)


def test_a_file_outside_the_data_root_is_refused(page, app_server, raw):
    page.goto(app_server + "?file=../../etc/passwd")
    wait_for_app(page)
    error = page.locator("[data-testid=ts-error]").first
    error.wait_for()
    assert "refused file name '../../etc/passwd'" in error.inner_text()
    assert "root:" not in page.content()  # nothing of /etc/passwd reached the page
    assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])  # the sample stays open


def test_a_bad_file_shows_its_located_error(page, tmp_path, raw):
    data = json.loads(SAMPLE.read_text())
    data["timeline"]["values"][3]["shape"] = "wide"
    (tmp_path / "broken.memory_profile.json").write_text(json.dumps(data))
    (tmp_path / "cut.memory_profile.json").write_bytes(SAMPLE.read_bytes()[:1000])
    with served_app("--data-root", str(tmp_path)) as server:
        page.goto(server.url + "?file=broken.memory_profile.json")
        wait_for_app(page)
        error = page.locator("[data-testid=ts-error]").first
        error.wait_for()
        assert (
            error.inner_text()
            .strip()
            .startswith("broken.memory_profile.json: at $.timeline.values[3].shape: expected array")
        )
        assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])  # the default profile is shown instead

        page.goto(server.url + "?file=cut.memory_profile.json")
        wait_for_app(page)
        error = page.locator("[data-testid=ts-error]").first
        error.wait_for()
        assert error.inner_text().strip().startswith("cut.memory_profile.json: at byte 1000 (line 1, column 1001)")


def test_text_from_the_file_is_never_rendered_as_html(page, tmp_path, raw):
    data = json.loads(SAMPLE.read_text())
    step = raw["total_peak_step"]
    values = {v["id"]: v for v in data["timeline"]["values"]}
    largest = max(set(raw["timeline"]["steps"][step]["live"]), key=lambda vid: (values[vid]["bytes"], -vid))
    evil = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
    values[largest]["name"] = evil
    data["scope"] = "<script>window.__pwned=2</script>scope"
    hover_step = 30
    data["timeline"]["steps"][hover_step]["operation"] = 'Copy { note: "<img src=x onerror=window.__pwned=3>" }'
    (tmp_path / "evil.memory_profile.json").write_text(json.dumps(data))
    with served_app("--data-root", str(tmp_path)) as server:
        page.goto(server.url + "?file=evil.memory_profile.json")
        wait_for_app(page)
        cell = page.locator(".ts-step-values .tabulator-cell[tabulator-field=name]").first
        cell.wait_for()
        page.wait_for_timeout(1000)
        assert page.evaluate("() => window.__pwned") is None
        assert cell.inner_text() == evil  # the first row is the largest value: its name shown as text
        assert page.locator(".ts-step-values .tabulator-cell img").count() == 0
        assert text_of(page, "ts-scope") == data["scope"]
        # the timeline's hover shows the operation text as text
        steps = data["timeline"]["steps"]
        x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", hover_step, steps[hover_step]["usage"]["standard"] / 2])
        page.mouse.move(x, y)
        tooltip = page.locator(".bk-tooltip-content, .bk-tooltip").filter(has_text="<img src=x").first
        tooltip.wait_for()
        page.wait_for_timeout(500)
        assert page.evaluate("() => window.__pwned") is None
        assert page.console_errors == []


@pytest.mark.slow
def test_a_20k_step_profile_renders_with_a_bounded_point_budget(page, tmp_path):
    from tilescope.synth import write_synthetic_profile

    path = write_synthetic_profile(tmp_path / "big.memory_profile.json", blocks=170, layers=2)
    raw = json.loads(path.read_text())
    n = len(raw["timeline"]["steps"])
    assert n > 19_000
    with served_app("--data-root", str(tmp_path)) as server:
        page.goto(server.url + "?file=big.memory_profile.json")
        wait_for_app(page, timeout=180_000)
        assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])
        usage = page.evaluate(JS_SOURCE_DATA, "ts-timeline-usage")
        assert 100 < len(usage["step"]) <= 5000
        # the peak survives the downsampling: the highest point sent is the file's total peak
        assert max(usage["total"]) == raw["peak"]["total"]
        assert raw["total_peak_step"] in usage["step"]
        page.locator(".bk-tab", has_text="Lifetimes").click()  # the lifetimes sit in a side tab, built when shown
        page.wait_for_function(f"() => ({JS_SOURCE_DATA})('ts-lifetime-bars') !== null")
        rest = page.evaluate(JS_SOURCE_DATA, "ts-lifetime-rest")
        assert len(rest["step"]) <= 5000
        bars = page.evaluate(JS_SOURCE_DATA, "ts-lifetime-bars")
        assert 0 < len(set(bars["value_id"])) <= 150

        # zoom in on the timeline: the window is refined, still bounded, now every step
        x, y = page.evaluate(JS_DATA_TO_PAGE, ["ts-timeline", n // 2, 100_000])
        page.mouse.move(x, y)
        for _ in range(12):
            page.mouse.wheel(0, -400)
            page.wait_for_timeout(150)
        page.wait_for_function(
            """() => { for (const doc of Bokeh.documents) for (const m of doc._all_models.values())
                 if (m.name === 'ts-timeline-usage') { const s = m.data.step; return s.length && (s[s.length-1] - s[0]) < %d; }
               return false; }"""
            % (n // 2)
        )
        zoomed = page.evaluate(JS_SOURCE_DATA, "ts-timeline-usage")
        steps = zoomed["step"]
        assert len(steps) <= 5000
        if steps[-1] - steps[0] + 1 <= 700 * 2:
            assert steps == list(range(steps[0], steps[-1] + 1))  # a narrow window is sent whole
        assert page.console_errors == []


def test_selecting_a_value_opens_its_storage_group_and_outlines_it(page, app_server, raw):
    """At the standard peak, values 84 and 85 of storage group 83 hand over (docs/formats.md §2)."""
    page.goto(app_server)
    wait_for_app(page)
    step = raw["standard_peak_step"]
    page.get_by_role("button", name="standard peak").click()
    page.locator("[data-testid=ts-step-index]").filter(has_text=str(step)).first.wait_for()
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    row = (
        page.locator(".ts-step-values .tabulator-row")
        .filter(has=page.locator(".tabulator-cell[tabulator-field=id]", has_text="84"))
        .first
    )
    row.locator(".tabulator-cell[tabulator-field=name]").click()  # a click selects the row (and only it)
    page.get_by_text("Storage groups", exact=True).first.click()
    detail = page.locator("[data-testid=ts-group-detail][data-group='83']").first
    detail.wait_for()
    together = [s["index"] for s in raw["timeline"]["steps"] if 84 in s["live"] and 85 in s["live"]]
    b84, b85 = values[84]["bytes"], values[85]["bytes"]
    expected = f"values 84 ({kib(b84)}) and 85 ({kib(b85)}) both live at step {together[0]}: {kib(b84 + b85)} together"
    assert len(together) == 1 and expected in detail.inner_text()
    # the lifetimes chart outlines the selected value in black and its group mates in orange
    page.locator(".bk-tab", has_text="Lifetimes").click()  # a side tab, built when shown
    page.wait_for_function(f"() => ({JS_SOURCE_DATA})('ts-lifetime-bars') !== null")
    bars = page.evaluate(JS_SOURCE_DATA, "ts-lifetime-bars")
    colour = dict(zip(bars["value_id"], bars["line_color"]))
    assert colour[84] == "#000000"  # selected
    assert colour[83] == "#E65100"  # a group mate, not selected
    assert colour[85] == "#E65100"  # a mate, not selected: a click replaces the selection, nothing is pre-picked
    assert page.console_errors == []


def test_an_uploaded_bad_file_is_refused_and_a_search_state_is_routed(page, app_server, raw, tmp_path):
    page.goto(app_server)
    wait_for_app(page)
    bad = tmp_path / "bad upload.json"
    bad.write_text('{"version": 1, "timeline": {"values": [], "steps": 7}}')
    page.locator(".filepond--browser").first.set_input_files(str(bad))
    error = page.locator("[data-testid=ts-error]").first
    error.wait_for()
    assert error.inner_text().strip().startswith("bad upload.json: at $")
    assert text_of(page, "ts-peak-total") == kib(raw["peak"]["total"])  # the open profile stays

    page.goto(app_server + "?file=flash_attention.search_state.json")
    header = page.locator("[data-testid=ts-search-header]").first
    header.wait_for()
    assert "flash_attention.search_state.json" in header.inner_text()
    assert page.locator("[data-testid=ts-summary]").count() == 0


def test_the_groups_table_pages_filters_and_selects_on_the_server(page, app_server, raw):
    """The groups table sends one page of rows (remote pagination); the next page, a filter on a
    member id and a click all act on the right group."""
    from collections import Counter

    from playwright.sync_api import expect

    counts = Counter(v["storage_group"] for v in raw["timeline"]["values"])
    groups = sorted(g for g, n in counts.items() if n >= 2)
    assert len(groups) > 15  # more than one page
    page.goto(app_server)
    wait_for_app(page)
    page.get_by_text("Storage groups", exact=True).first.click()
    table = page.locator(".ts-groups-table")
    group_cells = table.locator(".tabulator-cell[tabulator-field=storage_group]")
    expect(group_cells.first).to_have_text(str(groups[0]))
    assert page.evaluate(JS_TABLE_ROWS, "ts-groups-table") == 15  # the page, not all groups

    table.locator(".tabulator-page[data-page=next]").click()
    expect(group_cells.first).to_have_text(str(groups[15]))
    group_cells.first.click()
    expect(page.locator(f"[data-testid=ts-group-detail][data-group='{groups[15]}']").first).to_be_visible()

    # Filter the member ids on "85": group 83 (values 84 and 85) is among the rows; pick it.
    member_filter = table.locator(".tabulator-col[tabulator-field=values] input")
    member_filter.click()
    member_filter.press_sequentially("85", delay=40)
    member_filter.press("Enter")
    with_85 = sorted(
        g for g in groups if any(v["storage_group"] == g and "85" in str(v["id"]) for v in raw["timeline"]["values"])
    )
    expect(group_cells).to_have_count(len(with_85))
    cell_83 = table.locator(".tabulator-cell[tabulator-field=storage_group]", has_text=re.compile(r"^83$"))
    expect(cell_83).to_have_count(1)
    page.wait_for_timeout(500)  # the filtered page settles (the server re-sends it once more)
    cell_83.click()
    detail = page.locator("[data-testid=ts-group-detail][data-group='83']").first
    expect(detail).to_be_visible(timeout=15_000)
    assert "84" in detail.inner_text() and "85" in detail.inner_text()
    assert page.console_errors == []
