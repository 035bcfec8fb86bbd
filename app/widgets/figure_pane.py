"""A Bokeh pane for a figure that moves between layouts and keeps its Python event handlers.

Panel's ``Reactive._cleanup`` (Panel 1.9), run on every pane of a layout that leaves the page,
empties ``_callbacks`` and ``_event_callbacks`` of the model the pane rendered — for a
``pn.pane.Bokeh`` that model is the figure itself. The timeline is drawn first in the staged
open's overview layout (``app.views.profile_page.ProfilePage.overview_layout``) and then in the
page's main column; replacing the overview layout cleaned the pane up and deleted the figure's
``on_event(Tap)`` and ``RangesUpdate`` handlers: the first session after a server restart (the
profile in the cache, not yet in memory, so opened staged) ignored every click on the timeline
while the keys (another component) still moved the step (issue #27 item 10).

``FigurePane`` lets the cleanup forget the layout but keeps the figure's own handlers: they belong
to the view that owns the figure for the whole session, not to one layout showing it.
"""

from __future__ import annotations

import panel as pn

__all__ = ["FigurePane"]


class FigurePane(pn.pane.Bokeh):
    def _cleanup(self, root=None) -> None:
        figure = self.object
        kept = (dict(figure._callbacks), dict(figure._event_callbacks)) if figure is not None else None
        super()._cleanup(root)
        if kept is not None:
            figure._callbacks, figure._event_callbacks = kept
