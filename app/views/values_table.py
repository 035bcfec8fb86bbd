"""Values: every value of the profile in a filterable, sortable table. Selecting rows selects the
values in every view.

Text from the file (names, groups, shapes, precisions) is shown with Tabulator's ``plaintext``
formatter, which escapes HTML.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models.widgets.tables import NumberFormatter

from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.widgets.selection import TABLE_SELECTION, SelectionLink
from tilescope.app.widgets.table_patch import patch_cells
from tilescope.app.widgets.tables import LabelledTabulator
from tilescope.derived.values import PLAN_COLUMNS

TEXT_COLUMNS = ("name", "group", "shape", "precision", "region", "tiling", "alias_of")
BYTE_COLUMNS = (
    "shard",
    "aligned",
    "bytes",
    "bytes_before",
    "change",
    "padding_waste",
    "shard_padding",
    "unpadded_shard",
)
TITLES = {
    "id": "id",
    "name": "name",
    "group": "group",
    "storage_group": "storage group",
    "root": "root",
    "alias_of": "alias of",
    "region": "region",
    "shape": "shape",
    "precision": "precision",
    "tiling": "tiling",
    "tiles": "tiles",
    "shard": "shard B",
    "aligned": "aligned B",
    "bytes": "bytes",
    "bytes_before": "bytes before",
    "change": "Δ bytes",
    "padding_waste": "aligned − shard",
    "unpadded_shard": "unpadded shard B",
    "shard_padding": "shard padding B",
    "first_step": "first step",
    "last_step": "last step",
}


def table_formatters(columns) -> dict:
    out = {}
    for column in columns:
        if column in TEXT_COLUMNS:
            out[column] = {"type": "plaintext"}
        elif column in BYTE_COLUMNS:
            out[column] = NumberFormatter(format="0,0")
    return out


class ValuesTableView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    COLUMNS = (
        "id",
        "name",
        "group",
        "storage_group",
        "root",
        "alias_of",
        "region",
        "shape",
        "precision",
        "tiling",
        "tiles",
        "shard",
        "aligned",
        "bytes",
        "change",
        "padding_waste",
        "shard_padding",
        "first_step",
        "last_step",
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self.table = LabelledTabulator(
            pd.DataFrame({c: [] for c in self.COLUMNS}),
            show_index=False,
            disabled=True,
            **TABLE_SELECTION,
            pagination="remote",
            page_size=25,
            header_filters=True,
            titles=TITLES,
            formatters=table_formatters(self.COLUMNS),
            sizing_mode="stretch_width",
            height=560,
            css_classes=["ts-values-table"],
            layout="fit_data_table",
        )
        self._note = pn.pane.HTML("", styles={"font-size": "12px", "opacity": "0.8"})
        self._link = SelectionLink(self.state, self.table, watch=self.gate.watch)
        self._shown_of = None  # the opened profile whose values the table holds
        self._revealing: int | None = None  # a value to turn to once the browser's filters are empty (reveal)
        self.table.param.watch(one_message(self._on_filters), "filters")
        self.gate.watch(self._redraw, ["data"])
        self._redraw()

    def _redraw(self, *_):
        data = self.state.data
        if data is None:
            return
        frame = data.values[list(self.COLUMNS)]
        if self._shown_of is data.opened:
            self._patch_changed(frame)
        else:
            self.table.value = frame
            self._shown_of = data.opened
        self._link.sync()
        self._note.object = (
            f"{len(frame):,} values. Bytes per tile; <i>aligned − shard</i> is what the allocation granule adds; "
            "<i>shard padding</i> is the largest shard beyond an even, unpadded split. An alias (<i>alias of</i> set) "
            "is never live itself: its bytes are its root's, counted once while the root is live."
        )

    def _patch_changed(self, frame: pd.DataFrame) -> None:
        """Another plan of the same profile: send only the cells that changed (an edit changes a few
        values' rows), not the whole table; Tabulator re-sends its page itself when sorted or filtered."""
        shown = self.table.value
        patch = {}
        for column in (c for c in PLAN_COLUMNS if c in frame.columns):
            # compared as pandas arrays: text columns stay Arrow strings (no Python str per cell)
            changed = np.flatnonzero(np.asarray(shown[column].array != frame[column].array, dtype=bool))
            if changed.size:
                patch[column] = list(zip(shown.index[changed].tolist(), frame[column].iloc[changed].tolist()))
        patch_cells(self.table, patch)

    def reveal(self, value_id: int) -> bool:
        """Make ``value_id``'s row visible (the header's value search picked it, issue #27 item 9):
        the table turns to the page holding it. True when the header filters hide it: the caller
        empties them in the browser (``app.widgets.page_controls.PageControls.clear_filters``), and
        the page is turned once the browser has sent its empty filters."""
        frame = self.table.value
        if frame is None or frame.empty or value_id not in set(frame["id"].tolist()):
            return False
        if value_id not in set(self.table.current_view["id"].tolist()):
            self._revealing = value_id
            return True
        self._turn_to(value_id)
        return False

    def _on_filters(self, event) -> None:
        if self._revealing is not None and not event.new:
            value_id, self._revealing = self._revealing, None
            self._turn_to(value_id)

    def _turn_to(self, value_id: int) -> None:
        positions = np.flatnonzero(self.table.current_view["id"].to_numpy() == value_id)
        if positions.size:
            self.table.page = int(positions[0]) // self.table.page_size + 1

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(self._note, self.table, sizing_mode="stretch_width")
