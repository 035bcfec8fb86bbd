"""A Bokeh pane for a figure that moves between layouts, keeps its Python event handlers, and is
put on a session's page without two walks of the whole figure.

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

Rendered into a server session's document (issue #26, the CPU a session costs), it also skips what
``pn.pane.Bokeh._get_model`` does by walking every model of the figure (``references()``, ~100
models for the timeline), twice per figure and per session, that a served page does not need:

- applying the design's Bokeh theme to each model: Bokeh applies the document's theme to every
  model as it joins the document (``Model._attach_document``), replacing what Panel applied (so in
  a served page, whose document Panel leaves with Bokeh's empty theme, Panel's theming of a figure
  new to the document was undone at once); ``app/main.py`` gives the document
  ``app.chart_theme``'s theme, which includes the design's;
- rewriting the figure's id into the root's in every ``CustomJS`` (for HoloViews' callbacks, which
  name the plot they were made for): no ``CustomJS`` here names a figure's id.

Anywhere else (a notebook's comm, a document with another theme) it is Panel's own pane.
"""

from __future__ import annotations

import panel as pn
from panel.io import remove_root

from tilescope.app.chart_theme import is_chart_theme

__all__ = ["FigurePane"]


class FigurePane(pn.pane.Bokeh):
    def _get_model(self, doc, root=None, parent=None, comm=None):
        served = (
            root is not None
            and comm is None
            and self.object is not None
            and self.theme is None
            and doc is not None
            and is_chart_theme(doc.theme)
        )
        if not served:
            return super()._get_model(doc, root, parent, comm)
        model = self.object
        if model._document and doc is not model._document:
            remove_root(model, doc)
        self._models[root.ref["id"]] = (model, parent)
        return model  # (the document's theme, which includes the design's, is applied as the figure joins it)

    def _cleanup(self, root=None) -> None:
        figure = self.object
        kept = (dict(figure._callbacks), dict(figure._event_callbacks)) if figure is not None else None
        super()._cleanup(root)
        if kept is not None:
            figure._callbacks, figure._event_callbacks = kept
