"""Placement (planner.placement, planner.packing): every allocation placed once, no overlap, granule
alignment, placed ≥ the lower bound and within 1 % of it, checked int64, the capacity rule, and the
gap against an exact solver on cut-down profiles.

Expected figures come from the raw JSON (``json.load``) and the independent checks of
``placement_support`` (a step-by-step sweep for overlaps, a plain-Python exact solver).
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from placement_support import (
    REGION_OF_CLASS,
    _first_fit_top,
    exact_top,
    expected_allocations,
    granule_of,
    grid_top,
    placed_allocations,
    sweep_overlaps,
    usage_peak,
)

from tilescope.loaders.memory_profile import load_memory_profile, parse_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import Plan, ValueBytes, plan_profile
from tilescope.planner.packing import DENSE_LIMIT, PlacementError, conflicts_of, pack
from tilescope.planner.placement import REGION_NAMES, place
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile

WITHIN = 0.01  # the target: placed within 1 % of the lower bound


def profile_of(raw: dict, name: str = "copy.memory_profile.json"):
    return parse_memory_profile(json.dumps(raw).encode(), name)


def check_placement(
    raw: dict, placement, *, bytes_of: dict[int, int] | None = None, within: float | None = WITHIN
) -> None:
    """Everything the issue asks of a placement, from the raw JSON (see the module doc)."""
    assert placed_allocations(placement) == expected_allocations(raw, bytes_of)  # each live interval exactly once
    assert (
        sweep_overlaps(placement.region, placement.offset, placement.bytes, placement.first_step, placement.last_step)
        == 0
    )
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    for k in np.flatnonzero(placement.value_id >= 0).tolist():
        v = values[int(placement.value_id[k])]
        assert placement.offset[k] % granule_of(v, REGION_OF_CLASS[v["class"]]) == 0
    assert np.all(placement.offset >= 0)
    ends = placement.offset + placement.bytes
    for code, name in enumerate(REGION_NAMES):
        figures = placement.regions[name]
        in_region = placement.region == code
        assert figures.placed == int(ends[in_region].max(initial=0))
        assert figures.placed >= figures.lower_bound
        assert figures.fragmentation == figures.placed - figures.lower_bound
        if within is not None:
            assert figures.placed <= figures.lower_bound * (1 + within), (name, figures)


def raw_lower_bounds(raw: dict) -> tuple[int, int]:
    """docs/formats.md §2 from the recorded usage: standard includes the exchange rows."""
    steps = raw["timeline"]["steps"]
    return (
        max(s["usage"]["standard"] for s in steps) + raw["peak"]["exchange_rows"],
        max(s["usage"]["interleaved"] for s in steps),
    )


# ----------------------------------------------------------------------------- the sample


@pytest.fixture(scope="module")
def sample():
    arrays, plan = plan_profile(load_memory_profile(SAMPLE_PATH))
    return arrays, plan, place(arrays, plan)


def test_sample_placement(raw, sample):
    _, _, placement = sample
    check_placement(raw, placement)
    assert (placement.standard.lower_bound, placement.interleaved.lower_bound) == raw_lower_bounds(raw)
    assert (placement.standard.lower_bound, placement.interleaved.lower_bound) == (
        raw["peak"]["standard"],
        raw["peak"]["interleaved"],
    )
    print(
        f"\nsample: standard placed {placement.standard.placed:,} / bound {placement.standard.lower_bound:,}; "
        f"interleaved {placement.interleaved.placed:,} / {placement.interleaved.lower_bound:,}"
    )


def test_sample_reaches_the_lower_bound_where_bytes_first_does_not(raw, sample):
    """The issue: plain greedy by bytes leaves ~2.6 % on the standard region; granule first reaches
    the bound. The bytes-first figure is computed here with the exact solver's first fit."""
    _, _, placement = sample
    std = np.flatnonzero(placement.region == 0)
    items = [
        (int(placement.bytes[k]), int(placement.granule[k]), int(placement.first_step[k]), int(placement.last_step[k]))
        for k in std
    ]
    by_bytes = sorted(range(len(items)), key=lambda i: (-items[i][0], i))
    greedy = _first_fit_top(by_bytes, items)
    assert greedy > raw["peak"]["standard"] * 1.02  # bytes-first: over 2 % above the bound
    assert placement.standard.placed == raw["peak"]["standard"]
    assert placement.interleaved.placed == raw["peak"]["interleaved"]


def test_exchange_rows_on_top_of_the_standard_region(raw, sample):
    _, _, placement = sample
    k = int(np.flatnonzero(placement.kind_names() == "exchange_rows")[0])
    assert placement.bytes[k] == raw["peak"]["exchange_rows"]
    assert (placement.first_step[k], placement.last_step[k]) == (0, len(raw["timeline"]["steps"]) - 1)
    assert placement.offset[k] + placement.bytes[k] == placement.standard.placed


def test_capacity_rule_from_the_header(raw, sample):
    """docs/formats.md §5: the regions and the support reserve share budget_bytes."""
    _, _, p = sample
    usable = raw["budget_bytes"] - raw["support_reserve_bytes"]
    assert p.standard.capacity == usable - p.interleaved.placed
    assert p.interleaved.capacity == min(raw["interleaved_budget_bytes"], usable - p.standard.placed)
    assert p.standard.fits and p.interleaved.fits and p.fits
    assert p.standard_contiguous_overflow_bytes == raw["standard_contiguous_overflow_bytes"] == 0


def test_does_not_fit_when_the_budget_is_smaller(raw):
    tight = copy.deepcopy(raw)
    tight["budget_bytes"] = raw["peak"]["standard"] + raw["peak"]["interleaved"] + raw["support_reserve_bytes"] - 1
    arrays, plan = plan_profile(profile_of(tight))
    p = place(arrays, plan)
    assert p.standard.placed + p.interleaved.placed + tight["support_reserve_bytes"] > tight["budget_bytes"]
    assert not p.standard.fits and not p.interleaved.fits and not p.fits


def test_edit_then_replace_warm(raw, sample):
    arrays, plan, base = sample
    whatif = apply_edits(arrays, plan, [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])
    again = place(arrays, whatif.plan, previous=base)
    fresh = place(arrays, whatif.plan)
    after = {vid: new for vid, _, new in whatif.diff.changed_values}
    check_placement(raw, again, bytes_of=after)
    check_placement(raw, fresh, bytes_of=after)
    assert again.standard.lower_bound == whatif.plan.peaks.standard < base.standard.lower_bound
    assert again.standard.placed < base.standard.placed


# ----------------------------------------------------------------------------- disjoint live ranges


def with_holes(raw: dict, every: int = 3) -> tuple[dict, list[int]]:
    """A copy of the sample whose live lists leave out every ``every``-th root value live over five or
    more steps at the middle step of its range: two disjoint live ranges each."""
    holed = copy.deepcopy(raw)
    steps = holed["timeline"]["steps"]
    lives: dict[int, list[int]] = {}
    for step in steps:
        for vid in step["live"]:
            lives.setdefault(vid, []).append(step["index"])
    long_lived = sorted(v for v, at in lives.items() if len(at) >= 5)[::every]
    for vid in long_lived:
        at = lives[vid]
        middle = at[len(at) // 2]
        steps[middle]["live"].remove(vid)
        removed = next(v for v in holed["timeline"]["values"] if v["id"] == vid)["bytes"]
        region = REGION_OF_CLASS[next(v for v in holed["timeline"]["values"] if v["id"] == vid)["class"]]
        steps[middle]["usage"][region] -= removed
    return holed, long_lived


def test_disjoint_live_ranges_are_two_allocations(raw):
    holed, split = with_holes(raw)
    arrays, plan = plan_profile(profile_of(holed))
    placement = place(arrays, plan)
    check_placement(holed, placement)
    for vid in split:
        assert (placement.value_id == vid).sum() == 2
    offsets_differ = sum(len(set(placement.offset[placement.value_id == vid].tolist())) == 2 for vid in split)
    print(
        f"\n{len(split)} values with two live ranges, {offsets_differ} of them at two offsets; "
        f"fragmentation {placement.standard.fragmentation:,} / {placement.interleaved.fragmentation:,} B"
    )


# ----------------------------------------------------------------------------- synthetic profiles


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    out = {}
    for name, blocks, layers, gaps in (("plain", 12, 24, False), ("gaps", 6, 6, True)):
        path = write_synthetic_profile(folder / f"{name}.memory_profile.json", blocks, layers, gaps=gaps)
        out[name] = (json.loads(path.read_text()), *plan_profile(load_memory_profile(path)))
    return out


@pytest.mark.parametrize("name", ["plain", "gaps"])
def test_synthetic_within_one_percent(synthetic, name):
    raw, arrays, plan = synthetic[name]
    placement = place(arrays, plan)
    check_placement(raw, placement)
    assert (placement.standard.lower_bound, placement.interleaved.lower_bound) == raw_lower_bounds(raw)
    if name == "gaps":
        assert any((placement.value_id == v).sum() >= 2 for v in np.unique(placement.value_id[placement.value_id >= 0]))
    print(
        f"\n{name}: {arrays.n_steps:,} steps; gaps {100 * placement.standard.fragmentation / placement.standard.lower_bound:.3f} % / "
        f"{100 * placement.interleaved.fragmentation / placement.interleaved.lower_bound:.3f} %"
    )


def test_replacement_keeps_unedited_blocks_where_they_were(synthetic):
    """An edit of one block's value re-packs that block's group only: every other allocation keeps its
    offset (warm start), and the result equals the invariants of a fresh placement."""
    raw, arrays, plan = synthetic["plain"]
    base = place(arrays, plan)
    target = next(
        v["id"]
        for v in raw["timeline"]["values"]
        if v["name"].startswith("block3.") and v["bytes"] > 30000 and v["root"] == v["id"]
    )
    row = arrays.row_of_id[target]
    tiling = arrays.tiling(row)
    axis = next(k for k, a in enumerate(tiling.axes) if a.partitions > 1)
    whatif = apply_edits(arrays, plan, [TilingEdit(target, axis=axis, partitions=tiling.axes[axis].partitions // 2)])
    assert whatif.diff.changed_values
    again = place(arrays, whatif.plan, previous=base)
    check_placement(raw, again, bytes_of={v: new for v, _, new in whatif.diff.changed_values})
    steps_per_block = len(raw["timeline"]["steps"]) // 12
    outside = (again.last_step < 3 * steps_per_block) | (again.first_step >= 4 * steps_per_block)
    outside &= again.kind_names() != "exchange_rows"
    assert np.array_equal(again.offset[outside], base.offset[outside])
    inside = ~outside & (again.kind_names() != "exchange_rows")
    assert (
        not np.array_equal(again.offset[inside], base.offset[inside]) or again.standard.placed != base.standard.placed
    )


def halving_edit(arrays, plan):
    """An edit halving the partitions of some live value's first cut axis, one that changes its bytes."""
    for row in np.unique(arrays.interval_row).tolist():
        tiling = arrays.tiling(row)
        for k, axis in enumerate(tiling.axes):
            if axis.partitions > 1:
                edit = TilingEdit(int(arrays.value_ids[row]), axis=k, partitions=axis.partitions // 2)
                if apply_edits(arrays, plan, [edit]).diff.changed_values:
                    return edit
    raise AssertionError("no byte-changing edit")


def test_undo_returns_to_the_same_offsets(synthetic, sample):
    """Edit, re-place, undo (the unedited plan again), re-place: the offsets are the original ones."""
    for arrays, plan in (synthetic["plain"][1:], sample[:2]):
        base = place(arrays, plan)
        whatif = apply_edits(arrays, plan, [halving_edit(arrays, plan)])
        edited = place(arrays, whatif.plan, previous=base)
        assert not np.array_equal(edited.bytes, base.bytes)
        back = place(arrays, plan, previous=edited)
        assert np.array_equal(back.offset, base.offset)
        assert back.regions == base.regions


# ----------------------------------------------------------------------------- checked integers


def test_sums_that_could_overflow_are_refused(sample):
    """Files cap each count at 2⁵³ (the loader), but sums of many can pass 2⁶²: a plan whose values
    cost 2⁵⁸ bytes each (142 live intervals) is refused before anything is added up in int64."""
    arrays, plan, _ = sample
    huge = np.full(arrays.n_values, 1 << 58, dtype=np.int64)
    figures = ValueBytes(huge, huge, huge)
    with pytest.raises(PlacementError, match="too large"):
        place(arrays, Plan(figures, plan.usage_standard, plan.usage_interleaved, plan.peaks))


def test_large_but_exact_sums_are_placed(raw):
    big = copy.deepcopy(raw)
    step = big["timeline"]["steps"][0]
    # 2^52 of scratch: the loader refuses a step whose values at their largest cost, scratch and
    # reservations could pass 2^53 (docs/formats.md §6), so this is about as large as a file may go.
    expected = step["usage"]["interleaved"] - step["scratch"]["interleaved"] + (1 << 52)
    step["scratch"]["interleaved"] = 1 << 52
    step["usage"]["interleaved"] = expected
    arrays, plan = plan_profile(profile_of(big))
    p = place(arrays, plan)
    assert p.interleaved.placed == p.interleaved.lower_bound == expected
    assert not p.interleaved.fits and not p.fits
    assert sweep_overlaps(p.region, p.offset, p.bytes, p.first_step, p.last_step) == 0


# ----------------------------------------------------------------------------- against an exact solver


def test_exact_solver_agrees_with_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(25):
        n = int(rng.integers(2, 5))
        items = []
        for _ in range(n):
            first = int(rng.integers(0, 3))
            g = int(rng.choice([1, 2]))
            items.append((int(rng.integers(1, 4)) * g, g, first, first + int(rng.integers(0, 2))))
        assert exact_top(items) == grid_top(items), items


def cut_down_instances(placement, region: int, count: int, size: int, window: int, seed: int):
    """Small groups cut from a placement's allocations: ``size`` of those live somewhere in a random
    window of ``window`` steps, lifetimes clipped to the window."""
    rng = np.random.default_rng(seed)
    in_region = np.flatnonzero((placement.region == region) & (placement.kind_names() != "exchange_rows"))
    n_steps = int(placement.last_step.max()) + 1
    out = []
    while len(out) < count:
        start = int(rng.integers(0, n_steps - window))
        end = start + window - 1
        live = in_region[(placement.first_step[in_region] <= end) & (placement.last_step[in_region] >= start)]
        if live.size < size:
            continue
        chosen = rng.choice(live, size, replace=False)
        out.append(
            [
                (
                    int(placement.bytes[k]),
                    int(placement.granule[k]),
                    max(int(placement.first_step[k]), start) - start,
                    min(int(placement.last_step[k]), end) - start,
                )
                for k in chosen
            ]
        )
    return out


def test_gap_against_the_exact_solver_on_cut_down_profiles(sample):
    """On small groups cut from the sample the packer's top is never below the exact optimum (the
    solver is right) and at most 1 % above it; the greedy start alone shows what the search adds
    (it is 7.3 % above the optimum on one of these groups, which the search closes)."""
    _, _, placement = sample
    gaps, greedy_gaps, above_bound = [], [], 0
    for region in (0, 1):
        for window in (4, 16, 40):
            for items in cut_down_instances(placement, region, count=10, size=7, window=window, seed=region + window):
                sizes, granules, first, last = (np.array(c, dtype=np.int64) for c in zip(*items))
                best = exact_top(items)
                searched = pack(sizes, granules, first, last, max_evaluations=128).top
                greedy = pack(sizes, granules, first, last, max_evaluations=1).top
                assert greedy >= searched >= best >= usage_peak(sizes, first, last)
                gaps.append((searched - best) / best)
                greedy_gaps.append((greedy - best) / best)
                above_bound += best > usage_peak(sizes, first, last)
    print(
        f"\nexact solver on {len(gaps)} cut-down groups of 7: search gap mean {100 * np.mean(gaps):.3f} % max {100 * max(gaps):.3f} %; "
        f"greedy start alone mean {100 * np.mean(greedy_gaps):.3f} % max {100 * max(greedy_gaps):.3f} % "
        f"({sum(g > 0 for g in greedy_gaps)} above the optimum); optimum above the lower bound in {above_bound}"
    )
    assert max(gaps) <= WITHIN
    assert max(greedy_gaps) > max(gaps)  # the search is exercised: some start order misses the optimum


def test_large_groups_use_sweep_conflicts():
    """Above DENSE_LIMIT allocations the conflict lists come from a sort-and-sweep: the same pairs as
    an n × n comparison, and a packing of them passes the sweep check."""
    rng = np.random.default_rng(3)
    n = DENSE_LIMIT + 500
    first = rng.integers(0, 3000, n)
    last = first + rng.geometric(0.05, n) - 1
    conflicts = conflicts_of(first, last)
    dense = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    np.fill_diagonal(dense, False)
    for i in rng.choice(n, 200, replace=False).tolist():
        assert sorted(conflicts.of(i).tolist()) == np.flatnonzero(dense[i]).tolist()
    assert conflicts.pairs == int(dense.sum())
    sizes = rng.integers(1, 5000, n)
    granules = np.where(rng.random(n) < 0.2, 1024, 1)
    sizes = -(-sizes // granules) * granules
    packing = pack(sizes, granules, first, last, max_evaluations=1, conflicts=conflicts)
    assert np.all(packing.offsets % granules == 0)
    assert sweep_overlaps(np.zeros(n, dtype=np.int8), packing.offsets, sizes, first, last) == 0
