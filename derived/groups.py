"""Storage groups: members in first-live-step order and the hand-overs where two are live together."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tilescope.planner.live import first_last_steps


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


def storage_group_members(
    arrays, storage_group: np.ndarray, live_ranges: tuple[np.ndarray, np.ndarray] | None = None
) -> dict[int, np.ndarray]:
    """Storage group id → member rows ordered by first live step (never-live members last), then id.
    ``live_ranges`` is ``first_last_steps(arrays)`` when the caller keeps it."""
    first, _ = live_ranges if live_ranges is not None else first_last_steps(arrays)
    sort_first = np.where(first < 0, np.iinfo(np.int64).max, first)
    order = np.lexsort((arrays.value_ids, sort_first, storage_group))
    groups = storage_group[order]
    bounds = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1], [True])))
    return {int(groups[bounds[k]]): order[bounds[k] : bounds[k + 1]] for k in range(bounds.size - 1)}


def hand_overs(
    arrays, cost: np.ndarray, group: int, members: np.ndarray, live_ranges: tuple[np.ndarray, np.ndarray] | None = None
) -> list[HandOver]:
    """Pairs of live members of a group whose live ranges overlap, with the overlapping steps.

    Uses each member's first..last live step (contiguous in the sample; docs/formats.md does not
    promise it, so a gap inside a range is reported as overlapping). ``live_ranges`` is
    ``first_last_steps(arrays)`` when the caller keeps it.
    """
    first, last = live_ranges if live_ranges is not None else first_last_steps(arrays)
    live = [int(r) for r in members if first[r] >= 0]
    if len(live) <= ALL_PAIRS_LIMIT:
        pairs = [(a, b) for i, a in enumerate(live) for b in live[i + 1 :]]
    else:
        pairs = list(itertools.pairwise(live))
    out = []
    for a, b in pairs:
        lo, hi = max(first[a], first[b]), min(last[a], last[b])
        if lo <= hi:
            out.append(
                HandOver(
                    group,
                    int(arrays.value_ids[a]),
                    int(arrays.value_ids[b]),
                    int(cost[a]),
                    int(cost[b]),
                    int(lo),
                    int(hi),
                )
            )
    return out


# ----------------------------------------------------------------------------- the groups table


TABLE_COLUMNS = ["storage_group", "members", "values", "aliases", "hand_overs", "largest_overlap"]


@dataclass(frozen=True)
class GroupTable:
    """What the groups table needs that does not change with the plan, computed once per profile
    with numpy (a profile can have tens of thousands of groups): per group its members, member ids
    and alias count, and every hand-over pair (``hand_overs``' pairs: all pairs of
    live members up to ``ALL_PAIRS_LIMIT`` of them, else consecutive ones) whose live ranges overlap.
    Edits change bytes, never live steps, so only ``largest_overlap`` follows the plan."""

    groups: np.ndarray  # group ids, ascending (the table's order)
    members: dict[int, np.ndarray]  # group id → member rows (storage_group_members' order)
    member_count: np.ndarray  # per group
    alias_count: np.ndarray
    member_ids: list[str]  # per group: "id, id, …" in member order
    pair_group: np.ndarray  # per overlapping pair: index of its group in ``groups``
    pair_first: np.ndarray  # per pair: value rows
    pair_second: np.ndarray

    @staticmethod
    def of(arrays, storage_group: np.ndarray, live_ranges: tuple[np.ndarray, np.ndarray] | None = None) -> GroupTable:
        live_ranges = live_ranges if live_ranges is not None else first_last_steps(arrays)
        members = storage_group_members(arrays, storage_group, live_ranges)
        groups = np.fromiter(members, dtype=np.int64, count=len(members))
        first, last = live_ranges
        ids = arrays.value_ids
        member_ids = [", ".join(map(str, ids[rows].tolist())) for rows in members.values()]
        member_count = np.fromiter((rows.size for rows in members.values()), dtype=np.int64, count=len(members))
        alias_count = np.fromiter(
            (np.count_nonzero(arrays.roots[rows] != ids[rows]) for rows in members.values()),
            dtype=np.int64,
            count=len(members),
        )
        pair_group, a, b = _live_member_pairs(members, first)
        overlap = np.maximum(first[a], first[b]) <= np.minimum(last[a], last[b])
        return GroupTable(
            groups, members, member_count, alias_count, member_ids, pair_group[overlap], a[overlap], b[overlap]
        )

    def largest_overlap(self, cost: np.ndarray) -> np.ndarray:
        """Per group: the most bytes two of its members hold together at a hand-over (0 if none)."""
        largest = np.zeros(self.groups.size, dtype=np.int64)
        np.maximum.at(largest, self.pair_group, cost[self.pair_first] + cost[self.pair_second])
        return largest

    def frame(self, largest_overlap: np.ndarray, show_single: bool) -> pd.DataFrame:
        """The table's rows; ``largest_overlap`` is ``self.largest_overlap(cost)`` of the plan shown."""
        shown = np.ones(self.groups.size, dtype=bool) if show_single else self.member_count >= 2
        where = np.flatnonzero(shown)
        return pd.DataFrame(
            {
                "storage_group": self.groups[where],
                "members": self.member_count[where],
                "values": [self.member_ids[k] for k in where.tolist()],
                "aliases": self.alias_count[where],
                "hand_overs": np.bincount(self.pair_group, minlength=self.groups.size)[where],
                "largest_overlap": largest_overlap[where],
            },
            columns=TABLE_COLUMNS,
        )


def _live_member_pairs(members: dict[int, np.ndarray], first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group index, first row, second row) of every pair ``hand_overs`` compares: all pairs of a
    group's live members when it has at most ``ALL_PAIRS_LIMIT``, else consecutive members."""
    live = [rows[first[rows] >= 0] for rows in members.values()]  # live members keep the member order
    sizes = np.fromiter((rows.size for rows in live), dtype=np.int64, count=len(live))
    flat = np.concatenate(live) if live else np.zeros(0, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    group_of, first_at, second_at = [], [], []
    for size in np.unique(sizes[(sizes >= 2) & (sizes <= ALL_PAIRS_LIMIT)]).tolist():
        which = np.flatnonzero(sizes == size)
        i, j = np.triu_indices(size, 1)  # row-major: hand_overs' pair order within a group
        group_of.append(np.repeat(which, i.size))
        first_at.append((starts[which, None] + i).ravel())
        second_at.append((starts[which, None] + j).ravel())
    big = np.flatnonzero(sizes > ALL_PAIRS_LIMIT)
    if big.size:
        counts = sizes[big] - 1
        group_of.append(np.repeat(big, counts))
        position = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        first_at.append(np.repeat(starts[big], counts) + position)
        second_at.append(np.repeat(starts[big], counts) + position + 1)
    if not group_of:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    at_first, at_second = np.concatenate(first_at), np.concatenate(second_at)
    return np.concatenate(group_of), flat[at_first], flat[at_second]
