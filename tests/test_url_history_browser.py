"""The URL holds everything the user changed (issue #27 item 5), in a real Chromium:

- a comparison picked in the Compare tab's picker reaches the URL's ``compare=``, and a reload
  shows the same comparison;
- a profile opened from the fleet view has ``file=`` in its URL: a reload reopens that profile, not
  the fleet; Back returns to the fleet view inside the app (not to the page before it), Forward
  to the profile again;
- the theme follows the system's ``prefers-color-scheme`` on the first visit and a toggled theme
  is kept on reload.

Expected names and figures come from the test's own files (the copies it serves, the raw JSON),
never from the app."""

from __future__ import annotations

import re
import shutil
from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import SAMPLE, kib, served_app, wait_for_app
from compare_support import peaks_of
from playwright.sync_api import expect
from regress_support import HEAD, VIT

pytestmark = pytest.mark.browser

TABLE = ".ts-fleet-table"


def query_of(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


@pytest.fixture(scope="module")
def compare_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("url_history")
    shutil.copy(SAMPLE, root / "vit.json")
    shutil.copy(SAMPLE, root / "vit_copy.json")
    with served_app("--data-root", str(root)) as server:
        yield server


def test_a_comparison_picked_in_the_picker_is_in_the_url_and_survives_a_reload(page, compare_root, raw):
    page.goto(f"{compare_root.url}?file=vit.json&tab=compare")
    wait_for_app(page)
    picker = page.locator(".ts-compare-file select")
    picker.wait_for()
    picker.select_option("vit_copy.json")
    page.locator(".ts-compare-open button").click()
    expect(page.locator("[data-testid=ts-compare-b-name]")).to_contain_text("vit_copy.json", timeout=90_000)
    page.wait_for_function("() => new URLSearchParams(location.search).get('compare') === 'vit_copy.json'")
    assert query_of(page)["file"] == "vit.json"
    page.reload()
    wait_for_app(page)
    expect(page.locator("[data-testid=ts-compare-b-name]")).to_contain_text("vit_copy.json", timeout=90_000)
    assert page.locator("[data-testid=ts-compare-b-total]").first.inner_text() == kib(raw["peak"]["total"])
    # Stop comparing: compare= leaves the URL; Back brings the comparison again
    page.locator(".ts-compare-stop button").click()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('compare')")
    page.go_back()
    page.wait_for_function("() => new URLSearchParams(location.search).get('compare') === 'vit_copy.json'")
    expect(page.locator("[data-testid=ts-compare-b-name]")).to_contain_text("vit_copy.json", timeout=90_000)
    assert page.console_errors == []


@pytest.fixture(scope="module")
def fleet_server(nightly):
    with served_app("--data-root", str(nightly.root)) as server:
        yield server


def test_a_profile_opened_from_the_fleet_has_its_file_in_the_url_and_back_shows_the_fleet(page, nightly, fleet_server):
    row = f"{HEAD}/{VIT}"
    peaks = peaks_of(nightly.raw[row])
    page.goto("about:blank")
    page.goto(fleet_server.url + "?dataset=fleet-data")
    page.wait_for_selector(f"{TABLE} .tabulator-row")
    path_cell = page.locator(".tabulator-cell[tabulator-field=path]", has_text=re.compile(f"^{re.escape(row)}$"))
    the_row = page.locator(f"{TABLE} .tabulator-row").filter(has=path_cell)
    expect(the_row).to_have_count(1, timeout=60_000)
    the_row.locator(".tabulator-cell[tabulator-field=scope]").click()
    wait_for_app(page)
    page.locator("[data-testid=ts-source]").filter(has_text=row).wait_for()
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('file') === {row!r}")
    assert query_of(page)["dataset"] == "fleet-data" and query_of(page)["step"] == str(peaks["total_peak_step"])

    # Back: the fleet view, inside the app
    page.go_back()
    page.wait_for_selector(f"{TABLE} .tabulator-row", state="visible")
    expect(page.locator("[data-testid=ts-summary]")).to_have_count(0)
    assert page.url.startswith(fleet_server.url) and query_of(page) == {"dataset": "fleet-data"}
    # Forward: the profile again
    page.go_forward()
    page.locator("[data-testid=ts-source]").filter(has_text=row).wait_for()
    expect(page.locator("[data-testid=ts-peak-total]").first).to_have_text(kib(peaks["total"]))

    # Reload: the profile, not the fleet; its way back to the fleet is there
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => new URLSearchParams(location.search).get('step') === '{peaks['total_peak_step'] + 1}'"
    )
    page.reload()
    wait_for_app(page)
    page.locator("[data-testid=ts-source]").filter(has_text=row).wait_for()
    expect(page.locator("[data-testid=ts-peak-standard]").first).to_have_text(kib(peaks["standard"]))
    expect(page.locator("[data-testid=ts-selected-step]")).to_contain_text(f"Step {peaks['total_peak_step'] + 1} ")
    assert page.locator(f"{TABLE} .tabulator-row").filter(visible=True).count() == 0
    page.locator("button", has_text="← fleet fleet-data").click()
    page.wait_for_selector(f"{TABLE} .tabulator-row", state="visible")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('file')")
    assert page.console_errors == []


def test_the_theme_follows_the_system_first_and_is_kept_on_reload(browser, app_server):
    for scheme in ("dark", "light"):
        context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
        try:
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(app_server)
            wait_for_app(page)
            if scheme == "dark":
                page.wait_for_function(f"() => {{ {LUMA} return luma() < 80; }}")
            else:
                page.wait_for_function(f"() => {{ {LUMA} return luma() > 200; }}")
            # toggled: kept for the next visit, whatever the system says
            page.locator("[aria-label*='theme' i]").first.click()
            flipped = "light" if scheme == "dark" else "dark"
            page.wait_for_function(f"() => localStorage.getItem('tilescope-theme') === {flipped!r}")
            page.reload()
            wait_for_app(page)
            page.wait_for_function(
                f"() => {{ {LUMA} return luma() {'>' if flipped == 'light' else '<'} {200 if flipped == 'light' else 80}; }}"
            )
        finally:
            context.close()


LUMA = """const luma = () => { const c = getComputedStyle(document.querySelector('main') || document.body).backgroundColor;
  const [r, g, b] = c.slice(c.indexOf('(') + 1, c.indexOf(')')).split(',').map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b; };"""


def test_arrow_keys_on_a_focused_tab_leave_the_step(page, app_server, raw):
    """←/→ move the step when nothing takes them; a tab header clicked keeps the focus, and the keys
    pressed then are the tab's (issue #27 item 11), not the timeline's."""
    peak = raw["total_peak_step"]
    page.goto(app_server)
    wait_for_app(page)
    selected = page.locator("[data-testid=ts-selected-step]")
    expect(selected).to_contain_text(f"Step {peak} ")
    page.keyboard.press("ArrowRight")
    expect(selected).to_contain_text(f"Step {peak + 1} ")
    page.locator(".bk-tab", has_text="Values").click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'values'")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("End")
    # a key that still reaches the page afterwards shows the earlier ones were not queued behind it
    page.locator("[data-testid=ts-selected-step]").click()  # (focus off the tab: plain text)
    page.keyboard.press("ArrowRight")
    expect(selected).to_contain_text(f"Step {peak + 2} ")
    assert page.console_errors == []
