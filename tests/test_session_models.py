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
    app.adopt(open_file(SAMPLE), "sample")
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
