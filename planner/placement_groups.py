"""One region of a placement (``planner.placement`` describes the whole): the whole-program stacks,
the cut into independent groups, each group packed (``planner.packing``) or taken from an earlier
placement, and the checks each packed group passes before its offsets are used.

A re-placement (``previous`` given, same allocations) does not cut the region again: an edit changes
bytes, never live steps, so the groups are the previous ones; only the groups holding an allocation
whose bytes changed get a new key and are re-packed (warm-started from their previous order), and
every other allocation keeps its previous offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .packing import Conflicts, Packing, PlacementError, conflicts_of, group_lower_bound, pack

KEPT_PACKINGS = 256  # packings of earlier placements kept beyond the current ones (undo)


@dataclass(frozen=True)
class Allocations:
    """Every allocation of a placement, as columns (``planner.placement`` builds them)."""

    kind: np.ndarray
    value_row: np.ndarray
    region: np.ndarray
    bytes: np.ndarray
    granule: np.ndarray
    first: np.ndarray
    last: np.ndarray


@dataclass(frozen=True)
class Group:
    """One independent group of a region: its allocations (global indices, canonical order)."""

    members: np.ndarray
    key: bytes  # the floor and the group's contents: identical keys, identical packings


@dataclass(frozen=True)
class RegionState:
    """What a later re-placement reuses. Never mutated once the placement is built."""

    floor: int  # top of the bottom stack: where groups start
    groups: list[Group]
    group_of: np.ndarray  # per allocation (all regions): its group's index here, -1 if none
    packings: dict[bytes, Packing]  # by group key


def groups_of(alloc: Allocations, movable: np.ndarray, n_steps: int, floor: int) -> tuple[list[Group], np.ndarray]:
    """Cut the movable allocations into groups at every step boundary none of them crosses; also
    each allocation's group index (-1 for the others)."""
    group_of = np.full(alloc.bytes.size, -1, dtype=np.int64)
    if movable.size == 0:
        return [], group_of
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
    group_of[members] = np.repeat(np.arange(bounds.size - 1), np.diff(bounds))
    groups = [
        Group(members[a:b], floor_bytes + contents[a:b].tobytes())
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())
    ]
    return groups, group_of


def group_of_members(alloc: Allocations, members: np.ndarray, floor: int) -> Group:
    """The group of these allocations, ordered and keyed as ``groups_of`` does (a group starts at its
    first member's first step: an allocation live there cannot have started before the cut)."""
    first, last = alloc.first[members], alloc.last[members]
    start = int(first.min())
    size, granule = alloc.bytes[members], alloc.granule[members]
    order = np.lexsort((members, size, granule, last - start, first - start))
    contents = np.stack(((first - start)[order], (last - start)[order], granule[order], size[order]), axis=1)
    return Group(members[order], np.int64(floor).tobytes() + contents.tobytes())


def stack(offsets: np.ndarray, alloc: Allocations, rows: np.ndarray, start: int) -> int:
    """Place ``rows`` one above the other from ``start`` (each aligned); returns the end."""
    end = start
    for row in rows.tolist():
        g = int(alloc.granule[row])
        offsets[row] = -(-end // g) * g
        end = int(offsets[row]) + int(alloc.bytes[row])
    return end


def warm_order(group: Group, previous: RegionState | None, index: int) -> list[np.ndarray]:
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


@dataclass(frozen=True)
class Previous:
    """An earlier placement of the same allocations (maybe other bytes): its region state, offsets
    and bytes."""

    state: RegionState
    offsets: np.ndarray
    bytes: np.ndarray


def place_region(
    code: int,
    alloc: Allocations,
    n_steps: int,
    lower_bound: int,
    offsets: np.ndarray,
    previous: Previous | None,
    evaluations: int,
    reuse: bool,
) -> RegionState:
    """Fill ``offsets`` for region ``code``'s allocations (``planner.placement`` module doc)."""
    in_region = np.flatnonzero(alloc.region == code)
    whole = (alloc.first[in_region] <= 0) & (alloc.last[in_region] >= n_steps - 1)
    bottom = in_region[whole & (alloc.granule[in_region] > 1)]
    on_top = in_region[whole & (alloc.granule[in_region] == 1)]
    bottom = bottom[np.lexsort((bottom, -alloc.granule[bottom]))]
    floor = stack(offsets, alloc, bottom, 0)
    target = lower_bound - int(alloc.bytes[on_top].sum())  # groups ending at or below this leave placed at the bound
    before = previous.state if previous is not None else None
    if previous is not None and reuse and previous.state.floor == floor:
        groups, group_of = list(previous.state.groups), previous.state.group_of
        changed = np.unique(group_of[alloc.bytes != previous.bytes])
        fresh = set(changed[changed >= 0].tolist())
        for index in fresh:
            groups[index] = group_of_members(alloc, groups[index].members, floor)
        grouped = group_of >= 0
        offsets[grouped & (alloc.region == code)] = previous.offsets[grouped & (alloc.region == code)]
    else:
        groups, group_of = groups_of(alloc, in_region[~whole], n_steps, floor)
        fresh = None  # every group's offsets are to be written
    kept = dict(before.packings) if before is not None else {}
    # Packings already known (an earlier placement's, for an unchanged or reverted group) are kept,
    # unless their search stopped at a higher target with budget left ("unfinished").
    chosen: dict[int, Packing] = {}
    unfinished: dict[int, Packing] = {}
    for index, group in enumerate(groups):
        known = kept.get(group.key) if reuse else None
        if known is None:
            continue
        if known.top > target and known.evaluations < evaluations:
            unfinished[index] = known
        else:
            chosen[index] = known
    # The region's top is the highest group's: a group needs searching only while it is above both
    # the lower bound and the top some other group already reaches. So the rest are packed heaviest
    # first (by their own lower bound), each aiming at that running ceiling.
    ceiling = max([target, floor, *(p.top for p in chosen.values())])
    todo = [i for i in range(len(groups)) if i not in chosen]
    weight = {
        i: group_lower_bound(
            alloc.bytes[groups[i].members], alloc.first[groups[i].members], alloc.last[groups[i].members]
        )
        for i in todo
    }
    packings: dict[bytes, Packing] = {}  # packed in this call, by key (identical groups share one)
    for index in sorted(todo, key=lambda i: (-weight[i], i)):
        group = groups[index]
        packing = packings.get(group.key) if reuse else None
        if packing is None and index in unfinished and unfinished[index].top <= ceiling:
            packing = unfinished[index]
        if packing is None:
            m = group.members
            conflicts = conflicts_of(alloc.first[m], alloc.last[m])
            warm = [unfinished[index].order] if index in unfinished else warm_order(group, before, index)
            packing = pack(
                alloc.bytes[m],
                alloc.granule[m],
                alloc.first[m],
                alloc.last[m],
                floor=floor,
                target=ceiling,
                orders=warm,
                max_evaluations=evaluations,
                conflicts=conflicts,
            )
            check_group(packing, alloc, m, floor, conflicts)
        packings[group.key] = packing
        chosen[index] = packing
        ceiling = max(ceiling, packing.top)
    top = floor
    for index, group in enumerate(groups):
        packing = chosen[index]
        if fresh is None or index in fresh or index in weight:
            offsets[group.members] = packing.offsets
        packings.setdefault(group.key, packing)
        top = max(top, packing.top)
    stack(offsets, alloc, on_top, top)
    for key in list(kept)[-KEPT_PACKINGS:]:
        packings.setdefault(key, kept[key])
    return RegionState(floor, groups, group_of, packings)


def check_group(packing: Packing, alloc: Allocations, members: np.ndarray, floor: int, conflicts: Conflicts) -> None:
    """Aligned, above the floor, and no two allocations live at a common step overlapping."""
    o, s = packing.offsets, alloc.bytes[members]
    if np.any(o % alloc.granule[members]) or np.any(o < floor):
        raise PlacementError("internal error: a packed allocation is unaligned or below its floor")
    i = np.repeat(np.arange(members.size), np.diff(conflicts.start))
    j = conflicts.neighbours
    clash = (s[i] > 0) & (s[j] > 0) & (o[i] < o[j] + s[j]) & (o[j] < o[i] + s[i])
    if clash.any():
        raise PlacementError("internal error: two allocations live at a common step overlap")


def check_stacks(alloc: Allocations, offsets: np.ndarray, states: list[RegionState]) -> None:
    """Everything aligned; the whole-program stacks overlap neither each other nor any group
    (within groups, ``check_group`` checked each packing when it was made)."""
    if np.any(offsets % alloc.granule) or np.any(offsets < 0):
        raise PlacementError("internal error: an unaligned allocation")
    ends = offsets + alloc.bytes
    for code, state in enumerate(states):
        in_region = alloc.region == code
        grouped = state.group_of >= 0
        stacked = np.flatnonzero(in_region & ~grouped & (alloc.bytes > 0))
        order = stacked[np.argsort(offsets[stacked], kind="stable")]
        if np.any(ends[order][:-1] > offsets[order][1:]):
            raise PlacementError("internal error: whole-program allocations overlap")
        group_rows = np.flatnonzero(in_region & grouped & (alloc.bytes > 0))
        if group_rows.size and order.size:
            low, high = int(offsets[group_rows].min()), int(ends[group_rows].max())
            if np.any((offsets[order] < high) & (ends[order] > low)):
                raise PlacementError("internal error: a whole-program allocation overlaps a group")
