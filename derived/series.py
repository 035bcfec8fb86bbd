"""Per-step series for charts: downsampling that keeps every extreme, the visible window of a
zoomed plot, and runs of steps (loop bodies)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa


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


def runs_where(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) inclusive step indices of each run of True in ``mask``."""
    padded = np.concatenate(([False], np.asarray(mask, dtype=bool), [False]))
    change = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return change[0::2].astype(np.int64), (change[1::2] - 1).astype(np.int64)


def loop_regions(execution_count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of steps executed more than once (loop bodies)."""
    return runs_where(np.asarray(execution_count) > 1)


# ----------------------------------------------------------------------------- per-step data


@dataclass(frozen=True)
class StepInfo:
    """What the file says about each step that no plan changes."""

    operation: pa.ChunkedArray  # the step's operation text (untrusted)
    source: np.ndarray
    execution_count: np.ndarray
    loop_first: np.ndarray  # loop bodies: runs of steps executed more than once
    loop_last: np.ndarray
    repeat_steps: np.ndarray  # ``Repeat`` boundaries

    @staticmethod
    def of(steps: pa.Table) -> StepInfo:
        count = steps.column("execution_count").to_numpy()
        first, last = loop_regions(count)
        kinds = steps.column("operation_kind").to_numpy(zero_copy_only=False)
        return StepInfo(
            steps.column("operation"),
            steps.column("source").to_numpy(),
            count,
            first,
            last,
            np.flatnonzero(kinds == "Repeat"),
        )


@dataclass(frozen=True)
class StepSeries:
    """A plan's usage per step, as the timeline draws it (bytes per tile)."""

    standard: np.ndarray  # values + scratch in the standard region
    interleaved: np.ndarray
    standard_line: np.ndarray  # standard + exchange rows (what the standard peak is the maximum of)
    total: np.ndarray  # both regions + exchange rows (what the total peak is the maximum of)
    exchange_rows: int

    @staticmethod
    def of(plan, exchange_rows: int) -> StepSeries:
        std, intl = plan.usage_standard, plan.usage_interleaved
        return StepSeries(std, intl, std + exchange_rows, std + intl + exchange_rows, int(exchange_rows))


def near_peak_runs(total: np.ndarray, fraction: float = 0.95, merge_gap: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) of the runs of steps whose ``total`` is within ``1 - fraction`` of its maximum,
    runs closer than ``merge_gap`` steps merged: where a long profile's peak region is."""
    total = np.asarray(total)
    if total.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first, last = runs_where(total >= fraction * total.max())
    if merge_gap > 0 and first.size > 1:
        keep = np.concatenate(([True], first[1:] - last[:-1] > merge_gap))
        starts = np.flatnonzero(keep)
        first = first[starts]
        last = np.concatenate((last[starts[1:] - 1], [last[-1]]))
    return first, last


def thinned(positions: np.ndarray, start: int, stop: int, most: int) -> np.ndarray:
    """The ``positions`` inside ``[start, stop)``, or none when more than ``most`` are: marks too
    dense to read (thousands of loop boundaries on a long profile) are left out until zoomed in."""
    positions = np.asarray(positions)
    inside = positions[(positions >= start) & (positions < stop)]
    return inside if inside.size <= most else inside[:0]
