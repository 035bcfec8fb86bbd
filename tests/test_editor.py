"""The what-if editor view without a browser: commits as the drag widget sends them, numeric input,
undo / reset, save → load, the advisor's one-click apply, and escaping of file text.

Expected figures come from the raw sample JSON by docs/formats.md's rules (tests/editor_support.py).
"""

from __future__ import annotations

import json
import re

import pytest
from editor_support import RawProfile, blocks_of, edited_bytes
from opening_support import open_into

from tilescope.app.state import SessionState
from tilescope.app.views.editor import EditorView
from tilescope.planner.tiling_rules import shard_changing_counts

# Value 85 ("operation 17 result 0", [1, 729, 1152] F8, standard region, live at steps 45–47 — the
# standard peak's step among them). Its axis 1 is FromEnd(2): 729 padded to 730, 365 blocks of 2,
# 9 partitions → 41 blocks → 82 rows; axis 0 cuts 1152 into 3 × 384: shard 82 * 384 = 31,488 B,
# aligned to 16,384 → 32,768 B. Five partitions on axis 1: 73 blocks → 146 rows → 56,064 B → 65,536 B.
VALUE = 85
AXIS = 1
NEW_PARTITIONS = 5


def shown_text(html: str) -> str:
    """The text a reader sees: tags dropped (figures are wrapped in no-break spans so that they
    break between their parts), entities kept as written."""
    return re.sub(r"<[^>]+>", "", html)


@pytest.fixture(scope="module")
def raw(sample_path) -> RawProfile:
    return RawProfile.load(sample_path)


@pytest.fixture
def editor(sample_path) -> EditorView:
    state = SessionState()
    assert open_into(state, sample_path), state.error
    state.select_values([VALUE])
    return EditorView(state=state)


def commit(editor: EditorView, axis: str, count: int, nonce: str) -> None:
    """What the browser sends on pointer release."""
    editor.widget.committed = {"axis": axis, "count": count, "nonce": nonce}


def test_hand_figures_match_the_file(raw):
    """The hand computation itself reproduces what the file records for value 85."""
    value = raw.value(VALUE)
    assert (
        edited_bytes(value, {})
        == (value["shard_bytes"], value["aligned_bytes"], value["bytes"])
        == (31488, 32768, 32768)
    )
    assert edited_bytes(value, {AXIS: NEW_PARTITIONS}) == (56064, 65536, 65536)


def test_editor_shows_the_selected_values_tiling(editor, raw):
    value = raw.value(VALUE)
    axes = editor.widget.axes
    assert [a["partitions"] for a in axes] == [3, 9]
    assert axes[AXIS]["blocks"] == blocks_of(value, AXIS) == 365
    assert axes[AXIS]["label"] == "FromEnd(2)" and axes[AXIS]["size"] == 729 and axes[AXIS]["padded"] == 730
    assert axes[AXIS]["per_partition"] == 82
    assert editor.widget.replicas == 54
    # 3 × 9 × 54 = 1458 of 1472 tiles: more partitions on axis 1 need fewer replicas.
    assert max(axes[AXIS]["valid_counts"]) == 9
    assert editor.widget.valid_replica_counts == list(range(1, 1472 // 27 + 1))
    assert "#85 operation 17 result 0" in editor.heading.object
    assert "31,488 B (30.8 KiB)" in shown_text(editor.figures.object)


def test_largest_live_value_when_nothing_is_selected(sample_path, raw):
    state = SessionState()
    open_into(state, sample_path)
    state.select_step(45)
    editor = EditorView(state=state)
    step = raw.doc["timeline"]["steps"][45]
    by_bytes = {v["id"]: v["bytes"] for v in raw.doc["timeline"]["values"]}
    largest = max(step["live"], key=lambda i: (by_bytes[i], -i))
    assert int(state.arrays.value_ids[editor.row]) == largest


def test_shard_changing_counts_skip_redundant_counts():
    # 46 blocks: 45 partitions give shards of 2 blocks, as 23 do; 46 give 1.
    assert shard_changing_counts(46) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 23, 46]
    assert shard_changing_counts(1) == [1]
    counts = shard_changing_counts(784404)
    shards = [-(-784404 // n) for n in counts]
    assert shards == sorted(set(shards), reverse=True)  # every stop changes the shard
    assert len({-(-784404 // n) for n in range(1, 5000)}) == sum(1 for n in counts if n < 5000)


def test_committed_drag_replans(editor, raw):
    commit(editor, str(AXIS), NEW_PARTITIONS, "a")
    state = editor.state
    assert editor.widget.message == ""
    assert [e.to_json() for e in state.edits] == [{"value": VALUE, "axis": AXIS, "partitions": NEW_PARTITIONS}]
    row = state.arrays.row_of_id[VALUE]
    shard, aligned, cost = edited_bytes(raw.value(VALUE), {AXIS: NEW_PARTITIONS})
    figures = state.plan.figures
    assert (int(figures.shard[row]), int(figures.aligned[row]), int(figures.bytes[row])) == (shard, aligned, cost)
    expected = raw.peaks_with({VALUE: cost - raw.value(VALUE)["bytes"]})
    peaks = state.plan.peaks
    assert (peaks.standard, peaks.interleaved, peaks.total) == (
        expected["standard"],
        expected["interleaved"],
        expected["total"],
    )
    assert peaks.total != raw.doc["peak"]["total"]
    # The editor shows before → after, and the handle now sits at the new count.
    assert "31,488 B (30.8 KiB) → 56,064 B (54.8 KiB)" in shown_text(editor.figures.object)
    assert f"{raw.doc['peak']['total']:,} B" in shown_text(
        editor.figures.object
    ) and f"{expected['total']:,} B" in shown_text(editor.figures.object)
    assert editor.widget.axes[AXIS]["partitions"] == NEW_PARTITIONS
    assert editor.widget.axes[AXIS]["per_partition"] == 146
    assert editor.widget.inputs[AXIS].value == NEW_PARTITIONS
    assert "value 85: axis 1 partitions → 5" in editor.edit_list.object


def test_invalid_commit_is_refused_with_the_reason(editor, raw):
    state = editor.state
    before = state.plan
    revision = editor.widget.revision
    commit(editor, str(AXIS), 366, "too-many")  # 365 blocks
    assert editor.widget.message_axis == str(AXIS)
    assert "value 85" in editor.widget.message and "axis 1" in editor.widget.message
    assert "blocks" in editor.widget.message
    assert editor.widget.revision > revision  # the handle redraws from the model: it snaps back
    assert state.plan is before and state.edits == []
    assert editor.widget.axes[AXIS]["partitions"] == 9
    # Too many tiles: 3 × 10 × 54 = 1620 > 1472.
    commit(editor, str(AXIS), 10, "too-many-tiles")
    assert "tile count" in editor.widget.message and "1472" in editor.widget.message
    assert state.plan.peaks.total == raw.doc["peak"]["total"]


def test_numeric_input_commits_and_snaps_back(editor, raw):
    field = editor.widget.inputs[AXIS]
    field.value = 400
    assert "blocks" in editor.widget.message and editor.widget.message_axis == str(AXIS)
    assert field.value == 9 and editor.state.edits == []
    field.value = NEW_PARTITIONS
    assert editor.widget.message == ""
    assert editor.state.plan.peaks.total == raw.peaks_with({VALUE: 65536 - 32768})["total"]
    replicas = editor.widget.inputs[-1]
    replicas.value = 0
    assert editor.widget.message_axis == "replicas" and "replicas" in editor.widget.message
    assert replicas.value == 54


def test_undo_and_reset_restore_the_files_figures(editor, raw):
    state = editor.state
    row = state.arrays.row_of_id[VALUE]
    commit(editor, str(AXIS), NEW_PARTITIONS, "a")
    commit(editor, "0", 1, "b")
    assert len(state.edits) == 2
    editor.undo_button.clicks += 1
    assert [e.to_json() for e in state.edits] == [{"value": VALUE, "axis": AXIS, "partitions": NEW_PARTITIONS}]
    editor.undo_button.clicks += 1
    assert state.edits == []
    assert state.plan.peaks.total == raw.doc["peak"]["total"]
    assert (state.plan.peaks.standard, state.plan.peaks.interleaved) == (
        raw.doc["peak"]["standard"],
        raw.doc["peak"]["interleaved"],
    )
    assert int(state.plan.figures.shard[row]) == raw.value(VALUE)["shard_bytes"]
    assert [a["partitions"] for a in editor.widget.axes] == [3, 9]
    assert "No edits" in editor.edit_list.object
    commit(editor, str(AXIS), NEW_PARTITIONS, "c")
    editor.reset_button.clicks += 1
    assert state.edits == [] and state.plan.peaks.total == raw.doc["peak"]["total"]


def test_save_then_load_reproduces_the_plan(editor):
    state = editor.state
    commit(editor, str(AXIS), NEW_PARTITIONS, "a")
    commit(editor, "replicas", 20, "b")
    saved = editor.save_button.callback().getvalue()
    assert json.loads(saved) == [
        {"value": VALUE, "axis": AXIS, "partitions": NEW_PARTITIONS},
        {"value": VALUE, "replicas": 20},
    ]
    edited = state.plan
    editor.reset_button.clicks += 1
    assert state.plan.peaks.total != edited.peaks.total
    editor.load_input.filename = "edits.json"
    editor.load_input.value = saved
    assert state.error == ""
    assert state.plan.peaks == edited.peaks
    assert (state.plan.figures.bytes == edited.figures.bytes).all()
    assert editor.widget.replicas == 20


def test_loading_a_bad_edit_set_says_why(editor):
    editor.load_input.filename = "bad.json"
    editor.load_input.value = b'[{"value": 85, "axis": 1}]'
    assert "bad.json" in editor.edit_list.object and "partitions" in editor.edit_list.object
    assert editor.state.edits == []


def test_advisor_suggestion_applies_in_one_click(editor, raw):
    editor.advisor.peak_choice.value = "standard"
    rows = editor.advisor.advice.objects
    assert rows, "the sample's standard peak can be lowered by re-tiling"
    first_text = rows[0][1].object
    apply_button = rows[0][0]
    apply_button.clicks += 1
    state = editor.state
    assert state.edits, state.error
    assert state.selected_values == [state.edits[0].value]  # the editor now shows the re-tiled value
    # Check the applied suggestion against the hand computation: every edit re-partitions a root.
    deltas = {}
    partitions = {}
    for edit in state.edits:
        assert edit.partitions is not None or edit.replicas is not None
        if edit.partitions is not None:
            partitions.setdefault(edit.value, {})[edit.axis] = edit.partitions
    for value_id, axes in partitions.items():
        value = raw.value(value_id)
        assert value["root"] == value_id
        deltas[value_id] = edited_bytes(value, axes)[2] - value["bytes"]
    expected = raw.peaks_with(deltas)
    assert state.plan.peaks.standard == expected["standard"] < raw.doc["peak"]["standard"]
    assert f"{expected['standard']:,} B" in first_text


def test_whole_storage_group_toggle_is_the_states(editor):
    editor.group_toggle.value = True
    assert editor.state.whole_storage_group is True
    editor.state.whole_storage_group = False
    assert editor.group_toggle.value is False


def test_value_picker_selects(editor):
    label = editor.state.data.opened.value_text.labels[editor.state.arrays.row_of_id[0]]
    editor.value_picker.value = label
    assert editor.state.selected_values == [0]
    assert [a["partitions"] for a in editor.widget.axes] == [46, 4]


def test_value_names_are_escaped(sample_path):
    doc = json.loads(sample_path.read_text())
    doc["timeline"]["values"][VALUE]["name"] = '<img src=x onerror="alert(1)">'
    state = SessionState()
    assert open_into(state, json.dumps(doc).encode(), "evil.json"), state.error
    state.select_values([VALUE])
    editor = EditorView(state=state)
    assert "<img" not in editor.heading.object
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in editor.heading.object
