"""Gantt bars of the lifetimes chart: the largest values one lane each, the rest summed per step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.planner.live import first_last_steps


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
    live_rows = arrays.live_rows
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
    rest_bytes = _per_step_sum(
        arrays.interval_first[rest], arrays.interval_last[rest], cost[arrays.interval_row[rest]], n
    )
    rest_live = _per_step_sum(
        arrays.interval_first[rest], arrays.interval_last[rest], np.ones(int(rest.sum()), dtype=np.int64), n
    )
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
