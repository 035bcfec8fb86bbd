"""Edits as gestures, without a browser: "keep the tile count", coalescing of repeated drags, undo
of a gesture, refusals that clear when their plan is gone, nothing selected on open, and the
compact edit form of the URL.

Expected figures come from the raw sample JSON by docs/formats.md §2 (tests/editor_support.py).
"""

from __future__ import annotations

import pytest
from editor_support import RawProfile, edited_bytes, raw_axes
from opening_support import open_into

from tilescope.app.state import SessionState
from tilescope.app.views.editor import EditorView
from tilescope.models.edits import TilingEdit, compact_edits, parse_compact_edits
from tilescope.models.errors import InputError
from tilescope.planner import tiling_rules

VALUE = 84  # [1, 729, 1152]-like result in the standard region; 3 × 9 partitions × 54 replicas = 1458 tiles
AXIS = "1"


@pytest.fixture(scope="module")
def raw(sample_path) -> RawProfile:
    return RawProfile.load(sample_path)


@pytest.fixture
def editor(sample_path) -> EditorView:
    state = SessionState()
    assert open_into(state, sample_path), state.error
    state.select_values([VALUE])
    return EditorView(state=state)


def commit(editor: EditorView, axis: str, count: int) -> None:
    """What the browser sends on pointer release (a fresh nonce each time, as the browser's)."""
    nonce = editor.widget.committed.get("nonce", 0) + 1 if editor.widget.committed else 1
    editor.widget.committed = {"axis": axis, "count": count, "nonce": nonce}


def test_nothing_is_selected_on_open(sample_path):
    """The editor shows the largest live value without selecting it (it used to select #85)."""
    state = SessionState()
    assert open_into(state, sample_path)
    editor = EditorView(state=state)
    assert state.selected_values == []
    assert state.selected_step == state.plan.peaks.total_step
    assert editor.row is not None and "#85 " in editor.heading.object


def test_keep_the_tile_count_reaches_the_advisors_best_edit_in_one_gesture(editor, raw):
    value = raw.value(VALUE)
    assert raw.doc["peak"]["standard"] == 206_032
    # Without the option, 18 partitions would need 3 × 18 × 54 = 2916 tiles: refused.
    commit(editor, AXIS, 18)
    assert "tile count" in editor.widget.message and editor.state.edits == []
    editor.keep_tiles.value = True
    # The track now allows every count the blocks allow (replicas drop): up to 365.
    assert max(editor.widget.axes[int(AXIS)]["valid_counts"]) == 365
    commit(editor, AXIS, 18)
    assert editor.widget.message == ""  # the refusal went with the plan it was made against
    largest_replicas = 1472 // (3 * 18)
    assert largest_replicas == 27
    assert editor.state.edits == [TilingEdit(VALUE, axis=1, partitions=18), TilingEdit(VALUE, replicas=27)]
    cost = edited_bytes(value, {1: 18})[2]
    expected = raw.peaks_with({VALUE: cost - value["bytes"]})["standard"]
    assert editor.state.plan.peaks.standard == expected == 185_680
    # One gesture: one undo brings the file's plan back.
    editor.undo_button.clicks += 1
    assert editor.state.edits == [] and editor.state.plan.peaks.standard == 206_032


def test_five_drags_of_one_axis_leave_one_edit(editor, raw):
    for count in (5, 6, 7, 8, 5):
        commit(editor, AXIS, count)
        assert editor.widget.message == "", editor.widget.message
    assert editor.state.edits == [TilingEdit(VALUE, axis=1, partitions=5)]
    cost = edited_bytes(raw.value(VALUE), {1: 5})[2]
    assert editor.state.plan.peaks.total == raw.peaks_with({VALUE: cost - raw.value(VALUE)["bytes"]})["total"]
    commit(editor, "0", 1)  # another axis: a new edit
    assert len(editor.state.edits) == 2
    editor.undo_button.clicks += 1
    assert editor.state.edits == [TilingEdit(VALUE, axis=1, partitions=5)]


def test_a_drag_back_to_the_files_own_count_is_no_edit(editor, raw):
    """Issue #27 item 11: dragging a handle back to the count the file records leaves no edit (the
    count read from the raw layout text, docs/formats.md §2)."""
    own = raw_axes(raw.value(VALUE)["layout"])[int(AXIS)].partitions
    assert own == 9
    commit(editor, AXIS, 5)
    assert editor.state.edits == [TilingEdit(VALUE, axis=1, partitions=5)]
    commit(editor, AXIS, own)
    assert editor.state.edits == [] and editor.state.edit_units == []
    assert editor.state.plan.peaks.total == raw.doc["peak"]["total"]
    # another value's edit stays; the same drag back then drops only its own edit
    commit(editor, "0", 1)
    commit(editor, AXIS, 5)
    commit(editor, AXIS, own)
    assert editor.state.edits == [TilingEdit(VALUE, axis=0, partitions=1)]
    # a count an earlier gesture changed, set back to the file's own by a later one, is an edit of its own
    own_0 = raw_axes(raw.value(VALUE)["layout"])[0].partitions
    commit(editor, AXIS, 5)
    commit(editor, "0", own_0)
    assert editor.state.edits == [
        TilingEdit(VALUE, axis=0, partitions=1),
        TilingEdit(VALUE, axis=1, partitions=5),
        TilingEdit(VALUE, axis=0, partitions=own_0),
    ]


def test_keep_tiles_drags_coalesce_too(editor):
    editor.keep_tiles.value = True
    commit(editor, AXIS, 10)  # 3 × 10 × 54 > 1472: replicas drop to 49
    commit(editor, AXIS, 18)
    assert editor.state.edits == [TilingEdit(VALUE, axis=1, partitions=18), TilingEdit(VALUE, replicas=27)]
    assert editor.state.edit_units == [2]


def test_a_refusal_clears_on_undo_reset_and_reload(editor, sample_path):
    commit(editor, AXIS, 5)
    commit(editor, AXIS, 366)  # 365 blocks
    assert "blocks" in editor.widget.message
    editor.undo_button.clicks += 1
    assert editor.widget.message == ""
    commit(editor, AXIS, 5)
    commit(editor, AXIS, 366)
    editor.reset_button.clicks += 1
    assert editor.widget.message == ""
    commit(editor, AXIS, 366)
    assert editor.widget.message
    assert open_into(editor.state, sample_path)
    assert editor.widget.message == ""


def test_click_replaces_and_ctrl_click_adds(sample_path):
    state = SessionState()
    open_into(state, sample_path)
    state.click_value(84)
    state.click_value(85)
    assert state.selected_values == [85]
    state.click_value(84, add=True)
    assert state.selected_values == [85, 84] and state.focus_value == 84
    state.click_value(85, add=True)  # toggles it off
    assert state.selected_values == [84]


def test_compact_edits_round_trip():
    edits = [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)]
    assert compact_edits(edits) == "84:1=18,84:r=27"
    assert parse_compact_edits("84:1=18,84:r=27") == edits
    with pytest.raises(InputError, match=r"\$\[1\].*found '84:replicas=2'"):
        parse_compact_edits("84:1=18,84:replicas=2")


def test_keeping_tiles_on_the_samples_tilings(sample_path):
    state = SessionState()
    open_into(state, sample_path)
    arrays = state.arrays
    for row in range(arrays.n_values):
        tiling = arrays.tiling(row)
        for position, axis in enumerate(tiling.axes):
            kept = tiling_rules.keeping_tiles(tiling, position, axis.partitions * 2, 1472)
            partitions = 1
            for a in kept.axes:
                partitions *= a.partitions
            if partitions <= 1472:
                assert kept.tile_count <= 1472 and kept.replicas >= 1
                assert kept.replicas == tiling.replicas or kept.replicas == 1472 // partitions


def test_a_hidden_editor_catches_up_when_its_tab_is_shown(sample_path, raw):
    from tilescope.app.side_tabs import SideTabs

    state = SessionState()
    assert open_into(state, sample_path)
    tabs = SideTabs(state)
    tabs.show("editor")
    editor = tabs.view("editor")
    tabs.show("step")  # hidden now
    state.select_step(20)
    step = raw.doc["timeline"]["steps"][20]
    by_bytes = {v["id"]: v["bytes"] for v in raw.doc["timeline"]["values"]}
    largest = max(step["live"], key=lambda i: (by_bytes[i], -i))
    assert int(state.arrays.value_ids[editor.row]) != largest  # not followed while hidden
    tabs.show("editor")
    assert int(state.arrays.value_ids[editor.row]) == largest
    assert f"#{largest} " in editor.heading.object
