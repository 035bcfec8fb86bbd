"""Placement: an address for every allocation in its region of a tile's memory (docs/formats.md §2, §5).

The planner's figures are sums of live bytes per step ("not a placed tile"); this module places them.
Per region (standard, interleaved), the allocations are

- each live interval of each value (``ProfileArrays.interval_*``): a value with two disjoint live
  ranges is two allocations, which may get different offsets. Only alias roots are live in the
  profiles we know, so an alias is its root's allocation; a live alias (none in the sample) would be
  counted by the usage separately, and is placed separately too;
- each step's scratch in that region, live at that step only (steps with no scratch have none);
- the exchange rows: one allocation in the standard region, live over the whole program.

Bytes are the plan's ``figures.bytes`` (what the value costs while live); an allocation whose value
has granule g > 1 (``ProfileArrays.granule``) starts at a multiple of g. Two allocations live at a
common step never overlap. ``placed`` is the region's highest end address; ``lower_bound`` its peak
usage (``Peaks.standard`` — exchange rows included — and ``Peaks.interleaved``), which no placement
beats; ``fragmentation = placed − lower_bound``.

The algorithm (``ALGORITHM``):

1. **Whole-program allocations** (the exchange rows, and any value live at every step) overlap
   everything, so they are stacked: granule-aligned ones at the bottom from offset 0 (largest granule
   first: no padding between them), the others on top of everything else (an unaligned allocation
   there costs no padding; at the bottom it would push every 16 KiB-aligned buffer above it up to the
   next multiple: 1.4 % on the sample).
2. **Independent groups.** The other allocations are cut into groups at every step boundary that no
   allocation crosses (the synthetic profiles' blocks; loops and long-lived weights keep a real
   program in few groups). Groups share no step, so each is packed on its own above the bottom stack.
3. **Each group** is packed by ``planner.packing.pack``: first fit ordered by granule, bytes and
   lifetime (largest first), then hill climbing over the order while the group's top is above what the
   region's lower bound allows (module doc there). Groups with identical contents (relative steps,
   bytes, granules) get the same packing, computed once.

Re-placement after a what-if edit (``place(..., previous=...)``): an edit changes bytes, never live
steps, so the groups stay; a group whose contents did not change keeps its packing, a changed one is
re-packed warm-started from its previous order (so unrelated allocations keep their offsets). Packings
of earlier placements are kept (a bounded number), so undoing an edit is a look-up.

Integers are int64 throughout. Before packing, each region's Σ (bytes + granule − 1) is summed in
Python integers and refused at 2⁶² or more (every offset and end lies below it, so no int64 sum can
overflow); after packing, alignment, no-overlap within every packed group, the stacks' separation and
``placed ≥ lower_bound`` are checked before any figure is reported. ``fits`` uses the capacity rule
of docs/formats.md §5 (``CAPACITY_RULE``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .model import Plan, ProfileArrays
from .packing import Conflicts, Packing, PlacementError, conflicts_of, pack

KIND_NAMES = ("value", "scratch", "exchange_rows")  # Placement.kind holds indices into this
KIND_VALUE, KIND_SCRATCH, KIND_EXCHANGE_ROWS = 0, 1, 2
REGION_NAMES = ("standard", "interleaved")  # Placement.region holds indices (planner.model.REGION_CODES)

SEARCH_EVALUATIONS = 128  # first-fit runs per group for a fresh placement
REPLACE_EVALUATIONS = 32  # per changed group when re-placing after an edit (every drag)
_KEPT_PACKINGS = 256  # packings of earlier placements kept beyond the current ones (undo)
_SUM_LIMIT = 1 << 62

ALGORITHM = (
    "whole-program allocations stacked (granule-aligned at the bottom, the rest, such as the exchange "
    "rows, on top); the others cut into groups that share no step; each group first fit ordered by "
    "granule, bytes, lifetime (largest first), then hill climbing over the order (at most "
    f"{SEARCH_EVALUATIONS} first-fit runs per group, {REPLACE_EVALUATIONS} when re-placing after an edit) "
    "while the group's top is above the region's lower bound"
)
CAPACITY_RULE = (
    "both regions and the support reserve share the tile's budget_bytes: capacity(standard) = "
    "budget_bytes − support_reserve_bytes − placed(interleaved); capacity(interleaved) = "
    "min(interleaved_budget_bytes, budget_bytes − support_reserve_bytes − placed(standard)) (none below 0); "
    "a region fits when placed ≤ capacity; the exchange rows count in the standard region; standard_contiguous_overflow_bytes is not counted as capacity"
)


@dataclass(frozen=True)
class RegionPlacement:
    """One region's figures (bytes per tile)."""

    name: str
    lower_bound: int
    placed: int
    fragmentation: int  # placed − lower_bound
    capacity: int
    fits: bool

    def to_json(self) -> dict:
        return {
            "lower_bound": self.lower_bound,
            "placed": self.placed,
            "fragmentation": self.fragmentation,
            "capacity": self.capacity,
            "fits": self.fits,
        }


@dataclass(frozen=True)
class _Group:
    """One independent group of a region: its allocations (global indices, canonical order)."""

    members: np.ndarray
    key: bytes  # the group's contents: identical keys, identical packings


@dataclass(frozen=True)
class _RegionState:
    floor: int  # top of the bottom stack: where groups start
    groups: list[_Group]
    packings: dict[bytes, Packing]  # by group key (never mutated once the placement is built)


@dataclass(frozen=True)
class _State:
    regions: tuple[_RegionState, _RegionState]


@dataclass(frozen=True)
class Placement:
    """Every allocation's offset in its region, and the regions' figures.

    Allocation columns, one row per allocation: the profile's live intervals first, in
    ``ProfileArrays`` interval order (row k is interval k), then each standard step's scratch, each
    interleaved step's scratch (by step), then the exchange rows.
    """

    standard: RegionPlacement
    interleaved: RegionPlacement
    algorithm: str
    capacity_rule: str
    standard_contiguous_overflow_bytes: int  # from the profile, shown, not used (CAPACITY_RULE)
    kind: np.ndarray  # int8 index into KIND_NAMES
    value_id: np.ndarray  # int64, -1 for scratch and exchange rows
    value_row: np.ndarray  # int64 row in ProfileArrays, -1 for scratch and exchange rows
    region: np.ndarray  # int8 index into REGION_NAMES
    offset: np.ndarray  # int64 bytes from the region's start
    bytes: np.ndarray  # int64
    granule: np.ndarray  # int64 the offset is a multiple of
    first_step: np.ndarray  # int64
    last_step: np.ndarray  # int64, inclusive
    _state: _State = field(repr=False, compare=False)

    @property
    def fits(self) -> bool:
        return self.standard.fits and self.interleaved.fits

    @property
    def regions(self) -> dict[str, RegionPlacement]:
        return {"standard": self.standard, "interleaved": self.interleaved}

    @property
    def n_allocations(self) -> int:
        return int(self.offset.size)

    def kind_names(self) -> np.ndarray:
        return np.array(KIND_NAMES, dtype=object)[self.kind]

    def region_names(self) -> np.ndarray:
        return np.array(REGION_NAMES, dtype=object)[self.region]


# ----------------------------------------------------------------------------- allocations


@dataclass(frozen=True)
class _Allocations:
    kind: np.ndarray
    value_row: np.ndarray
    region: np.ndarray
    bytes: np.ndarray
    granule: np.ndarray
    first: np.ndarray
    last: np.ndarray


def _allocations_of(arrays: ProfileArrays, plan: Plan) -> _Allocations:
    rows = arrays.interval_row
    n_steps = arrays.n_steps
    std_steps = np.flatnonzero(arrays.scratch_standard != 0)
    intl_steps = np.flatnonzero(arrays.scratch_interleaved != 0)
    exchange = 1 if arrays.exchange_rows else 0
    parts = (rows.size, std_steps.size, intl_steps.size, exchange)
    kind = np.repeat(np.array([KIND_VALUE, KIND_SCRATCH, KIND_SCRATCH, KIND_EXCHANGE_ROWS], dtype=np.int8), parts)
    whole = np.array([0]), np.array([max(n_steps - 1, 0)])
    return _Allocations(
        kind=kind,
        value_row=np.concatenate((rows, np.full(kind.size - rows.size, -1))).astype(np.int64),
        region=np.concatenate((arrays.region[rows], np.repeat(np.array([0, 1, 0], dtype=np.int8), parts[1:]))).astype(np.int8),
        bytes=np.concatenate((
            plan.figures.bytes[rows], arrays.scratch_standard[std_steps], arrays.scratch_interleaved[intl_steps],
            np.array([arrays.exchange_rows] * exchange),
        )).astype(np.int64),
        granule=np.concatenate((arrays.granule[rows], np.ones(kind.size - rows.size))).astype(np.int64),
        first=np.concatenate((arrays.interval_first, std_steps, intl_steps, whole[0][:exchange])).astype(np.int64),
        last=np.concatenate((arrays.interval_last, std_steps, intl_steps, whole[1][:exchange])).astype(np.int64),
    )


def _check_sums(alloc: _Allocations) -> None:
    """Refuse before packing when an offset or end could reach 2⁶² (module doc)."""
    if alloc.bytes.size and (int(alloc.bytes.min()) < 0 or int(alloc.granule.min()) < 1):
        raise PlacementError("an allocation has negative bytes or a granule below 1: nothing to place")
    for code, name in enumerate(REGION_NAMES):
        mask = alloc.region == code
        # Python integers: exact whatever the sizes (object sums of int64 items).
        total = sum(alloc.bytes[mask].tolist()) + sum(alloc.granule[mask].tolist()) - int(mask.sum())
        if total >= _SUM_LIMIT:
            raise PlacementError(f"{name} region: {total:,} bytes of allocations and padding: too large to place exactly in int64")


# ----------------------------------------------------------------------------- per region


def _groups_of(alloc: _Allocations, movable: np.ndarray, n_steps: int, floor: int) -> list[_Group]:
    """Cut the movable allocations into groups at every step boundary none of them crosses."""
    if movable.size == 0:
        return []
    first, last = alloc.first[movable], alloc.last[movable]
    crossing = np.zeros(n_steps + 1, dtype=np.int64)  # crossing[s]: allocations live at s and s + 1
    np.add.at(crossing, first, 1)
    np.add.at(crossing, last, -1)
    cut_after = np.cumsum(crossing)[:-1] == 0
    group_of_step = np.concatenate(([0], np.cumsum(cut_after[:-1])))
    group_start = np.flatnonzero(np.concatenate(([True], cut_after[:-1])))
    group = group_of_step[first]
    rel_first, rel_last = first - group_start[group], last - group_start[group]
    size, granule = alloc.bytes[movable], alloc.granule[movable]
    order = np.lexsort((movable, size, granule, rel_last, rel_first, group))
    sorted_group = group[order]
    bounds = np.flatnonzero(np.concatenate(([True], sorted_group[1:] != sorted_group[:-1], [True])))
    contents = np.stack((rel_first[order], rel_last[order], granule[order], size[order]), axis=1)
    floor_bytes = np.int64(floor).tobytes()
    members = movable[order]
    return [
        _Group(members[a:b], floor_bytes + contents[a:b].tobytes())
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
    ]


def _stack(offsets: np.ndarray, alloc: _Allocations, rows: np.ndarray, start: int) -> int:
    """Place ``rows`` one above the other from ``start`` (each aligned); returns the end."""
    end = start
    for row in rows.tolist():
        g = int(alloc.granule[row])
        offsets[row] = -(-end // g) * g
        end = int(offsets[row]) + int(alloc.bytes[row])
    return end


def _warm_order(group: _Group, previous: _RegionState | None, index: int) -> list[np.ndarray]:
    """The previous placement's order of the same group, in this group's member positions."""
    if previous is None or index >= len(previous.groups):
        return []
    before = previous.groups[index]
    packing = previous.packings.get(before.key)
    if packing is None or before.members.size != group.members.size:
        return []
    sorter = np.argsort(group.members)
    if not np.array_equal(group.members[sorter], np.sort(before.members)):
        return []
    position = np.empty(group.members.size, dtype=np.int64)
    position[sorter] = np.arange(group.members.size)
    # before.members[packing.order] are global indices; find their positions in this group.
    return [position[np.searchsorted(group.members[sorter], before.members[packing.order])]]


def _place_region(
    code: int, alloc: _Allocations, n_steps: int, lower_bound: int, offsets: np.ndarray,
    previous: _RegionState | None, evaluations: int,
) -> tuple[int, _RegionState]:
    in_region = np.flatnonzero(alloc.region == code)
    whole = (alloc.first[in_region] <= 0) & (alloc.last[in_region] >= n_steps - 1)
    bottom = in_region[whole & (alloc.granule[in_region] > 1)]
    on_top = in_region[whole & (alloc.granule[in_region] == 1)]
    bottom = bottom[np.lexsort((bottom, -alloc.granule[bottom]))]
    floor = _stack(offsets, alloc, bottom, 0)
    on_top_bytes = int(alloc.bytes[on_top].sum())
    target = lower_bound - on_top_bytes  # groups ending at or below this leave placed at the bound
    groups = _groups_of(alloc, in_region[~whole], n_steps, floor)
    kept = dict(previous.packings) if previous is not None else {}
    packings: dict[bytes, Packing] = {}
    top = floor
    for index, group in enumerate(groups):
        packing = packings.get(group.key) or kept.get(group.key)
        if packing is not None and packing.top > target and packing.evaluations < evaluations:
            packing = None  # cached from a search stopped at a higher target: search further
        if packing is None:
            m = group.members
            conflicts = conflicts_of(alloc.first[m], alloc.last[m])
            packing = pack(
                alloc.bytes[m], alloc.granule[m], alloc.first[m], alloc.last[m], floor=floor, target=target,
                orders=_warm_order(group, previous, index), max_evaluations=evaluations, conflicts=conflicts,
            )
            _check_group(packing, alloc, m, floor, conflicts)
        packings[group.key] = packing
        offsets[group.members] = packing.offsets
        top = max(top, packing.top)
    _stack(offsets, alloc, on_top, top)
    for key in list(kept)[-_KEPT_PACKINGS:]:
        packings.setdefault(key, kept[key])
    return floor, _RegionState(floor, groups, packings)


def _check_group(packing: Packing, alloc: _Allocations, members: np.ndarray, floor: int, conflicts: Conflicts) -> None:
    """Aligned, above the floor, and no two allocations live at a common step overlapping."""
    o, s = packing.offsets, alloc.bytes[members]
    if np.any(o % alloc.granule[members]) or np.any(o < floor):
        raise PlacementError("internal error: a packed allocation is unaligned or below its floor")
    i = np.repeat(np.arange(members.size), np.diff(conflicts.start))
    j = conflicts.neighbours
    clash = (s[i] > 0) & (s[j] > 0) & (o[i] < o[j] + s[j]) & (o[j] < o[i] + s[i])
    if clash.any():
        raise PlacementError("internal error: two allocations live at a common step overlap")


# ----------------------------------------------------------------------------- the placement


def _capacities(arrays: ProfileArrays, placed_standard: int, placed_interleaved: int) -> tuple[int, int]:
    usable = arrays.budget_bytes - arrays.support_reserve_bytes
    standard = usable - placed_interleaved
    interleaved = min(arrays.interleaved_budget_bytes, usable - placed_standard)
    return max(standard, 0), max(interleaved, 0)


def place(arrays: ProfileArrays, plan: Plan, *, previous: Placement | None = None, evaluations: int | None = None) -> Placement:
    """Place every allocation of ``plan`` (module doc).

    ``previous``: a placement of the same profile (any plan of it, e.g. before a what-if edit);
    groups it already packed are reused and changed ones warm-started from it. ``evaluations``:
    first-fit runs per group for the improvement search (default ``SEARCH_EVALUATIONS``, or
    ``REPLACE_EVALUATIONS`` with ``previous``).
    """
    alloc = _allocations_of(arrays, plan)
    _check_sums(alloc)
    if previous is not None and not _same_allocations(previous, alloc):
        previous = None
    if evaluations is None:
        evaluations = REPLACE_EVALUATIONS if previous is not None else SEARCH_EVALUATIONS
    bounds = (int(plan.peaks.standard), int(plan.peaks.interleaved))
    offsets = np.zeros(alloc.bytes.size, dtype=np.int64)
    states = []
    for code in (0, 1):
        before = previous._state.regions[code] if previous is not None else None
        _, state = _place_region(code, alloc, arrays.n_steps, bounds[code], offsets, before, evaluations)
        states.append(state)
    _check_stacks(alloc, offsets, states)
    ends = offsets + alloc.bytes
    placed = [int(ends[alloc.region == code].max(initial=0)) for code in (0, 1)]
    for code in (0, 1):
        if placed[code] < bounds[code]:
            raise PlacementError(f"internal error: {REGION_NAMES[code]} placed below its lower bound (an overlap)")
    capacity = _capacities(arrays, placed[0], placed[1])
    figures = [
        RegionPlacement(REGION_NAMES[c], bounds[c], placed[c], placed[c] - bounds[c], capacity[c], placed[c] <= capacity[c])
        for c in (0, 1)
    ]
    value_id = np.where(alloc.value_row >= 0, arrays.value_ids[np.maximum(alloc.value_row, 0)], -1) if arrays.n_values else alloc.value_row.copy()
    result = Placement(
        standard=figures[0],
        interleaved=figures[1],
        algorithm=ALGORITHM,
        capacity_rule=CAPACITY_RULE,
        standard_contiguous_overflow_bytes=arrays.standard_contiguous_overflow_bytes,
        kind=alloc.kind,
        value_id=value_id.astype(np.int64),
        value_row=alloc.value_row,
        region=alloc.region,
        offset=offsets,
        bytes=alloc.bytes,
        granule=alloc.granule,
        first_step=alloc.first,
        last_step=alloc.last,
        _state=_State((states[0], states[1])),
    )
    for column in (result.kind, result.value_id, result.value_row, result.region, result.offset, result.bytes,
                   result.granule, result.first_step, result.last_step):
        column.flags.writeable = False
    return result


def _same_allocations(previous: Placement, alloc: _Allocations) -> bool:
    return (
        previous.n_allocations == alloc.bytes.size
        and np.array_equal(previous.first_step, alloc.first)
        and np.array_equal(previous.last_step, alloc.last)
        and np.array_equal(previous.region, alloc.region)
        and np.array_equal(previous.granule, alloc.granule)
    )


def _check_stacks(alloc: _Allocations, offsets: np.ndarray, states: list[_RegionState]) -> None:
    """The whole-program stacks overlap neither each other nor any group (groups were checked)."""
    ends = offsets + alloc.bytes
    for code, state in enumerate(states):
        in_region = alloc.region == code
        if np.any(offsets[in_region] % alloc.granule[in_region]):
            raise PlacementError("internal error: an unaligned allocation")
        grouped = np.zeros(alloc.bytes.size, dtype=bool)
        for group in state.groups:
            grouped[group.members] = True
        stacked = np.flatnonzero(in_region & ~grouped & (alloc.bytes > 0))
        order = stacked[np.argsort(offsets[stacked], kind="stable")]
        if np.any(ends[order][:-1] > offsets[order][1:]):
            raise PlacementError("internal error: whole-program allocations overlap")
        group_rows = np.flatnonzero(grouped & (alloc.bytes > 0))
        if group_rows.size and order.size:
            low, high = int(offsets[group_rows].min()), int(ends[group_rows].max())
            for row in order.tolist():
                if offsets[row] < high and low < ends[row]:
                    raise PlacementError("internal error: a whole-program allocation overlaps a group")

