"""The value picker: an autocomplete whose completions are searched on the server."""

from __future__ import annotations

import panel as pn
from bokeh.models import CustomJS

from tilescope.app.assets import static_text
from tilescope.derived.value_search import LabelSearch

PICKER_MATCHES = 100  # completions sent per keystroke

# Bokeh's autocomplete re-filters its menu only on a key press; the matches arrive from the server
# just after one, so the menu is re-drawn when they land (while the input still has the focus).
# A Bokeh callback on the model's completions, not Panel's ``jscallback``: a Panel link puts the
# whole page in Panel's link registry, and while the registry holds any, every layout change (a tab
# first shown, the page built) walks every model of the page twice looking for links (issue #26).
_REFRESH_MENU_JS = static_text("value_picker_refresh.js")


class ValuePicker(pn.widgets.AutocompleteInput):
    """The value picker: an autocomplete whose completions are searched on the server.

    The browser holds only the matches of what is typed (``PICKER_MATCHES`` at most, found by
    ``LabelSearch`` on each ``value_input``), never every value's label: ~10⁵–10⁶ labels would be
    tens of MB sent with the page and a slow keystroke in it.
    """

    def __init__(self, **params):
        super().__init__(**params)
        self._search = LabelSearch([])
        self.param.watch(self._on_typed, "value_input")

    def _get_model(self, doc, root=None, parent=None, comm=None):
        model = super()._get_model(doc, root, parent, comm)
        model.js_on_change("completions", CustomJS(code=_REFRESH_MENU_JS))
        return model

    def set_search(self, search: LabelSearch) -> None:
        """Search these labels from now on (the open profile's: ``OpenedProfile.value_search``)."""
        if search is not self._search:
            self._search = search
            self.param.update(options=[], value="")

    def show(self, label: str) -> None:
        """Show ``label`` as the picked value (it is its own only completion until the user types)."""
        if self.value != label:
            self.param.update(options=[label], value=label)

    def _on_typed(self, event) -> None:
        matches = self._search.matches(event.new or "", PICKER_MATCHES)
        if self.value and self.value not in matches:
            # Panel clears a value that is not among the options, and the browser's input with it.
            matches.append(self.value)
        self.options = matches
