"""Storage groups and aliases: each storage group's members in order of first live step (a chain
of conversions reads left to right), which members are aliases of which root, and the hand-over
steps where two members are live together with the bytes that overlap costs.

Selecting a value anywhere opens its group here; selecting a group selects its members.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import panel as pn
import panel_material_ui as pmui
import param
from bokeh.models.widgets.tables import NumberFormatter

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.widgets.table_patch import patch_cells
from tilescope.app.widgets.tables import LabelledTabulator
from tilescope.derived.groups import TABLE_COLUMNS, GroupTable, hand_overs
from tilescope.models.format import fmt_bytes, shorten, step_range

CSS = themed_css("storage_groups.css")


class StorageGroupsView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    show_single = param.Boolean(default=False, doc="also list groups of one member")

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self._members: dict[int, np.ndarray] = {}
        self._groups: GroupTable | None = None  # the open profile's (derived.groups.GroupTable)
        self._shown_single: bool | None = None  # show_single of the table's current rows
        self.group = None  # storage group shown in the detail pane
        self.table = LabelledTabulator(
            pd.DataFrame({c: [] for c in TABLE_COLUMNS}),
            show_index=False,
            disabled=True,
            selectable=1,
            pagination="remote",
            page_size=15,
            titles={
                "storage_group": "group",
                "hand_overs": "hand-overs",
                "largest_overlap": "largest overlap B",
                "values": "member ids",
            },
            formatters={"values": {"type": "plaintext"}, "largest_overlap": NumberFormatter(format="0,0")},
            header_filters={"values": {"type": "input", "func": "like", "placeholder": "id…"}},
            sizing_mode="stretch_width",
            height=420,
            css_classes=["ts-groups-table"],
        )
        self.detail = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", min_height=200)
        self._single = pmui.Checkbox.from_param(
            self.param.show_single, label="show groups of one value", description=""
        )
        self.table.param.watch(self._on_table_selection, "selection")
        self.gate.watch(self._redraw, ["data"])
        self.gate.watch(self._on_values, ["selected_values"])
        self._redraw()

    @param.depends("show_single", watch=True)
    def _on_single(self):
        self._redraw()

    def _redraw(self, *_):
        data = self.state.data
        if data is None:
            return
        groups = data.opened.group_table
        if self._groups is not groups:
            self._groups, self._members, self._shown_single = groups, groups.members, None
        if self._shown_single == self.show_single:
            self._patch_largest_overlap(groups, data.group_overlap)  # same rows: an edit only changes bytes
        else:
            self.table.value = groups.frame(data.group_overlap, self.show_single)
            self._shown_single = self.show_single
        frame = self.table.value
        if self.group is None or self.group not in self._members:
            self.group = int(frame["storage_group"].iloc[0]) if len(frame) else None
        self._show(self.group)
        self._on_values()  # a view built after a value was selected opens that value's group

    def _patch_largest_overlap(self, groups: GroupTable, overlap: np.ndarray) -> None:
        """Send only the cells whose figure changed, not the whole table again."""
        frame = self.table.value
        positions = np.searchsorted(groups.groups, frame["storage_group"].to_numpy())
        now = overlap[positions]
        changed = np.flatnonzero(now != frame["largest_overlap"].to_numpy())
        if changed.size:
            patch_cells(self.table, {"largest_overlap": [(int(k), int(now[k])) for k in changed.tolist()]})

    def _on_values(self, *_):
        ids, data = self.state.selected_values, self.state.data
        if not ids or data is None:
            return
        row = data.arrays.row_of_id.get(ids[0])
        if row is not None:
            self._show(int(data.arrays.storage_groups[row]))

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

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<b>Storage groups</b> (groups of two or more values)"),
            self._single,
            self.table,
            self.detail,
            sizing_mode="stretch_width",
            css_classes=["ts-storage-groups"],
        )


def group_html(state: SessionState, group: int, members: np.ndarray | None) -> str:
    """One group: members in first-step order with aliases, then the hand-overs and their cost."""
    if members is None:
        return ""
    data = state.data
    arrays, cost = data.arrays, data.plan.figures.bytes
    names = data.profile.values.column("name")
    first, last = data.opened.live_ranges
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
            items.append(
                f'<li data-value="{vid}">value {vid} <code>{name}</code>: {esc(fmt_bytes(cost[row]))}, never live{mark}</li>'
            )
        else:
            items.append(
                f'<li data-value="{vid}">value {vid} <code>{name}</code>: {esc(fmt_bytes(cost[row]))}, '
                f"live {step_range(int(first[row]), int(last[row]))}{mark}</li>"
            )
    overs = hand_overs(arrays, cost, group, members, data.opened.live_ranges)
    if overs:
        peaks = data.plan.peaks
        peak_steps = {"total": peaks.total_step, "standard": peaks.standard_step, "interleaved": peaks.interleaved_step}
        lines = "".join(
            f'<li class="handover" data-testid="ts-handover">values {h.first_value} ({esc(fmt_bytes(h.first_bytes))}) and '
            f"{h.second_value} ({esc(fmt_bytes(h.second_bytes))}) both live at {step_range(h.from_step, h.to_step)}: "
            f"{esc(fmt_bytes(h.together_bytes))} together{peak_flag(h.from_step, h.to_step, peak_steps)}</li>"
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


def peak_flag(from_step: int, to_step: int, peak_steps: dict[str, int]) -> str:
    """The flag of a hand-over whose steps hold a peak step of the plan (issue #27 item 11: the two
    values live together add to that peak); empty otherwise."""
    at = [name for name, step in peak_steps.items() if from_step <= step <= to_step]
    if not at:
        return ""
    steps = sorted({peak_steps[name] for name in at})
    where = ", ".join(str(s) for s in steps)
    return (
        f' <b class="ts-handover-peak" data-testid="ts-handover-peak">⚑ at the {" and ".join(at)} '
        f"peak (step{'s' if len(steps) > 1 else ''} {where}): both count in it</b>"
    )
