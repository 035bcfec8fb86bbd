"""Issue #22 in a real Chromium against the served app, its data root a temporary folder holding
generated files: a version 8 search state (tests/search_state_generator.py) opens with its recipe
and its visited recipes listed.

Expected figures come from the written JSON (the generator's documents), read with plain Python.
"""

from __future__ import annotations

import pytest

from search_state_generator import v8_document, write

pytestmark = pytest.mark.browser

V8_FILE = "v8.search_state.json"


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tileview-data")
    doc = v8_document()
    write(doc, root / V8_FILE)
    return root, {"v8": doc}


@pytest.fixture(scope="module")
def server(data_root):
    from browser_support import served_app

    with served_app("--data-root", str(data_root[0])) as served:
        yield served


def test_a_version_8_search_state_opens_with_its_visited_recipes(
    server, data_root, page
):
    from playwright.sync_api import expect

    doc = data_root[1]["v8"]
    page.goto(f"{server.url}?file={V8_FILE}")
    page.wait_for_selector("[data-testid=ts-search-visited]", timeout=90_000)
    expect(page.locator("[data-testid=ts-search-version]")).to_have_text("8")
    expect(page.locator("[data-testid=ts-visited-count]")).to_have_text(
        str(len(doc["visited"]))
    )
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
    expect(page.locator("[data-testid=ts-search-visited]")).to_contain_text(
        "no cost, verdict or rejection reason"
    )
    expect(page.locator("[data-testid=ts-recipe-setting-packing_rows]")).to_have_text(
        str(doc["recipe"]["options"]["packing_rows"])
    )
    expect(page.locator("[data-testid=ts-search-chosen]")).to_have_text("128")
    assert page.console_errors == []
