"""The what-if editor (view 7): re-tile one value by dragging, see the re-plan, keep a list of edits.

The value shown is the selection's first value, else the largest value live at the selected step.
Every change goes through ``SessionState`` (``apply_edit``, ``apply_edits``, ``undo``, ``reset``,
``load_edits``), so every view re-draws from the new plan; this view only reads the state back.
A refused edit leaves the plan alone: the planner's reason (an ``EditError`` message naming value,
axis and rule) is shown at the handle that made it, and the handle snaps back.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
import pyarrow as pa

from tilescope.models.edits import TilingEdit, edit_set_json
from tilescope.planner.advisor import advise
from tilescope.planner.edits import current_tiling, valid_partition_counts, valid_replica_counts
from tilescope.planner.shards import ShapeMismatch

from .format import esc
from tilescope.models.format import fmt_bytes, fmt_change, shorten, step_range
from .state import SessionState
from .tiling_widget import REPLICAS_KEY, TilingWidget, axis_bands, count_inputs
from .value_search import LabelSearch

PEAK_KINDS = ("total", "standard", "interleaved")

_PANE_CSS = """
.ts-value-head b { font-size: 14px; }
.ts-value-head span { color: #52606d; }
table.ts-figures { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: 4px; }
table.ts-figures caption { text-align: left; color: #52606d; padding-bottom: 4px; white-space: nowrap; }
table.ts-figures th { text-align: left; font-weight: 600; padding: 2px 14px 2px 0; white-space: nowrap; }
table.ts-figures td { padding: 2px 0; white-space: nowrap; }
.ts-editor-error { color: #8a1c1c; background: #fde8e8; padding: 4px 8px; border-radius: 4px; }
.ts-edit-list { margin: 4px 0; padding-left: 22px; }
.ts-edit-list span, .ts-edit-empty, .ts-edit-changes { color: #52606d; }
.ts-edit-changes { margin: 2px 0; }
"""
SUGGESTION_LIMIT = 12


@dataclass(frozen=True)
class ValueText:
    """Text columns of the open profile the editor shows (names are untrusted): the names as Python
    strings (every picker label needs one), the other columns read a row at a time (only the shown
    value's: converting ~10⁵ rows of each would cost most of the editor's start-up)."""

    names: list[str]
    columns: pa.Table  # precision, order, storage_group

    @staticmethod
    def of(profile) -> "ValueText":
        v = profile.values
        return ValueText(names=v.column("name").to_pylist(), columns=v.select(["precision", "order", "storage_group"]))

    def field(self, name: str, row: int):
        return self.columns.column(name)[row].as_py()


PICKER_MATCHES = 100  # completions sent per keystroke

# Bokeh's autocomplete re-filters its menu only on a key press; the matches arrive from the server
# just after one, so the menu is re-drawn when they land (while the input still has the focus).
_REFRESH_MENU_JS = """
const view = Bokeh.index.find_one(source)
if (view != null && view.shadow_el.activeElement === view.input_el) {
  view._toggle_menu()
}
"""


class ValuePicker(pn.widgets.AutocompleteInput):
    """The value picker: an autocomplete whose completions are searched on the server.

    The browser holds only the matches of what is typed (``PICKER_MATCHES`` at most, found by
    ``LabelSearch`` on each ``value_input``), never every value's label: ~10⁵–10⁶ labels would be
    tens of MB sent with the page and a slow keystroke in it.
    """

    def __init__(self, **params):
        super().__init__(**params)
        self._search = LabelSearch([])
        self.param.watch(self._on_typed, "value_input")
        self.jscallback(options=_REFRESH_MENU_JS)

    def set_labels(self, labels: list[str]) -> None:
        self._search = LabelSearch(labels)
        self.param.update(options=[], value="")

    def show(self, label: str) -> None:
        """Show ``label`` as the picked value (it is its own only completion until the user types)."""
        if self.value != label:
            self.param.update(options=[label], value=label)

    def _on_typed(self, event) -> None:
        matches = self._search.matches(event.new or "", PICKER_MATCHES)
        if self.value and self.value not in matches:
            # Panel clears a value that is not among the options, and the browser's input with it.
            matches.append(self.value)
        self.options = matches


def largest_live_row(arrays, cost: np.ndarray, step: int) -> int | None:
    """The row of the costliest value live at ``step`` (lowest id on ties); None if nothing is live."""
    live = (arrays.interval_first <= step) & (arrays.interval_last >= step)
    rows = np.unique(arrays.interval_row[live])
    if rows.size == 0:
        return None
    order = np.lexsort((arrays.value_ids[rows], -cost[rows]))
    return int(rows[order[0]])


def axis_descriptions(arrays, row: int, tiling, tilings) -> list[dict]:
    """The widget's bands for a profile value: accepted counts are those the what-if planner validates."""

    def accepted(position: int, stops: list[int]) -> list[int]:
        valid = set(valid_partition_counts(arrays, row, position, tilings))
        return [n for n in stops if n in valid]

    return axis_bands(arrays.shapes[row], tiling, accepted)


def replica_stops(valid: list[int], current: int, device_tiles: int) -> list[int]:
    """Replica track: every count up to twice the most the device allows (so the refused zone shows)."""
    most = max(valid, default=1)
    return list(range(1, max(min(2 * most, device_tiles), current, 1) + 1))


class EditorView(pn.viewable.Viewer):
    """View 7: the what-if editor. Construct as ``EditorView(state=state)``."""

    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self._row: int | None = None
        self._counts: dict[str, int] = {}  # handle key → the count the current plan has
        self._inputs_key: int | None = None  # the axis count the numeric inputs were made for
        self._shown: tuple | None = None  # (row, plan, whatif, profile) last drawn, compared by identity
        self._text: ValueText | None = None
        self._text_of = None  # the profile self._text was read from
        self._labels: dict[str, int] = {}  # picker label → value id
        self._label_of: dict[int, str] = {}  # value id → picker label
        self._advice_wanted = False

        self.widget = TilingWidget(width=700, sizing_mode="fixed", min_height=120)
        self.widget.param.watch(self._on_committed, "committed")

        self.value_picker = ValuePicker(
            label="Value to edit", placeholder="type an id or part of a name…", case_sensitive=False,
            search_strategy="includes", min_characters=1, restrict=True, width=420,
        )
        self.value_picker.param.watch(self._on_picked, "value")
        self.group_toggle = pn.widgets.Checkbox.from_param(
            self.state.param.whole_storage_group, label="apply to whole storage group"
        )
        self.heading = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[_PANE_CSS])
        self.figures = pn.pane.HTML("", width=560, sizing_mode="fixed", stylesheets=[_PANE_CSS], margin=(5, 20))

        self.undo_button = pn.widgets.Button(label="Undo", color="default", width=90)
        self.undo_button.on_click(lambda _: self.state.undo())
        self.reset_button = pn.widgets.Button(label="Reset", color="default", width=90)
        self.reset_button.on_click(lambda _: self.state.reset())
        self.save_button = pn.widgets.FileDownload(
            callback=self._edit_set_file, filename="edits.json", label="Save edits", color="default", width=120,
        )
        self.load_input = pn.widgets.FileInput(accept=".json,application/json", multiple=False, width=230)
        self.load_input.param.watch(self._on_load, "value")
        self.edit_list = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[_PANE_CSS])

        self.peak_choice = pn.widgets.RadioButtonGroup(options=list(PEAK_KINDS), value="total", color="default", width=300, sizing_mode="fixed")
        self.peak_choice.param.watch(lambda _: self._refresh_advice(force=True), "value")
        self.suggest_button = pn.widgets.Button(label="Suggest edits", color="primary", width=130)
        self.suggest_button.on_click(lambda _: self._refresh_advice(force=True))
        self.advice = pn.Column(sizing_mode="stretch_width")

        self.state.param.watch(
            self._on_state, ["plan", "whatif", "arrays", "profile", "selected_values", "selected_step", "edits"]
        )
        self._layout = pn.Column(
            pn.pane.HTML("<h3 style='margin:0'>What-if editor</h3>"),
            pn.Row(self.value_picker, pn.Column(pn.Spacer(height=18), self.group_toggle)),
            self.heading,
            pn.Row(self.widget, self.figures, sizing_mode="stretch_width"),
            pn.pane.HTML("<h4 style='margin:8px 0 0'>Edits</h4>"),
            pn.Row(self.undo_button, self.reset_button, self.save_button, self.load_input),
            self.edit_list,
            pn.pane.HTML("<h4 style='margin:8px 0 0'>Advisor</h4>"),
            pn.Row(pn.pane.HTML("lower the peak:", margin=(12, 5), width=110, sizing_mode="fixed"), self.peak_choice, self.suggest_button),
            self.advice,
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
        state = self.state
        if state.arrays is None or state.plan is None:
            return None
        for value_id in state.selected_values:
            row = state.arrays.row_of_id.get(int(value_id))
            if row is not None:
                return row
        return largest_live_row(state.arrays, state.plan.figures.bytes, state.selected_step)

    def _value_text(self) -> ValueText | None:
        profile = self.state.profile
        if profile is None:
            return None
        if self._text_of is not profile:
            self._text, self._text_of = ValueText.of(profile), profile
            self._labels = {
                f"#{int(i)} {shorten(name, 120)}": int(i) for i, name in zip(self.state.arrays.value_ids, self._text.names)
            }
            self._label_of = {v: k for k, v in self._labels.items()}
            self.value_picker.set_labels(list(self._labels))
        return self._text

    def _on_state(self, *events) -> None:
        shown = (self._value_row(), self.state.plan, self.state.whatif, self.state.profile)
        same = self._shown is not None and shown[0] == self._shown[0] and all(x is y for x, y in zip(shown[1:], self._shown[1:]))
        if same and all(e.name in ("selected_step", "selected_values") for e in events):
            return  # a step or selection change that leaves the same value and plan on screen
        self._refresh()
        if any(e.name in ("plan", "whatif") for e in events):
            self._refresh_advice(force=False)

    def _refresh(self) -> None:
        state = self.state
        text = self._value_text()
        row = self._value_row()
        self._shown = (row, state.plan, state.whatif, state.profile)
        if row != self._row:
            self.widget.param.update(message="", message_axis="")
        self._row = row
        if row is None or text is None:
            self._show_nothing()
            return
        arrays = state.arrays
        tilings = state.whatif.tilings if state.whatif is not None else None
        tiling = current_tiling(arrays, row, tilings)
        value_id = int(arrays.value_ids[row])
        label = self._label_of.get(value_id)
        if label is not None:
            self.value_picker.show(label)
        self.heading.object = self._heading_html(row, text)
        try:
            self._draw_tiling(row, tiling, tilings)
        except ShapeMismatch as exc:
            self.figures.object = f"<p class='ts-editor-error'>{esc(exc)}</p>"
            self.widget.param.update(axes=[], show_replicas=False, disabled=True)
            return
        self.figures.object = self._figures_html(row)
        self.edit_list.object = self._edits_html()
        has_edits = bool(state.edits)
        self.undo_button.disabled = self.reset_button.disabled = self.save_button.disabled = not has_edits

    def _draw_tiling(self, row: int, tiling, tilings) -> None:
        """Hand the widget the value's (possibly edited) tiling, with its stops and accepted counts."""
        arrays = self.state.arrays
        axes = axis_descriptions(arrays, row, tiling, tilings)
        valid_replicas = valid_replica_counts(arrays, row, tilings)
        tile_product = int(np.prod([a.partitions for a in tiling.axes], dtype=np.int64)) if tiling.axes else 1
        self._counts = {str(k): a["partitions"] for k, a in enumerate(axes)}
        self._counts[REPLICAS_KEY] = int(tiling.replicas)
        inputs = self._inputs_for(row, len(axes))
        # Re-sending the same inputs would still replace the widget's children in the browser (and make
        # Bokeh re-walk every model of the page): pass them only when they are new.
        same_inputs = len(inputs) == len(self.widget.inputs) and all(a is b for a, b in zip(inputs, self.widget.inputs))
        self.widget.param.update(
            **({} if same_inputs else {"inputs": inputs}),
            axes=axes,
            replicas=int(tiling.replicas),
            replica_counts=replica_stops(valid_replicas, int(tiling.replicas), arrays.device_tiles),
            valid_replica_counts=valid_replicas,
            max_replicas=max(valid_replicas, default=0),
            tile_product=tile_product,
            device_tiles=int(arrays.device_tiles),
            show_replicas=True,
            disabled=False,
        )

    def _show_nothing(self) -> None:
        message = "Open a memory profile to edit its tilings." if self.state.arrays is None else "No value is live at this step; pick one."
        self.heading.object = f"<p>{esc(message)}</p>"
        self.figures.object = ""
        self.edit_list.object = self._edits_html()
        self.widget.param.update(axes=[], show_replicas=False, inputs=[], disabled=True)
        self._counts = {}
        self._inputs_key = None

    def _heading_html(self, row: int, text: ValueText) -> str:
        arrays = self.state.arrays
        value_id = int(arrays.value_ids[row])
        root = int(arrays.roots[row])
        spans = [step_range(int(arrays.interval_first[i]), int(arrays.interval_last[i])) for i in arrays.intervals_of(int(arrays.root_rows[row]))]
        shape = "[" + ", ".join(str(d) for d in arrays.shapes[row]) + "]"
        region = "interleaved" if arrays.region[row] else "standard"
        alias = "" if root == value_id else f" · alias of #{root}: an edit re-tiles #{root} and all its aliases"
        return (
            f"<div class='ts-value-head'><b>#{value_id} {esc(text.names[row])}</b><br>"
            f"<span>shape {esc(shape)} · {esc(text.field('precision', row))} · {region} region · order {esc(text.field('order', row))}"
            f" · storage group {int(text.field('storage_group', row))} · live {esc(', '.join(spans) or 'never')}{esc(alias)}</span></div>"
        )

    def _figures_html(self, row: int) -> str:
        state = self.state
        before, after = state.base_plan.figures, state.plan.figures
        rows = [
            ("shard", before.shard[row], after.shard[row]),
            ("aligned", before.aligned[row], after.aligned[row]),
            ("bytes", before.bytes[row], after.bytes[row]),
        ]
        peaks_before, peaks_after = state.base_plan.peaks, state.plan.peaks
        for kind in PEAK_KINDS:
            rows.append((f"{kind} peak", getattr(peaks_before, kind), getattr(peaks_after, kind)))
        granule = int(state.arrays.granule[row])
        cells = "".join(
            f"<tr data-figure='{esc(name)}'><th>{esc(name)}</th><td>{esc(fmt_change(int(b), int(a)))}</td></tr>" for name, b, a in rows
        )
        fits = "fits the budget" if peaks_after.fits_budget else "does NOT fit the budget"
        return (
            "<table class='ts-figures' data-testid='ts-editor-figures'>"
            f"<caption>before → after (allocation granule {granule:,} B kept; {esc(fits)})</caption>{cells}</table>"
        )

    def _edits_html(self) -> str:
        whatif = self.state.whatif
        if whatif is None or not self.state.edits:
            return "<p class='ts-edit-empty'>No edits: the plan is the file's.</p>"
        items = "".join(
            f"<li>{esc(applied.edit.describe())} <span>(re-tiles {esc(', '.join(f'#{v}' for v in applied.applied_to))})</span></li>"
            for applied in whatif.applied
        )
        changed = "; ".join(
            f"#{value_id} {fmt_change(before, after)}" for value_id, before, after in whatif.diff.changed_values
        )
        summary = f"<p class='ts-edit-changes'>bytes per tile while live: {esc(changed or 'no value changes size')}</p>"
        return f"<ol class='ts-edit-list' data-testid='ts-edit-list'>{items}</ol>{summary}"

    # ------------------------------------------------------------------ numeric inputs

    def _inputs_for(self, row: int, n_axes: int) -> list:
        """One IntInput per handle: new ones when the axis count changes, else the current ones with
        their values updated (also for another value: new inputs are new Bokeh models, which makes
        Bokeh re-walk every model of the page, ~0.1 s on a large profile). ``self._counts`` already
        holds the new counts, so updating a field's value does not commit it."""
        keys = [*(str(k) for k in range(n_axes)), REPLICAS_KEY]
        inputs = list(self.widget.inputs)
        if self._inputs_key != n_axes or len(inputs) != len(keys):
            inputs = count_inputs(keys, self._counts, self._on_typed)
            self._inputs_key = n_axes
            return inputs
        for key, field in zip(keys, inputs):
            if field.value != self._counts[key]:
                field.value = self._counts[key]
        return inputs

    def _on_typed(self, key: str, count) -> None:
        if count is None or self._counts.get(key) == count:
            return
        self.commit(key, int(count))

    # ------------------------------------------------------------------ edits

    def _on_committed(self, event) -> None:
        committed = event.new or {}
        if "axis" not in committed or "count" not in committed:
            return
        try:
            count = int(committed["count"])
        except (TypeError, ValueError):
            return
        self.commit(str(committed["axis"]), count)

    def commit(self, key: str, count: int) -> str | None:
        """Apply ``count`` to the handle ``key`` ("0", "1", … or "replicas"). Returns the refusal, or None."""
        if self._row is None or key not in self._counts:
            return None
        if count == self._counts[key]:
            self.widget.param.update(revision=self.widget.revision + 1)
            return None
        value_id = int(self.state.arrays.value_ids[self._row])
        if key == REPLICAS_KEY:
            edit = TilingEdit(value_id, replicas=count)
        else:
            edit = TilingEdit(value_id, axis=int(key), partitions=count)
        if not self.state.selected_values:
            # Pin the value: after the edit it may no longer be the largest live one.
            self.state.select_values([value_id])
        error = self.state.apply_edit(edit)
        if error:
            self.widget.param.update(message=error, message_axis=key, revision=self.widget.revision + 1)
            self._inputs_for(self._row, len(self.widget.axes))  # a typed count snaps back too
            return error
        self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
        return None

    def _edit_set_file(self):
        return io.BytesIO(edit_set_json(self.state.edits).encode())

    def _on_load(self, event) -> None:
        if not event.new:
            return
        error = self.state.load_edits(event.new, self.load_input.filename or "<edit set>")
        if error:
            self.edit_list.object = f"<p class='ts-editor-error' role='alert'>{esc(error)}</p>" + self._edits_html()

    def _on_picked(self, event) -> None:
        value_id = self._labels.get(event.new or "")
        if value_id is not None and self.state.selected_values[:1] != [value_id]:
            self.state.select_values([value_id])

    # ------------------------------------------------------------------ advisor

    def _refresh_advice(self, force: bool) -> None:
        """Rank suggestions on request, then keep them current while the plan changes."""
        if force:
            self._advice_wanted = True
        if not self._advice_wanted:
            return
        state = self.state
        if state.arrays is None or state.plan is None:
            self.advice.objects = []
            return
        suggestions = advise(state.arrays, state.plan, self.peak_choice.value, SUGGESTION_LIMIT, whatif=state.whatif)
        if not suggestions:
            self.advice.objects = [pn.pane.HTML(f"<p>No single re-tiling lowers the {esc(self.peak_choice.value)} peak.</p>")]
            return
        rows = []
        for rank, suggestion in enumerate(suggestions):
            button = pn.widgets.Button(label="Apply", color="success", width=80, css_classes=[f"ts-apply-{rank}"])
            button.on_click(lambda _, s=suggestion: self.apply_suggestion(s))
            name = self._value_name(suggestion.edits[0].value)
            text = pn.pane.HTML(
                f"<span class='ts-suggestion'>{esc(suggestion.description)} <i>({esc(shorten(name, 60))})</i> — "
                f"{esc(self.peak_choice.value)} peak "
                f"{esc(fmt_bytes(suggestion.peak_before))} → {esc(fmt_bytes(suggestion.peak_after))} "
                f"(saves {esc(fmt_bytes(suggestion.saving))})</span>",
                margin=(10, 5),
            )
            rows.append(pn.Row(button, text))
        self.advice.objects = rows

    def _value_name(self, value_id: int) -> str:
        row = self.state.arrays.row_of_id.get(int(value_id))
        return "" if row is None or self._text is None else self._text.names[row]

    def apply_suggestion(self, suggestion) -> str | None:
        """Add the suggestion's edits to the set, and show the value it re-tiles."""
        error = self.state.apply_edits([*self.state.edits, *suggestion.edits])
        if error:
            self.advice.insert(0, pn.pane.HTML(f"<p class='ts-editor-error' role='alert'>{esc(error)}</p>"))
            return error
        self.state.select_values([suggestion.edits[0].value])
        return None
