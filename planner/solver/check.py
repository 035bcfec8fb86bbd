"""The production re-check of a placement: every rule of the problem, computed from the problem's
dataclasses directly (it shares no code with the search's domains, edges or sections), before any
placement is reported as *placed*. ``violations`` lists what is wrong; empty means feasible.
"""

from __future__ import annotations

import numpy as np

from tilescope.models.placement_problem import (
    INTERLEAVED,
    PROGRAM_END,
    PROGRAM_START,
    PlacementProblem,
    PlacementRequest,
)


def occupied(problem: PlacementProblem, request: PlacementRequest, start: int) -> tuple[int, int]:
    """``[start, end)`` of a request based at ``start``: a strided group in region 1 occupies
    stride × members bytes, every other request its ``bytes``."""
    if not problem.plain and request.region1_stride is not None and start >= problem.region_boundary:
        return start, start + request.region1_stride * len(request.roots)
    return start, start + request.bytes


def _elements(problem: PlacementProblem, start: int, end: int) -> list[tuple[int, int, int]]:
    """(region, first element, end element) of the elements a byte range touches, per region."""
    out = []
    boundary = problem.region_boundary
    for region, low, high, size in (
        (0, start, min(end, boundary), problem.region0_element_bytes),
        (1, max(start, boundary), end, problem.region1_element_bytes),
    ):
        if low < high:
            out.append((region, low // size, -(-high // size)))
    return out


def _single(problem: PlacementProblem, i: int, request: PlacementRequest, start: int) -> list[str]:
    where = f"request {i}"
    if start < 0:
        return [f"{where} has no address"]
    bad = []
    low, high = occupied(problem, request, start)
    if start % request.alignment:
        bad.append(f"{where} at {start} is not a multiple of its alignment {request.alignment}")
    if high > low and not any(s <= low and high <= e for s, e in problem.ranges):
        bad.append(f"{where} [{low}, {high}) is not inside one range")
    if problem.plain:
        return bad
    boundary = problem.region_boundary
    if low < boundary < high:
        bad.append(f"{where} [{low}, {high}) crosses the region boundary {boundary}")
    if request.request_class == INTERLEAVED and low < boundary + problem.interleaved_offset:
        bad.append(f"{where} is interleaved but starts at {low} < {boundary + problem.interleaved_offset}")
    if request.region1_stride is not None:
        element = problem.region1_element_bytes if low >= boundary else problem.region0_element_bytes
        if low % element or low % problem.region0_element_bytes:
            bad.append(f"{where} has a stride but starts at {low}, not a multiple of its region's element {element}")
    host = problem.host_scratch_range
    at_ends = request.first == PROGRAM_START or request.last == PROGRAM_END
    if host is not None and at_ends and low < host[1] and host[0] < high:
        bad.append(f"{where} is live at program start or end but overlaps the host scratch range {list(host)}")
    return bad


def violations(problem: PlacementProblem, starts: np.ndarray | list[int], limit: int = 20) -> list[str]:
    """Every broken rule (at most ``limit`` listed) of base addresses ``starts`` (one per request)."""
    requests = problem.requests
    starts = [int(s) for s in starts]
    if len(starts) != len(requests):
        return [f"{len(starts)} addresses for {len(requests)} requests"]
    bad: list[str] = []
    for i, request in enumerate(requests):
        bad.extend(_single(problem, i, request, starts[i]))
    if bad:
        return bad[:limit]
    spans = [occupied(problem, r, s) for r, s in zip(requests, starts)]
    owner = {root: i for i, r in enumerate(requests) for root, _ in r.roots}
    first = np.array([r.first for r in requests], dtype=np.int64)
    last = np.array([r.last for r in requests], dtype=np.int64)
    low = np.array([s[0] for s in spans], dtype=np.int64)
    high = np.array([s[1] for s in spans], dtype=np.int64)
    # Time-overlapping pairs that share a byte, found by sorting on the start address.
    by_low = np.argsort(low, kind="stable")
    for a_pos, a in enumerate(by_low.tolist()):
        for b in by_low[a_pos + 1 :].tolist():
            if low[b] >= high[a]:
                break
            if high[b] > low[b] and high[a] > low[a] and first[a] <= last[b] and first[b] <= last[a]:
                bad.append(
                    f"requests {a} and {b} are live together and overlap in [{max(low[a], low[b])}, {min(high[a], high[b])})"
                )
                if len(bad) >= limit:
                    return bad
    if not problem.plain:
        for i, request in enumerate(requests):
            for root in request.conflicts:
                j = owner.get(root)
                if j is None or j == i:
                    continue
                mine = _elements(problem, *spans[i])
                theirs = _elements(problem, *spans[j])
                if any(ra == rb and a0 < b1 and b0 < a1 for ra, a0, a1 in mine for rb, b0, b1 in theirs):
                    bad.append(f"requests {i} and {j} conflict but share a memory element")
                    if len(bad) >= limit:
                        return bad
    return bad
