"""The side panel in a real Chromium: every view one mouse click away at 1440 and 1024 px wide, the
active tab in sight after a URL names it.

A tab counts as reachable only if it is inside the strip's visible box and the window before the
click, and the click is a plain mouse click at its centre (``page.mouse.click``): Playwright's own
``locator.click`` scrolls a clipped element into view first, which a user's mouse does not.
"""

from __future__ import annotations

import pytest
from browser_support import wait_for_app, watch_console
from test_compare_browser import served  # noqa: F401 - the data root with the sample and an edited copy
from test_page_browser import JS_FIGURE_BOX

from tilescope.app.side_tabs import DEFAULT_TAB, SIDE_TABS

pytestmark = pytest.mark.browser

# The side tabs' host (found through the shadow roots), its strip, each tab's box, and the shown view.
JS_SIDE_TABS = """() => {
  function host(root) {
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) {
      if (e.classList.contains('ts-side-tabs')) return e;
      const found = host(e.shadowRoot); if (found) return found;
    }
    return null;
  }
  function text(node) {  // the text a reader sees, through shadow roots (no style or script)
    if (node.nodeType === 3) return node.textContent;
    if (node.nodeType !== 1 && node.nodeType !== 11) return '';
    if (node.nodeType === 1 && ['STYLE', 'SCRIPT', 'LINK'].includes(node.tagName)) return '';
    let out = node.shadowRoot ? text(node.shadowRoot) : '';
    for (const child of node.childNodes) out += text(child);
    return out;
  }
  const h = host(document); if (!h) return null;
  const root = h.shadowRoot, box = (el) => { const b = el.getBoundingClientRect(); return {x: b.x, y: b.y, width: b.width, height: b.height}; };
  const tabs = [...root.querySelectorAll('.bk-tab')];
  const panels = [...root.children].filter((c) => c.tagName === 'DIV' && !c.classList.contains('bk-header'));
  const shown = panels.map((p, i) => [i, p]).filter(([, p]) => p.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true}) && p.offsetHeight > 0);
  return {
    strip: box(root.querySelector('.bk-header')),
    tabs: tabs.map((t) => ({label: t.textContent.trim(), active: t.classList.contains('bk-active'), box: box(t)})),
    shown: shown.map(([i, p]) => ({index: i, height: p.offsetHeight, text: text(p).replace(/\\s+/g, ' ').trim().slice(0, 400)})),
  };
}"""


def within(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["width"] > 0
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


@pytest.fixture
def sized_page(browser):
    contexts = []

    def make(width: int, height: int):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_console(page)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.mark.parametrize("width, height", [(1440, 900), (1024, 768)])
def test_every_side_view_is_one_mouse_click_away_and_the_active_tab_is_in_sight(sized_page, app_server, width, height):
    page = sized_page(width, height)
    window = {"x": 0, "y": 0, "width": width, "height": height}
    page.goto(app_server + "?tab=export")
    wait_for_app(page)
    page.wait_for_function(f"({JS_SIDE_TABS})() && ({JS_SIDE_TABS})().shown.length === 1")
    state = page.evaluate(JS_SIDE_TABS)
    labels = [tab.label for tab in SIDE_TABS]
    assert [tab["label"] for tab in state["tabs"]] == labels
    export = state["tabs"][labels.index("Export")]
    assert export["active"] and within(export["box"], state["strip"]) and within(export["box"], window), (
        export,
        state["strip"],
    )

    texts: dict[str, str] = {}
    for index, entry in enumerate(SIDE_TABS):
        before = page.evaluate(JS_SIDE_TABS)
        box = before["tabs"][index]["box"]
        # in sight, where a mouse can reach it, without scrolling anything first
        assert within(box, before["strip"]) and within(box, window), (entry.label, box, before["strip"])
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_function(
            f"""() => {{ const s = ({JS_SIDE_TABS})();
                return s.tabs[{index}].active && s.shown.length === 1 && s.shown[0].index === {index}
                       && s.shown[0].height > 40 && s.shown[0].text.length > 0; }}"""
        )
        if entry.key != DEFAULT_TAB:
            page.wait_for_function(f"() => new URLSearchParams(location.search).get('tab') === {entry.key!r}")
        texts[entry.key] = page.evaluate(JS_SIDE_TABS)["shown"][0]["text"]
    # each tab shows its own view, not the previous one's
    assert len(set(texts.values())) == len(SIDE_TABS), texts
    assert page.console_errors == []


def test_one_fit_verdict_with_the_estimate_and_the_placed_figures(page, app_server):
    """``84:1=6, 84:0=2`` fits by the compiler's estimate but is proved not to place: the summary and
    the editor say "no", once, with both figures (from ``tilescope plan/place --json``)."""
    import json
    import subprocess
    import sys

    from browser_support import SAMPLE
    from playwright.sync_api import expect

    def cli(*args: str) -> dict:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "tilescope",
                *args,
                str(SAMPLE),
                "--edit",
                "84:1=6",
                "--edit",
                "84:0=2",
                "--json",
                "-q",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(run.stdout)

    plan, place = cli("plan"), cli("place", "--exact-seconds", "0")
    assert plan["fits_budget"] is True and place["regions"]["standard"]["verdict"] == "infeasible"
    standard = place["regions"]["standard"]
    page.goto(app_server + "?tab=editor&value=84&edits=84:1=6,84:0=2")
    wait_for_app(page)
    verdict = page.locator("[data-testid=ts-fits-budget]")
    expect(verdict).to_have_text("no (was yes)")
    figures = page.locator("[data-testid=ts-fit-figures]")
    budget = json.loads(SAMPLE.read_text())["budget_bytes"]
    expect(figures).to_contain_text(f"estimate {plan['effective_peak_bytes']:,} ≤ {budget:,} B")
    expect(figures).to_contain_text(f"placed standard {standard['placed']:,} > {standard['capacity']:,} B (infeasible)")
    for line in (
        f"estimate: effective peak {plan['effective_peak_bytes']:,} B",
        "placed: standard placed",
        "cannot place it and fails the build",
    ):  # the rule and full figures on hover
        assert line in (figures.get_attribute("title") or ""), line
    expect(page.locator("[data-testid=ts-placement-summary] summary")).not_to_contain_text("fit")  # no second verdict
    expect(page.locator("[data-testid=ts-editor-figures] caption")).to_contain_text("fits: no")
    body = page.locator("body").inner_text()
    assert "does NOT fit" not in body and "fits budget: yes" not in body
    assert page.console_errors == []


# The side column's scrollTop (found through the shadow roots), and the x range of figure `name`.
JS_SIDE_SCROLL = """() => {
  function find(root) {
    for (const e of root.querySelectorAll('*')) {
      if (e.classList.contains('ts-side-column')) return e;
      if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; }
    }
    return null;
  }
  const host = find(document);
  return host ? host.scrollTop : null;
}"""
JS_X_RANGE = """(name) => {
  for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name) {
    const r = m.x_range;
    return {start: r.start, end: r.end, bounds: r.bounds, active_scroll: m.toolbar.active_scroll ? m.toolbar.active_scroll.type : null};
  }
  return null;
}"""
# Turn on the figure's x wheel zoom, as a click on its toolbar button does.
JS_ACTIVATE_WHEEL = """(name) => {
  for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name) {
    const tool = m.toolbar.tools.find((t) => t.type === 'WheelZoomTool' && t.dimensions === 'width');
    tool.active = true; return true;
  }
  return false;
}"""


def test_side_panel_plots_leave_the_wheel_to_the_panel_and_stop_zooming_out_at_the_data(page, app_server, raw):
    n = len(raw["timeline"]["steps"])
    name = "ts-address-interleaved-plot"
    page.goto(app_server + "?tab=placement")
    wait_for_app(page)
    page.wait_for_function(f"() => {{ const r = ({JS_X_RANGE})({name!r}); return r && r.end > 1; }}")
    before = page.evaluate(JS_X_RANGE, name)
    # the range is bounded to the data: steps -0.5 … n-0.5; no wheel zoom until the user turns it on
    assert before["bounds"] == [-0.5, n - 0.5] and before["active_scroll"] is None, before
    box = page.evaluate(JS_FIGURE_BOX, name)
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, max(box["y"], 0) + 40)
    top = page.evaluate(JS_SIDE_SCROLL)
    page.mouse.wheel(0, 240)
    page.wait_for_function(f"() => ({JS_SIDE_SCROLL})() > {top}")  # the panel scrolled
    after = page.evaluate(JS_X_RANGE, name)
    assert (after["start"], after["end"]) == (before["start"], before["end"])  # the plot did not zoom

    # turned on, the wheel zooms, and zooming out stops at the data's extent
    assert page.evaluate(JS_ACTIVATE_WHEEL, name)
    box = page.evaluate(JS_FIGURE_BOX, name)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -200)  # in, twice
    page.mouse.wheel(0, -200)
    page.wait_for_function(f"() => ({JS_X_RANGE})({name!r}).end - ({JS_X_RANGE})({name!r}).start < {n / 2}")
    zoomed = page.evaluate(JS_X_RANGE, name)
    for _ in range(4):
        page.mouse.wheel(0, 600)  # out, far past the data
    width = zoomed["end"] - zoomed["start"]
    page.wait_for_function(f"() => {{ const r = ({JS_X_RANGE})({name!r}); return r.end - r.start > {width} + 1; }}")
    page.wait_for_timeout(300)  # the last wheel events land (Bokeh refuses a zoom step past the bounds)
    out = page.evaluate(JS_X_RANGE, name)
    assert out["start"] >= -0.5 and out["end"] <= n - 0.5, out  # never past the data (it was -5,000…5,000)
    assert page.console_errors == []


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two CSS colours given as #rrggbb or rgb()/rgba() (alpha ignored)."""

    def rgb(colour: str) -> tuple[float, ...]:
        colour = colour.strip().lower()
        if colour.startswith("#"):
            return tuple(int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        parts = colour[colour.index("(") + 1 : colour.index(")")].replace(",", " ").split()
        return tuple(float(p) / 255 for p in parts[:3])

    def luminance(colour: str) -> float:
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_helper_on_known_pairs():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0
    assert round(contrast("#767676", "#ffffff"), 2) == 4.54  # the WCAG "just passes" grey


def test_the_timeline_budget_and_reserve_labels_are_readable_in_dark_mode(page, app_server):
    page.goto(app_server)
    wait_for_app(page)
    page.locator("[aria-label*='theme' i]").first.click()
    js = """() => { const out = {};
      for (const m of Bokeh.documents[0]._all_models.values()) {
        if (m.name === 'ts-timeline') out.background = m.background_fill_color;
        if (m.type === 'Label' && m.text && m.text.startsWith('budget ')) out.budget = m.text_color;
        if (m.type === 'Label' && m.text && m.text.startsWith('support reserve')) out.support = m.text_color;
      } return out; }"""
    page.wait_for_function(f"() => {{ const c = ({js})(); return c.budget && c.budget.toLowerCase() !== '#c62828'; }}")
    colours = page.evaluate(js)
    assert colours["background"] and colours["budget"] and colours["support"], colours
    for key in ("budget", "support"):
        assert contrast(colours[key], colours["background"]) >= 4.5, (key, colours)
    assert page.console_errors == []


def test_the_compare_overlays_y_axis_follows_the_steps_in_view(page, served):  # noqa: F811 - the fixture imported above
    """Zoomed into the low tail of the sample, each overlay's top drops to the highest point in view
    (1.12 × the largest A or B there, computed here from the points the browser holds)."""
    from test_compare_browser import open_compare

    server = served[0]
    y_of = """(name) => { for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name) return m.y_range.end; return null; }"""
    points = """(name) => { for (const m of Bokeh.documents[0]._all_models.values()) if (m.name === name)
                  return {x: Array.from(m.data.x), hi: Array.from(m.data.hi)}; return null; }"""
    open_compare(page, server.url + "?file=vit.json&compare=vit_edited.json")
    page.wait_for_function(f"() => ({y_of})('ts-compare-standard') > 1")
    full = page.evaluate(y_of, "ts-compare-standard")
    page.evaluate("""() => { for (const m of Bokeh.documents[0]._all_models.values())
                     if (m.name === 'ts-compare-standard') { m.x_range.setv({start: 70, end: 110}); return; } }""")
    page.wait_for_function(f"() => ({y_of})('ts-compare-standard') < {full}")
    page.wait_for_timeout(500)  # the server's refined points for the window arrive (the top follows them too)
    data = page.evaluate(points, "ts-compare-points-standard")
    top = max(h for x, h in zip(data["x"], data["hi"]) if 70 <= x <= 110)
    assert page.evaluate(y_of, "ts-compare-standard") == pytest.approx(top * 1.12)
    assert page.console_errors == []
