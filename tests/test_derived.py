"""tilescope.derived (series, live, lifetimes, groups, values): downsampling keeps extremes at every zoom; step/value data checked against the
sample file's own live lists (read with json, independently of the loaders)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.derived.groups import hand_overs, storage_group_members
from tilescope.derived.lifetimes import gantt_bars
from tilescope.derived.live import first_last_steps, live_rows_at
from tilescope.derived.series import loop_regions, minmax_indices, runs_where, window_of
from tilescope.derived.values import unpadded_shard_bytes
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.model import plan_profile


@pytest.fixture(scope="module")
def sample(sample_path):
    raw = json.loads(sample_path.read_text())
    arrays, plan = plan_profile(load_memory_profile(sample_path))
    return raw, arrays, plan


# ----------------------------------------------------------------------------- downsampling


def test_planted_spike_survives_every_zoom():
    rng = np.random.default_rng(7)
    n = 200_000
    y = rng.integers(0, 1000, n)
    spike, dip = 123_457, 77_001
    y[spike], y[dip] = 10_000, -10_000
    for start, stop in [(0, n), (100_000, 150_000), (123_000, 124_000), (spike, spike + 1), (120_000, 190_000)]:
        for columns in (1, 7, 300, 1000):
            keep = minmax_indices([y], start, stop, columns)
            assert keep.size <= columns * 4
            assert np.all(np.diff(keep) > 0) and keep.min() >= start and keep.max() < stop
            assert y[keep].max() == y[start:stop].max()
            assert y[keep].min() == y[start:stop].min()
            if start <= spike < stop:
                assert spike in keep


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 5000), columns=st.integers(1, 400), data=st.data())
def test_every_column_keeps_its_extremes(n, columns, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.integers(-5, 5, n)
    start = data.draw(st.integers(0, n - 1))
    stop = data.draw(st.integers(start + 1, n))
    keep = minmax_indices([a, b], start, stop, columns)
    assert keep.size <= columns * 6
    # per pixel column (same cut as documented: (i - start) * columns // width) both extremes survive
    width = stop - start
    if keep.size == width:
        assert np.array_equal(keep, np.arange(start, stop))
        return
    column = (np.arange(start, stop) - start) * columns // width
    kept_column = (keep - start) * columns // width
    for c in np.unique(column):
        inside = np.arange(start, stop)[column == c]
        kept = keep[kept_column == c]
        for series in (a, b):
            assert series[kept].max() == series[inside].max()
            assert series[kept].min() == series[inside].min()


def test_small_windows_are_sent_whole():
    y = np.arange(50)
    assert np.array_equal(minmax_indices([y], 10, 40, 100), np.arange(10, 40))
    assert minmax_indices([y], 40, 40, 10).size == 0


def test_window_of_covers_the_visible_range_with_a_margin():
    assert window_of(None, None, 100) == (0, 100)
    assert window_of(10.4, 20.6, 100) == (9, 23)
    assert window_of(-50, 500, 100) == (0, 100)


# ----------------------------------------------------------------------------- steps


def test_runs_where():
    first, last = runs_where(np.array([0, 1, 1, 0, 1, 0, 0, 1], dtype=bool))
    assert first.tolist() == [1, 4, 7] and last.tolist() == [2, 4, 7]


def test_loop_regions_match_the_sample_execution_counts(sample):
    raw, _, _ = sample
    counts = [s["execution_count"] for s in raw["timeline"]["steps"]]
    looped = [i for i, c in enumerate(counts) if c > 1]
    first, last = loop_regions(np.array(counts))
    covered = [i for f, l in zip(first.tolist(), last.tolist()) for i in range(f, l + 1)]
    assert covered == looped


def test_live_rows_at_every_step_match_the_file(sample):
    raw, arrays, _ = sample
    for step in raw["timeline"]["steps"]:
        rows = live_rows_at(arrays, step["index"])
        assert sorted(arrays.value_ids[rows].tolist()) == sorted(set(step["live"]))


def test_first_last_steps_match_the_file(sample):
    raw, arrays, _ = sample
    first, last = first_last_steps(arrays)
    seen: dict[int, list[int]] = {}
    for step in raw["timeline"]["steps"]:
        for vid in step["live"]:
            seen.setdefault(vid, []).append(step["index"])
    for row, vid in enumerate(arrays.value_ids.tolist()):
        steps = seen.get(vid)
        assert (first[row], last[row]) == ((min(steps), max(steps)) if steps else (-1, -1))


# ----------------------------------------------------------------------------- lifetimes


def test_gantt_draws_the_largest_and_sums_the_rest(sample):
    raw, arrays, plan = sample
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    live_ids = {vid for s in raw["timeline"]["steps"] for vid in s["live"]}
    by_size = sorted(live_ids, key=lambda vid: (-values[vid]["bytes"], vid))
    g = gantt_bars(arrays, plan.figures.bytes, 10)
    assert sorted(arrays.value_ids[g.rows].tolist()) == sorted(by_size[:10])
    assert g.rest_count == len(live_ids) - 10
    rest = set(by_size[10:])
    for s in raw["timeline"]["steps"]:
        assert g.rest_bytes[s["index"]] == sum(values[v]["bytes"] for v in set(s["live"]) & rest)
        assert g.rest_live[s["index"]] == len(set(s["live"]) & rest)


# ----------------------------------------------------------------------------- storage groups


def test_group_83_hand_over_at_the_standard_peak(sample):
    """docs/formats.md: values 84 (62976 B) and 85 (32768 B) of group 83 are live together at step 45."""
    raw, arrays, plan = sample
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    sg = np.array([values[int(i)]["storage_group"] for i in arrays.value_ids])
    members = storage_group_members(arrays, sg)
    assert arrays.value_ids[members[83]].tolist() == [83, 84, 85]  # a chain, in first-step order
    overs = {(h.first_value, h.second_value): h for h in hand_overs(arrays, plan.figures.bytes, 83, members[83])}
    together = [s["index"] for s in raw["timeline"]["steps"] if 84 in s["live"] and 85 in s["live"]]
    h = overs[(84, 85)]
    assert (h.from_step, h.to_step) == (min(together), max(together)) == (45, 45)
    assert (h.first_bytes, h.second_bytes) == (values[84]["bytes"], values[85]["bytes"]) == (62976, 32768)
    assert h.together_bytes == 62976 + 32768


def test_unpadded_shard_of_value_0(sample):
    """Value 0 (docs/formats.md worked example): [1, 729, 588] F16 cut 46 × 4 ways: 857,304 B / 184 shards."""
    _, arrays, plan = sample
    row = arrays.row_of_id[0]
    assert unpadded_shard_bytes(arrays)[row] == -(-(729 * 588 * 2) // (46 * 4)) == 4660
    assert plan.figures.shard[row] == 5120  # the padded shard (docs/formats.md)
