"""Nothing cut in the side panel, in a real Chromium at 1440×900 and 1024×768: every side view
(the compare view comparing the sample with an edited copy) is walked element by element through
the shadow roots, and no visible element may hold content wider than its box
(``scrollWidth > clientWidth + 1``).

Named exceptions, overflow by design (``JS_CUT_ELEMENTS``' ON_PURPOSE / SKIP_INSIDE):
- the Tabulator tables that scroll sideways on purpose: the body (``.tabulator-tableholder``) and
  header (``.tabulator-header-contents``, ``.tabulator-headers``) of the Values table, the At this
  step values, the Tiles tab's rows, the storage groups and the compare's changed values — their
  cells and column titles are still checked (an ellipsis "share of s…" or a squeezed name fails);
- ``.tabulator-col-title-holder``: the sort arrow sits in the title's right padding; Tabulator's
  empty spacer column after the last one;
- slider handles hanging half a handle past the ends of their track (``.noUi-origin``, the
  editor's ``.ts-track``); nothing above them clips, which the walk checks on their ancestors;
- a Bokeh figure's drawing layers inside ``.bk-Canvas`` (clipped to the plot frame by Bokeh); a
  figure wider than its container still fails on the container.
"""

from __future__ import annotations

import pytest
from browser_support import wait_for_app, watch_console
from test_compare_browser import served  # noqa: F401 - the data root with the sample and an edited copy
from test_page_browser import JS_FIGURE_BOX

from tilescope.app.side_tabs import SIDE_TABS

pytestmark = pytest.mark.browser

# Every visible element in the side panel whose content is wider than its box, described.
JS_CUT_ELEMENTS = r"""() => {
  // Elements whose overflow is by design, each named (the test's docstring says why):
  const ON_PURPOSE = [
    '.tabulator-tableholder', '.tabulator-header-contents', '.tabulator-headers',  // tables that scroll sideways
    '.tabulator-col-title-holder',  // the sort arrow sits in the title's padding
    '.noUi-origin', '.ts-track',  // slider handles overhang the ends of their track by half a handle
    '.MuiSlider-thumb',  // a Material slider's thumb: its value label floats above it, nothing clips it
  ];
  const SKIP_INSIDE = ['.bk-Canvas'];  // a Bokeh figure's drawing layers, clipped to the plot frame by Bokeh
  function find(root) {
    for (const e of root.querySelectorAll('*')) {
      if (e.classList.contains('ts-side-column')) return e;
      if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; }
    }
    return null;
  }
  const column = find(document);
  if (!column) return null;
  const out = [];
  const describe = (el) => {
    let t = (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    let host = el.getRootNode().host;
    let ctx = host ? [...host.classList].filter((c) => c.startsWith('ts-')).join('.') : '';
    return `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}${el.dataset && el.dataset.testid ? '[' + el.dataset.testid + ']' : ''} in(${ctx}) "${t}"`;
  };
  function walk(el) {
    if (el.nodeType !== 1) return;
    if (['STYLE', 'SCRIPT', 'LINK'].includes(el.tagName)) return;
    if (SKIP_INSIDE.some((s) => el.matches(s))) return;
    // Tabulator's empty spacer column (no title) after the last column
    if (el.matches('.tabulator-col') && !el.textContent.trim()) return;
    const cw = el.clientWidth, sw = el.scrollWidth;
    if (cw > 0 && sw > cw + 1 && !ON_PURPOSE.some((s) => el.matches(s)) && el.checkVisibility({visibilityProperty: true}))
      out.push({el: describe(el), sw, cw});
    if (el.shadowRoot) for (const c of el.shadowRoot.children) walk(c);
    for (const c of el.children) walk(c);
  }
  walk(column);
  return out;
}"""

# What shows that each view has drawn its content (a table's rows, a chart's figures), so the walk
# does not run on a view still empty.
DRAWN = {
    "step": [".ts-step-values .tabulator-row"],
    "lifetimes": [],  # its figure drawn with a width (JS_FIGURE_BOX below)
    "editor": [".ts-handle", "[data-testid=ts-editor-figures]"],
    "values": [".ts-values-table .tabulator-row"],
    "groups": [".ts-groups-table .tabulator-row", "[data-testid=ts-group-detail]"],
    "placement": ["[data-testid=ts-address-head]", "[data-testid=ts-tile-holdings]"],
    "tiles": [".ts-tile-rows .tabulator-row", "[data-testid=ts-tile-usage-head]"],
    "compare": [
        "[data-testid=ts-compare-summary]",
        "[data-testid=ts-compare-waterfall]",
        ".ts-compare-values-table .tabulator-row",
    ],
    "export": ["[data-testid=ts-export-note]"],
}


def test_every_side_view_has_a_drawn_condition():
    assert set(DRAWN) == {tab.key for tab in SIDE_TABS}


@pytest.mark.parametrize("width, height", [(1440, 900), (1024, 768)])
def test_no_side_view_cuts_its_content(browser, served, width, height):  # noqa: F811 - the fixture imported above
    server = served[0]
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        watch_console(page)
        cut: dict[str, list] = {}
        for tab in SIDE_TABS:
            page.goto(server.url + f"?file=vit.json&compare=vit_edited.json&value=84&tab={tab.key}")
            wait_for_app(page)
            for selector in DRAWN[tab.key]:
                page.locator(f"{selector} >> visible=true").first.wait_for(state="visible")
            if tab.key == "lifetimes":
                page.wait_for_function(
                    f"() => {{ const b = ({JS_FIGURE_BOX})('ts-lifetimes'); return b && b.width > 100; }}"
                )
            # two animation frames: the tables and figures just drawn have laid out
            page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
            found = page.evaluate(JS_CUT_ELEMENTS)
            assert found is not None, "no side panel found"
            if found:
                cut[tab.key] = found
        assert cut == {}, cut
        assert page.console_errors == []
    finally:
        context.close()
