"""Issue #26: a session builds what its first screen shows, and each side tab's view the first time
that tab is shown, complete then.

The sample's first page is built on a Bokeh document as a served session builds it (``build_app``,
the document themed as ``app/main.py`` themes it, the profile adopted). Expected figures come from
the sample's JSON read with the stdlib (the ``raw`` fixture), not from the app's own tables.
"""

from __future__ import annotations

from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from panel.models.tabulator import DataTabulator

from tilescope.app.chart_theme import CHART_THEMES, theme_charts
from tilescope.app.side_tabs import DEFAULT_TAB, SIDE_TABS, TAB_KEYS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"


def _first_page():
    from tilescope.app.explorer import build_app
    from tilescope.derived.opening import open_file

    app = build_app([str(SAMPLE)])
    doc = Document()
    doc.add_root(app.__panel__().get_root(doc))
    theme_charts(doc, False)  # (as app/main.py does once the page is built)
    app.router.adopt(open_file(SAMPLE), "sample")
    return doc, app


def _tables(doc: Document) -> dict[str, DataTabulator]:
    """The document's Tabulator models, by their view's css class."""
    found = {}
    for model in doc.models:
        if isinstance(model, DataTabulator):
            (name,) = [c for c in model.css_classes if c.startswith("ts-")]
            found[name] = model
    return found


def _rows(model: DataTabulator) -> dict[int, int]:
    """What a table model holds for the browser: id → bytes per row."""
    data = model.source.data
    return dict(zip((int(i) for i in data["id"]), (int(b) for b in data["bytes"])))


def _bytes(raw: dict) -> dict[int, int]:
    return {v["id"]: v["bytes"] for v in raw["timeline"]["values"]}


def test_the_first_screen_builds_the_step_tab_alone(raw):
    doc, app = _first_page()
    tabs = app.profile_page.tabs
    assert tabs.key == DEFAULT_TAB and set(tabs.views) == {DEFAULT_TAB}
    for index, entry in enumerate(SIDE_TABS):  # every other tab holds a spacer, not its view
        if entry.key != DEFAULT_TAB:
            assert isinstance(tabs.tabs[index], pn.Spacer), entry.key
    assert "ts-at-step" in tabs.tabs[TAB_KEYS.index(DEFAULT_TAB)].css_classes  # the view's own layout, in no other
    # no model of a hidden tab is in the document: the only table is the step tab's, and the only
    # charts are the timeline and the step bar
    assert set(_tables(doc)) == {"ts-step-values"}
    names = {m.name for m in doc.models if isinstance(m, ColumnDataSource) and m.name}
    assert names == {n for n in names if n.startswith(("ts-timeline", "ts-step-split"))}
    # what the step tab shows is complete: the values live at the total peak's step, their bytes
    step = raw["total_peak_step"]
    assert app.state.selected_step == step
    live = raw["timeline"]["steps"][step]["live"]
    expected = {i: _bytes(raw)[i] for i in live}
    table = _tables(doc)["ts-step-values"]
    frame = tabs.views[DEFAULT_TAB].table.value
    assert dict(zip(frame["id"].tolist(), frame["bytes"].tolist())) == expected
    assert _rows(table) == expected  # (local pagination: every live value's row is sent)


@pytest.mark.parametrize("key", [k for k in TAB_KEYS if k != DEFAULT_TAB])
def test_a_tab_is_built_when_first_shown_and_joins_the_document(key):
    doc, app = _first_page()
    tabs = app.profile_page.tabs
    before = len(doc.models)
    tabs.show(key)
    view = tabs.views[key]
    assert set(tabs.views) == {DEFAULT_TAB, key}
    assert not isinstance(tabs.tabs[TAB_KEYS.index(key)], pn.Spacer)  # the view's layout in its spacer's place
    assert len(doc.models) > before  # its models joined the session's document (sent to the browser)
    tabs.show(DEFAULT_TAB)
    tabs.show(key)
    assert tabs.views[key] is view  # built once


def test_the_values_tab_shown_holds_every_value_of_the_file(raw):
    doc, app = _first_page()
    assert "ts-values-table" not in _tables(doc)
    app.profile_page.tabs.show("values")
    view = app.profile_page.tabs.views["values"]
    frame = view.table.value
    assert dict(zip(frame["id"].tolist(), frame["bytes"].tolist())) == _bytes(raw)
    model = _tables(doc)["ts-values-table"]  # in the document: what the browser draws
    rows = _rows(model)
    assert len(rows) == min(view.table.page_size, len(raw["timeline"]["values"]))
    assert rows.items() <= _bytes(raw).items()


def test_the_charts_are_themed_as_the_page_script_themes_them():
    """The first screen's axes, grids, legends and figures carry the values panel_material_ui's
    script sets in the browser (``app.chart_theme``), so it has nothing to send back; a chart
    built later (a tab's) takes them as it joins, and the dark mode's when the page turns dark."""
    from bokeh.models import Axis, Grid, Legend, Plot

    doc, app = _first_page()
    plots = [m for m in doc.models if isinstance(m, Plot)]
    assert {p.name for p in plots} == {"ts-timeline", "ts-step-bar"}
    axes = [m for m in doc.models if isinstance(m, Axis)]
    assert axes and all(a.axis_line_color == "rgba(0, 0, 0, 0.22)" and a.axis_label_standoff == 12 for a in axes)
    assert all(g.grid_line_color == "rgba(0, 0, 0, 0.1)" for g in doc.models if isinstance(g, Grid))
    assert all(p.background_fill_color == "#fff" and p.outline_line_alpha == 0 for p in plots)
    legends = [m for m in doc.models if isinstance(m, Legend)]
    assert legends and all(leg.label_text_font.startswith('"Roboto"') for leg in legends)
    app.profile_page.tabs.show("lifetimes")
    lifetimes = [m for m in doc.models if isinstance(m, Plot) and m not in plots]
    assert lifetimes and all(p.background_fill_color == "#fff" for p in lifetimes)
    theme_charts(doc, True)
    assert doc.theme is CHART_THEMES[True]
    assert all(a.axis_line_color == "rgba(255, 255, 255, 0.28)" for a in doc.models if isinstance(a, Axis))
    assert all(p.background_fill_color == "#121212" for p in doc.models if isinstance(p, Plot))
