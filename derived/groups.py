"""Storage groups: members in first-live-step order and the hand-overs where two are live together."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .live import first_last_steps


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
