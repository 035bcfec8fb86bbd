"""The page in a real Chromium: the layout at two screen sizes, the URL as shareable state and the
back button, the keys, dark mode, one-gesture edits, coalesced drags, tooltips inside the plot,
and no request to any host but the server.

Expected figures come from the raw sample JSON by docs/formats.md §2 (tests/editor_support.py).
"""

from __future__ import annotations

import io
import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import SAMPLE, drag_to_count, kib, wait_for_app, watch_console
from editor_support import RawProfile, edited_bytes

pytestmark = pytest.mark.browser

# Box (page pixels) of the Bokeh figure named `name`'s canvas.
JS_FIGURE_BOX = """(name) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === name) {
    const b = Bokeh.index.find_one(m).canvas_view.el.getBoundingClientRect();
    return {x: b.x, y: b.y, width: b.width, height: b.height};
  }
  return null;
}"""


@pytest.fixture
def context_at(browser):
    contexts = []

    def make(width: int, height: int):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_console(page)
        return context, page

    yield make
    for context in contexts:
        context.close()


def inside(box: dict, width: int, height: int) -> bool:
    return (
        box["x"] >= -0.5
        and box["y"] >= -0.5
        and box["x"] + box["width"] <= width + 0.5
        and box["y"] + box["height"] <= height + 0.5
    )


def query_of(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


@pytest.mark.parametrize("width, height", [(1440, 900), (1024, 768)])
def test_summary_timeline_and_editor_are_in_view_together_without_horizontal_scroll(
    context_at, app_server, width, height
):
    _, page = context_at(width, height)
    page.goto(app_server + "?tab=editor&value=84")
    wait_for_app(page)
    handle = page.locator(".ts-handle[data-axis='1']")
    handle.wait_for(state="visible")
    page.wait_for_timeout(500)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate("document.documentElement.scrollHeight") <= height
    boxes = {
        "summary peaks": page.locator("[data-testid=ts-summary] table").first.bounding_box(),
        "timeline": page.evaluate(JS_FIGURE_BOX, "ts-timeline"),
        "editor handle": handle.bounding_box(),
        "editor value": page.locator(".ts-value-head").first.bounding_box(),
    }
    for what, box in boxes.items():
        assert box is not None and inside(box, width, height), (what, box)
    # side by side: the editor is beside the timeline, not under it
    assert boxes["editor handle"]["x"] > boxes["timeline"]["x"] + boxes["timeline"]["width"] - 1
    assert page.console_errors == []


def test_the_url_restores_step_value_and_tab_and_follows_the_selection(page, app_server, raw):
    page.goto(app_server + "?step=45&value=84&tab=editor")
    wait_for_app(page)
    n = len(raw["timeline"]["steps"])
    # in view beside the editor: the selected step under the timeline, value #84 in the editor
    selected = page.locator("[data-testid=ts-selected-step]").first
    selected.wait_for()
    assert selected.inner_text().strip() == f"Step 45 of {n}"
    name = next(v["name"] for v in raw["timeline"]["values"] if v["id"] == 84)
    page.locator(".ts-value-head", has_text=f"#84 {name}").wait_for()
    assert page.locator(".bk-tab.bk-active", has_text="What-if editor").count() == 1
    page.wait_for_function("() => location.search.includes('step=45')")
    assert query_of(page) == {"step": "45", "value": "84", "tab": "editor"}

    # The keys, with no click first: ←/→, Home/End, p (the total peak). Then the step's own tab,
    # whose header keeps its form "Step N of M".
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('step=46')")
    page.locator("[data-testid=ts-selected-step]", has_text="Step 46 ").first.wait_for()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => location.search.includes('step=44')")
    page.keyboard.press("End")
    last = len(raw["timeline"]["steps"]) - 1
    page.wait_for_function(f"() => location.search.includes('step={last}')")
    page.keyboard.press("Home")
    page.wait_for_function("() => location.search.includes('step=0&')")
    page.keyboard.press("p")
    page.wait_for_function(f"() => location.search.includes('step={raw['total_peak_step']}&')")
    page.locator("[data-testid=ts-selected-step]", has_text=f"Step {raw['total_peak_step']} ").first.wait_for()

    # Back steps through the history: Home (0), then End (last).
    page.go_back()
    page.locator("[data-testid=ts-selected-step]", has_text="Step 0 ").first.wait_for()
    page.go_back()
    page.locator("[data-testid=ts-selected-step]", has_text=f"Step {last} ").first.wait_for()
    assert query_of(page)["step"] == str(last)

    # A key typed into a text field stays there.
    search = page.get_by_placeholder("search values: #id or name…")
    search.click()
    search.press("ArrowLeft")
    page.wait_for_timeout(500)
    assert page.locator("[data-testid=ts-selected-step]").first.inner_text().startswith(f"Step {last} ")

    # the step's own tab: its header keeps the form "Step N of M"
    page.locator(".bk-tab", has_text="At this step").click()
    header = page.locator("[data-testid=ts-step-header]").first
    header.wait_for()
    page.locator("[data-testid=ts-step-index]", has_text=str(last)).first.wait_for()
    assert re.match(rf"Step {last} of {n}\b", header.inner_text())
    assert "tab" not in query_of(page)  # the default tab is left out of the URL
    assert page.console_errors == []


def test_dark_mode_changes_the_page_and_the_charts(page, app_server):
    from PIL import Image

    page.goto(f"{app_server}?tab=editor&value=84")
    wait_for_app(page)
    page.locator(".ts-row .ts-band").first.wait_for()
    page.wait_for_timeout(800)

    def widget_luminance() -> float:
        """The first band of the editor's tiling widget (data, padding and the space around a shard)."""
        image = Image.open(io.BytesIO(page.locator(".ts-row .ts-band").first.screenshot())).convert("L")
        return sum(image.tobytes()) / (image.width * image.height)

    def chart_luminance() -> float:
        box = page.evaluate(JS_FIGURE_BOX, "ts-timeline")
        # a strip of the plot's top, above the data (the peak labels' lanes): background only, mostly
        clip = {"x": box["x"] + box["width"] * 0.75, "y": box["y"] + 40, "width": box["width"] * 0.2, "height": 20}
        image = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("L")
        return sum(image.tobytes()) / (image.width * image.height)

    def page_background() -> str:
        return page.evaluate("() => getComputedStyle(document.querySelector('main') || document.body).backgroundColor")

    light_chart, light_page, light_widget = chart_luminance(), page_background(), widget_luminance()
    assert light_chart > 200 and light_widget > 200, (light_chart, light_widget)
    page.locator("[aria-label*='theme' i]").first.click()
    page.wait_for_function(
        f"() => getComputedStyle(document.querySelector('main') || document.body).backgroundColor !== {light_page!r}"
    )
    page.wait_for_timeout(800)
    dark_chart, dark_widget = chart_luminance(), widget_luminance()
    assert dark_chart < 80, (light_chart, dark_chart)
    assert dark_widget < 80, (light_widget, dark_widget)  # the tiling widget's bands follow the theme too
    assert page.console_errors == []


def test_one_drag_with_keep_the_tile_count_reaches_the_advisors_best_edit(page, app_server):
    from playwright.sync_api import expect

    raw = RawProfile.load(SAMPLE)
    value = raw.value(84)
    cost = edited_bytes(value, {1: 18})[2]
    expected = raw.peaks_with({84: cost - value["bytes"]})["standard"]
    assert (raw.doc["peak"]["standard"], expected) == (206_032, 185_680)
    page.goto(app_server + "?tab=editor&value=84")
    wait_for_app(page)
    page.locator(".ts-handle[data-axis='1']").wait_for(state="visible")
    page.locator(".ts-keep-tiles input[type=checkbox]").check()
    drag_to_count(page, "1", 18)
    peak = page.locator("[data-testid=ts-peak-standard]")
    expect(peak).to_contain_text(f"{kib(206_032)} → {kib(expected)}")
    expect(page.locator("[data-testid=ts-edit-list] li")).to_have_count(2)  # partitions and replicas: one gesture
    expect(page.locator("[data-testid=ts-edit-list]")).to_contain_text("value 84: replicas → 27")
    expect(page.locator(".ts-handle[data-axis='replicas']")).to_have_attribute("data-count", "27")
    assert query_of(page)["edits"] == "84:1=18,84:r=27"
    # one undo undoes the gesture
    page.locator("button", has_text="Undo").click()
    expect(peak).to_have_text(kib(206_032))
    assert page.console_errors == []


def test_five_drags_on_one_axis_leave_one_edit(page, app_server):
    from playwright.sync_api import expect

    raw = RawProfile.load(SAMPLE)
    value = raw.value(85)
    page.goto(app_server + "?tab=editor&value=85")
    wait_for_app(page)
    handle = page.locator(".ts-handle[data-axis='1']")
    handle.wait_for(state="visible")
    for count in (5, 7, 6, 8, 4):
        drag_to_count(page, "1", count)
        expect(handle).to_have_attribute("data-count", str(count))
    expect(page.locator("[data-testid=ts-edit-list] li")).to_have_count(1)
    expect(page.locator("[data-testid=ts-edit-list] li")).to_contain_text("value 85: axis 1 partitions → 4")
    cost = edited_bytes(value, {1: 4})[2]
    total = raw.peaks_with({85: cost - value["bytes"]})["total"]
    expect(page.locator("[data-testid=ts-peak-total]")).to_contain_text(f"→ {kib(total)}")
    # the shared URL carries that one edit, and opening it restores the plan
    assert query_of(page)["edits"] == "85:1=4"
    page.goto(page.url)
    wait_for_app(page)
    expect(page.locator("[data-testid=ts-peak-total]")).to_contain_text(f"→ {kib(total)}")
    assert page.console_errors == []


def test_timeline_tooltips_stay_inside_the_plot_and_show_bytes(page, app_server, raw):
    page.goto(app_server)
    wait_for_app(page)
    box = page.evaluate(JS_FIGURE_BOX, "ts-timeline")
    last = len(raw["timeline"]["steps"]) - 1
    for step, nudge in ((0, 0.3), (raw["total_peak_step"], 0), (last, -0.3)):  # the edge steps from inside the plot
        x, y = page.evaluate(
            """([name, x]) => { for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === name) {
                 const v = Bokeh.index.find_one(m); const b = v.canvas_view.el.getBoundingClientRect();
                 return [b.left + v.frame.x_scale.compute(x), b.top + v.frame.bbox.top + v.frame.bbox.height * 0.8]; } }""",
            ["ts-timeline", step + nudge],
        )
        page.mouse.move(x, y)
        tooltip = page.locator(".bk-tooltip-content").filter(has_text=f"step {step} ").first
        tooltip.wait_for(state="visible")
        tip = tooltip.bounding_box()
        assert tip is not None and inside(
            {**tip, "x": tip["x"] - box["x"], "y": tip["y"] - box["y"]}, box["width"], box["height"]
        ), (step, tip, box)
        total = raw["timeline"]["steps"][step]["usage"]
        expected = total["standard"] + total["interleaved"] + raw["peak"]["exchange_rows"]
        assert f"{expected:,} B" in tooltip.inner_text()
        page.mouse.move(box["x"] - 50, box["y"] - 50)
        page.wait_for_timeout(200)


def test_no_request_leaves_the_machine_during_a_walk_through(browser, app_server, tmp_path):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(app_server)
        wait_for_app(page)
        base = app_server.rsplit("/", 1)[0]
        for label in ("Lifetimes", "What-if editor", "Values", "Storage groups", "Export", "At this step"):
            page.locator(".bk-tab", has_text=label).click()
            page.wait_for_timeout(700)
        page.locator(".bk-tab", has_text="What-if editor").click()
        page.locator(".ts-handle[data-axis='1']").wait_for(state="visible")
        drag_to_count(page, "1", 5)
        page.locator("[data-testid=ts-edit-list] li").first.wait_for()
        page.keyboard.press("ArrowRight")
        page.locator("[aria-label*='theme' i]").first.click()
        page.locator(".ts-glossary summary").click()
        page.goto(app_server + "?file=flash_attention.search_state.json")
        page.locator("[data-testid=ts-search-header]").first.wait_for()
        page.wait_for_timeout(1000)
        outside = [url for url in requests if not (url.startswith(base) or url.startswith(("blob:", "data:")))]
        assert requests and outside == [], outside
    finally:
        context.close()
