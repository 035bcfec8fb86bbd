"""The address × step view's data: a ``Placement``'s allocations in one region as rectangles (offset,
bytes, first/last step, kind, id) for a visible window and a pixel budget.

Allocations of one region never overlap in the step × address plane (two live at a common step have
disjoint addresses), so every visible allocation of at least ``min_px`` pixels in both directions is
drawn as its own rectangle: there are at most ``width_px × height_px / min_px²`` of them. The others,
too small to see one by one, are aggregated on a grid of ``min_px × min_px``-pixel cells: each cell
touched by such allocations carries how many touch it and the share of its area they cover (each
allocation's clipped area spread evenly over the cells it touches); cells whose shares fall in the
same quarter are merged into rectangles (runs along a row, then equal runs on consecutive rows), each
an ``aggregate`` rectangle whose ``count`` sums its cells' counts (an allocation touching two of its
cells counts twice) and whose ``area`` sums theirs. So a window over the 23k steps of a synthetic profile stays a few thousand rectangles
whatever the allocation count, and zooming in brings the individual allocations back. Values named in
``keep_ids`` (the selected value) are never aggregated.

Pure numpy: no Panel, no Bokeh (the app draws the rectangles with WebGL).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.planner.placement import KIND_NAMES, REGION_NAMES, Placement

AGGREGATE = "aggregate"
FILL_LEVELS = 4  # adjacent cells merge into one aggregate when their fill is in the same quarter
RECT_KINDS = (*KIND_NAMES, AGGREGATE)  # AddressRects.kind holds indices into this


@dataclass(frozen=True)
class AddressRects:
    """Rectangles of one region's window: individual allocations first (by allocation index), then
    aggregates (by cell). Steps are inclusive; ``offset`` / ``bytes`` in bytes from the region's start."""

    region: str
    first_step: int  # the window
    last_step: int
    low: int  # address window [low, high)
    high: int
    offset: np.ndarray  # int64
    bytes: np.ndarray  # int64 (the rectangle's height)
    first: np.ndarray  # int64 first step
    last: np.ndarray  # int64 last step (inclusive)
    kind: np.ndarray  # int8 index into RECT_KINDS
    id: np.ndarray  # int64 value id, -1 for scratch, exchange rows and aggregates
    allocation: np.ndarray  # int64 index into the Placement's columns, -1 for aggregates
    count: np.ndarray  # int64 allocations the rectangle stands for (1 for an individual one)
    fill: np.ndarray  # float64 share of the rectangle's area they cover (1.0 for an individual one)
    area: np.ndarray  # float64 bytes × steps of allocations inside the window that the rectangle carries
    placed: int
    lower_bound: int
    capacity: int
    aggregated: int  # visible allocations drawn inside aggregates

    @property
    def size(self) -> int:
        return int(self.offset.size)

    def kind_names(self) -> np.ndarray:
        return np.array(RECT_KINDS, dtype=object)[self.kind]


def address_rects(
    placement: Placement,
    region: str,
    *,
    first_step: int = 0,
    last_step: int | None = None,
    low: int = 0,
    high: int | None = None,
    width_px: int = 1200,
    height_px: int = 400,
    min_px: float = 2.0,
    keep_ids=(),
) -> AddressRects:
    """The rectangles of ``region`` (``"standard"`` / ``"interleaved"``) visible in steps
    ``first_step..last_step`` and addresses ``[low, high)`` (defaults: every step, 0 to the placed
    top), for a plot of ``width_px × height_px`` pixels (module doc)."""
    code = REGION_NAMES.index(region)
    figures = placement.regions[region]
    n_steps_end = int(placement.last_step.max(initial=0))
    last_step = n_steps_end if last_step is None else int(last_step)
    high = max(figures.placed, figures.lower_bound, 1) if high is None else int(high)
    if last_step < first_step or high <= low or width_px < 1 or height_px < 1 or min_px <= 0:
        raise ValueError("an empty window or pixel budget")
    p = placement
    end = p.offset + p.bytes
    visible = np.flatnonzero(
        (p.region == code)
        & (p.bytes > 0)
        & (p.first_step <= last_step)
        & (p.last_step >= first_step)
        & (p.offset < high)
        & (end > low)
    )
    steps_per_px = (last_step - first_step + 1) / width_px
    bytes_per_px = (high - low) / height_px
    c_first = np.maximum(p.first_step[visible], first_step)
    c_last = np.minimum(p.last_step[visible], last_step)
    c_low = np.maximum(p.offset[visible], low)
    c_high = np.minimum(end[visible], high)
    wide = (c_last - c_first + 1) >= min_px * steps_per_px
    tall = (c_high - c_low) >= min_px * bytes_per_px
    keep = np.isin(p.value_id[visible], np.asarray(list(keep_ids), dtype=np.int64)) & (p.value_id[visible] >= 0)
    alone = (wide & tall) | keep
    single = visible[alone]
    cells = _aggregate(
        c_first[~alone],
        c_last[~alone],
        c_low[~alone],
        c_high[~alone],
        first_step,
        last_step,
        low,
        high,
        max(1.0, min_px * steps_per_px),
        max(1.0, min_px * bytes_per_px),
    )
    single_area = ((c_last - c_first + 1) * (c_high - c_low)).astype(np.float64)[alone]
    n_cells = cells["offset"].size
    return AddressRects(
        region=region,
        first_step=int(first_step),
        last_step=int(last_step),
        low=int(low),
        high=int(high),
        offset=np.concatenate((p.offset[single], cells["offset"])),
        bytes=np.concatenate((p.bytes[single], cells["bytes"])),
        first=np.concatenate((p.first_step[single], cells["first"])),
        last=np.concatenate((p.last_step[single], cells["last"])),
        kind=np.concatenate((p.kind[single], np.full(n_cells, RECT_KINDS.index(AGGREGATE), dtype=np.int8))),
        id=np.concatenate((p.value_id[single], np.full(n_cells, -1, dtype=np.int64))),
        allocation=np.concatenate((single, np.full(n_cells, -1, dtype=np.int64))).astype(np.int64),
        count=np.concatenate((np.ones(single.size, dtype=np.int64), cells["count"])),
        fill=np.concatenate((np.ones(single.size), cells["fill"])),
        area=np.concatenate((single_area, cells["area"])),
        placed=figures.placed,
        lower_bound=figures.lower_bound,
        capacity=figures.capacity,
        aggregated=int((~alone).sum()),
    )


def _aggregate(
    first, last, low_b, high_b, s0, s1, a0, a1, cell_steps: float, cell_bytes: float
) -> dict[str, np.ndarray]:
    """Grid cells touched by the given (clipped) allocations: count, covered area and fill."""
    nx = int(np.ceil((s1 - s0 + 1) / cell_steps))
    ny = int(np.ceil((a1 - a0) / cell_bytes))
    empty = {k: np.zeros(0, dtype=np.int64) for k in ("offset", "bytes", "first", "last", "count")}
    if first.size == 0:
        return {**empty, "fill": np.zeros(0), "area": np.zeros(0)}
    x0 = np.minimum(((first - s0) / cell_steps).astype(np.int64), nx - 1)
    x1 = np.minimum(((last - s0) / cell_steps).astype(np.int64), nx - 1)
    y0 = np.minimum(((low_b - a0) / cell_bytes).astype(np.int64), ny - 1)
    y1 = np.minimum((((high_b - 1) - a0) / cell_bytes).astype(np.int64), ny - 1)
    nxs, nys = x1 - x0 + 1, y1 - y0 + 1
    per = nxs * nys
    area = ((last - first + 1) * (high_b - low_b)).astype(np.float64)
    owner = np.repeat(np.arange(first.size), per)
    k = np.arange(owner.size) - np.repeat(np.cumsum(per) - per, per)
    cx = x0[owner] + k % nxs[owner]
    cy = y0[owner] + k // nxs[owner]
    cell = cy * nx + cx
    cell = cy * nx + cx  # row major: a row's cells are consecutive, left to right
    counts = np.bincount(cell, minlength=nx * ny)
    areas = np.bincount(cell, weights=(area / per)[owner], minlength=nx * ny)
    hit = np.flatnonzero(counts)
    hx, hy = hit % nx, hit // nx
    step_edges = s0 + np.ceil(np.arange(nx + 1) * cell_steps).astype(np.int64)
    step_edges[-1] = s1 + 1
    byte_edges = a0 + np.ceil(np.arange(ny + 1) * cell_bytes).astype(np.int64)
    byte_edges[-1] = a1
    cell_area = ((step_edges[hx + 1] - step_edges[hx]) * (byte_edges[hy + 1] - byte_edges[hy])).astype(np.float64)
    level = np.minimum((areas[hit] / cell_area * FILL_LEVELS).astype(np.int64), FILL_LEVELS - 1)
    # Runs of horizontally adjacent cells of one row at one fill level ...
    run = np.concatenate(([True], (hy[1:] != hy[:-1]) | (hx[1:] != hx[:-1] + 1) | (level[1:] != level[:-1])))
    starts = np.flatnonzero(run)
    ends = np.concatenate((starts[1:], [hit.size])) - 1
    run_x0, run_x1, run_y, run_level = hx[starts], hx[ends], hy[starts], level[starts]
    run_count = np.add.reduceat(counts[hit], starts)
    run_area = np.add.reduceat(areas[hit], starts)
    # ... then runs spanning the same columns at the same level on consecutive rows, merged.
    order = np.lexsort((run_y, run_level, run_x1, run_x0))
    x0, x1, y, lv = run_x0[order], run_x1[order], run_y[order], run_level[order]
    merge = np.concatenate(
        ([True], (x0[1:] != x0[:-1]) | (x1[1:] != x1[:-1]) | (lv[1:] != lv[:-1]) | (y[1:] != y[:-1] + 1))
    )
    block = np.flatnonzero(merge)
    block_end = np.concatenate((block[1:], [y.size])) - 1
    r_first, r_last = step_edges[x0[block]], step_edges[x1[block] + 1] - 1
    r_offset, r_end = byte_edges[y[block]], byte_edges[y[block_end] + 1]
    run_count, run_area = np.add.reduceat(run_count[order], block), np.add.reduceat(run_area[order], block)
    rect_area = ((r_last - r_first + 1) * (r_end - r_offset)).astype(np.float64)
    return {
        "offset": r_offset,
        "bytes": r_end - r_offset,
        "first": r_first,
        "last": r_last,
        "count": run_count.astype(np.int64),
        "fill": np.minimum(run_area / rect_area, 1.0),
        "area": run_area,
    }
