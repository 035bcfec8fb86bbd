"""Storage groups and aliases: each storage group's members in order of first live step (a chain
of conversions reads left to right), which members are aliases of which root, and the hand-over
steps where two members are live together with the bytes that overlap costs.

Selecting a value anywhere opens its group here; selecting a group selects its members.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models.widgets.tables import NumberFormatter

from tilescope.app.format import esc
from tilescope.models.format import fmt_bytes, shorten, step_range
from tilescope.derived.groups import ALL_PAIRS_LIMIT, hand_overs, storage_group_members
from tilescope.derived.live import first_last_steps
from tilescope.app.state import SessionState
from tilescope.app.views.table_patch import patch_cells

CSS = """
.ts-groups { font-size: 13px; line-height: 1.5; }
.ts-groups ol { margin: 2px 0 6px 0; padding-left: 22px; }
.ts-groups .alias { color: #666; }
.ts-groups .handover { background: #fff4c2; padding: 1px 4px; }
.ts-groups code { font-size: 12px; }
"""

TABLE_COLUMNS = ["storage_group", "members", "values", "aliases", "hand_overs", "largest_overlap"]


@dataclass(frozen=True)
class GroupTable:
    """What the groups table needs that does not change with the plan, computed once per profile
    with numpy (a profile can have tens of thousands of groups): per group its members, member ids
    and alias count, and every hand-over pair (``derived.groups.hand_overs``' pairs: all pairs of
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
    def of(arrays, storage_group: np.ndarray) -> "GroupTable":
        members = storage_group_members(arrays, storage_group)
        groups = np.fromiter(members, dtype=np.int64, count=len(members))
        first, last = first_last_steps(arrays)
        ids = arrays.value_ids
        member_ids = [", ".join(map(str, ids[rows].tolist())) for rows in members.values()]
        member_count = np.fromiter((rows.size for rows in members.values()), dtype=np.int64, count=len(members))
        alias_count = np.fromiter(
            (np.count_nonzero(arrays.roots[rows] != ids[rows]) for rows in members.values()), dtype=np.int64, count=len(members)
        )
        pair_group, a, b = _live_member_pairs(members, first)
        overlap = np.maximum(first[a], first[b]) <= np.minimum(last[a], last[b])
        return GroupTable(groups, members, member_count, alias_count, member_ids, pair_group[overlap], a[overlap], b[overlap])

    def largest_overlap(self, cost: np.ndarray) -> np.ndarray:
        """Per group: the most bytes two of its members hold together at a hand-over (0 if none)."""
        largest = np.zeros(self.groups.size, dtype=np.int64)
        np.maximum.at(largest, self.pair_group, cost[self.pair_first] + cost[self.pair_second])
        return largest

    def frame(self, cost: np.ndarray, show_single: bool) -> pd.DataFrame:
        shown = np.ones(self.groups.size, dtype=bool) if show_single else self.member_count >= 2
        where = np.flatnonzero(shown)
        return pd.DataFrame(
            {
                "storage_group": self.groups[where], "members": self.member_count[where],
                "values": [self.member_ids[k] for k in where.tolist()], "aliases": self.alias_count[where],
                "hand_overs": np.bincount(self.pair_group, minlength=self.groups.size)[where],
                "largest_overlap": self.largest_overlap(cost)[where],
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


class StorageGroupsView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    show_single = param.Boolean(default=False, doc="also list groups of one member")

    def __init__(self, **params):
        super().__init__(**params)
        self._members: dict[int, np.ndarray] = {}
        self._group_of_row: np.ndarray | None = None
        self._groups: GroupTable | None = None
        self._groups_of = None  # the arrays ``_groups`` was computed from
        self._shown_single: bool | None = None  # show_single of the table's current rows
        self.group = None  # storage group shown in the detail pane
        self.table = pn.widgets.Tabulator(
            pd.DataFrame({c: [] for c in TABLE_COLUMNS}),
            name="ts-groups-table", show_index=False, disabled=True, selectable=1, pagination="remote", page_size=15,
            titles={"storage_group": "group", "hand_overs": "hand-overs", "largest_overlap": "largest overlap B", "values": "member ids"},
            formatters={"values": {"type": "plaintext"}, "largest_overlap": NumberFormatter(format="0,0")},
            header_filters={"values": {"type": "input", "func": "like", "placeholder": "id…"}}, width=560, height=480,
            css_classes=["ts-groups-table"],
        )
        self.detail = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", min_height=200)
        self._single = pn.widgets.Checkbox.from_param(self.param.show_single, name="show groups of one value")
        self.table.param.watch(self._on_table_selection, "selection")
        self.state.param.watch(self._on_plan, ["plan", "profile"])
        self.state.param.watch(self._on_values, ["selected_values"])
        self._on_plan()

    @param.depends("show_single", watch=True)
    def _on_single(self):
        self._on_plan()

    def _on_plan(self, *_):
        state = self.state
        if state.plan is None:
            return
        cost = state.plan.figures.bytes
        if self._groups_of is not state.arrays:
            self._group_of_row = state.profile.values.column("storage_group").to_numpy()
            self._groups, self._groups_of, self._shown_single = GroupTable.of(state.arrays, self._group_of_row), state.arrays, None
            self._members = self._groups.members
        if self._shown_single == self.show_single:
            self._patch_largest_overlap(cost)  # same rows: an edit only changes bytes
        else:
            self.table.value = self._groups.frame(cost, self.show_single)
            self._shown_single = self.show_single
        frame = self.table.value
        if self.group is None or self.group not in self._members:
            self.group = int(frame["storage_group"].iloc[0]) if len(frame) else None
        self._show(self.group)

    def _patch_largest_overlap(self, cost: np.ndarray) -> None:
        """Send only the cells whose figure changed, not the whole table again."""
        frame = self.table.value
        positions = np.searchsorted(self._groups.groups, frame["storage_group"].to_numpy())
        now = self._groups.largest_overlap(cost)[positions]
        changed = np.flatnonzero(now != frame["largest_overlap"].to_numpy())
        if changed.size:
            patch_cells(self.table, {"largest_overlap": [(int(k), int(now[k])) for k in changed.tolist()]})

    def _on_values(self, *_):
        ids = self.state.selected_values
        if not ids or self._group_of_row is None:
            return
        row = self.state.arrays.row_of_id.get(ids[0])
        if row is not None:
            self._show(int(self._group_of_row[row]))

    def _on_table_selection(self, event):
        frame = self.table.value
        if not event.new or frame is None or frame.empty:
            return
        group = int(frame["storage_group"].iloc[event.new[0]])
        if group != self.group:
            self._show(group)
            members = self._members.get(group, np.zeros(0, dtype=np.int64))
            self.state.select_values([int(i) for i in self.state.arrays.value_ids[members]])

    def _show(self, group: int | None):
        self.group = group
        self.detail.object = group_html(self.state, group, self._members.get(group)) if group is not None else ""

    def __panel__(self):
        return pn.Row(
            pn.Column(pn.pane.HTML("<b>Storage groups</b> (groups of two or more values)"), self._single, self.table),
            self.detail,
            sizing_mode="stretch_width",
            css_classes=["ts-storage-groups"],
        )


def group_html(state: SessionState, group: int, members: np.ndarray | None) -> str:
    """One group: members in first-step order with aliases, then the hand-overs and their cost."""
    if members is None:
        return ""
    arrays, cost = state.arrays, state.plan.figures.bytes
    names = state.profile.values.column("name")
    first, last = first_last_steps(arrays)
    selected = set(state.selected_values)
    items = []
    for row in members.tolist():
        vid, root = int(arrays.value_ids[row]), int(arrays.roots[row])
        name = esc(shorten(names[row].as_py(), 120))
        mark = " <b>◀ selected</b>" if vid in selected else ""
        if root != vid:
            items.append(
                f'<li class="alias" data-value="{vid}">value {vid} <code>{name}</code>: alias of value {root} '
                f"(no bytes of its own; its memory is value {root}'s){mark}</li>"
            )
        elif first[row] < 0:
            items.append(f'<li data-value="{vid}">value {vid} <code>{name}</code>: {esc(fmt_bytes(cost[row]))}, never live{mark}</li>')
        else:
            items.append(
                f'<li data-value="{vid}">value {vid} <code>{name}</code>: {esc(fmt_bytes(cost[row]))}, '
                f"live {step_range(int(first[row]), int(last[row]))}{mark}</li>"
            )
    overs = hand_overs(arrays, cost, group, members)
    if overs:
        lines = "".join(
            f'<li class="handover" data-testid="ts-handover">values {h.first_value} ({esc(fmt_bytes(h.first_bytes))}) and '
            f"{h.second_value} ({esc(fmt_bytes(h.second_bytes))}) both live at {step_range(h.from_step, h.to_step)}: "
            f"{esc(fmt_bytes(h.together_bytes))} together</li>"
            for h in overs
        )
        handover_html = f"<b>Hand-overs</b> (members live at the same steps)<ol>{lines}</ol>"
    else:
        handover_html = "<i>No two members of this group are live at the same step.</i>"
    return (
        f'<div class="ts-groups" data-testid="ts-group-detail" data-group="{group}">'
        f"<b>Storage group {group}</b>: {len(members)} member(s), in order of first live step"
        f"<ol>{''.join(items)}</ol>{handover_html}</div>"
    )
