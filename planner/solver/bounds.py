"""Proofs that no placement exists, found before any search, each with the sentence that states it.

1. **The compiler's live-byte bound** (``search::place``, compiler-formats.md §6.2): capacity = Σ
   range lengths; peak = max over requests r of the smallest sizes of the requests live at r's
   first event; peak > capacity → deficit = peak − capacity. (A request with no legal start counts
   at its ``bytes`` here, where the compiler counts 0; it is refused by the next rule anyway.)
2. **A request with no legal start**: no usable piece of any range holds it (aligned, inside one
   range, not across the boundary, interleaved above ``boundary + interleaved_offset``, out of the
   host range when live at program start or end).
3. **Per-kind bounds** the compiler does not have: at any event, the interleaved requests live then
   must fit in the ranges' bytes at or above ``boundary + interleaved_offset``, and the requests live
   at program start or end (kept out of the host range) in the ranges' bytes outside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.placement_problem import INTERLEAVED, PlacementProblem

from .arrays import Arrays, host_restricted


@dataclass(frozen=True)
class Bound:
    proof: str
    deficit_bytes: int | None


def _peak_at_firsts(first: np.ndarray, last: np.ndarray, sizes: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """(max over requests r in mask of Σ sizes of mask requests live at r's first event, that event)."""
    if not mask.any():
        return 0, 0
    f, l, z = first[mask], last[mask], sizes[mask]
    events = np.unique(f)
    starts = np.searchsorted(events, f)
    ends = np.searchsorted(events, l, side="right")  # live at events[k] for starts ≤ k < ends
    diff = np.zeros(events.size + 1, dtype=np.int64)
    np.add.at(diff, starts, z)
    np.add.at(diff, ends, -z)
    live = np.cumsum(diff)[:-1]
    k = int(live.argmax())
    return int(live[k]), int(events[k])


def _room(ranges: list[tuple[int, int]]) -> int:
    return sum(max(0, e - s) for s, e in ranges)


def peak_live_bytes(problem: PlacementProblem, arrays: Arrays) -> int:
    first = np.array([r.first for r in problem.requests], dtype=np.int64)
    last = np.array([r.last for r in problem.requests], dtype=np.int64)
    return _peak_at_firsts(first, last, arrays.sizes_min, np.ones(first.size, dtype=bool))[0]


def infeasibility(problem: PlacementProblem, arrays: Arrays) -> Bound | None:
    """The first of the module's bounds that no placement can meet, or None."""
    requests = problem.requests
    first = np.array([r.first for r in requests], dtype=np.int64)
    last = np.array([r.last for r in requests], dtype=np.int64)
    every = np.ones(len(requests), dtype=bool)
    capacity = problem.total_capacity
    peak, event = _peak_at_firsts(first, last, arrays.sizes_min, every)
    if peak > capacity:
        return Bound(
            f"the bytes live at event {event} ({peak:,} B, each request at its smallest size) exceed the "
            f"{capacity:,} B of all ranges by {peak - capacity:,} B (the compiler's live-byte bound)",
            peak - capacity,
        )
    for i in range(arrays.n):
        if arrays.dom_ptr[i] == arrays.dom_ptr[i + 1]:
            roots = ", ".join(str(root) for root, _ in problem.requests[i].roots[:4])
            return Bound(
                f"request {i} (roots {roots}) of {problem.requests[i].bytes:,} B has no legal start in any range", None
            )
    if problem.plain:
        return None
    interleaved = np.array([r.request_class == INTERLEAVED for r in requests], dtype=bool)
    floor = problem.region_boundary + problem.interleaved_offset
    room = _room([(max(s, floor), e) for s, e in problem.ranges])
    peak, event = _peak_at_firsts(first, last, arrays.sizes_min, interleaved)
    if peak > room:
        return Bound(
            f"the interleaved bytes live at event {event} ({peak:,} B) exceed the {room:,} B of the ranges at or "
            f"above {floor:,} by {peak - room:,} B",
            peak - room,
        )
    host = problem.host_scratch_range
    if host is not None:
        restricted = np.array([host_restricted(problem, r) for r in requests], dtype=bool)
        outside = [piece for s, e in problem.ranges for piece in ((s, min(e, host[0])), (max(s, host[1]), e))]
        room = _room(outside)
        peak, event = _peak_at_firsts(first, last, arrays.sizes_min, restricted)
        if peak > room:
            return Bound(
                f"the bytes live at event {event} of requests live at program start or end ({peak:,} B) exceed the "
                f"{room:,} B of the ranges outside the host scratch range {list(host)} by {peak - room:,} B",
                peak - room,
            )
    return None
