"""The live set of a step as the views, reports and compare show it: the values live there
(``planner.live.live_rows_at``, the one answer to "what is live at step s"), ranked by what they
cost in the plan, with the step's usage and scratch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.planner.live import first_last_steps, live_count_per_row, live_rows_at
from tilescope.planner.model import Plan, ProfileArrays

__all__ = ["LiveSet", "first_last_steps", "live_count_per_row", "live_rows_at", "live_set"]


@dataclass(frozen=True)
class LiveSet:
    """The values live at ``step``: ``rows`` largest bytes first (ties by value id), their bytes."""

    step: int
    rows: np.ndarray
    bytes: np.ndarray  # per entry of ``rows``: what the value costs in the plan
    usage_standard: int  # the step's usage in each region (values + scratch; no exchange rows)
    usage_interleaved: int
    scratch_standard: int
    scratch_interleaved: int

    @property
    def usage_total(self) -> int:
        return self.usage_standard + self.usage_interleaved

    @property
    def largest_row(self) -> int | None:
        return int(self.rows[0]) if self.rows.size else None


def live_set(arrays: ProfileArrays, plan: Plan, step: int) -> LiveSet:
    rows = live_rows_at(arrays, step)
    cost = plan.figures.bytes[rows]
    order = np.lexsort((arrays.value_ids[rows], -cost))
    return LiveSet(
        step=int(step),
        rows=rows[order],
        bytes=cost[order],
        usage_standard=int(plan.usage_standard[step]),
        usage_interleaved=int(plan.usage_interleaved[step]),
        scratch_standard=int(arrays.scratch_standard[step]),
        scratch_interleaved=int(arrays.scratch_interleaved[step]),
    )
