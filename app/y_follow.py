"""A side-panel chart's y axis follows the steps in view, in the browser (app/static/y_follow.js):
zoomed or panned to a window of steps, each y range fits what is drawn there, without a round trip.
Used by the compare overlays, the lifetimes and the address charts."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, CustomJS, Range1d

from tilescope.app.assets import static_text

Y_FOLLOW_JS = static_text("y_follow.js")


def follow_y(
    x_range: Range1d,
    y_ranges: list[Range1d],
    sources: list[list[ColumnDataSource]],
    *,
    x0: str,
    x1: str,
    top: str,
    bottom: str = "",
    pad: float,
    flipped: bool = False,
    on_data: bool = True,
) -> CustomJS:
    """Make each of ``y_ranges`` fit the items of its ``sources`` overlapping ``x_range`` whenever the
    x range or those sources change. Fields: ``x0``/``x1`` an item's first and last x, ``top`` and
    ``bottom`` its extent (no ``bottom``: the y range keeps its start and its end is the highest top
    × (1 + ``pad``)); otherwise ``pad`` y units either side, ``flipped`` for lanes drawn top to
    bottom. Over the whole x extent, a y range with ``reset_start``/``reset_end`` returns to them."""
    follow = CustomJS(
        args={
            "range": x_range,
            "y_ranges": y_ranges,
            "sources": sources,
            "x0": x0,
            "x1": x1,
            "top": top,
            "bottom": bottom,
            "pad": pad,
            "flipped": flipped,
        },
        code=Y_FOLLOW_JS,
    )
    x_range.js_on_change("start", follow)
    x_range.js_on_change("end", follow)
    if on_data:
        for group in sources:
            for source in group:
                source.js_on_change("data", follow)
    return follow
