"""Selection, one rule for every view: a click replaces the selection, a Ctrl/Shift-click adds
(or removes) a value. Tables get it from Tabulator's ``selectable=True`` (click selects the row,
Ctrl/Shift-click extends) kept in step with the session by ``SelectionLink``; charts call
``SessionState.click_value(id, add=adds(event))``."""

from __future__ import annotations

import numpy as np
import panel as pn

from tilescope.app.one_message import one_message
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state


def adds(event) -> bool:
    """Whether a Bokeh tap event was a Ctrl- or Shift-click (it adds to the selection)."""
    modifiers = getattr(event, "modifiers", None) or {}
    return bool(modifiers.get("ctrl") or modifiers.get("shift"))


TABLE_SELECTION = {"selectable": True}  # Tabulator: a click selects one row, Ctrl/Shift-click more


class SelectionLink:
    """Keeps a Tabulator's selected rows and ``state.selected_values`` in step, both ways."""

    def __init__(self, state: SessionState, table: pn.widgets.Tabulator, watch=None):
        """``watch(fn, names, name=)``: how the link watches the state (default ``view_guard.watch_state``;
        a view in a side tab passes its ``ShownGate.watch``, so a hidden table is not re-selected)."""
        self.state, self.table = state, table
        self._syncing = False
        table.param.watch(one_message(self._from_table), "selection")
        if watch is None:
            watch_state(state, self._from_state, "selected_values", name="the table selection")
        else:
            watch(self._from_state, "selected_values", name="the table selection")

    def _from_table(self, event):
        if self._syncing:
            return
        frame = self.table.value
        if frame is None or frame.empty:
            return
        ids = [int(frame["id"].iloc[i]) for i in event.new if 0 <= i < len(frame)]
        # Rows of other values (not in this table) stay selected only while the click extended
        # the selection; a plain click on one row replaces it.
        if len(ids) > 1:
            ids = [
                *[v for v in self.state.selected_values if v in ids],
                *[i for i in ids if i not in self.state.selected_values],
            ]
        if ids and ids != list(self.state.selected_values):
            self._syncing = True
            try:
                self.state.select_values(ids)
            finally:
                self._syncing = False

    def _from_state(self, *_):
        if self._syncing:
            return
        self.sync()

    def sync(self):
        frame = self.table.value
        if frame is None or frame.empty:
            return
        wanted = set(self.state.selected_values)
        positions = [int(i) for i in np.flatnonzero(frame["id"].isin(wanted).to_numpy())]
        if positions != list(self.table.selection):
            self._syncing = True
            try:
                self.table.selection = positions
            finally:
                self._syncing = False
