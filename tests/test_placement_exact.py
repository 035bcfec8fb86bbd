"""The exact solver behind the profile's placement (``planner.placement_exact``): each region's
verdict against the capacity rule, and a packer's placement lowered to the optimum that a brute
force over every order (``placement_support.exact_top``) finds."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
from placement_support import exact_top, sweep_overlaps

from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.planner.model import plan_profile
from tilescope.planner.packing import pack
from tilescope.planner.placement import place
from tilescope.planner.placement_exact import improve_region
from tilescope.planner.placement_groups import Allocations, Group, RegionState
from tilescope.synth import SAMPLE_PATH


def _raw() -> dict:
    return json.loads(SAMPLE_PATH.read_bytes())


def _plan(raw: dict):
    return plan_profile(parse_memory_profile(json.dumps(raw).encode(), "copy.memory_profile.json"))


def test_the_sample_is_placed_at_its_bounds_with_the_same_heights():
    arrays, plan = _plan(_raw())
    before = place(arrays, plan)
    after = place(arrays, plan, exact_seconds=2.0)
    for name, region in after.regions.items():
        assert region.placed == before.regions[name].placed == region.lower_bound
        assert region.verdict == "placed" and "optimal" in region.proof and region.deficit_bytes is None
        assert region.to_json()["verdict"] == "placed"


def test_a_budget_below_the_bounds_is_infeasible_with_the_deficit():
    raw = _raw()
    tight = copy.deepcopy(raw)
    short = 5000
    tight["budget_bytes"] = raw["peak"]["standard"] + raw["peak"]["interleaved"] + raw["support_reserve_bytes"] - short
    p = place(*_plan(tight))
    usable = tight["budget_bytes"] - tight["support_reserve_bytes"]
    # By hand: the most a region can get is the usable budget less the other region's bound.
    assert p.standard.verdict == "infeasible"
    assert p.standard.deficit_bytes == raw["peak"]["standard"] - (usable - raw["peak"]["interleaved"]) == short
    expected_interleaved = raw["peak"]["interleaved"] - min(
        tight["interleaved_budget_bytes"], usable - raw["peak"]["standard"]
    )
    assert p.interleaved.verdict == "infeasible" and p.interleaved.deficit_bytes == expected_interleaved


def test_a_budget_the_bounds_fit_but_the_placement_does_not_is_unknown():
    raw = _raw()
    roomy = copy.deepcopy(raw)
    roomy["budget_bytes"] = raw["peak"]["standard"] + raw["peak"]["interleaved"] + raw["support_reserve_bytes"]
    arrays, plan = _plan(roomy)
    p = place(arrays, plan)
    assert p.standard.verdict in ("placed", "unknown") and p.interleaved.verdict in ("placed", "unknown")
    for region in p.regions.values():
        assert (region.verdict == "placed") == region.fits and region.deficit_bytes is None


def _random_group(rng: random.Random, n: int) -> list[tuple[int, int, int, int]]:
    return [
        (rng.choice([4, 8, 12, 16, 24]), rng.choice([1, 4, 8]), (f := rng.randint(0, 5)), f + rng.randint(0, 3))
        for _ in range(n)
    ]


def test_a_first_fit_placement_is_lowered_to_the_brute_force_optimum():
    rng = random.Random(3)
    lowered = 0
    for _ in range(40):
        items = _random_group(rng, 6)
        size = np.array([i[0] for i in items], dtype=np.int64)
        granule = np.array([i[1] for i in items], dtype=np.int64)
        first = np.array([i[2] for i in items], dtype=np.int64)
        last = np.array([i[3] for i in items], dtype=np.int64)
        packing = pack(size, granule, first, last, max_evaluations=1)  # the start order only
        best = exact_top(items)
        if packing.top == best:
            continue
        lowered += 1
        n = len(items)
        alloc = Allocations(np.zeros(n, np.int8), np.full(n, -1), np.zeros(n, np.int8), size, granule, first, last)
        members = np.arange(n, dtype=np.int64)
        state = RegionState(0, [Group(members, b"g")], np.zeros(n, dtype=np.int64), {b"g": packing})
        offsets = packing.offsets.copy()
        result = improve_region(0, alloc, 100, offsets, state, seconds=5.0)
        assert result is not None and result.before == packing.top and result.after == best
        assert result.proved  # the optimum was proved: nothing lower exists
        assert int((offsets + size).max()) == best and state.packings[b"g"].top == best
        assert sweep_overlaps(alloc.region, offsets, size, first, last) == 0 and not np.any(offsets % granule)
    assert lowered >= 3  # the packer's start order was beaten on several instances
