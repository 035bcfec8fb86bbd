"""Values: every value of the profile in a filterable, sortable table. Selecting rows selects the
values in every view.

Text from the file (names, groups, shapes, precisions) is shown with Tabulator's ``plaintext``
formatter, which escapes HTML.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import panel as pn
import param
import pyarrow as pa
from bokeh.models.widgets.tables import NumberFormatter

from tilescope.derived.live import first_last_steps

from tilescope.derived.values import tensor_bytes, tile_counts, tiling_summaries, tiling_summary, unpadded_shard_bytes
from tilescope.app.state import SessionState
from tilescope.app.views.table_patch import patch_cells

TEXT_COLUMNS = ("name", "group", "shape", "precision", "region", "tiling", "alias_of")
BYTE_COLUMNS = ("shard", "aligned", "bytes", "bytes_before", "change", "padding_waste", "shard_padding", "unpadded_shard")
TITLES = {
    "id": "id", "name": "name", "group": "group", "storage_group": "storage group", "root": "root", "alias_of": "alias of",
    "region": "region", "shape": "shape", "precision": "precision", "tiling": "tiling", "tiles": "tiles",
    "shard": "shard B", "aligned": "aligned B", "bytes": "bytes", "bytes_before": "bytes before", "change": "Δ bytes",
    "padding_waste": "aligned − shard", "unpadded_shard": "unpadded shard B", "shard_padding": "shard padding B",
    "first_step": "first step", "last_step": "last step",
}


def values_frame(state: SessionState) -> pd.DataFrame:
    """One row per value (the values table's order) with the current plan's figures.

    Several views need it after every plan change: it is built once per plan and kept on the
    session (never shared between sessions). Callers must not modify it.
    """
    cached = getattr(state, "_values_frame_cache", None)
    if cached is not None and cached[0] is state.plan:
        return cached[1]
    frame = _build_values_frame(state)
    state._values_frame_cache = (state.plan, frame)
    return frame


FRAME_COLUMNS = ("id", "name", "group", "storage_group", "root", "alias_of", "region", "shape", "precision", "tiling", "tiles",
                 "shard", "unpadded_shard", "shard_padding", "aligned", "padding_waste", "bytes", "bytes_before", "change",
                 "first_step", "last_step")


@dataclass(frozen=True)
class FileColumns:
    """The values table's columns read from the file, and the recorded tilings' columns: built once
    per profile (text columns of ~10⁵ values take a while), then shared by every plan's frame."""

    arrays: object  # the ProfileArrays these were read from (compared by identity)
    frame: pd.DataFrame  # id, name, group, storage_group, root, alias_of, region, shape, precision, first_step, last_step
    tiling: list[str]
    tiles: np.ndarray
    unpadded: np.ndarray
    tensor_bytes: np.ndarray

    @staticmethod
    def of(profile, arrays) -> "FileColumns":
        v = profile.values
        first, last = first_last_steps(arrays)
        ids, roots = arrays.value_ids, arrays.roots
        frame = pd.DataFrame(
            {
                "id": ids,
                "name": text_column(v.column("name")),
                "group": text_column(v.column("group")),
                "storage_group": v.column("storage_group").to_numpy(),
                "root": roots,
                "alias_of": np.where(roots != ids, roots.astype(str), ""),
                "region": text_column(v.column("region")),
                "shape": ["[" + ", ".join(map(str, s)) + "]" for s in arrays.shapes],
                "precision": text_column(v.column("precision_name")),
                "first_step": first,
                "last_step": last,
            }
        )
        total = tensor_bytes(arrays)
        return FileColumns(arrays, frame, tiling_summaries(arrays), tile_counts(arrays), unpadded_shard_bytes(arrays, total=total), total)


def text_column(column: pa.ChunkedArray) -> pd.Series:
    """An Arrow text column as a pandas text column, converted in C++ (``to_pylist`` makes a
    Python object per cell: ~0.3 s per dictionary-encoded column of 10⁵ values)."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column.to_pandas()


def _file_columns(state: SessionState) -> FileColumns:
    cached = getattr(state, "_file_columns_cache", None)
    if cached is None or cached.arrays is not state.arrays:
        cached = state._file_columns_cache = FileColumns.of(state.profile, state.arrays)
    return cached


def _build_values_frame(state: SessionState) -> pd.DataFrame:
    arrays, plan = state.arrays, state.plan
    file = _file_columns(state)
    tilings = state.whatif.tilings if state.whatif is not None else {}
    figures, base = plan.figures, state.base_plan.figures
    tiling, tiles, unpadded = file.tiling, file.tiles, file.unpadded
    if tilings:  # only the edited rows differ from the file's tilings
        tiling = list(tiling)
        for row, edited in tilings.items():
            tiling[row] = tiling_summary(edited)
        tiles = tile_counts(arrays, tilings)
        unpadded = unpadded_shard_bytes(arrays, tilings, total=file.tensor_bytes)
    frame = file.frame.copy(deep=False)  # shares the file's columns (copy-on-write)
    frame["tiling"] = tiling
    frame["tiles"] = tiles
    frame["shard"] = figures.shard
    frame["unpadded_shard"] = unpadded
    frame["shard_padding"] = figures.shard - unpadded
    frame["aligned"] = figures.aligned
    frame["padding_waste"] = figures.aligned - figures.shard
    frame["bytes"] = figures.bytes
    frame["bytes_before"] = base.bytes
    frame["change"] = figures.bytes - base.bytes
    return frame[list(FRAME_COLUMNS)]


def table_formatters(columns) -> dict:
    out = {}
    for column in columns:
        if column in TEXT_COLUMNS:
            out[column] = {"type": "plaintext"}
        elif column in BYTE_COLUMNS:
            out[column] = NumberFormatter(format="0,0")
    return out


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


# The columns a plan (what-if edits) changes; the others come from the file.
PLAN_COLUMNS = ("tiling", "tiles", "shard", "unpadded_shard", "shard_padding", "aligned", "padding_waste", "bytes",
                "bytes_before", "change")


class ValuesTableView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    COLUMNS = ("id", "name", "group", "storage_group", "root", "alias_of", "region", "shape", "precision", "tiling", "tiles",
               "shard", "aligned", "bytes", "change", "padding_waste", "shard_padding", "first_step", "last_step")

    def __init__(self, **params):
        super().__init__(**params)
        self.table = pn.widgets.Tabulator(
            pd.DataFrame({c: [] for c in self.COLUMNS}), name="ts-values-table", show_index=False, disabled=True,
            selectable="checkbox-single", pagination="remote", page_size=25, header_filters=True,
            titles=TITLES, formatters=table_formatters(self.COLUMNS), sizing_mode="stretch_width", height=560,
            css_classes=["ts-values-table"], layout="fit_data_table",
        )
        self._note = pn.pane.HTML("", styles={"font-size": "12px", "color": "#555"})
        self._link = SelectionLink(self.state, self.table)
        self._shown_arrays = None  # the profile (arrays) whose values the table holds
        self.state.param.watch(self._refresh, ["plan", "profile"])
        self._refresh()

    def _refresh(self, *_):
        if self.state.plan is None:
            return
        frame = values_frame(self.state)[list(self.COLUMNS)]
        if self._shown_arrays is self.state.arrays:
            self._patch_changed(frame)
        else:
            self.table.value = frame
            self._shown_arrays = self.state.arrays
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

    def __panel__(self):
        return pn.Column(self._note, self.table, sizing_mode="stretch_width")
