"""Accessibility audit: axe-core (the npm package pinned in tests/js/package-lock.json, installed by
``make test`` through ``npm ci``) injected by Playwright into every view of the served app, in the
light and the dark theme, at 1440×900. No serious or critical violation is allowed, colour contrast
included; each one found is listed with its rule id, impact and target.

The views: every side tab of a memory profile's page (``app.side_tabs.SIDE_TABS``; the main column,
summary and timeline, is audited with each), the what-if editor open on a value, the search-state
page (the bundled sample), the fleet view of a dataset built by ``tilescope batch`` here, a placement
dump (``../shared/bench/ipu-stack-placement``), a generated placement profile
(``tests/placement_profile_gen.py``) and the compare view. axe sees the HTML (through open shadow
roots), not what Bokeh paints on a canvas: the canvas labels' contrast is checked by their own tests
(test_page_nav_browser: the timeline's budget and reserve labels).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import REPO_ROOT, SAMPLE, served_app, watch_console
from compare_support import with_edits, write

from tilescope.app.side_tabs import SIDE_TABS

pytestmark = pytest.mark.browser

AXE = REPO_ROOT / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
BENCH = REPO_ROOT.parent / "shared" / "bench"
DUMP = BENCH / "ipu-stack-placement" / "fragmented.json"
SEARCH_STATE = REPO_ROOT / "sample_data" / "flash_attention.search_state.json"
VIEWPORT = {"width": 1440, "height": 900}
BLOCKING = ("serious", "critical")

# Violations inside Bokeh's or Tabulator's own markup that no option of theirs reaches, each named
# and justified: (rule id, a substring of the target's selector, why).
EXCLUDED: tuple[tuple[str, str, str], ...] = (
    (
        "button-name",
        ".bk-spin-btn",
        "Bokeh's Spinner (Panel's IntInput) draws its ▲/▼ step buttons as empty <button>s in its own shadow "
        "root and takes no name for them; the number field beside them is labelled and its arrow keys step it",
    ),
    (
        "aria-required-children",
        ".pnx-tabulator",
        "Tabulator puts its header row and its focusable holders (div[tabindex], role=button column "
        "headers) straight under role=grid; Panel's Tabulator offers no hook into that structure",
    ),
)

# Each side tab: (URL query, a selector shown only once its view is drawn).
TAB_READY = {
    "step": ("", "[data-testid=ts-step-header]"),
    "lifetimes": ("&tab=lifetimes", "text=largest values drawn one lane each"),
    "editor": ("&tab=editor&value=84&step=45", ".ts-handle"),
    "values": ("&tab=values", "text=aligned − shard"),
    "groups": ("&tab=groups&value=84", "text=hand-over"),
    "placement": ("&tab=placement", "[data-testid=ts-tile-head]"),
    "tiles": ("&tab=tiles", "[data-testid=ts-tile-source]"),
    "compare": ("&tab=compare", ".ts-compare-note"),
    "export": ("&tab=export", "text=Report (PNG)"),
}
VIEWS = {
    **{f"tab-{key}": ("?file=vit.json" + query, ready) for key, (query, ready) in TAB_READY.items()},
    "compare-view": ("?file=vit.json&compare=vit_edited.json", "[data-testid=ts-compare-summary]"),
    "search-state": ("?file=search.json", "[data-testid=ts-search-choice]"),
    "fleet": ("?dataset=fleet-data", ".ts-fleet-table .tabulator-row"),
    "placement-dump": ("?file=fragmented.json", "[data-testid=ts-dump-verdict]:has-text('placed')"),
    "placement-profile": ("?file=placement-4242.json", "[data-testid=ts-pp-solver]:has-text('tilescope placed')"),
}

# The page's theme as drawn: the body's background luminance (panel_material_ui paints it).
JS_DARK = """() => { const m = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g).map(Number);
  return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) < 100; }"""
# Every Bokeh figure's outer fill follows the theme too (the server sets it after the toggle).
JS_FIGURES_FOLLOW = """(dark) => { for (const doc of Bokeh.documents) for (const m of doc._all_models.values()) {
    if (m.border_fill_color === undefined || !m.renderers || typeof m.border_fill_color !== 'string') continue;
    const c = document.createElement('canvas').getContext('2d'); c.fillStyle = m.border_fill_color;
    const hex = c.fillStyle; if (!/^#[0-9a-f]{6}$/i.test(hex)) continue;
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    if (((0.2126 * r + 0.7152 * g + 0.0722 * b) < 100) !== dark) return false;
  } return true; }"""
# No finite animation or transition running (shadow roots included): the theme's colours fade in over
# 0.8 s on Bokeh's buttons, and a contrast measured mid-fade is neither theme's.
JS_SETTLED = """() => document.getAnimations().every((a) => a.playState !== 'running'
  || a.effect === null || a.effect.getComputedTiming().endTime === Infinity)"""
JS_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({impact: n.impact, target: JSON.stringify(n.target), html: n.html.slice(0, 160),
                                summary: (n.failureSummary || '').split('\\n').slice(1, 3).join(' ').trim()}))}));
}"""


def batch(inputs: Path, out: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tilescope", "batch", str(inputs), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr


@pytest.fixture(scope="module")
def audit_server(tmp_path_factory):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make test-js-deps` (npm ci --prefix tests/js)")
    root = tmp_path_factory.mktemp("a11y-root")
    raw = json.loads(SAMPLE.read_text())
    shutil.copy(SAMPLE, root / "vit.json")
    write(with_edits(raw, [(84, 1, 18), (84, "replicas", 27), (20, 0, 27)]), root / "vit_edited.json")
    shutil.copy(SEARCH_STATE, root / "search.json")
    if DUMP.exists():
        shutil.copy(DUMP, root / DUMP.name)
    from placement_profile_gen import placement_profile

    (root / "placement-4242.json").write_text(json.dumps(placement_profile(tiles=3, seed=11)))
    nightly = root / "nightly"
    nightly.mkdir()
    shutil.copy(SAMPLE, nightly / "vit.json")
    shutil.copy(root / "vit_edited.json", nightly / "vit_edited.json")
    batch(nightly, root / "fleet-data")
    with served_app("--data-root", str(root)) as server:
        yield server


@pytest.fixture(scope="module")
def themed_pages(browser):
    contexts = {}

    def make(dark: bool):
        if dark not in contexts:
            contexts[dark] = browser.new_context(viewport=VIEWPORT, color_scheme="dark" if dark else "light")
        page = contexts[dark].new_page()
        page.set_default_timeout(60_000)
        watch_console(page)
        return page

    yield make
    for context in contexts.values():
        context.close()


def use_theme(page, dark: bool) -> None:
    """The theme asked for, by the header's toggle if the page opened in the other one."""
    if page.evaluate(JS_DARK) != dark:
        page.locator("[aria-label*='theme' i]").first.click()
    page.wait_for_function(f"() => ({JS_DARK})() === {json.dumps(dark)}", timeout=30_000)
    page.wait_for_function(f"() => ({JS_FIGURES_FOLLOW})({json.dumps(dark)})", timeout=30_000)
    page.wait_for_function(JS_SETTLED, timeout=30_000)


def blocking(violations: list[dict]) -> list[str]:
    """One line per node of a serious or critical violation not excluded above."""
    lines = []
    for v in violations:
        for node in v["nodes"]:
            impact = node["impact"] or v["impact"]
            if impact not in BLOCKING:
                continue
            if any(rule == v["id"] and part in node["target"] for rule, part, _ in EXCLUDED):
                continue
            lines.append(f"{v['id']} [{impact}] {node['target']}: {v['help']}. {node['summary']} | {node['html']}")
    return lines


def test_every_side_tab_has_a_view_here():
    assert set(TAB_READY) == {tab.key for tab in SIDE_TABS}


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("view", list(VIEWS))
def test_no_serious_or_critical_axe_violation(audit_server, themed_pages, view, dark):
    query, ready = VIEWS[view]
    if view == "placement-dump" and not DUMP.exists():
        pytest.skip(f"{DUMP} is not here")
    page = themed_pages(dark)
    try:
        page.goto(audit_server.url + query)
        page.wait_for_selector(ready, timeout=90_000)
        use_theme(page, dark)
        page.wait_for_selector(ready, timeout=30_000)
        page.add_script_tag(path=str(AXE))
        page.wait_for_function(JS_SETTLED, timeout=30_000)
        found = blocking(page.evaluate(JS_AXE))
        if found:
            # A colour read while a fade (the theme's, a button's hover) ran is neither state's: a
            # fault is what a second audit of the settled page finds again, at the same element.
            page.wait_for_function(JS_SETTLED, timeout=30_000)
            again = set(blocking(page.evaluate(JS_AXE)))
            found = [line for line in found if line in again]
        assert not found, (
            f"{len(found)} serious/critical axe violation(s) in {view} ({'dark' if dark else 'light'}):\n"
            + "\n".join(found)
        )
        assert page.console_errors == []
    finally:
        page.close()


def test_named_header_filters_still_filter(audit_server, themed_pages):
    """The Values table's header filters carry names (``filter <title>``) and filter as before: a text
    box matches a substring of the name, case-insensitively; a number box matches the id exactly.
    Expected ids from the raw JSON."""
    from playwright.sync_api import expect

    raw = json.loads(SAMPLE.read_text())
    page = themed_pages(False)
    try:
        page.goto(audit_server.url + "?file=vit.json&tab=values")
        page.wait_for_selector(".ts-values-table .tabulator-row", timeout=90_000)
        ids = page.locator(".ts-values-table .tabulator-row .tabulator-cell[tabulator-field=id]")

        def shown() -> list[int]:
            return sorted(int(text.replace(",", "")) for text in ids.all_inner_texts())

        name_filter = page.get_by_label("filter name", exact=True)
        expect(name_filter).to_have_count(1)
        name_filter.press_sequentially("ATTENTION_NORM")  # key by key: Tabulator filters on keyup
        wanted = sorted(v["id"] for v in raw["timeline"]["values"] if "attention_norm" in v["name"].lower())
        assert 0 < len(wanted) < 25  # one page
        expect(ids).to_have_count(len(wanted), timeout=30_000)
        assert shown() == wanted
        name_filter.press("Control+a")
        name_filter.press("Backspace")
        expect(ids).to_have_count(25, timeout=30_000)  # a full page again
        id_filter = page.get_by_label("filter id", exact=True)
        id_filter.press_sequentially("84")
        expect(ids).to_have_count(1, timeout=30_000)
        assert shown() == [84]
        assert page.console_errors == []
    finally:
        page.close()
