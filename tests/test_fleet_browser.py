"""The fleet view in a real Chromium against the served app: ``?dataset=`` opens the nightly dataset
(``regress_support``), sorting by a peak orders the rows by the raw JSON's peaks, clicking a row
opens that profile in the session, two ticked rows open the compare view, and a refused or bad
dataset shows its one-line error over the default profile."""

from __future__ import annotations

import pytest
from browser_support import JS_SOURCE_DATA, kib, served_app, wait_for_app
from compare_support import peaks_of
from playwright.sync_api import expect
from regress_support import BASE, BROKEN, HEAD, SMALL, VIT

pytestmark = pytest.mark.browser

TABLE = ".ts-fleet-table"


def first_cell(page, field: str):
    return page.locator(f"{TABLE} .tabulator-row .tabulator-cell[tabulator-field={field}]").first


@pytest.fixture(scope="module")
def fleet_server(nightly):
    """The app served over the nightly data root (one server for this module's tests)."""
    with served_app("--data-root", str(nightly.root)) as server:
        yield server


def paths_shown(page) -> list[str]:
    return page.locator(f"{TABLE} .tabulator-row .tabulator-cell[tabulator-field=path]").all_inner_texts()


def test_sort_by_a_peak_click_a_row_and_the_profile_opens(page, nightly, fleet_server):
    loaded = {p: peaks_of(r) for p, r in nightly.raw.items() if not (p.startswith(BROKEN) and p.endswith(SMALL))}
    page.goto(fleet_server.url + "?dataset=fleet-data")
    page.wait_for_selector("[data-testid=ts-fleet-head]")
    page.wait_for_selector(f"{TABLE} .tabulator-row")
    assert page.locator("[data-testid=ts-fleet-count]").inner_text() == "16"
    assert f"{BROKEN}/{SMALL}: at byte 20000" in page.locator("[data-testid=ts-fleet-failures]").inner_text()
    bars = page.evaluate(JS_SOURCE_DATA, "ts-fleet-bars")
    assert dict(zip(bars["path"], bars["value"])) == {p: e["total"] for p, e in loaded.items()}

    # sort by the standard peak, largest first (Tabulator: first click ascending, second descending)
    title = page.locator(f"{TABLE} .tabulator-col[tabulator-field=standard_peak] .tabulator-col-title")
    top = max(loaded, key=lambda p: loaded[p]["standard"])
    assert top == f"{HEAD}/{VIT}"  # the edited copy
    low = min(e["standard"] for e in loaded.values())
    title.click()
    expect(first_cell(page, "standard_peak")).to_have_text(f"{low:,}", timeout=60_000)  # ascending
    title.click()
    expect(first_cell(page, "standard_peak")).to_have_text(f"{loaded[top]['standard']:,}", timeout=60_000)
    assert page.locator(f"{TABLE} .tabulator-row .tabulator-cell[tabulator-field=path]").first.inner_text() == top
    shown = paths_shown(page)
    peaks = [loaded[p]["standard"] for p in shown if p in loaded]
    assert peaks == sorted(peaks, reverse=True) and len(peaks) >= 10

    page.locator(f"{TABLE} .tabulator-row").first.locator(".tabulator-cell[tabulator-field=scope]").click()
    wait_for_app(page)
    page.locator("[data-testid=ts-source]").filter(has_text=top).wait_for()
    assert page.locator("[data-testid=ts-peak-standard]").first.inner_text() == kib(loaded[top]["standard"])
    assert page.locator("[data-testid=ts-peak-total]").first.inner_text() == kib(loaded[top]["total"])
    # and back to the fleet, as it was
    page.locator("button", has_text="← fleet fleet-data").click()
    page.wait_for_selector(f"{TABLE} .tabulator-row")
    assert page.locator("[data-testid=ts-summary]").count() == 0

    # a click on the tick box does not open anything; two ticked and "compare" open the first by
    # path and compare it with the second in the page's compare view
    page.locator(f"{TABLE} .tabulator-row").first.locator("input[type=checkbox]").click()
    page.locator(f"{TABLE} .tabulator-row").nth(1).locator("input[type=checkbox]").click()
    assert page.locator("[data-testid=ts-summary]").count() == 0
    page.locator("button", has_text="compare the two ticked").click()
    a, b = sorted(shown[:2])
    expect(page.locator("[data-testid=ts-compare-a-name]")).to_contain_text(a.rsplit("/", 1)[-1], timeout=60_000)
    expect(page.locator("[data-testid=ts-compare-b-name]")).to_contain_text(b.rsplit("/", 1)[-1], timeout=60_000)
    page.locator("[data-testid=ts-source]").filter(has_text=a).wait_for()
    assert page.console_errors == []


def test_a_refused_or_bad_dataset_shows_its_error_over_the_default_profile(page, fleet_server, raw):
    page.goto(fleet_server.url + "?dataset=../etc")
    wait_for_app(page)
    error = page.locator("[data-testid=ts-error]").first
    error.wait_for()
    assert error.inner_text().strip().startswith("refused dataset name '../etc': '..' is not allowed")
    assert page.locator("[data-testid=ts-peak-total]").first.inner_text() == kib(raw["peak"]["total"])
    page.goto(fleet_server.url + f"?dataset={BASE}")
    wait_for_app(page)
    error = page.locator("[data-testid=ts-error]").first
    error.wait_for()
    assert error.inner_text().strip() == (
        f"{BASE}: at $: expected a dataset directory written by `tilescope batch` (with tilescope-dataset.json), found none"
    )
