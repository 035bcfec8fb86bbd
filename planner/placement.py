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

Re-placement after a what-if edit (``place(..., previous=...)``, ``planner.placement_groups``): an
edit changes bytes, never live steps, so the groups are the previous ones; only the groups holding an
allocation whose bytes changed are re-packed, warm-started from their previous order, and every other
allocation keeps its previous offset. Packings of earlier placements are kept (a bounded number), so
undoing an edit is a look-up and gives back the same offsets.

Capacity and fits (``CAPACITY_RULE``; open in the format, our choice in docs/formats.md §5): the two
regions and the support reserve share the tile's ``budget_bytes``, so each region's capacity is what
the budget leaves after the reserve and the other region's placed top (the interleaved one also at
most ``interleaved_budget_bytes``). The exchange rows are in the standard region, so this is stricter
than the profile's ``fits_budget`` rule, whose effective peak leaves them out.
``standard_contiguous_overflow_bytes`` (0 in the sample; its meaning is not documented) is carried
and shown, never counted as capacity.

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
from .packing import PlacementError
from .placement_exact import Improvement, improve_region, region_verdict
from .placement_groups import Allocations, Previous, RegionState, check_stacks, place_region

__all__ = [
    "ALGORITHM",
    "CAPACITY_RULE",
    "KIND_NAMES",
    "REGION_NAMES",
    "Placement",
    "PlacementError",
    "RegionPlacement",
    "place",
]

KIND_NAMES = ("value", "scratch", "exchange_rows")  # Placement.kind holds indices into this
KIND_VALUE, KIND_SCRATCH, KIND_EXCHANGE_ROWS = 0, 1, 2
REGION_NAMES = ("standard", "interleaved")  # Placement.region holds indices (planner.model.REGION_CODES)

SEARCH_EVALUATIONS = 128  # first-fit runs per group for a fresh placement
REPLACE_EVALUATIONS = 32  # per changed group when re-placing after an edit (every drag)
_SUM_LIMIT = 1 << 62

ALGORITHM = (
    "whole-program allocations stacked (granule-aligned at the bottom, the rest, such as the exchange "
    "rows, on top); the others cut into groups that share no step; each group first fit ordered by "
    "granule, bytes, lifetime (largest first), then hill climbing over the order (at most "
    f"{SEARCH_EVALUATIONS} first-fit runs per group, {REPLACE_EVALUATIONS} when re-placing after an edit) "
    "while the group's top is above the region's lower bound; for a fresh placement with time given "
    "(tilescope place), the exact solver (planner.solver) then re-places the groups at a region's top "
    "when that lowers it"
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
    verdict: str = "placed"  # "placed" | "infeasible" | "unknown" against the capacity (placement_exact)
    proof: str = ""
    deficit_bytes: int | None = None

    def to_json(self) -> dict:
        return {
            "lower_bound": self.lower_bound,
            "placed": self.placed,
            "fragmentation": self.fragmentation,
            "capacity": self.capacity,
            "fits": self.fits,
            "verdict": self.verdict,
            "proof": self.proof,
            "deficit_bytes": self.deficit_bytes,
        }


@dataclass(frozen=True)
class _State:
    regions: tuple[RegionState, RegionState]


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


def _allocations_of(arrays: ProfileArrays, plan: Plan) -> Allocations:
    rows = arrays.interval_row
    n_steps = arrays.n_steps
    std_steps = np.flatnonzero(arrays.scratch_standard != 0)
    intl_steps = np.flatnonzero(arrays.scratch_interleaved != 0)
    exchange = 1 if arrays.exchange_rows else 0
    parts = (rows.size, std_steps.size, intl_steps.size, exchange)
    kind = np.repeat(np.array([KIND_VALUE, KIND_SCRATCH, KIND_SCRATCH, KIND_EXCHANGE_ROWS], dtype=np.int8), parts)
    whole = np.array([0]), np.array([max(n_steps - 1, 0)])
    return Allocations(
        kind=kind,
        value_row=np.concatenate((rows, np.full(kind.size - rows.size, -1))).astype(np.int64),
        region=np.concatenate((arrays.region[rows], np.repeat(np.array([0, 1, 0], dtype=np.int8), parts[1:]))).astype(
            np.int8
        ),
        bytes=np.concatenate(
            (
                plan.figures.bytes[rows],
                arrays.scratch_standard[std_steps],
                arrays.scratch_interleaved[intl_steps],
                np.array([arrays.exchange_rows] * exchange),
            )
        ).astype(np.int64),
        granule=np.concatenate((arrays.granule[rows], np.ones(kind.size - rows.size))).astype(np.int64),
        first=np.concatenate((arrays.interval_first, std_steps, intl_steps, whole[0][:exchange])).astype(np.int64),
        last=np.concatenate((arrays.interval_last, std_steps, intl_steps, whole[1][:exchange])).astype(np.int64),
    )


def _check_sums(alloc: Allocations) -> None:
    """Refuse before packing when an offset or end could reach 2⁶² (module doc)."""
    if alloc.bytes.size and (int(alloc.bytes.min()) < 0 or int(alloc.granule.min()) < 1):
        raise PlacementError("an allocation has negative bytes or a granule below 1: nothing to place")
    for code, name in enumerate(REGION_NAMES):
        mask = alloc.region == code
        count = int(mask.sum())
        if not count:
            continue
        # Python integers throughout: count × the largest item bounds the sum; only when that bound
        # is not clearly below the limit is the exact sum taken (item by item).
        if count * (int(alloc.bytes[mask].max()) + int(alloc.granule[mask].max())) < _SUM_LIMIT:
            continue
        total = sum(alloc.bytes[mask].tolist()) + sum(alloc.granule[mask].tolist()) - count
        if total >= _SUM_LIMIT:
            raise PlacementError(
                f"{name} region: {total:,} bytes of allocations and padding: too large to place exactly in int64"
            )


# ----------------------------------------------------------------------------- the placement


def _capacities(arrays: ProfileArrays, placed_standard: int, placed_interleaved: int) -> tuple[int, int]:
    usable = arrays.budget_bytes - arrays.support_reserve_bytes
    standard = usable - placed_interleaved
    interleaved = min(arrays.interleaved_budget_bytes, usable - placed_standard)
    return max(standard, 0), max(interleaved, 0)


def place(
    arrays: ProfileArrays,
    plan: Plan,
    *,
    previous: Placement | None = None,
    evaluations: int | None = None,
    reuse_packings: bool = True,
    exact_seconds: float = 0.0,
) -> Placement:
    """Place every allocation of ``plan`` (module doc).

    ``previous``: a placement of the same profile (any plan of it, e.g. before a what-if edit);
    groups it already packed are reused and changed ones warm-started from it. ``evaluations``:
    first-fit runs per group for the improvement search (default ``SEARCH_EVALUATIONS``, or
    ``REPLACE_EVALUATIONS`` with ``previous``). ``reuse_packings=False`` packs every group anew, even
    one identical to another (the benchmark's figure for profiles without repeated blocks).
    ``exact_seconds``: for a fresh placement (no ``previous``), the time the exact solver may spend
    lowering each region's highest groups (``planner.placement_exact``); 0 keeps the packer's.
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
        before = (
            Previous(previous._state.regions[code], previous.offset, previous.bytes) if previous is not None else None
        )
        states.append(
            place_region(code, alloc, arrays.n_steps, bounds[code], offsets, before, evaluations, reuse_packings)
        )
    improvements: list[Improvement | None] = [None, None]
    if exact_seconds > 0 and previous is None:
        for code in (0, 1):
            top = int((offsets + alloc.bytes)[alloc.region == code].max(initial=0))
            if top > bounds[code]:
                improvements[code] = improve_region(
                    code, alloc, arrays.n_steps, offsets, states[code], exact_seconds / 2
                )
    check_stacks(alloc, offsets, states)
    ends = offsets + alloc.bytes
    placed = [int(ends[alloc.region == code].max(initial=0)) for code in (0, 1)]
    for code in (0, 1):
        if placed[code] < bounds[code]:
            raise PlacementError(f"internal error: {REGION_NAMES[code]} placed below its lower bound (an overlap)")
    capacity = _capacities(arrays, placed[0], placed[1])
    best_capacity = _capacities(arrays, bounds[0], bounds[1])
    figures = [
        RegionPlacement(
            REGION_NAMES[c],
            bounds[c],
            placed[c],
            placed[c] - bounds[c],
            capacity[c],
            placed[c] <= capacity[c],
            *region_verdict(placed[c], bounds[c], capacity[c], best_capacity[c], improvements[c]),
        )
        for c in (0, 1)
    ]
    value_id = (
        np.where(alloc.value_row >= 0, arrays.value_ids[np.maximum(alloc.value_row, 0)], -1)
        if arrays.n_values
        else alloc.value_row.copy()
    )
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
    for column in (
        result.kind,
        result.value_id,
        result.value_row,
        result.region,
        result.offset,
        result.bytes,
        result.granule,
        result.first_step,
        result.last_step,
    ):
        column.flags.writeable = False
    return result


def _same_allocations(previous: Placement, alloc: Allocations) -> bool:
    return (
        previous.n_allocations == alloc.bytes.size
        and np.array_equal(previous.first_step, alloc.first)
        and np.array_equal(previous.last_step, alloc.last)
        and np.array_equal(previous.region, alloc.region)
        and np.array_equal(previous.granule, alloc.granule)
    )
