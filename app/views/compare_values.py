"""The changed values of a comparison: every matched pair whose bytes, tiling, precision, region,
granule, shape or copies differ and every value found on one side only, largest |Δ| first;
sortable and filterable (on the server: remote pagination). Selecting a row selects the value in
every compare view and its A value in the page (``CompareSelection``).

Text from the files (names, tilings, what changed) is shown with Tabulator's ``plaintext``
formatter, which escapes HTML; an absent side's id and bytes read "—".
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models.widgets.tables import NumberFormatter

from tilescope.app.views.compare_part import ComparePart
from tilescope.app.views.compare_selection import CompareSelection
from tilescope.app.widgets.tables import LabelledTabulator
from tilescope.derived.compare_data import CHANGED_COLUMNS

TITLES = MappingProxyType(
    {
        "status": "status",
        "name": "name",
        "a_id": "A id",
        "b_id": "B id",
        "a_bytes": "A bytes",
        "b_bytes": "B bytes",
        "delta_bytes": "Δ bytes (B − A)",
        "a_tiling": "A tiling",
        "b_tiling": "B tiling",
        "changes": "what changed",
    }
)
TEXT_COLUMNS = ("status", "name", "a_tiling", "b_tiling", "changes")


def table_formatters() -> dict:
    """New formatter models for one table (a Bokeh model belongs to one document: never shared)."""
    number = lambda form, nan="—": NumberFormatter(format=form, nan_format=nan)  # noqa: E731
    return {
        **{c: {"type": "plaintext"} for c in TEXT_COLUMNS},
        "a_id": number("0"),
        "b_id": number("0"),
        "a_bytes": number("0,0"),
        "b_bytes": number("0,0"),
        "delta_bytes": number("+0,0"),
    }


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series([], dtype="int64" if c in ("entry", "delta_bytes") else "object") for c in CHANGED_COLUMNS}
    )


class CompareValuesView(ComparePart):
    selection = param.ClassSelector(class_=CompareSelection)

    def __init__(self, **params):
        super().__init__(**params)
        self.table = LabelledTabulator(
            _empty_frame(),
            show_index=False,
            disabled=True,
            selectable="checkbox-single",
            pagination="remote",
            page_size=20,
            header_filters=True,
            hidden_columns=["entry"],
            titles=dict(TITLES),
            formatters=table_formatters(),
            sizing_mode="stretch_width",
            css_classes=["ts-compare-values-table"],
            layout="fit_data_table",
        )
        self._note = pn.pane.HTML(
            "",
            css_classes=["ts-compare-note"],
            styles={
                "font-size": "12px",
                "color": "color-mix(in srgb, var(--panel-on-background-color, #222) 65%, transparent)",
            },
        )
        self._syncing = False
        self._shown = None  # the CompareData whose values the table holds
        self.table.param.watch(self._from_table, "selection")
        self.selection.param.watch(self._from_selection, "entry")
        self.gate.watch(self._redraw, ["compare"])
        self._redraw()

    def _redraw(self, *_):
        compare = self.state.compare
        if compare is not self._shown or compare is None:
            self._shown = compare
            self._syncing = True  # a new frame is no selection by the user
            try:
                self.table.value = compare.changed_frame if compare is not None else _empty_frame()
            finally:
                self._syncing = False
        if compare is None:
            self._note.object = ""
            return
        frame = compare.changed_frame
        counts = frame["status"].value_counts()
        self._note.object = (
            f"{len(frame):,} values differ: {int(counts.get('changed', 0)):,} changed, {int(counts.get('only_a', 0)):,} only in A, "
            f"{int(counts.get('only_b', 0)):,} only in B (Δ counts an absent side as 0 B). Bytes per tile. Select a row to see the value in both."
        )
        self._from_selection()

    def _from_table(self, event):
        if self._syncing:
            return
        frame = self.table.value
        rows = [i for i in event.new if 0 <= i < len(frame)]
        if rows:  # one value at a time: the row just checked (the table's checkboxes allow several)
            added = [i for i in rows if i not in (event.old or [])]
            self.selection.select(int(frame["entry"].iloc[(added or rows)[-1]]))
        else:  # the checked row unchecked
            self.selection.select(-1)
        self._from_selection()

    def _from_selection(self, *_):
        frame = self.table.value
        if frame is None:
            return
        wanted = (
            [int(i) for i in np.flatnonzero(frame["entry"].to_numpy() == self.selection.entry)]
            if self.selection.entry >= 0
            else []
        )
        if wanted != list(self.table.selection):
            self._syncing = True
            try:
                self.table.selection = wanted
            finally:
                self._syncing = False

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<b>Changed values</b>", margin=(8, 10)), self._note, self.table, sizing_mode="stretch_width"
        )
