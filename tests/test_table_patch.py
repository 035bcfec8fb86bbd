"""An edit re-draws the values and storage-group tables on whatever page the user is on.

Both tables page on the server (only the shown page's rows are in the browser) and follow a new
plan by sending the changed cells. Panel 1.9 sends those at their positions in the whole table,
which a page's source refuses from page 2 on; these tests turn to page 2, make an edit of a value
shown there, and read the page's rows from the Bokeh model, as the browser would get them.
Expected bytes come from the plan (checked against the file elsewhere) and the edit's own diff.
"""

from __future__ import annotations

import numpy as np
import pytest
from bokeh.document import Document
from opening_support import open_into

from tilescope.app.state import SessionState
from tilescope.app.views.storage_groups import StorageGroupsView
from tilescope.app.views.values_table import ValuesTableView
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import current_tiling, valid_partition_counts


@pytest.fixture
def state(sample_path) -> SessionState:
    state = SessionState()
    open_into(state, str(sample_path))
    return state


def model_of(view):
    doc = Document()
    return view.table.get_root(doc)


def page_rows(model, key: str, column: str) -> dict:
    return dict(zip(np.asarray(model.source.data[key]).tolist(), np.asarray(model.source.data[column]).tolist()))


def first_edit_among(state: SessionState, rows) -> TilingEdit:
    """A valid partition edit of the first root value among ``rows`` that has one."""
    arrays = state.arrays
    for row in rows:
        tiling = current_tiling(arrays, row, None)
        if not tiling.axes or arrays.roots[row] != arrays.value_ids[row]:
            continue
        counts = [n for n in valid_partition_counts(arrays, row, 0, None) if n != tiling.axes[0].partitions]
        if counts:
            return TilingEdit(value=int(arrays.value_ids[row]), axis=0, partitions=counts[-1])
    raise AssertionError("no editable value among the rows")


def test_values_table_follows_an_edit_on_page_two(state):
    view = ValuesTableView(state=state)
    model = model_of(view)
    size = view.table.page_size
    view.table.page = 2
    on_page = view.table.value["id"].iloc[size : 2 * size].tolist()
    assert sorted(page_rows(model, "id", "bytes")) == sorted(on_page)

    edit = first_edit_among(state, [state.arrays.row_of_id[i] for i in on_page])
    before = page_rows(model, "id", "bytes")[edit.value]
    assert state.apply_edit(edit) is None
    row = state.arrays.row_of_id[edit.value]
    after = int(state.plan.figures.bytes[row])
    assert after != before
    shown = page_rows(model, "id", "bytes")
    assert shown[edit.value] == after
    assert sorted(shown) == sorted(on_page)  # still page 2
    assert page_rows(model, "id", "change")[edit.value] == after - before

    assert state.undo() is None
    assert page_rows(model, "id", "bytes")[edit.value] == before


def test_groups_table_follows_an_edit_on_page_two(state):
    view = StorageGroupsView(state=state)
    model = model_of(view)
    size = view.table.page_size
    frame = view.table.value
    view.table.page = 2
    on_page = frame["storage_group"].iloc[size : 2 * size].tolist()
    assert sorted(page_rows(model, "storage_group", "largest_overlap")) == sorted(on_page)

    # An edit of a page-2 group's hand-over member that changes the group's largest overlap.
    groups = view._groups
    arrays = state.arrays
    shown_before = page_rows(model, "storage_group", "largest_overlap")
    for k in np.flatnonzero(np.isin(groups.groups[groups.pair_group], on_page)).tolist():
        group = int(groups.groups[groups.pair_group[k]])
        row = int(groups.pair_first[k])
        tiling = current_tiling(arrays, row, None)
        if not tiling.axes or arrays.roots[row] != arrays.value_ids[row]:
            continue
        for count in valid_partition_counts(arrays, row, 0, None):
            assert state.apply_edit(TilingEdit(value=int(arrays.value_ids[row]), axis=0, partitions=count)) is None
            expected = int(groups.largest_overlap(state.plan.figures.bytes)[np.searchsorted(groups.groups, group)])
            if expected != shown_before[group]:
                shown = page_rows(model, "storage_group", "largest_overlap")
                assert shown[group] == expected
                assert sorted(shown) == sorted(on_page)  # still page 2
                return
            state.undo()
    raise AssertionError("no edit on page 2 changes a group's largest overlap")
