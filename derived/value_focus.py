"""Where one value is on the timeline: its live range (first and last live step, from the file)
and the step of that range where the plan's total is highest — where the header's value search
takes the selection (issue #27 item 9)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ValueFocus", "value_focus"]


@dataclass(frozen=True)
class ValueFocus:
    value: int
    first: int  # first live step
    last: int  # last live step (a gap inside the range counts as live, as derived.groups does)
    peak_step: int  # the first step of [first, last] where the plan's total is highest


def value_focus(data, value_id: int) -> ValueFocus | None:
    """``data``: a ``PlanData``. None when the value is not in the file or never live."""
    row = data.arrays.row_of_id.get(int(value_id))
    if row is None:
        return None
    first, last = data.opened.live_ranges
    lo, hi = int(first[row]), int(last[row])
    if lo < 0 or hi < lo:
        return None
    total = np.asarray(data.series.total[lo : hi + 1])
    return ValueFocus(int(value_id), lo, hi, lo + int(np.argmax(total)))
