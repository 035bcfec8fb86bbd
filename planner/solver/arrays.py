"""A placement problem as the flat int64 arrays the search reads, and the bounds that prove a
problem infeasible before any search.

**Domains** (as the compiler's ``search::place`` has them, §6.2 of compiler-formats.md): for each
request, the intervals of legal base addresses, ascending — one per usable piece of a range and
region: ``lo`` (first legal aligned start), ``hi`` (last one: the request still ends inside the
piece), the alignment of that piece (raised to the region's element size for a strided group), the
size there (``stride × members`` for a strided group in region 1), and the piece's element size
(for conflicts; 1 for plain problems). The pieces are the ranges cut at the region boundary
(nothing crosses it); interleaved requests get only the region-1 part at or above
``boundary + interleaved_offset``; a request live at program start or after program end does not
get the host scratch range (it is cut out of every range for it).

**Interference**: two requests interfere when their inclusive lifetimes overlap (no common bytes) or
when either names a root of the other in ``conflicts`` (no common memory element, whatever the
lifetimes). Edges are stored both ways, with a flag saying which rule applies (the element rule
when both do: it is the stronger).

**Sections**: the elementary time intervals between consecutive lifetime boundaries; each request
spans a contiguous run of them. The bytes live in a section (each request at its smallest size) give
the lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.placement_problem import (
    INTERLEAVED,
    PROGRAM_END,
    PROGRAM_START,
    PlacementProblem,
    PlacementRequest,
)

from ..packing import conflicts_of

INF = 1 << 62


@dataclass(frozen=True)
class Arrays:
    n: int
    sizes_min: np.ndarray  # smallest size over the request's domains (its bytes without any)
    dom_ptr: np.ndarray  # request i's domains are dom_ptr[i] .. dom_ptr[i + 1]
    dom_lo: np.ndarray
    dom_hi: np.ndarray
    dom_align: np.ndarray
    dom_size: np.ndarray
    dom_elem: np.ndarray
    edge_ptr: np.ndarray  # CSR of interfering requests
    edge_to: np.ndarray
    edge_conflict: np.ndarray  # 1: the element rule, 0: the byte rule
    has_conflict: np.ndarray
    sec_first: np.ndarray  # request i spans sections sec_first[i] .. sec_last[i] (exclusive)
    sec_last: np.ndarray
    secbuf_ptr: np.ndarray  # CSR: the requests live in each section
    secbuf: np.ndarray
    sec_total: np.ndarray  # Σ sizes_min live in each section
    range_start: np.ndarray  # the union of all ranges, for the section bound
    range_end: np.ndarray
    class_ptr: np.ndarray  # section-bound classes: class c's ranges are class_ptr[c] .. class_ptr[c + 1]
    class_member: np.ndarray  # K × n flattened: 1 where the request belongs to the class
    class_total: np.ndarray  # K × sections flattened: the class's smallest sizes live in each section
    width: np.ndarray  # lifetime in events (last - first + 1)
    area: np.ndarray  # width × smallest size


def host_restricted(problem: PlacementProblem, request: PlacementRequest) -> bool:
    """Live at program start or needed after it: kept out of the host scratch range."""
    return (
        (not problem.plain)
        and problem.host_scratch_range is not None
        and (request.first == PROGRAM_START or request.last == PROGRAM_END)
    )


def _pieces(problem: PlacementProblem, request: PlacementRequest) -> list[tuple[int, int, int]]:
    """The usable ``(start, end, region)`` pieces of the ranges for one request, ascending."""
    if problem.plain:
        return [(s, e, 0) for s, e in problem.ranges]
    cut: list[tuple[int, int]] = list(problem.ranges)
    if host_restricted(problem, request):
        assert problem.host_scratch_range is not None
        hs, he = problem.host_scratch_range
        cut = [piece for s, e in cut for piece in ((s, min(e, hs)), (max(s, he), e)) if piece[0] < piece[1]]
    boundary = problem.region_boundary
    pieces = []
    for s, e in cut:
        if request.request_class != INTERLEAVED and s < boundary:
            pieces.append((s, min(e, boundary), 0))
        low = max(s, boundary + (problem.interleaved_offset if request.request_class == INTERLEAVED else 0))
        if low < e:
            pieces.append((low, e, 1))
    return pieces


def domains_of(problem: PlacementProblem, request: PlacementRequest) -> list[tuple[int, int, int, int, int]]:
    """``(lo, hi, alignment, size, element)`` per usable piece where the request fits (module doc)."""
    out = []
    for s, e, region in _pieces(problem, request):
        if problem.plain:
            align, size, elem = request.alignment, request.bytes, 1
        else:
            elem = problem.region0_element_bytes if region == 0 else problem.region1_element_bytes
            align, size = request.alignment, request.bytes
            if request.region1_stride is not None:
                align = max(align, elem, problem.region0_element_bytes)
                if region == 1:
                    size = request.region1_stride * len(request.roots)
        lo = -(-s // align) * align
        hi = (e - size) // align * align
        if lo <= hi:
            out.append((lo, hi, align, size, elem))
    return out


def build_arrays(problem: PlacementProblem) -> Arrays:
    requests = problem.requests
    n = len(requests)
    dom_ptr = np.zeros(n + 1, dtype=np.int64)
    rows: list[tuple[int, int, int, int, int]] = []
    sizes_min = np.zeros(n, dtype=np.int64)
    for i, request in enumerate(requests):
        doms = domains_of(problem, request)
        rows.extend(doms)
        dom_ptr[i + 1] = len(rows)
        sizes_min[i] = min((d[3] for d in doms), default=request.bytes)
    dom = np.array(rows, dtype=np.int64).reshape(-1, 5)
    first = np.array([r.first for r in requests], dtype=np.int64)
    last = np.array([r.last for r in requests], dtype=np.int64)
    # Interference: lifetimes (byte rule) and conflicts (element rule), both directions, sparse
    # (the packer's sweep: a dump or a CSV may hold many thousand requests).
    time_pairs = conflicts_of(first, last)
    t_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(time_pairs.start))
    c_rows_list: list[int] = []
    c_cols_list: list[int] = []
    if not problem.plain:
        owner = {root: i for i, r in enumerate(requests) for root, _ in r.roots}
        for i, r in enumerate(requests):
            for root in r.conflicts:
                j = owner.get(root)  # roots no request owns are ignored (§4.2)
                if j is not None and j != i:
                    c_rows_list += [i, j]
                    c_cols_list += [j, i]
    all_rows = np.concatenate((t_rows, np.array(c_rows_list, dtype=np.int64)))
    all_cols = np.concatenate((time_pairs.neighbours, np.array(c_cols_list, dtype=np.int64)))
    flag = np.concatenate((np.zeros(t_rows.size, dtype=np.int64), np.ones(len(c_rows_list), dtype=np.int64)))
    key = all_rows * max(n, 1) + all_cols
    order = np.lexsort((-flag, key))  # per pair, the element rule first (it is the stronger)
    key, flag = key[order], flag[order]
    keep = np.concatenate(([True], key[1:] != key[:-1])) if key.size else np.zeros(0, dtype=bool)
    key, edge_conflict = key[keep], flag[keep]
    rows_i, cols = key // max(n, 1), key % max(n, 1)
    edge_ptr = np.searchsorted(rows_i, np.arange(n + 1)).astype(np.int64)
    has_conflict = np.zeros(n, dtype=np.int64)
    has_conflict[rows_i[edge_conflict == 1]] = 1
    # Sections: elementary intervals between lifetime boundaries (last + 1 ends a lifetime).
    points = np.unique(np.concatenate((first, last + 1))) if n else np.zeros(1, dtype=np.int64)
    sec_first = np.searchsorted(points, first).astype(np.int64)
    sec_last = np.searchsorted(points, last + 1).astype(np.int64)
    n_sec = max(int(points.size) - 1, 0)
    counts = np.zeros(n_sec + 1, dtype=np.int64)
    np.add.at(counts, sec_first, 1)
    np.add.at(counts, sec_last, -1)
    live = np.cumsum(counts)[:n_sec]
    secbuf_ptr = np.concatenate(([0], np.cumsum(live))).astype(np.int64)
    secbuf = np.empty(int(secbuf_ptr[-1]), dtype=np.int64)
    fill = secbuf_ptr[:-1].copy()
    sec_total = np.zeros(n_sec, dtype=np.int64)
    for i in np.argsort(first, kind="stable").tolist():
        for s in range(int(sec_first[i]), int(sec_last[i])):
            secbuf[fill[s]] = i
            fill[s] += 1
            sec_total[s] += sizes_min[i]
    class_ptr, class_ranges, class_member = _classes(problem)
    k_classes = class_ptr.size - 1
    class_total = np.zeros(k_classes * n_sec, dtype=np.int64)
    for c in range(k_classes):
        for i in np.flatnonzero(class_member[c * n : (c + 1) * n]).tolist():
            class_total[c * n_sec + int(sec_first[i]) : c * n_sec + int(sec_last[i])] += sizes_min[i]
    return Arrays(
        n=n,
        sizes_min=sizes_min,
        dom_ptr=dom_ptr,
        dom_lo=dom[:, 0].copy(),
        dom_hi=dom[:, 1].copy(),
        dom_align=dom[:, 2].copy(),
        dom_size=dom[:, 3].copy(),
        dom_elem=dom[:, 4].copy(),
        edge_ptr=edge_ptr,
        edge_to=cols.astype(np.int64),
        edge_conflict=edge_conflict,
        has_conflict=has_conflict,
        sec_first=sec_first,
        sec_last=sec_last,
        secbuf_ptr=secbuf_ptr,
        secbuf=secbuf,
        sec_total=sec_total,
        range_start=class_ranges[:, 0].copy(),
        range_end=class_ranges[:, 1].copy(),
        class_ptr=class_ptr,
        class_member=class_member,
        class_total=class_total,
        width=last - first + 1,
        area=(last - first + 1) * sizes_min,
    )


def _classes(problem: PlacementProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The section bound's classes: every request in all ranges; the requests kept out of the host
    range in the ranges outside it; the interleaved ones in the ranges at or above the boundary +
    offset (each only when it has members). Returns (pointers, ranges, membership K × n)."""
    requests = problem.requests
    n = len(requests)
    classes: list[tuple[list[tuple[int, int]], np.ndarray]] = [(list(problem.ranges), np.ones(n, dtype=np.int64))]
    if not problem.plain:
        host = problem.host_scratch_range
        if host is not None:
            member = np.array([host_restricted(problem, r) for r in requests], dtype=np.int64)
            outside = [
                p for s, e in problem.ranges for p in ((s, min(e, host[0])), (max(s, host[1]), e)) if p[0] < p[1]
            ]
            if member.any():
                classes.append((outside, member))
        member = np.array([r.request_class == INTERLEAVED for r in requests], dtype=np.int64)
        floor = problem.region_boundary + problem.interleaved_offset
        above = [(max(s, floor), e) for s, e in problem.ranges if e > max(s, floor)]
        if member.any():
            classes.append((above, member))
    ptr = np.zeros(len(classes) + 1, dtype=np.int64)
    rows: list[tuple[int, int]] = []
    for c, (pieces, _member) in enumerate(classes):
        rows.extend(pieces)
        ptr[c + 1] = len(rows)
    ranges = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return (ptr, ranges, np.concatenate([m for _, m in classes]) if n else np.zeros(0, dtype=np.int64))


def capacity_above(problem: PlacementProblem, floor: int) -> int:
    return sum(max(0, e - max(s, floor)) for s, e in problem.ranges)


def lowest_height(problem: PlacementProblem, live_bytes: int) -> int:
    """The lowest end address that leaves ``live_bytes`` of the ranges below it (no placement of a
    problem with that many bytes live at once ends lower); the top of the ranges plus the excess
    when they hold fewer."""
    total = 0
    for s, e in problem.ranges:
        if total + (e - s) >= live_bytes:
            return s + (live_bytes - total)
        total += e - s
    top = problem.ranges[-1][1] if problem.ranges else 0
    return top + (live_bytes - total)
