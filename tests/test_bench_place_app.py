"""benchmarks.bench_place_app on a small synthetic profile (no timing assertions: speed goals live in
the benchmark): every edit is timed on both pages, the placement tab's views change the page on every
edit, and the bare re-placement it compares with gives the app's figures."""

from __future__ import annotations

import pytest
from opening_support import open_into

from benchmarks.bench_place_app import PAGES, measure_place_app, report
from tilescope.app.state import SessionState
from tilescope.synth import write_synthetic_profile


@pytest.fixture(scope="module")
def small_profile(tmp_path_factory):
    return write_synthetic_profile(tmp_path_factory.mktemp("bench_place_app") / "b2_l2.memory_profile.json", 2, 2)


def test_the_benchmark_times_every_edit_on_both_pages(small_profile):
    figures = measure_place_app(small_profile, "small", edits=2)
    assert figures.edits == 2 and len(figures.replan) == len(figures.replace) == 2
    assert set(figures.pages) == set(PAGES)
    sent = {}
    for page, interactions in figures.pages.items():
        edit, undo = interactions["apply edit"], interactions["undo"]
        assert len(edit.times) == len(edit.cpu) == len(edit.patch_bytes) == 2 and len(undo.times) == 1
        assert all(t > 0 for t in edit.times) and all(b > 0 for b in edit.patch_bytes)
        sent[page] = sum(edit.patch_bytes)
    # the address view and the tile map redraw on every edit: the whole page sends more
    assert sent["whole page"] > sent["page without the placement tab"]
    text = report(figures)
    assert text.count("goal < 500 ms") == 4 and "the placement tab adds" in text and "bare re-placement" in text


def test_the_app_places_what_the_bare_call_places(small_profile):
    """The figure the benchmark compares with is the app's own re-placement: same offsets."""
    from benchmarks.bench_app import edits_to_apply
    from tilescope.planner.placement import place

    state = SessionState()
    assert open_into(state, small_profile), state.error
    base = state.data.placement
    edits = edits_to_apply(state.arrays, state.base_plan, 2)
    assert state.apply_edits(edits) is None
    bare = place(state.arrays, state.plan, previous=base)
    assert (state.data.placement.offset == bare.offset).all()
    assert state.data.placement.interleaved.placed == bare.interleaved.placed
