"""Keeping a table's selected rows and the session's selected values in step."""
from __future__ import annotations

import numpy as np
import panel as pn

from tilescope.app.state import SessionState


class SelectionLink:
    """Keeps a Tabulator's selected rows and ``state.selected_values`` in step, both ways."""

    def __init__(self, state: SessionState, table: pn.widgets.Tabulator):
        self.state, self.table = state, table
        self._syncing = False
        table.param.watch(self._from_table, "selection")
        state.param.watch(self._from_state, "selected_values")

    def _from_table(self, event):
        if self._syncing:
            return
        frame = self.table.value
        if frame is None or frame.empty:
            return
        ids = [int(frame["id"].iloc[i]) for i in event.new if 0 <= i < len(frame)]
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
