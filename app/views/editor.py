"""The what-if editor: re-tile one value by dragging, see the re-plan, keep a list of edits; the
advisor (``app.views.advisor``) below it.

The value shown is the last value selected (``SessionState.focus_value``), else the largest value
live at the selected step (shown, not selected: nothing is selected until the user picks).
With "keep the tile count" on, dragging an axis past what the device's tiles allow with the
current replicas drops the replicas to the largest count that fits (``planner.tiling_rules.keeping_tiles``),
one gesture of two edits; dragging the same handle again replaces the gesture (``SessionState.apply_gesture``).
A refusal is shown until the plan it refused against is replaced (an edit, undo, reset, another file).
Every change goes through ``SessionState`` (``apply_edit``, ``apply_edits``, ``undo``, ``reset``,
``load_edits``), so every view re-draws from the new plan; this view only reads the state back.
What it shows of a value comes from ``tilescope.derived.editing`` (the tiling rules are
``tilescope.planner.tiling_rules``). A refused edit leaves the plan alone: the planner's reason (an
``EditError`` message naming value, axis and rule) is shown at the handle that made it, and the
handle snaps back.
"""

from __future__ import annotations

import io
import re

import panel as pn
import panel_material_ui as pmui
import param

from tilescope.app.assets import themed_css
from tilescope.app.format import esc, esc_figure
from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.views.advisor import AdvisorView
from tilescope.app.views.placement_summary import placements
from tilescope.app.widgets.count_inputs import CountInputs
from tilescope.app.widgets.tiling_widget import TilingWidget, committed_count
from tilescope.app.widgets.value_picker import ValuePicker
from tilescope.derived.editing import figure_changes, value_editing, value_facts
from tilescope.derived.fit_verdict import fit_verdict
from tilescope.models.edits import TilingEdit, edit_set_json
from tilescope.models.format import fmt_change
from tilescope.models.glossary import GLOSSARY
from tilescope.planner import tiling_rules
from tilescope.planner.shards import ShapeMismatch
from tilescope.planner.tiling_rules import REPLICAS

CSS = themed_css("editor.css")
_LABEL_ID = re.compile(r"#(-?\d+) ")  # a picker label starts with the value's id (derived.values.ValueText)


class EditorView(pn.viewable.Viewer):
    """The what-if editor. Construct as ``EditorView(state=state)``."""

    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self._row: int | None = None
        self._shown: tuple | None = None  # (row, data) last drawn, compared by identity

        self._picking = False  # the picker is being set to the shown value (not a user's pick)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self._refused_on = None  # the PlanData the shown refusal was made against
        self.widget = TilingWidget(sizing_mode="stretch_width", min_height=120)
        self.widget.param.watch(one_message(self._on_committed), "committed")
        self.count_inputs = CountInputs(self.widget, self.commit)

        self.value_picker = ValuePicker(
            label="Value to edit",
            placeholder="type an id or part of a name…",
            case_sensitive=False,
            search_strategy="includes",
            min_characters=1,
            restrict=True,
            sizing_mode="stretch_width",
            min_width=220,
        )
        self.value_picker.param.watch(one_message(self._on_picked), "value")
        # Material checkboxes: their label names the box (Bokeh's left it unnamed: axe ``label``); no
        # description (Material draws it as an icon with an aria-label on a role-less span)
        # Their height reserved (Material draws them after the page's layout: each pushed the editor
        # 36 px down as it appeared), each label one line at 1024 px
        self.group_toggle = pmui.Checkbox.from_param(
            self.state.param.whole_storage_group, label="apply to whole storage group", description="", min_height=36
        )
        self.keep_tiles = pmui.Checkbox(
            label="keep the tile count (replicas drop to fit)",
            value=False,
            css_classes=["ts-keep-tiles"],
            min_height=36,
        )
        self.keep_tiles.param.watch(one_message(lambda _: self._refresh()), "value")
        self.heading = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CSS])
        self.figures = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CSS], margin=(5, 10))

        self.undo_button = pn.widgets.Button(label="Undo", color="default", width=90)
        self.undo_button.on_click(one_message(lambda _: self.state.undo()))
        self.reset_button = pn.widgets.Button(label="Reset", color="default", width=90)
        self.reset_button.on_click(one_message(lambda _: self.state.reset()))
        self.save_button = pn.widgets.FileDownload(
            callback=self._edit_set_file, filename="edits.json", label="Save edits", color="default", width=120
        )
        self.load_input = pn.widgets.FileInput(
            accept=".json,application/json",
            multiple=False,
            width=230,
            css_classes=["ts-load-edits"],
            label="load an edit set (JSON)",
        )
        self.load_input.param.watch(self._on_load, "value")
        self.edit_list = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CSS])
        self.advisor = AdvisorView(state=self.state)

        self.gate.watch(self._redraw, ["data", "selected_values", "selected_step"])
        self.gate.watch(self._on_ready, ["ready"])  # the placement arrived: the caption's fit verdict follows
        self._layout = pn.Column(
            pn.pane.HTML("<h3 style='margin:0'>What-if editor</h3>"),
            self.value_picker,
            pn.FlexBox(self.group_toggle, self.keep_tiles, sizing_mode="stretch_width"),
            self.heading,
            self.widget,
            self.figures,
            pn.pane.HTML("<h4 style='margin:8px 0 0'>Edits</h4>"),
            pn.FlexBox(self.undo_button, self.reset_button, self.save_button, sizing_mode="stretch_width"),
            pn.pane.HTML(
                "<label class='ts-load-label'>Load an edit set (JSON, as saved above):</label>",
                stylesheets=[CSS],
                margin=(4, 10, 0, 10),
            ),
            self.load_input,
            self.edit_list,
            self.advisor,
            sizing_mode="stretch_width",
            css_classes=["ts-editor"],
        )
        self._refresh()

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ what is shown

    @property
    def row(self) -> int | None:
        """Row of the value being edited (None without a profile)."""
        return self._row

    def _value_row(self) -> int | None:
        data = self.state.data
        if data is None:
            return None
        focus = self.state.focus_value
        row = data.arrays.row_of_id.get(int(focus)) if focus is not None else None
        return row if row is not None else data.live_at(self.state.selected_step).largest_row

    def set_shown(self, shown: bool) -> None:
        """Hidden, the editor skips the refreshes a step change would cost; shown again, it catches up."""
        self.gate.set_shown(shown)

    def _redraw(self, *events) -> None:
        shown = (self._value_row(), self.state.data)
        if self._shown is not None and shown[0] == self._shown[0] and shown[1] is self._shown[1]:
            return  # a step or selection change that leaves the same value and plan on screen
        self._refresh()

    def _on_ready(self, *events) -> None:
        if self._shown is not None and self._shown[0] is not None and self._shown[1] is self.state.data:
            self.figures.object = self._figures_html(self._shown[0])

    def _refresh(self) -> None:
        data = self.state.data
        row = self._value_row()
        self._shown = (row, data)
        if row != self._row or data is not self._refused_on:
            # the refusal referred to another value or to a plan that is gone (edit, undo, reset, reload)
            self.widget.param.update(message="", message_axis="")
            self._refused_on = None
        self._row = row
        if data is None or row is None:
            self._show_nothing()
            return
        self._picking = True
        try:
            self.value_picker.set_search(data.opened.value_search)
            self.value_picker.show(data.opened.value_text.labels[row])
        finally:
            self._picking = False
        facts = value_facts(data, row)
        alias = (
            ""
            if facts.alias_of is None
            else f" · alias of #{facts.alias_of}: an edit re-tiles #{facts.alias_of} and all its aliases"
        )
        self.heading.object = (
            f"<div class='ts-value-head'><b>#{facts.value_id} {esc(facts.name)}</b><br>"
            f"<span>shape {esc(facts.shape)} · {esc(facts.precision)} · {facts.region} region · order {esc(facts.order)}"
            f" · storage group {facts.storage_group} · live {esc(facts.live)}{esc(alias)}</span></div>"
        )
        try:
            editing = value_editing(data, row)
        except ShapeMismatch as exc:
            self.figures.object = f"<p class='ts-editor-error'>{esc(exc)}</p>"
            self.widget.param.update(axes=[], show_replicas=False, disabled=True)
            return
        keep = self.keep_tiles.value
        bands = [{**band, "valid_counts": band["keep_tiles_counts"]} if keep else band for band in editing.bands]
        self.widget.param.update(
            **self.count_inputs.show(editing.counts, identity=len(editing.bands)),
            axes=bands,
            replicas=int(editing.tiling.replicas),
            replica_counts=editing.replica_stops,
            valid_replica_counts=editing.valid_replicas,
            max_replicas=editing.max_replicas,
            tile_product=editing.tile_product,
            device_tiles=editing.device_tiles,
            show_replicas=True,
            disabled=False,
        )
        self.figures.object = self._figures_html(row)
        self.edit_list.object = self._edits_html()
        self.undo_button.disabled = self.reset_button.disabled = self.save_button.disabled = not data.edited

    def _show_nothing(self) -> None:
        message = (
            "Open a memory profile to edit its tilings."
            if self.state.data is None
            else "No value is live at this step; pick one."
        )
        self.heading.object = f"<p>{esc(message)}</p>"
        self.figures.object = ""
        self.edit_list.object = self._edits_html()
        self.widget.param.update(**self.count_inputs.clear(), axes=[], show_replicas=False, disabled=True)

    def _figures_html(self, row: int) -> str:
        """The value's figures before → after, broken between figures in a narrow panel (``esc_figure``)."""
        data = self.state.data
        cells = "".join(
            f"<tr data-figure='{esc(name)}'><th title='{esc(GLOSSARY.get(name, ''))}'>{esc(name)}</th><td>{esc_figure(fmt_change(b, a))}</td></tr>"
            for name, b, a in figure_changes(data, row)
        )
        placed, _, refused = placements(self.state)
        verdict = fit_verdict(data.plan.peaks, data.arrays, placed, refused)
        fits = f"fits: {verdict.word} — {verdict.short}"
        granule = int(data.arrays.granule[row])
        return (
            "<table class='ts-figures' data-testid='ts-editor-figures'>"
            f"<caption>before → after (allocation granule {granule:,} B kept; {esc(fits)})</caption>{cells}</table>"
        )

    def _edits_html(self) -> str:
        data = self.state.data
        if data is None or not data.edited:
            return "<p class='ts-edit-empty'>No edits: the plan is the file's.</p>"
        whatif = data.whatif
        items = "".join(
            f"<li>{esc(applied.edit.describe())} <span>(re-tiles {esc(', '.join(f'#{v}' for v in applied.applied_to))})</span></li>"
            for applied in whatif.applied
        )
        changed = "; ".join(
            f"#{value_id} {fmt_change(before, after)}" for value_id, before, after in whatif.diff.changed_values
        )
        summary = f"<p class='ts-edit-changes'>bytes per tile while live: {esc(changed or 'no value changes size')}</p>"
        return f"<ol class='ts-edit-list' data-testid='ts-edit-list'>{items}</ol>{summary}"

    # ------------------------------------------------------------------ edits

    def _on_committed(self, event) -> None:
        found = committed_count(event.new)
        if found is not None:
            self.commit(*found)

    def commit(self, key: str, count: int) -> str | None:
        """Apply ``count`` to the handle ``key`` ("0", "1", … or "replicas"). Returns the refusal, or None."""
        counts = self.count_inputs.counts
        if self._row is None or key not in counts:
            return None
        if count == counts[key]:
            self.widget.param.update(revision=self.widget.revision + 1)
            return None
        value_id = int(self.state.data.arrays.value_ids[self._row])
        edits = self._gesture(value_id, key, count)
        if not self.state.selected_values:
            # Pin the value: after the edit it may no longer be the largest live one.
            self.state.select_values([value_id])
        refused_on = self.state.data

        def refused(error: str) -> None:  # (here, or later on the loop: the plan is made in the load workers)
            self._refused_on = refused_on
            self.widget.param.update(message=error, message_axis=key, revision=self.widget.revision + 1)
            self.count_inputs.snap_back()  # a typed count snaps back too

        error = self.state.apply_gesture(edits, refused)
        if error is None and not self.state.replanning:  # made here: the widget shows it now
            self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
        # (else the new plan, made in the load workers, redraws the editor when it comes: one update)
        return error

    def _gesture(self, value_id: int, key: str, count: int) -> list[TilingEdit]:
        """The edits one commit makes: the count, and with "keep the tile count" the replicas
        that keep the tiling on the device when the count alone would not."""
        if key == REPLICAS:
            return [TilingEdit(value_id, replicas=count)]
        edits = [TilingEdit(value_id, axis=int(key), partitions=count)]
        if self.keep_tiles.value:
            data = self.state.data
            tiling = data.tiling(self._row)
            kept = tiling_rules.keeping_tiles(tiling, int(key), count, int(data.arrays.device_tiles))
            if kept.replicas != tiling.replicas:
                edits.append(TilingEdit(value_id, replicas=int(kept.replicas)))
        return edits

    def _edit_set_file(self):
        return io.BytesIO(edit_set_json(self.state.edits).encode())

    def _on_load(self, event) -> None:
        if not event.new:
            return

        def refused(error: str) -> None:
            self.edit_list.object = f"<p class='ts-editor-error' role='alert'>{esc(error)}</p>" + self._edits_html()

        self.state.load_edits(event.new, self.load_input.filename or "<edit set>", refused)

    def _on_picked(self, event) -> None:
        if self._picking:
            return  # the editor showing its value is not the user picking one
        found = _LABEL_ID.match(event.new or "")
        if found is not None and self.state.selected_values[:1] != [int(found.group(1))]:
            self.state.select_values([int(found.group(1))])
