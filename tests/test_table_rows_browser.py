"""Rows sent to a table while BokehJS is still building it are shown (app/widgets/tables.py ``Table``).

CI failed twice on the Tiles tab's table staying empty: the tab's view was built and filled at once
and, on a loaded machine, the rows arrived while Tabulator was building the table, when Panel's
browser side drops them (``setData`` returns while ``_building``). Here the build is held open
deterministically (the view's ``_building`` flag set by hand, as Panel's ``render``/``tableInit``
set it), the server sends three rows, then the build ends. Panel's own Tabulator beside it is the
control: it must lose them, or the test would not be testing the case (if Panel fixes it, the
control fails and ``Table``'s workaround can go).
"""

from __future__ import annotations

import pytest
from browser_support import AppServer

pytestmark = pytest.mark.browser

# The table's view (found by its CSS class) given to ``body``, a JavaScript expression of ``v`` and ``m``.
FIND = """(cls) => {{ for (const d of Bokeh.documents) for (const m of d._all_models.values())
  if (m.css_classes && m.css_classes.includes(cls)) {{ const v = Bokeh.index.find_one_by_id(m.id); return {body}; }}
  return null; }}"""
HOLD = FIND.format(body="(v._building = true)")  # as Panel's render()/tableInit() set it while building
SENT = FIND.format(body="m.source.get_length() === 3")
RELEASE = FIND.format(body="(v._building = false, v.tabulator.redraw(true), true)")


@pytest.fixture(scope="module")
def server():
    served = AppServer(app="tests/table_rows_app.py")
    try:
        yield served
    finally:
        served.stop()


def test_rows_sent_while_a_table_is_built_are_shown(server, page):
    from playwright.sync_api import expect

    page.goto(server.url)
    for cls in ("ts-table", "plain-table"):
        page.wait_for_selector(f".{cls} .tabulator-tableholder")
        page.wait_for_function(HOLD, arg=cls)
    page.locator(".fill button").click()
    for cls in ("ts-table", "plain-table"):  # both sources hold the rows: sent while "building"
        page.wait_for_function(SENT, arg=cls)
        page.evaluate(RELEASE, cls)
    cells = ".ts-table .tabulator-row [tabulator-field=total]"
    expect(page.locator(cells)).to_have_text(["18,432", "16,384", "400"])
    # The control, after Table's rows are shown (its fix has run by then): Panel's own table lost them.
    assert page.locator(".plain-table .tabulator-row").count() == 0
    assert page.console_errors == []
