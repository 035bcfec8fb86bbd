"""Glyph renderers without the copies of their glyph that nothing shows.

``bokeh.plotting``'s ``figure.line(...)`` (``quad``, ``varea``…) makes three glyph models per
renderer: the glyph, a nonselection copy (drawn faded while some rows are selected) and a muted
copy (drawn when a legend click mutes it). A chart with no selection tool, whose legend mutes
nothing, never shows either copy, yet each is one more Bokeh model that every session builds,
serialises and sends (issue #26: the timeline's 14 renderers made 28 of its 151 models).
``draw`` adds the glyph alone; the renderer's ``nonselection_glyph`` and ``muted_glyph`` stay
"auto", so BokehJS would derive them itself were a selection ever made.

Each renderer also gets a ``CDSView`` (which rows to draw) with its own ``AllIndices`` filter: two
more models per renderer. The renderers of one figure that draw the same source share one view
(BokehJS computes the same rows from the same source for each), and all views of a figure share one
filter (``AllIndices`` holds nothing): the timeline's ten renderers had twenty such models, now eight.
"""

from __future__ import annotations

from bokeh.models import CDSView, GlyphRenderer, Line, Quad, Rect, Scatter, Segment, VArea
from bokeh.plotting import figure

GLYPHS = {"quad": Quad, "segment": Segment, "varea": VArea, "line": Line, "scatter": Scatter, "rect": Rect}
RENDERER_KEYS = ("name", "visible")  # what ``figure.<glyph>`` gives the renderer, not the glyph


def draw(fig: figure, kind: str, **spec) -> GlyphRenderer:
    """``fig.<kind>(**spec)`` (``spec`` holds ``source``), the glyph without its two copies."""
    renderer = {key: spec.pop(key) for key in RENDERER_KEYS if key in spec}
    source = spec.pop("source")
    return fig.add_glyph(source, GLYPHS[kind](**spec), view=_view_for(fig, source), **renderer)


def _view_for(fig: figure, source) -> CDSView:
    """The view of the figure's renderers of ``source``, or a new one sharing their filter."""
    drawn = [r for r in fig.renderers if isinstance(r, GlyphRenderer)]
    for r in drawn:
        if r.data_source is source:
            return r.view
    return CDSView(filter=drawn[0].view.filter) if drawn else CDSView()


def band(fig: figure, source, fill_color: str, fill_alpha: float, **renderer) -> GlyphRenderer:
    """Spans of steps shaded the plot's full height: one quad per row of ``source``, from its ``left``
    to its ``right``, from 0 to far above any y range the views set (the y axis follows the data, not
    the bands). ``renderer``: its ``name`` or ``visible``."""
    return draw(
        fig,
        "quad",
        left="left",
        right="right",
        bottom=0,
        top=1e15,
        source=source,
        fill_color=fill_color,
        fill_alpha=fill_alpha,
        line_alpha=0,
        **renderer,
    )
