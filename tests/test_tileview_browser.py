"""Issue #22 in a real Chromium against the served app, its data root a temporary folder holding
generated files: a version 3 memory profile (tests/profile_generator.py) opens on its peak tile in
the Tiles tab; the step's peak tile, a typed tile and a click in the tile map change the tile's
timeline and its table; ``tile=`` restores from the URL; a version 8 search state
(tests/search_state_generator.py) opens with its recipe and its visited recipes listed.

Expected figures come from the written JSON (the generators' documents), read with plain Python.
"""

from __future__ import annotations

import json
import re

import pytest
from browser_support import JS_DATA_TO_PAGE, JS_SOURCE_DATA
from profile_generator import program_scaled
from profile_generator import write as write_profile
from search_state_generator import v8_document, write

pytestmark = pytest.mark.browser

V8_FILE = "v8.search_state.json"
V3_FILE = "scaled.memory_profile.json"


def tile_totals(doc: dict, step: int) -> list[int]:
    return [a + b for a, b in doc["timeline"]["steps"][step]["tile_usage"]]


def last_peak(totals: list[int]) -> int:
    return max(t for t, v in enumerate(totals) if v == max(totals))


def expected_totals(doc: dict, tile: int, step: int) -> list[int]:
    """Per live root, the largest tile_bytes[tile] of its aliases (0 left out), most first."""
    values = doc["timeline"]["values"]
    held = [
        max(v["tile_bytes"][tile] for v in values if v["root"] == root)
        for root in doc["timeline"]["steps"][step]["live"]
    ]
    return sorted((h for h in held if h), reverse=True)


def shown_totals(page) -> list[int]:
    cells = page.locator(".ts-tile-rows .tabulator-row [tabulator-field=total]")
    return [int(re.sub(r"[^0-9]", "", text)) for text in cells.all_inner_texts()]


def expect_tile(page, doc: dict, tile: int, step: int) -> None:
    """The header, the table and the timeline show ``tile`` at ``step``."""
    from playwright.sync_api import expect

    expect(page.locator("[data-testid=ts-tile-selected]")).to_have_text(str(tile))
    expect(page.locator("[data-testid=ts-tile-step]")).to_have_text(str(step))
    want = expected_totals(doc, tile, step)
    # The table's total cells, as shown (thousands separated), in order: it waits until they are.
    expect(page.locator(".ts-tile-rows .tabulator-row [tabulator-field=total]")).to_have_text([f"{n:,}" for n in want])
    assert shown_totals(page) == want
    series = [a + b for a, b in (s["tile_usage"][tile] for s in doc["timeline"]["steps"])]
    page.wait_for_function(
        """([name, want]) => { for (const d of Bokeh.documents) for (const m of d._all_models.values())
             if (m.name === name && m.data && m.data.total) return JSON.stringify(Array.from(m.data.total)) === JSON.stringify(want);
           return false; }""",
        arg=["ts-tile-series", series],
        timeout=30_000,
    )


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tileview-data")
    doc = v8_document()
    write(doc, root / V8_FILE)
    profile = write_profile(program_scaled(2), 3, root / V3_FILE)
    return root, {"v8": doc, "v3": json.loads(profile.read_text())}


@pytest.fixture(scope="module")
def server(data_root):
    from browser_support import served_app

    with served_app("--data-root", str(data_root[0])) as served:
        yield served


def test_a_version_8_search_state_opens_with_its_visited_recipes(server, data_root, page):
    from playwright.sync_api import expect

    doc = data_root[1]["v8"]
    page.goto(f"{server.url}?file={V8_FILE}")
    page.wait_for_selector("[data-testid=ts-search-visited]", timeout=90_000)
    expect(page.locator("[data-testid=ts-search-version]")).to_have_text("8")
    expect(page.locator("[data-testid=ts-visited-count]")).to_have_text(str(len(doc["visited"])))
    rows = page.locator("[data-testid=ts-visited-row]")
    expect(rows).to_have_count(len(doc["visited"]))
    # The one visited entry equal to the incumbent says so; the others say what differs.
    same = [i for i, entry in enumerate(doc["visited"]) if entry == doc["recipe"]]
    for i in range(len(doc["visited"])):
        text = "nothing: the same recipe as the incumbent"
        if i in same:
            expect(rows.nth(i)).to_contain_text(text)
        else:
            expect(rows.nth(i)).not_to_contain_text(text)
    expect(page.locator("[data-testid=ts-search-visited]")).to_contain_text("no cost, verdict or rejection reason")
    expect(page.locator("[data-testid=ts-recipe-setting-packing_rows]")).to_have_text(
        str(doc["recipe"]["options"]["packing_rows"])
    )
    expect(page.locator("[data-testid=ts-search-chosen]")).to_have_text("128")
    assert page.console_errors == []


def test_a_v3_profile_opens_on_its_peak_tile_and_follows_the_chosen_tile(server, data_root, page):
    from playwright.sync_api import expect

    doc = data_root[1]["v3"]
    peak_step = doc["total_peak_step"]
    peak_tile = last_peak(tile_totals(doc, peak_step))
    page.goto(f"{server.url}?file={V3_FILE}&tab=tiles")
    page.wait_for_selector("[data-testid=ts-tile-header]", timeout=90_000)
    expect(page.locator("[data-testid=ts-tile-source]")).to_have_attribute("data-source", "file")
    expect_tile(page, doc, peak_tile, peak_step)

    # A typed tile: the header, the table and the timeline follow; the URL says it.
    typed = 5
    field = page.locator(".ts-tile-input input")
    field.fill(str(typed))
    field.press("Enter")
    expect_tile(page, doc, typed, peak_step)
    expect(page).to_have_url(re.compile(rf"tile={typed}\b"))

    # Another step, then "the step's peak tile".
    other = next(
        s for s in range(len(doc["timeline"]["steps"])) if last_peak(tile_totals(doc, s)) not in (typed, peak_tile)
    )
    page.goto(f"{server.url}?file={V3_FILE}&tab=tiles&step={other}&tile={typed}")
    page.wait_for_selector("[data-testid=ts-tile-header]", timeout=90_000)
    expect_tile(page, doc, typed, other)  # tile= and step= restored from the URL
    page.locator("button", has_text="the step's peak tile").click()
    expect_tile(page, doc, last_peak(tile_totals(doc, other)), other)

    # A click in the tile map selects the tile under it.
    clicked = 1000
    columns = page.evaluate(JS_SOURCE_DATA, "ts-tile-usage-tiles")
    x, y = columns["x"][clicked], columns["y"][clicked]
    page.evaluate(
        "(name) => { for (const d of Bokeh.documents) for (const m of d._all_models.values()) if (m.name === name)"
        " { Bokeh.index.find_one(m).canvas_view.el.scrollIntoView({block: 'center'}); return true; } return false; }",
        "ts-tile-usage-map",
    )
    page.mouse.click(*page.evaluate(JS_DATA_TO_PAGE, ["ts-tile-usage-map", x, y]))
    expect_tile(page, doc, clicked, other)
    assert page.console_errors == []
