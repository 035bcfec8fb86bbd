"""The placement in a real Chromium against the served app: the address view renders every region's
allocations, clicking one selects its value, an edit that shrinks that value (typed into the
what-if editor) moves allocations and lowers ``placed`` in the summary and the view, the tile map
shows the worst tile against the estimate and lists a clicked tile; a hostile file's names stay
text.

Expected figures: from the raw sample JSON (lower bounds, the edited value's bytes and the edited
peak by docs/formats.md §2, ``editor_support``) and from ``planner.placement`` checked in the test
against the raw allocations and by a sweep (``test_placement.check_placement``).
"""

from __future__ import annotations

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_SOURCE_DATA, SAMPLE, kib, served_app, wait_for_app, watch_console
from editor_support import RawProfile, edited_bytes
from hostile import VALUE_NAMES, write_hostile_profile
from test_placement import check_placement, raw_lower_bounds

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.planner.placement import place

pytestmark = pytest.mark.browser
# Panel fetches its loading-spinner and theme stylesheets from its CDN when a tab is drawn again after
# a change (no network here): those requests, and the console error each logs, are the only ones allowed.
OFFLINE_CDN = "https://cdn.holoviz.org/"
UNREACHABLE = "Failed to load resource: net::ERR_NAME_NOT_RESOLVED"

VALUE, AXIS, PARTITIONS = 20, 0, 108  # interleaved, steps 0–61: 30,720 B → 18,432 B
PEAK_STEP = 47


def watch_failed_requests(page) -> list[str]:
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    return failed


def assert_no_errors(page, failed: list[str]) -> None:
    assert all(url.startswith(OFFLINE_CDN) for url in failed), failed
    assert [e for e in page.console_errors if e != UNREACHABLE] == []


def source(page, name: str) -> dict:
    return page.evaluate(JS_SOURCE_DATA, name)


def rects_by_id(data: dict, value_id: int) -> list[tuple[float, float]]:
    return sorted((b, t - b) for i, b, t in zip(data["id"], data["bottom"], data["top"]) if i == value_id)


JS_SCROLL_TO = """(name) => {
  for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) if (m.name === name) {
    Bokeh.index.find_one(m).canvas_view.el.scrollIntoView({block: "center"}); return true;
  }
  return false;
}"""


def click_data(page, figure: str, x: float, y: float) -> None:
    """Click the data point (x, y) of a Bokeh figure, scrolled into view first."""
    assert page.evaluate(JS_SCROLL_TO, figure), figure
    position = page.evaluate(JS_DATA_TO_PAGE, [figure, x, y])
    assert position is not None, figure
    page.mouse.click(*position)


def open_placement(page, url: str) -> None:
    page.locator(".bk-tab", has_text="Placement").click()
    page.wait_for_function(
        "(name) => { for (const d of Bokeh.documents) for (const m of d._all_models.values())"
        " if (m.name === name && m.data && m.data.left && m.data.left.length) return true; return false; }",
        arg="ts-address-interleaved",
        timeout=60_000,
    )


@pytest.fixture(scope="module")
def expected(raw):
    """Placements of the file and of the edit, each checked against the raw JSON."""
    arrays, plan = plan_profile(load_memory_profile(SAMPLE))
    before = place(arrays, plan)
    check_placement(raw, before)
    whatif = apply_edits(arrays, plan, [TilingEdit(VALUE, axis=AXIS, partitions=PARTITIONS)])
    after = place(arrays, whatif.plan, previous=before)
    profile = RawProfile(raw)
    value = profile.value(VALUE)
    new_bytes = edited_bytes(value, {AXIS: PARTITIONS})[2]
    check_placement(raw, after, bytes_of={VALUE: new_bytes})
    return {
        "before": before,
        "after": after,
        "bytes": new_bytes,
        "peaks": profile.peaks_with({VALUE: new_bytes - value["bytes"]}),
    }


def test_address_view_edit_and_tile_map(app_server, page, raw, expected):
    from playwright.sync_api import expect

    before, after = expected["before"], expected["after"]
    bound = raw_lower_bounds(raw)[1]
    assert before.interleaved.placed == bound and after.interleaved.placed == expected["peaks"]["interleaved"] < bound
    failed = watch_failed_requests(page)
    page.goto(app_server)
    wait_for_app(page)
    placed = page.locator("[data-testid=ts-placed-interleaved]")
    expect(placed).to_have_text(kib(bound))
    expect(page.locator("[data-testid=ts-lower-bound-standard]")).to_have_text(kib(raw_lower_bounds(raw)[0]))
    expect(page.locator("[data-testid=ts-capacity-rule]")).to_contain_text("docs/formats.md §5")

    # The address view renders both regions; value 20 sits at its placed offset.
    open_placement(page, app_server)
    expect(page.locator("[data-testid=ts-address-placed-interleaved]")).to_have_text(kib(bound))
    for region in ("standard", "interleaved"):
        assert len(source(page, f"ts-address-{region}")["left"]) > 0
        assert page.locator(".ts-addresses canvas").count() >= 2
    k = int((before.value_id == VALUE).nonzero()[0][0])
    first = source(page, "ts-address-interleaved")
    assert rects_by_id(first, VALUE) == [(float(before.offset[k]), float(before.bytes[k]))]

    # The tile map (a v1 file: tilescope's §2 estimate, labelled so): the worst tile holds the largest
    # shard of every live value, the step's recorded usage; the last such tile is outlined.
    step = raw["timeline"]["steps"][PEAK_STEP]
    usage = step["usage"]["standard"] + step["usage"]["interleaved"]
    expect(page.locator("[data-testid=ts-tile-worst-bytes]")).to_have_text(kib(usage))
    expect(page.locator("[data-testid=ts-tile-estimate]")).to_have_text(kib(usage))
    expect(page.locator("[data-testid=ts-tile-map-source]")).to_contain_text("tilescope's estimate")
    tiles = source(page, "ts-tile-map-tiles")
    assert len(tiles["tile"]) == raw["tile_count"] and max(tiles["bytes"]) == usage
    worst = [t for t, b in zip(tiles["tile"], tiles["bytes"]) if b == usage][-1]
    expect(page.locator("[data-testid=ts-tile-worst]")).to_have_text(str(worst))
    # Click the last tile: it is listed, outlined, and holds no more than the worst.
    last = raw["tile_count"] - 1
    click_data(page, "ts-tile-map", tiles["x"][last], tiles["y"][last])
    expect(page.locator("[data-testid=ts-tile-shown]")).to_have_text(str(last))
    expect(page.locator("[data-testid=ts-tile-holdings]")).to_contain_text("(clicked tile)")
    expect(page.locator("[data-testid=ts-tile-shown-bytes]")).to_have_text(kib(int(tiles["bytes"][last])))
    assert tiles["bytes"][last] <= usage

    # Click value 20's allocation: it is selected (the editor follows).
    click_data(
        page,
        "ts-address-interleaved-plot",
        (before.first_step[k] + before.last_step[k]) / 2,
        before.offset[k] + before.bytes[k] / 2,
    )
    expect(page.locator("[data-testid=ts-address-picked]")).to_contain_text(
        f"value #{VALUE} vit.encoder.layer0.mlp.up.weight"
    )

    # Shrink it in the editor: the summary's placed follows, before → after.
    page.locator(".bk-tab", has_text="What-if editor").click()
    page.locator(".ts-value-head", has_text=f"#{VALUE} ").wait_for()
    field = page.locator(f".ts-row[data-axis='{AXIS}'] input")
    field.fill(str(PARTITIONS))
    field.press("Enter")
    drop = bound - after.interleaved.placed
    expect(placed).to_have_text(
        f"{kib(bound)} → {kib(after.interleaved.placed)} (−{drop:,} B (−{drop / 1024:,.1f} KiB))"
    )

    # Back on the address view: the value is smaller, allocations above it moved down, placed too.
    open_placement(page, app_server)
    expect(page.locator("[data-testid=ts-address-placed-interleaved]")).to_have_text(kib(after.interleaved.placed))
    page.wait_for_function(
        "([name, id, size]) => { for (const d of Bokeh.documents) for (const m of d._all_models.values())"
        " if (m.name === name && m.data && m.data.id) { const ids = Array.from(m.data.id); const i = ids.indexOf(id);"
        " return i >= 0 && m.data.top[i] - m.data.bottom[i] === size; } return false; }",
        arg=["ts-address-interleaved", VALUE, expected["bytes"]],
        timeout=30_000,
    )
    now = source(page, "ts-address-interleaved")
    k_after = int((after.value_id == VALUE).nonzero()[0][0])
    assert rects_by_id(now, VALUE) == [(float(after.offset[k_after]), float(expected["bytes"]))]
    moved = [
        int(i) for i in set(after.value_id[(after.offset != before.offset) & (after.region == 1)].tolist()) if i >= 0
    ]
    assert moved
    shown_moves = [
        i
        for i in moved
        if rects_by_id(first, i) and rects_by_id(now, i) and rects_by_id(first, i) != rects_by_id(now, i)
    ]
    assert shown_moves, "no drawn allocation moved"
    for i in shown_moves:
        rows = (after.value_id == i) & (after.region == 1)
        assert rects_by_id(now, i) == sorted(
            (float(o), float(b)) for o, b in zip(after.offset[rows], after.bytes[rows])
        )
    # The tile map follows the edit at the selected step.
    assert VALUE in raw["timeline"]["steps"][PEAK_STEP]["live"]
    edited_total = usage + expected["bytes"] - RawProfile(raw).value(VALUE)["bytes"]
    expect(page.locator("[data-testid=ts-tile-estimate]")).to_have_text(kib(edited_total))
    assert_no_errors(page, failed)


def test_hostile_names_stay_text(tmp_path, browser):
    """Names from the file reach the picked line and the tile's holdings as text; no payload runs."""
    from playwright.sync_api import expect

    hostile = write_hostile_profile(tmp_path)
    arrays, plan = plan_profile(load_memory_profile(hostile.path))
    placement = place(arrays, plan)
    k = int((placement.value_id == 85).nonzero()[0][0])
    with served_app("--data-root", str(tmp_path)) as server:
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(60_000)
            watch_console(page)
            failed = watch_failed_requests(page)
            page.goto(f"{server.url}?file=hostile.json")
            wait_for_app(page)
            open_placement(page, server.url)
            holdings = page.locator("[data-testid=ts-tile-holdings]")
            expect(holdings).to_contain_text(VALUE_NAMES[85])
            expect(holdings).to_contain_text(VALUE_NAMES[153])
            click_data(
                page,
                "ts-address-standard-plot",
                float(placement.first_step[k]),
                placement.offset[k] + placement.bytes[k] / 2,
            )
            expect(page.locator("[data-testid=ts-address-picked]")).to_contain_text(f"value #85 {VALUE_NAMES[85]}")
            assert page.evaluate("() => window.__xss") is None
            assert page.locator(".ts-tile-holdings img, .ts-address-picked img, .ts-tile-holdings script").count() == 0
            assert_no_errors(page, failed)  # an injected <img src=x> would have requested .../x
        finally:
            context.close()
