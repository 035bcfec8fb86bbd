"""Packing one group of allocations into one address range: an offset per allocation such that two
allocations live at a common step never overlap, each starting at a multiple of its granule, and the
highest end address (the *top*) as low as possible. This is the dynamic storage allocation problem
(NP-hard in general); ``planner.placement`` cuts a region into independent groups and calls ``pack``
on each.

The method (TFLite's and TVM USMP's planners are of this family):

1. **First fit in an order.** Allocations are taken one at a time; each goes to the lowest offset
   (a multiple of its granule, at least ``floor``) where it overlaps no allocation already placed that
   is live at a common step. Every placement is the first fit of some order: taking any feasible
   placement's allocations by increasing offset, first fit puts each at or below where that placement
   has it (the ones placed before it only moved down, and they ended below it). So searching orders
   loses nothing.
2. **Start orders.** By granule (largest first), then bytes (largest first), then longest lifetime:
   the granule-aligned buffers stack without padding at the bottom and the small ones fill the gaps
   above and between them. A plain bytes-first order leaves 2.6 % on the sample's standard region
   because 16 KiB-aligned buffers then land on unaligned tops and pad; this order reaches the lower
   bound there. A caller may add orders (a previous placement's, to warm-start after an edit); the
   best is kept.
3. **Improvement search (hill climbing over the order, as TVM USMP's ``hill_climb``).** While the top
   is above ``target`` and the evaluation budget lasts: take an allocation that ends at the top (a
   seeded random one among them), pick it or one of the allocations live at a common step with it (the
   ones that pushed it up), move that one to a random earlier position of the order, re-run first fit
   from that position only (the prefix's offsets are kept), and keep the new order when the top is not
   higher (ties are accepted, so the search can walk across plateaus). Moving only the top allocation
   itself, as USMP does, closed less than half as much of the gap on random instances. Deterministic:
   the seed is fixed, the budget is a count of evaluations, not a time.

Everything is int64; ``planner.placement`` has checked that no sum of bytes and padding can reach
2⁶² before calling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import TilescopeError

_NO_LIMIT = np.int64(1 << 62)  # an upper end above every offset (sums are checked < 2**62)


class PlacementError(TilescopeError):
    """Allocations that cannot be placed exactly (int64 limits, too many conflicts) or a broken
    invariant found by a check: a refusal, never a wrong figure."""


@dataclass(frozen=True)
class Packing:
    """One group's offsets (in the input's order), the order whose first fit gave them, the top."""

    offsets: np.ndarray
    order: np.ndarray
    top: int
    evaluations: int  # first-fit runs spent (start orders and search moves)


@dataclass(frozen=True)
class Conflicts:
    """Which allocations are live at a common step, as neighbour lists: allocation i's are
    ``neighbours[start[i]:start[i + 1]]`` (i itself excluded)."""

    start: np.ndarray
    neighbours: np.ndarray

    @property
    def pairs(self) -> int:
        return int(self.neighbours.size)

    def of(self, i: int) -> np.ndarray:
        return self.neighbours[self.start[i] : self.start[i + 1]]


DENSE_LIMIT = 2048  # up to this many allocations, conflicts come from an n × n comparison
PAIR_LIMIT = 100_000_000  # more (ordered) conflicting pairs than this in one group: refused


def conflicts_of(first: np.ndarray, last: np.ndarray) -> Conflicts:
    """Conflicts of allocations live over steps ``first[i]..last[i]``."""
    n = first.size
    if n <= DENSE_LIMIT:
        overlap = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
        np.fill_diagonal(overlap, False)
        rows, cols = np.nonzero(overlap)
    else:
        # Sorted by first step, i's later neighbours are the positions after it up to the last one
        # starting by last[i]; every pair is found once that way, then both directions are kept.
        by_first = np.argsort(first, kind="stable")
        starts = first[by_first]
        upto = np.searchsorted(starts, last[by_first], side="right")
        counts = upto - np.arange(n) - 1
        total = 2 * int(counts.sum())
        if total > PAIR_LIMIT:
            raise PlacementError(f"{total:,} conflicting pairs among {n:,} allocations: too many to place")
        low = np.repeat(np.arange(n), counts)
        high = np.arange(low.size) - np.repeat(np.cumsum(counts) - counts, counts) + low + 1
        a, b = by_first[low], by_first[high]
        rows, cols = np.concatenate((a, b)), np.concatenate((b, a))
        order = np.argsort(rows, kind="stable")
        rows, cols = rows[order], cols[order]
    start = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
    return Conflicts(start, cols.astype(np.int64))


def start_order(sizes: np.ndarray, granules: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Granule descending, then bytes descending, then lifetime descending, then input order."""
    n = sizes.size
    return np.lexsort((np.arange(n), -(last - first), -sizes, -granules))


def first_fit(
    order: np.ndarray,
    sizes: np.ndarray,
    granules: np.ndarray,
    conflicts: Conflicts,
    floor: int,
    offsets: np.ndarray | None = None,
    start: int = 0,
) -> np.ndarray:
    """Offsets of first fit in ``order``; positions before ``start`` keep ``offsets``' values."""
    n = sizes.size
    out = np.zeros(n, dtype=np.int64) if offsets is None else offsets.copy()
    placed = np.zeros(n, dtype=bool)
    placed[order[:start]] = True
    bounds, neighbours = conflicts.start.tolist(), conflicts.neighbours
    size_of, granule_of = sizes.tolist(), granules.tolist()
    head = np.array([floor], dtype=np.int64)
    tail = np.array([_NO_LIMIT], dtype=np.int64)
    accumulate = np.maximum.accumulate
    for i in order[start:].tolist():
        near = neighbours[bounds[i] : bounds[i + 1]]
        near = near[placed[near]]
        g, size = granule_of[i], size_of[i]
        if near.size == 0:
            out[i] = -(-floor // g) * g
        else:
            by_offset = near[out[near].argsort(kind="stable")]
            low = out[by_offset]
            # Gap t runs from the highest end among the first t allocations (floor for t = 0; every
            # placed offset is at least the floor) to the next allocation's offset (no limit after
            # the last).
            begins = np.concatenate((head, accumulate(low + sizes[by_offset])))
            if g > 1:
                begins = -(-begins // g) * g
            out[i] = begins[(begins + size <= np.concatenate((low, tail))).argmax()]
        placed[i] = True
    return out


def top_of(offsets: np.ndarray, sizes: np.ndarray, floor: int) -> int:
    return int(max(floor, int((offsets + sizes).max()))) if sizes.size else int(floor)


def pack(
    sizes: np.ndarray,
    granules: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    *,
    floor: int = 0,
    target: int | None = None,
    orders: Sequence[np.ndarray] = (),
    max_evaluations: int = 64,
    seed: int = 0,
    conflicts: Conflicts | None = None,
) -> Packing:
    """Place one group (module doc). ``target``: stop as soon as the top is at most this (default:
    the group's own lower bound, which no order can beat); ``orders``: extra start orders, tried
    first (a warm start); ``conflicts``: ``conflicts_of(first, last)`` if the caller has it."""
    sizes = np.asarray(sizes, dtype=np.int64)
    granules = np.asarray(granules, dtype=np.int64)
    first = np.asarray(first, dtype=np.int64)
    last = np.asarray(last, dtype=np.int64)
    if target is None:
        target = floor + group_lower_bound(sizes, first, last)
    conflicts = conflicts if conflicts is not None else conflicts_of(first, last)
    best = None
    evaluations = 0
    for order in (*orders, start_order(sizes, granules, first, last)):
        order = np.asarray(order, dtype=np.int64)
        offsets = first_fit(order, sizes, granules, conflicts, floor)
        evaluations += 1
        top = top_of(offsets, sizes, floor)
        if best is None or top < best[2]:
            best = (order, offsets, top)
        if top <= target:
            break
    assert best is not None  # the start order is always tried
    order, offsets, top = best
    rng = np.random.default_rng(seed)
    position = np.empty(sizes.size, dtype=np.int64)
    while top > target and evaluations < max_evaluations:
        at_top = np.flatnonzero(offsets + sizes == top)
        highest = int(at_top[rng.integers(at_top.size)])
        movers = np.concatenate(([highest], conflicts.of(highest)))
        mover = int(movers[rng.integers(movers.size)])
        position[order] = np.arange(order.size)
        here = int(position[mover])
        if here == 0:
            evaluations += 1  # nothing earlier to move it before: spend the evaluation, try another
            continue
        to = int(rng.integers(here))
        trial = np.concatenate((order[:to], [mover], order[to:here], order[here + 1 :]))
        trial_offsets = first_fit(trial, sizes, granules, conflicts, floor, offsets, start=to)
        evaluations += 1
        trial_top = top_of(trial_offsets, sizes, floor)
        if trial_top <= top:
            order, offsets, top = trial, trial_offsets, trial_top
    return Packing(offsets, order, top, evaluations)


def group_lower_bound(sizes: np.ndarray, first: np.ndarray, last: np.ndarray) -> int:
    """The most bytes live at one step: no placement's top (above the floor) is lower."""
    if sizes.size == 0:
        return 0
    base = int(first.min())
    diff = np.zeros(int(last.max()) - base + 2, dtype=np.int64)
    np.add.at(diff, first - base, sizes)
    np.add.at(diff, last - base + 1, -sizes)
    return int(np.cumsum(diff).max())
