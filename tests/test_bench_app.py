"""benchmarks.bench_app on small synthetic profiles (no timing assertions: speed goals live in the
benchmark), and the view shortcuts it led to, checked against the straightforward computations:
the storage-groups table against ``derived.groups.hand_overs`` group by group, and the values table
patched cell by cell after edits against a table built from scratch on the same plan.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from opening_support import open_into

from benchmarks.bench_app import INTERACTIONS, edits_to_apply, measure_app, report
from tilescope.app.state import SessionState
from tilescope.app.views.storage_groups import StorageGroupsView
from tilescope.app.views.values_table import ValuesTableView
from tilescope.derived.groups import GroupTable, hand_overs
from tilescope.synth import write_synthetic_profile


@pytest.fixture(scope="module")
def small_profile(tmp_path_factory):
    return write_synthetic_profile(tmp_path_factory.mktemp("bench_app") / "b2_l2.memory_profile.json", 2, 2)


@pytest.fixture(scope="module")
def deep_profile(tmp_path_factory):
    """One block of 20 layers: storage groups of 21 live members, past hand_overs' all-pairs limit (16)."""
    return write_synthetic_profile(tmp_path_factory.mktemp("bench_app") / "b1_l20.memory_profile.json", 1, 20)


def test_the_benchmark_measures_every_interaction(small_profile):
    figures = measure_app(small_profile, "small", steps=4, edits=2, values=2)
    assert (figures.n_steps, figures.n_values) == (232, 352)  # two copies of the sample's 116 steps and 176 values
    counts = {name: len(figures.interactions[name].times) for name in INTERACTIONS}
    assert counts == {"select step": 4, "apply edit": 2, "undo": 1, "select value": 2}
    for name in INTERACTIONS:
        interaction = figures.interactions[name]
        assert len(interaction.baselines) == len(interaction.cpu) == len(interaction.patch_bytes) == counts[name]
        assert interaction.median > 0 and interaction.baseline > 0 and interaction.ratio > 0
        assert all(sent > 0 for sent in interaction.patch_bytes), name  # every interaction changed the page
    assert figures.open_seconds > 0 and figures.build_seconds > 0 and figures.render_seconds > 0
    text = report(figures)
    for name in INTERACTIONS:
        assert f"  {name}" in text
    assert text.count("goal < 500 ms") == len(INTERACTIONS) and "ratio" in text


@pytest.mark.parametrize("which", ["small", "deep"])
def test_group_table_matches_hand_overs_group_by_group(which, small_profile, deep_profile):
    state = SessionState()
    assert open_into(state, small_profile if which == "small" else deep_profile), state.error
    arrays, cost = state.arrays, state.plan.figures.bytes
    storage_group = state.profile.values.column("storage_group").to_numpy()
    table = GroupTable.of(arrays, storage_group)
    frame = table.frame(table.largest_overlap(cost), show_single=True)
    assert frame["storage_group"].tolist() == sorted(set(storage_group.tolist()))
    largest_group = 0
    for k, group in enumerate(frame["storage_group"].tolist()):
        members = table.members[group]
        overs = hand_overs(arrays, cost, group, members)
        ids = arrays.value_ids[members]
        row = frame.iloc[k]
        assert sorted(ids.tolist()) == sorted(arrays.value_ids[storage_group == group].tolist())
        assert row["members"] == len(members) and row["values"] == ", ".join(map(str, ids.tolist()))
        assert row["aliases"] == int(np.count_nonzero(arrays.roots[members] != ids))
        assert row["hand_overs"] == len(overs)
        assert row["largest_overlap"] == max((h.together_bytes for h in overs), default=0)
        largest_group = max(largest_group, len(members))
    if which == "deep":
        assert largest_group > 16  # the consecutive-pairs branch was exercised


def test_views_patched_after_edits_match_views_built_on_the_same_plan(small_profile):
    state = SessionState()
    assert open_into(state, small_profile), state.error
    values, groups = ValuesTableView(state=state), StorageGroupsView(state=state)
    edits = edits_to_apply(state.arrays, state.base_plan, 3)
    assert len(edits) == 3

    def check():
        fresh_values, fresh_groups = ValuesTableView(state=state), StorageGroupsView(state=state)
        pd.testing.assert_frame_equal(values.table.value, fresh_values.table.value)
        pd.testing.assert_frame_equal(groups.table.value, fresh_groups.table.value)

    for edit in edits:
        assert state.apply_edit(edit) is None
        check()
    changed = values.table.value["change"].to_numpy()
    assert np.count_nonzero(changed) > 0  # the edits changed some values' bytes, and the patched table shows it
    state.undo()
    check()
    state.reset()
    check()
    assert not values.table.value["change"].to_numpy().any()
