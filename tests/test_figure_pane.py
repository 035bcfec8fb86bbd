"""The cause of issue #27 item 10, without a browser: Panel's cleanup of a layout that leaves the
page empties the Python event handlers of a Bokeh pane's figure (the timeline's Tap), although the
figure is still shown by another layout; ``app.widgets.figure_pane.FigurePane`` keeps them."""

from __future__ import annotations

import panel as pn
from bokeh.document import Document
from bokeh.events import Tap
from bokeh.plotting import figure

from tilescope.app.widgets.figure_pane import FigurePane


def moved_between_layouts(pane_class) -> dict:
    """A figure shown in one layout, then in a second one while the first leaves the page (as the
    staged open's overview layout gives way to the page): the figure's handlers afterwards."""
    fig = figure()
    fig.on_event(Tap, lambda event: None)
    pane = pane_class(fig)
    body = pn.Column(pn.Column(pane))
    body.get_root(Document())
    body.objects = [pn.Row(pn.Column(pane))]  # the overview's column replaced by the page
    return dict(fig._event_callbacks)


def test_panel_cleanup_drops_a_moved_figures_tap_handler():
    assert moved_between_layouts(pn.pane.Bokeh).get("tap", []) == []  # the cause: Panel's own pane


def test_a_figure_pane_keeps_its_handlers_when_moved():
    assert len(moved_between_layouts(FigurePane).get("tap", [])) == 1
