"""One view that fails does not break the page (``app.view_guard.watch_state``).

The whole profile page (``benchmarks.bench_app.VIEW_CLASSES``, rendered on one Bokeh document) on
the sample; the summary — the first view to watch ``data``, so without the guard its exception
would stop every view after it — is made to raise whenever it is told the plan changed. An edit
then still applies, every other view shows the edited plan (the values table's bytes of the
edited value are the ones computed from the raw JSON by docs/formats.md §2), the page's error line
names the failed view, and undo works the same way.
"""

from __future__ import annotations

import logging

from browser_support import SAMPLE
from editor_support import RawProfile, edited_bytes
from opening_support import open_into

from benchmarks.bench_app import VIEW_CLASSES, build_page
from tilescope.app.state import SessionState
from tilescope.app.views.editor import EditorView
from tilescope.app.views.summary import SummaryView
from tilescope.app.views.values_table import ValuesTableView
from tilescope.models.edits import TilingEdit

VALUE, AXIS, PARTITIONS = 85, 1, 5


def table_bytes(views, value_id: int) -> int:
    table = next(v for v in views if isinstance(v, ValuesTableView)).table
    frame = table.value
    return int(frame.loc[frame["id"] == value_id, "bytes"].iloc[0])


def test_a_failing_view_leaves_the_others_and_the_edit_standing(monkeypatch, caplog):
    raw = RawProfile.load(SAMPLE)
    recorded = raw.value(VALUE)["bytes"]
    edited = edited_bytes(raw.value(VALUE), {AXIS: PARTITIONS})[2]
    assert edited != recorded

    original = SummaryView._redraw

    def broken(self, *events):
        if events:  # told the plan changed (the first drawing, without an event, works)
            raise RuntimeError("summary broke")
        return original(self)

    monkeypatch.setattr(SummaryView, "_redraw", broken)
    state = SessionState()
    assert open_into(state, SAMPLE), state.error
    views, doc, _, _ = build_page(state)
    assert type(views[0]) is SummaryView and len(views) == len(VIEW_CLASSES)
    assert table_bytes(views, VALUE) == recorded

    with caplog.at_level(logging.ERROR, logger="tilescope.app"):
        assert state.apply_edit(TilingEdit(VALUE, axis=AXIS, partitions=PARTITIONS)) is None
    assert state.edits == [TilingEdit(VALUE, axis=AXIS, partitions=PARTITIONS)]
    assert (
        state.error == "SummaryView could not be updated: RuntimeError: summary broke (the other views are up to date)"
    )
    assert any(
        "SummaryView failed to update" in r.getMessage() and r.exc_info for r in caplog.records
    )  # traceback in the log
    assert table_bytes(views, VALUE) == edited  # a view after the failed one follows the edit
    editor = next(v for v in views if isinstance(v, EditorView))
    assert editor.state.data is state.data and state.data.whatif is not None

    state.undo()
    assert state.edits == [] and table_bytes(views, VALUE) == recorded
    assert state.error.startswith("SummaryView could not be updated")
    doc.to_json()  # the document is whole: every model still serialises


def test_without_a_failure_nothing_is_said():
    state = SessionState()
    assert open_into(state, SAMPLE), state.error
    views, _, _, _ = build_page(state)
    assert state.apply_edit(TilingEdit(VALUE, axis=AXIS, partitions=PARTITIONS)) is None
    assert state.error == ""
