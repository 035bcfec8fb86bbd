"""Data the views draw, computed with numpy only (no Panel, no Bokeh): downsampling that keeps
peaks, loop regions, values live at a step, Gantt bars with a summarised rest, storage-group
hand-overs, and per-value table columns.

Everything takes ``planner.model.ProfileArrays`` plus per-value byte arrays indexed by value row,
so the same code draws the base plan and a what-if plan.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# ----------------------------------------------------------------------------- downsampling


def minmax_indices(series: Sequence[np.ndarray], start: int, stop: int, columns: int) -> np.ndarray:
    """Indices in ``[start, stop)`` to draw so that no extreme disappears.

    The window is cut into ``columns`` equal pixel columns; in each column the first and last
    index and, for every series, the index of its minimum and of its maximum are kept. The result
    is sorted, unique, and at most ``columns * (2 + 2 * len(series))`` long; when the window holds
    fewer points than that, every index is kept.
    """
    n = min(len(s) for s in series) if series else 0
    start, stop = max(int(start), 0), min(int(stop), n)
    if stop <= start:
        return np.zeros(0, dtype=np.int64)
    columns = max(int(columns), 1)
    width = stop - start
    if width <= columns * (2 + 2 * len(series)):
        return np.arange(start, stop, dtype=np.int64)
    index = np.arange(start, stop, dtype=np.int64)
    column = (index - start) * columns // width  # non-decreasing, 0..columns-1
    bounds = np.flatnonzero(np.diff(column)) + 1
    firsts = np.concatenate(([0], bounds))
    lasts = np.concatenate((bounds - 1, [width - 1]))
    keep = [firsts, lasts]
    for values in series:
        window = np.asarray(values[start:stop])
        keep.append(_first_extreme(window, column, firsts, np.maximum))
        keep.append(_first_extreme(window, column, firsts, np.minimum))
    return np.unique(np.concatenate(keep)) + start


def _first_extreme(window: np.ndarray, column: np.ndarray, firsts: np.ndarray, ufunc) -> np.ndarray:
    """Position (in the window) of the first maximum (or minimum) of each column."""
    extreme = ufunc.reduceat(window, firsts)
    hits = np.flatnonzero(window == extreme[column])
    _, first_hit = np.unique(column[hits], return_index=True)
    return hits[first_hit]


def window_of(x0: float | None, x1: float | None, n: int, margin: int = 1) -> tuple[int, int]:
    """Integer step window ``[start, stop)`` covering a plot's x range, one step wider each side
    so lines run off the visible edge instead of ending inside it."""
    if n == 0:
        return 0, 0
    lo = 0 if x0 is None or not np.isfinite(x0) else int(np.floor(x0)) - margin
    hi = n if x1 is None or not np.isfinite(x1) else int(np.ceil(x1)) + margin + 1
    return max(lo, 0), min(max(hi, 0), n)


# ----------------------------------------------------------------------------- steps


def runs_where(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) inclusive step indices of each run of True in ``mask``."""
    padded = np.concatenate(([False], np.asarray(mask, dtype=bool), [False]))
    change = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return change[0::2].astype(np.int64), (change[1::2] - 1).astype(np.int64)


def loop_regions(execution_count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of steps executed more than once (loop bodies)."""
    return runs_where(np.asarray(execution_count) > 1)


def live_rows_at(arrays, step: int) -> np.ndarray:
    """Value rows live at ``step`` (an interval with first <= step <= last), each once."""
    hit = (arrays.interval_first <= step) & (arrays.interval_last >= step)
    return np.unique(arrays.interval_row[hit])


def first_last_steps(arrays) -> tuple[np.ndarray, np.ndarray]:
    """First and last live step of every value row (-1 for values never live, e.g. aliases)."""
    first = np.full(arrays.n_values, -1, dtype=np.int64)
    last = np.full(arrays.n_values, -1, dtype=np.int64)
    if arrays.interval_row.size:
        order = np.argsort(arrays.interval_row, kind="stable")
        rows = arrays.interval_row[order]
        starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
        first[rows[starts]] = np.minimum.reduceat(arrays.interval_first[order], starts)
        last[rows[starts]] = np.maximum.reduceat(arrays.interval_last[order], starts)
    return first, last


def live_count_per_row(arrays) -> np.ndarray:
    """Number of steps each value row is live."""
    return np.bincount(arrays.interval_row, weights=arrays.interval_last - arrays.interval_first + 1, minlength=arrays.n_values).astype(np.int64)


# ----------------------------------------------------------------------------- lifetimes


@dataclass(frozen=True)
class GanttBars:
    """One bar per live interval of the ``rows`` drawn individually; everything else summarised."""

    rows: np.ndarray  # value rows drawn individually, in lane order (lane k = rows[k])
    bar_lane: np.ndarray  # per bar: its lane
    bar_row: np.ndarray  # per bar: value row
    bar_first: np.ndarray
    bar_last: np.ndarray
    rest_count: int  # values not drawn individually (live at some step)
    rest_bytes: np.ndarray  # per step: bytes of the rest live at that step
    rest_live: np.ndarray  # per step: how many of the rest are live


def gantt_bars(arrays, cost: np.ndarray, largest: int) -> GanttBars:
    """The ``largest`` live values by bytes drawn individually (lanes ordered by first live step,
    then id); the other live values summed per step into one band."""
    live_rows = np.unique(arrays.interval_row)
    # largest by bytes; ties broken by id so the choice is stable
    order = np.lexsort((arrays.value_ids[live_rows], -cost[live_rows]))
    chosen = live_rows[order[: max(int(largest), 0)]]
    first, _ = first_last_steps(arrays)
    chosen = chosen[np.lexsort((arrays.value_ids[chosen], first[chosen]))]
    lane_of_row = np.full(arrays.n_values, -1, dtype=np.int64)
    lane_of_row[chosen] = np.arange(chosen.size)
    lane = lane_of_row[arrays.interval_row]
    drawn = lane >= 0
    rest = ~drawn
    n = arrays.n_steps
    rest_bytes = _per_step_sum(arrays.interval_first[rest], arrays.interval_last[rest], cost[arrays.interval_row[rest]], n)
    rest_live = _per_step_sum(arrays.interval_first[rest], arrays.interval_last[rest], np.ones(int(rest.sum()), dtype=np.int64), n)
    return GanttBars(
        rows=chosen,
        bar_lane=lane[drawn],
        bar_row=arrays.interval_row[drawn],
        bar_first=arrays.interval_first[drawn],
        bar_last=arrays.interval_last[drawn],
        rest_count=int(live_rows.size - chosen.size),
        rest_bytes=rest_bytes,
        rest_live=rest_live,
    )


def _per_step_sum(first: np.ndarray, last: np.ndarray, weight: np.ndarray, n: int) -> np.ndarray:
    diff = np.zeros(n + 1, dtype=np.int64)
    np.add.at(diff, first, weight)
    np.add.at(diff, last + 1, -weight)
    return np.cumsum(diff[:-1])


# ----------------------------------------------------------------------------- storage groups


@dataclass(frozen=True)
class HandOver:
    """Two members of one storage group live at the same steps, and what that costs."""

    group: int
    first_value: int
    second_value: int
    first_bytes: int
    second_bytes: int
    from_step: int
    to_step: int

    @property
    def together_bytes(self) -> int:
        return self.first_bytes + self.second_bytes


# Above this many live members, only consecutive members (in first-step order) are compared:
# the all-pairs list would be quadratic and unreadable.
ALL_PAIRS_LIMIT = 16


def storage_group_members(arrays, storage_group: np.ndarray) -> dict[int, np.ndarray]:
    """Storage group id → member rows ordered by first live step (never-live members last), then id."""
    first, _ = first_last_steps(arrays)
    sort_first = np.where(first < 0, np.iinfo(np.int64).max, first)
    order = np.lexsort((arrays.value_ids, sort_first, storage_group))
    groups = storage_group[order]
    bounds = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1], [True])))
    return {int(groups[bounds[k]]): order[bounds[k] : bounds[k + 1]] for k in range(bounds.size - 1)}


def hand_overs(arrays, cost: np.ndarray, group: int, members: np.ndarray) -> list[HandOver]:
    """Pairs of live members of a group whose live ranges overlap, with the overlapping steps.

    Uses each member's first..last live step (contiguous in the sample; docs/formats.md does not
    promise it, so a gap inside a range is reported as overlapping).
    """
    first, last = first_last_steps(arrays)
    live = [int(r) for r in members if first[r] >= 0]
    if len(live) <= ALL_PAIRS_LIMIT:
        pairs = [(a, b) for i, a in enumerate(live) for b in live[i + 1 :]]
    else:
        pairs = list(zip(live, live[1:]))
    out = []
    for a, b in pairs:
        lo, hi = max(first[a], first[b]), min(last[a], last[b])
        if lo <= hi:
            out.append(HandOver(group, int(arrays.value_ids[a]), int(arrays.value_ids[b]), int(cost[a]), int(cost[b]), int(lo), int(hi)))
    return out


# ----------------------------------------------------------------------------- table columns


def partitions_product(arrays, tilings: dict | None = None) -> np.ndarray:
    """Product of partition counts of each value's tiling (the number of distinct shards)."""
    parts = arrays.axes_columns["partitions"]
    product = np.ones(arrays.n_values, dtype=np.int64)
    has_axes = arrays.axes_count > 0
    if parts.size:
        product[has_axes] = np.multiply.reduceat(parts, arrays.axes_start[has_axes])
    for row, tiling in (tilings or {}).items():
        p = 1
        for axis in tiling.axes:
            p *= axis.partitions
        product[row] = p
    return product


def tensor_bytes(arrays) -> np.ndarray:
    """Bytes of each whole tensor: elements · element bytes."""
    # math.prod per shape: an order of magnitude faster than np.prod on short tuples (profiles hold ~10⁵ values)
    elements = np.fromiter((math.prod(s) for s in arrays.shapes), dtype=np.int64, count=len(arrays.shapes))
    return elements * arrays.element_bytes


def unpadded_shard_bytes(arrays, tilings: dict | None = None, total: np.ndarray | None = None) -> np.ndarray:
    """Bytes of one shard if the tensor split evenly with no padding: ceil(elements · bytes / shards).
    ``total`` is ``tensor_bytes(arrays)`` when the caller keeps it (it only depends on the file)."""
    total = tensor_bytes(arrays) if total is None else total
    shards = partitions_product(arrays, tilings)
    return -(-total // np.maximum(shards, 1))


def tiling_summary(tiling) -> str:
    """``FromEnd(2)/46 · FromEnd(1)/4 · ×8 = 1472 tiles``."""
    parts = [f"{axis.axis}/{axis.partitions}" for axis in tiling.axes]
    if tiling.replicas != 1:
        parts.append(f"×{tiling.replicas}")
    return " · ".join(parts) + f" = {tiling.tile_count} tiles"


def tiling_summaries(arrays, tilings: dict | None = None) -> list[str]:
    """Tiling summary per value row, computed once per distinct layout text."""
    memo: dict[str, str] = {}
    out = []
    for row, text in enumerate(arrays.layout_text):
        summary = memo.get(text)
        if summary is None:
            summary = memo[text] = tiling_summary(arrays.tiling(row))
        out.append(summary)
    for row, tiling in (tilings or {}).items():
        out[row] = tiling_summary(tiling)
    return out


def tile_counts(arrays, tilings: dict | None = None) -> np.ndarray:
    counts = arrays.tile_counts.copy()
    for row, tiling in (tilings or {}).items():
        counts[row] = tiling.tile_count
    return counts
