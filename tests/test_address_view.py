"""The address × step view's data (derived.addresses): every visible allocation is drawn, alone or
inside an aggregate; nothing outside the window; the count stays bounded by the pixel budget."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tilescope.derived.addresses import AGGREGATE, address_rects
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.model import plan_profile
from tilescope.planner.placement import place
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile


@pytest.fixture(scope="module")
def sample_placement():
    arrays, plan = plan_profile(load_memory_profile(SAMPLE_PATH))
    return place(arrays, plan)


@pytest.fixture(scope="module")
def synthetic_placement(tmp_path_factory):
    path = write_synthetic_profile(tmp_path_factory.mktemp("av") / "s.memory_profile.json", 40, 24)
    arrays, plan = plan_profile(load_memory_profile(path))
    return place(arrays, plan)


def visible(p, code: int, s0: int, s1: int, low: int, high: int) -> np.ndarray:
    end = p.offset + p.bytes
    return np.flatnonzero(
        (p.region == code)
        & (p.bytes > 0)
        & (p.first_step <= s1)
        & (p.last_step >= s0)
        & (p.offset < high)
        & (end > low)
    )


def clipped_area(p, rows, s0, s1, low, high) -> float:
    steps = np.minimum(p.last_step[rows], s1) - np.maximum(p.first_step[rows], s0) + 1
    span = np.minimum(p.offset[rows] + p.bytes[rows], high) - np.maximum(p.offset[rows], low)
    return float((steps * span).sum())


def check_rects(p, rects, code: int) -> None:
    s0, s1, low, high = rects.first_step, rects.last_step, rects.low, rects.high
    rows = visible(p, code, s0, s1, low, high)
    alone = rects.allocation[rects.allocation >= 0]
    assert np.unique(alone).size == alone.size and np.all(np.isin(alone, rows))
    for k in np.flatnonzero(rects.allocation >= 0).tolist():  # an individual rectangle is its allocation
        a = rects.allocation[k]
        assert (rects.offset[k], rects.bytes[k], rects.first[k], rects.last[k], rects.id[k]) == (
            p.offset[a],
            p.bytes[a],
            p.first_step[a],
            p.last_step[a],
            p.value_id[a],
        )
    aggregated = np.setdiff1d(rows, alone)
    assert rects.aggregated == aggregated.size
    cells = np.flatnonzero(rects.allocation < 0)
    assert np.all(rects.kind_names()[cells] == AGGREGATE)
    # Aggregates lie inside the window and do not overlap one another.
    assert np.all(rects.first[cells] >= s0) and np.all(rects.last[cells] <= s1)
    assert np.all(rects.offset[cells] >= low) and np.all(rects.offset[cells] + rects.bytes[cells] <= high)
    grid = {}
    for k in cells.tolist():
        for step in range(int(rects.first[k]), int(rects.last[k]) + 1):
            grid.setdefault(step, []).append((int(rects.offset[k]), int(rects.offset[k] + rects.bytes[k])))
    for spans in grid.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    # Every aggregated allocation touches an aggregate, and the area is conserved.
    for a in aggregated.tolist():
        touches = (
            (rects.first[cells] <= min(p.last_step[a], s1))
            & (rects.last[cells] >= max(p.first_step[a], s0))
            & (rects.offset[cells] < min(p.offset[a] + p.bytes[a], high))
            & (rects.offset[cells] + rects.bytes[cells] > max(p.offset[a], low))
        )
        assert touches.any(), a
    assert rects.area.sum() == pytest.approx(clipped_area(p, rows, s0, s1, low, high), rel=1e-9)
    assert rects.count[cells].sum() >= aggregated.size
    assert np.all((rects.fill > 0) & (rects.fill <= 1))


@pytest.mark.parametrize("region, code", [("standard", 0), ("interleaved", 1)])
@pytest.mark.parametrize("window", [(0, None, 0, None), (40, 50, 0, None), (0, 115, 50_000, 120_000)])
def test_sample_windows(sample_placement, region, code, window):
    s0, s1, low, high = window
    rects = address_rects(
        sample_placement, region, first_step=s0, last_step=s1, low=low, high=high, width_px=600, height_px=200
    )
    check_rects(sample_placement, rects, code)
    assert rects.placed == sample_placement.regions[region].placed


def test_big_window_is_aggregated_and_bounded(synthetic_placement):
    p = synthetic_placement
    width, height, min_px = 800, 300, 2.0
    rects = address_rects(p, "standard", width_px=width, height_px=height, min_px=min_px)
    check_rects(p, rects, 0)
    n_visible = visible(p, 0, rects.first_step, rects.last_step, rects.low, rects.high).size
    assert rects.aggregated > 0 and rects.size < n_visible
    assert rects.size <= 2 * width * height / min_px**2  # individual ones are disjoint, ≥ min_px² each; cells likewise
    zoomed = address_rects(p, "standard", first_step=0, last_step=30, width_px=width, height_px=height, min_px=min_px)
    check_rects(p, zoomed, 0)
    assert zoomed.aggregated < rects.aggregated


def test_kept_values_are_never_aggregated(synthetic_placement):
    p = synthetic_placement
    rects = address_rects(p, "standard", width_px=400, height_px=100, min_px=4)
    small = np.unique(p.value_id[(p.region == 0) & (p.value_id >= 0) & (p.bytes < 500)])[:5]
    kept = address_rects(p, "standard", width_px=400, height_px=100, min_px=4, keep_ids=small.tolist())
    check_rects(p, kept, 0)
    for vid in small.tolist():
        assert not (rects.id == vid).any() and (kept.id == vid).sum() == (p.value_id == vid).sum()


def test_empty_window_is_refused(sample_placement):
    with pytest.raises(ValueError):
        address_rects(sample_placement, "standard", first_step=10, last_step=5)
