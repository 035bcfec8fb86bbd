"""The figure over the step axis that the timelines share: the profile's timeline
(``app.views.timeline_figure``), a tile's (``app.views.tiles``) and the compare view's three
(``app.views.compare_timeline``). Pan and wheel zoom move along the steps only (each view re-samples
the visible window and fits its y axis itself), whole-number ticks, the legend in a row under the plot.
"""

from __future__ import annotations

from bokeh.models import Legend, LegendItem, NumeralTickFormatter, Range1d
from bokeh.plotting import figure

STEP_TOOLS = "xpan,xwheel_zoom,box_zoom,reset,save"
# A single timeline's: the wheel zooms at once, the toolbar above, room at the left for the y axis's
# figures (bytes with thousands separators) so the plot does not shift as they grow.
SINGLE_TIMELINE = {"active_scroll": "xwheel_zoom", "toolbar_location": "above", "min_border_left": 70}


def step_figure(
    name: str,
    height: int,
    y_label: str | None = None,
    *,
    x_label: str | None = "step",
    x_range: Range1d | None = None,
    x_format: str = "0,0",
    **options,
) -> figure:
    """A figure ``name`` as wide as its pane, steps along x (``x_range``, else its own from -0.5 to 0.5
    until the view fits it), bytes along y from 0; ``options`` go to ``figure`` over ``SINGLE_TIMELINE``."""
    fig = figure(
        name=name,
        height=height,
        sizing_mode="stretch_width",
        tools=STEP_TOOLS,
        x_axis_label=x_label,
        y_axis_label=y_label,
        x_range=Range1d(-0.5, 0.5) if x_range is None else x_range,
        y_range=Range1d(0, 1),
        **{**SINGLE_TIMELINE, **options},
    )
    fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
    fig.xaxis.formatter = NumeralTickFormatter(format=x_format)
    return fig


def legend_below(fig: figure, items: list[LegendItem], **options) -> Legend:
    """``items`` in a horizontal legend centred under the plot; ``options`` go to ``Legend``."""
    legend = Legend(items=items, orientation="horizontal", label_text_font_size="11px", location="center", **options)
    fig.add_layout(legend, "below")
    return legend
