"""What one session's first screen costs in Bokeh models (issue #26: every model is built,
serialised and sent per session). The first page of the sample is built on a Bokeh document as
the server builds it; each chart's glyphs exist once, without the nonselection and muted copies
``bokeh.plotting`` would add (``app.glyphs``), and keep what the views set on them."""

from __future__ import annotations

from pathlib import Path

from bokeh.document import Document
from bokeh.models import Glyph, GlyphRenderer

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "vit_finalist5.memory_profile.json"


def _first_page() -> tuple[Document, object]:
    from tilescope.app.explorer import build_app
    from tilescope.derived.opening import open_file

    app = build_app([str(SAMPLE)])
    app.router.adopt(open_file(SAMPLE), "sample")
    doc = Document()
    doc.add_root(app.__panel__().get_root(doc))
    return doc, app


def test_each_glyph_of_the_first_screen_exists_once():
    doc, app = _first_page()
    renderers = [m for m in doc.models if isinstance(m, GlyphRenderer)]
    glyphs = [m for m in doc.models if isinstance(m, Glyph)]
    assert renderers and len(glyphs) == len(renderers)
    assert all(r.nonselection_glyph == "auto" and r.muted_glyph == "auto" for r in renderers)
    timeline = app.profile_page.timeline
    names = {r.name for r in timeline.figure.renderers}
    assert "loops" in names and timeline.ghost.visible is False and timeline.hover_line.glyph.line_alpha == 0
    # the glyphs draw the session's data: the usage source holds the sample's steps
    assert timeline.stacked[0].data_source is timeline.usage_source and len(timeline.usage_source.data["step"]) > 0


def test_the_separate_lines_are_drawn_when_that_mode_is_first_chosen():
    doc, app = _first_page()
    timeline = app.profile_page.timeline
    first = len(doc.models)

    def labels() -> list[str]:
        return [item.label.value for item in timeline.legend.items if item.visible]

    assert timeline.separate == [] and "total" not in labels()
    timeline.layout_mode = "separate"
    lines = timeline.separate
    assert [r.glyph.y for r in lines] == ["std_line", "intl", "total", "eff"]  # (the usage source's columns)
    assert all(r.visible and r.data_source is timeline.usage_source for r in lines)
    assert not any(r.visible for r in timeline.stacked)
    order = timeline.figure.renderers
    assert order.index(lines[-1]) < order.index(timeline.peak_marks)  # under the peak marks, as before
    assert labels()[:4] == ["standard", "interleaved", "total", "std + intl + support reserve (fits)"]
    assert len(doc.models) > first  # the new models joined the session's document (sent to the browser)
    timeline.layout_mode = "stacked"
    timeline.layout_mode = "separate"
    assert timeline.separate == lines  # drawn once


def test_renderers_of_one_source_share_their_view_and_every_view_one_filter():
    doc, app = _first_page()
    timeline = app.profile_page.timeline
    drawn = [r for r in timeline.figure.renderers if isinstance(r, GlyphRenderer)]
    usage = [r for r in drawn if r.data_source is timeline.usage_source]
    assert len(usage) >= 5 and len({id(r.view) for r in usage}) == 1
    sources = {id(r.data_source) for r in drawn}
    assert len({id(r.view) for r in drawn}) == len(sources)  # one view per source
    assert len({id(r.view.filter) for r in drawn}) == 1  # one AllIndices
    assert type(drawn[0].view.filter).__name__ == "AllIndices"
    timeline.layout_mode = "separate"  # lines drawn later join the same view
    assert all(r.view is usage[0].view for r in timeline.separate)


def test_the_first_page_registers_no_panel_link():
    """A Panel link (``jscallback``, ``jslink``) makes every later layout change of the session walk
    the whole page's models looking for links; the value picker refreshes its menu with a Bokeh
    callback on its completions instead."""
    from bokeh.models import AutocompleteInput, CustomJS
    from panel.links import Callback

    before = dict(Callback.registry)
    doc, app = _first_page()
    assert dict(Callback.registry) == before
    pickers = [m for m in doc.models if isinstance(m, AutocompleteInput)]
    assert pickers
    for picker in pickers:
        callbacks = picker.js_property_callbacks.get("change:completions", [])
        assert len(callbacks) == 1 and isinstance(callbacks[0], CustomJS) and "_toggle_menu" in callbacks[0].code


def test_the_page_lists_the_same_resources_when_they_are_remembered():
    """``app.resources`` remembers Panel's per-page list of component stylesheets and scripts; the
    page's lists equal Panel's own computation, and a component class made afterwards is listed."""
    import panel as pn
    from bokeh.resources import Resources as BokehResources
    from panel.io import resources as panel_resources
    from panel.io.resources import bundle_resources

    from tilescope.app import resources

    doc, _ = _first_page()
    resources._remember_component_resources()
    remembered = panel_resources.Resources.extra_resources
    server = BokehResources(mode="server", root_url="/")

    def lists():
        bundle = bundle_resources(doc.roots, server)
        return bundle.css_files, bundle.js_files, bundle.js_modules, bundle.css_raw

    first = lists()
    again = lists()
    assert again == first
    try:
        panel_resources.Resources.extra_resources = remembered.__wrapped__  # Panel's own
        assert lists() == first
    finally:
        panel_resources.Resources.extra_resources = remembered

    class Extra(pn.custom.JSComponent):  # a component class made after the lists were remembered
        __css__ = ["https://example.invalid/extra-component.css"]  # noqa: RUF012 (Panel reads the class attribute)
        _esm = "export function render() {}"

    assert "https://example.invalid/extra-component.css" in [str(url) for url in lists()[0]]


def test_the_placement_and_tiles_tabs_draw_each_glyph_once():
    """The Placement, Tiles and Lifetimes tabs' charts (built when their tab is first shown) draw
    their glyphs through ``app.glyphs`` too: no faded or muted copies, one view per source."""
    doc, app = _first_page()
    tabs = app.profile_page.tabs
    for key in ("placement", "tiles", "lifetimes"):
        tabs.show(key)
    renderers = [m for m in doc.models if isinstance(m, GlyphRenderer)]
    glyphs = [m for m in doc.models if isinstance(m, Glyph)]
    assert len(renderers) >= 11 + 8  # the first page's, and the tabs' (addresses 4, tile maps 4, tiles 4, lifetimes 2)
    assert len(glyphs) == len(renderers)
    assert all(r.nonselection_glyph == "auto" and r.muted_glyph == "auto" for r in renderers)
    # the address chart still draws its data: the sample's interleaved allocations
    placement = tabs.views["placement"]
    assert any(len(source.data["left"]) for source in placement.addresses.sources.values())
