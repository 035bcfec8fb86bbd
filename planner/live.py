"""What is live when: the one place that answers "which values are live at step s", and each
value's first and last live step, from ``ProfileArrays``' live intervals. The planner's advisor,
the derived layer (views, reports, compare) and the CLI all ask here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .model import ProfileArrays


def live_rows_at(arrays: ProfileArrays, step: int) -> np.ndarray:
    """Value rows live at ``step`` (an interval with first <= step <= last), each once."""
    hit = (arrays.interval_first <= step) & (arrays.interval_last >= step)
    return np.unique(arrays.interval_row[hit])


def first_last_steps(arrays: ProfileArrays) -> tuple[np.ndarray, np.ndarray]:
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


def live_count_per_row(arrays: ProfileArrays) -> np.ndarray:
    """Number of steps each value row is live."""
    return np.bincount(
        arrays.interval_row, weights=arrays.interval_last - arrays.interval_first + 1, minlength=arrays.n_values
    ).astype(np.int64)
