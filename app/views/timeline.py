"""Timeline: per-step usage of the standard and interleaved regions with the exchange-row
reservation, the support reserve, both budgets, the peaks (labels in lanes of their own, joined
by leader lines: ``derived.peak_labels``), the steps within 5% of the total peak, loop regions and
Repeat boundaries (left out of a window where they are too dense to read).

At scale the browser never gets every step: ``tilescope.derived.series.minmax_indices`` keeps, per pixel
column of the visible window, the first/last step and the steps holding each series' minimum and
maximum, so peaks survive any zoom; the window is recomputed on every zoom/pan (RangesUpdate).
Clicking the plot selects the nearest step.

A cached big profile is first drawn from its overview alone (``show_overview``:
``derived.overview.UsageOverview``, the same whole-profile points), before its plan exists; a zoom
then shows the overview's points, and the plan's data takes over once the session adopts it.

The figure itself (its sources, marks, the two modes, the theme's ink, the budget and peak labels)
is ``app.views.timeline_figure.TimelineFigure``; this module decides what it shows and when.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
import pyarrow as pa
import pyarrow.compute as pc

from tilescope.app.format import esc
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state
from tilescope.app.views.timeline_figure import USAGE_FIELDS, TimelineFigure, empty_columns
from tilescope.app.widgets.figure_pane import FigurePane
from tilescope.app.widgets.source_update import update_columns
from tilescope.derived.overview import (  # (one definition: the cached overview draws the same points)
    MOST_MARKS,
    PIXEL_COLUMNS,
)
from tilescope.derived.peak_labels import PeakMark, y_end_for
from tilescope.derived.series import minmax_indices, near_peak_runs, thinned, window_of
from tilescope.derived.value_focus import value_focus
from tilescope.models.format import shorten

# Up to this many distinct operation texts, the profile's table of them is sent once and each point
# carries a code (a 23,200-step synthetic profile has 32: its zoom messages were mostly this text).
MOST_OPERATION_NAMES = 4096


class TimelineView(TimelineFigure, pn.viewable.Viewer):
    """Stacked mode draws, bottom to top, standard, interleaved and the exchange rows: the top of the
    orange is standard + interleaved, what ``fits`` adds the support reserve to and compares with the
    budget, so the support reserve hangs under the budget line as a band and the orange must stay
    below it. The interleaved budget budgets the interleaved region alone; it is drawn in the
    separate mode, against the interleaved line, not against the stack."""

    state = param.ClassSelector(class_=SessionState)
    layout_mode = param.Selector(
        default="stacked", objects=["stacked", "separate"], doc="stacked areas, or one line per region"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._window: tuple[float | None, float | None] = (None, None)
        self._series_of = None  # the opened profile the loop/repeat marks were built for
        self._series = None  # full-resolution per-step arrays of the current plan (dict of numpy)
        self._overview_of = None  # the profile whose overview is drawn while its plan is built (show_overview)
        self._y_end = 1.0  # the y range's end (lanes for the peak labels above the data)
        self._op_codes = None  # per step, the code of its operation in operation_names (None: many distinct texts)
        self._build_figure(self._on_tap, self._on_ranges)  # (timeline_figure: the figure, its sources and marks)
        self._mode = pn.widgets.RadioButtonGroup.from_param(
            self.param.layout_mode, color="default", label="", margin=(4, 10), width=170, sizing_mode="fixed"
        )
        self._info = pn.pane.HTML("", styles={"font-size": "12px", "opacity": "0.75"}, margin=(8, 10))
        # the selected step, always in view (the side panel's step tab has the full header)
        self._step_line = pn.pane.HTML("", styles={"font-size": "12.5px"}, margin=(8, 10), sizing_mode="stretch_width")
        # (FigurePane keeps the figure's Tap handler when the overview layout goes)
        self._pane = FigurePane(self.figure, sizing_mode="stretch_width")
        watch_state(self.state, self._redraw, ["data"])
        watch_state(self.state, self._on_step, ["selected_step"])
        watch_state(self.state, self._on_values, ["selected_values"])
        self._show_mode(self.layout_mode == "stacked")
        self._redraw()

    # ------------------------------------------------------------------ data

    def show_overview(self, opened) -> None:
        """Draw ``opened.overview`` (an ``OpenedProfile`` whose plan is still being built): the
        usage, near-peak runs, loop and Repeat marks, peaks and budgets the plan would draw for the
        whole profile, from the overview's rows. Until the session adopts the plan (``_redraw``), a
        zoom keeps these points."""
        o = opened.overview
        n, ex, support, peaks = o.n_steps, o.exchange_rows, o.support_reserve_bytes, o.peaks
        if self._series_of is not opened:  # (a mode change redraws it: the zoom stays)
            self._series_of, self._window = opened, (None, None)
            self.figure.x_range.update(start=-0.5, end=max(n - 0.5, 0.5))
        self._series, self._overview_of = None, opened
        std, intl = o.standard, o.interleaved
        top = max(
            peaks.total, o.budget_bytes, peaks.total - ex + support
        )  # (as _redraw: the kept steps hold every maximum)
        stacked = self.layout_mode == "stacked"
        at = {int(step): row for row, step in enumerate(o.step)}  # each peak's step is one of the kept steps
        marks = [
            PeakMark(
                "total peak", peaks.total_step, peaks.total, f"total peak {peaks.total:,} B at step {peaks.total_step}"
            ),
            PeakMark(
                "standard peak",
                peaks.standard_step,
                peaks.standard - ex if stacked else peaks.standard,
                f"standard peak {peaks.standard:,} B at step {peaks.standard_step}",
            ),
            PeakMark(
                "interleaved peak",
                peaks.interleaved_step,
                int(std[at[peaks.interleaved_step]]) + peaks.interleaved if stacked else peaks.interleaved,
                f"interleaved peak {peaks.interleaved:,} B at step {peaks.interleaved_step}",
            ),
        ]
        self._y_end = y_end_for(top, len(marks))
        self.figure.y_range.update(start=0, end=self._y_end)
        self.budget_span.location, self.interleaved_budget_span.location = o.budget_bytes, o.interleaved_budget_bytes
        self.support_band.update(bottom=o.budget_bytes - support, top=o.budget_bytes)
        self._label_budgets(o, stacked)  # (the overview has the arrays' budget fields)
        self.peak_source.data = self._peak_data(marks, n, self._y_end)
        column = max(n / PIXEL_COLUMNS, 1.0)
        self.near_peak_source.data = {
            "left": o.near_first - 0.5,
            "right": np.maximum(o.near_last + 0.5, o.near_first - 0.5 + 2 * column),
        }
        self.loop_source.data = {"left": o.loop_first - 0.5, "right": o.loop_last + 0.5}
        self.repeat_source.data = {"x": o.repeat_steps}
        total = std + intl + ex
        names = pc.dictionary_encode(
            pa.array(o.operation, type=pa.string())
        )  # (the points' own texts: the steps' codes come with the plan)
        self._op_codes = None
        self.operation_names.data = {"text": [shorten(text, 90) for text in names.dictionary.to_pylist()]}
        self.usage_source.data = {
            "step": o.step,
            "std": std,
            "intl": intl,
            "exch": np.full(o.step.size, ex),
            "si": std + intl,
            "total": total,
            "std_line": std + ex,
            "eff": std + intl + support,
            "mid": np.full(o.step.size, self._y_end * 0.45),
            "op": names.indices.to_numpy(zero_copy_only=False).astype(np.int32),
            "source": o.source,
            "count": o.execution_count,
            "ghost": total,
        }
        self.ghost.visible = self.ghost_legend.visible = False
        step = peaks.total_step
        self.selected_span.location = step
        operation = o.operation[at[step]] if step in at else ""
        self._step_line.object = (
            f'<span data-testid="ts-selected-step"><b>Step {step}</b> of {n:,}</span> '
            f"<code style='opacity:0.8'>{esc(shorten(operation, 90))}</code>"
        )
        self._info.object = f"{n:,} steps; showing the whole profile's overview, {o.step.size:,} points (full detail once the page is built)"

    def redraw(self) -> None:
        """Draw the session's current plan again (an overview was drawn whose build then failed)."""
        self._overview_of = self._series_of = None
        self._redraw()

    def _redraw(self, *_):
        drawn_overview, self._overview_of = self._overview_of, None
        data = self.state.data
        if data is None:
            self._series = None
            self.usage_source.data = empty_columns(USAGE_FIELDS)
            return
        arrays, series, steps = data.arrays, data.series, data.opened.steps
        support = arrays.support_reserve_bytes
        self._series = {
            "std": series.standard,
            "intl": series.interleaved,
            "total": series.total,
            "std_line": series.standard_line,
            "ghost": data.base.series.total,
            "count": steps.execution_count,
            "source": steps.source,
            "operation": steps.operation,
            "support": support,
        }
        n = arrays.n_steps
        if self._series_of is not data.opened:
            self._series_of = data.opened
            self._window = (None, None)
            self._encode_operations(steps.operation)
            self.figure.x_range.update(start=-0.5, end=max(n - 0.5, 0.5))
        elif (
            drawn_overview is data.opened
        ):  # its overview was drawn (show_overview): the zoom stays, the steps' codes are new
            self._encode_operations(steps.operation)
        column = max(n / PIXEL_COLUMNS, 1.0)  # steps per pixel column of the whole profile
        first, last = near_peak_runs(series.total, 0.95, merge_gap=int(column))
        # each run at least two columns wide, so a one-step peak region still shows on a long profile
        self.near_peak_source.data = {"left": first - 0.5, "right": np.maximum(last + 0.5, first - 0.5 + 2 * column)}
        peaks = data.plan.peaks
        budget, ibudget = arrays.budget_bytes, arrays.interleaved_budget_bytes
        top = max(
            int(series.total.max(initial=0)),
            int(data.base.series.total.max(initial=0)),
            budget,
            int((series.standard + series.interleaved).max(initial=0)) + support,
        )
        marks = self._peak_marks(peaks)
        y_end = y_end_for(top, len(marks))
        self._y_end = y_end
        self.figure.y_range.update(start=0, end=y_end)
        self.budget_span.location = budget
        self.interleaved_budget_span.location = ibudget
        self.support_band.update(bottom=budget - support, top=budget)
        self._label_budgets(arrays, self.layout_mode == "stacked")
        self.peak_source.data = self._peak_data(marks, n, y_end)
        self.ghost.visible = self.ghost_legend.visible = data.edited
        self._on_step()
        self._on_values()
        self._refresh_points()

    def _encode_operations(self, operations) -> None:
        """The profile's distinct operation texts, sent once, and each step's code among them."""
        encoded = pc.dictionary_encode(
            operations.combine_chunks() if isinstance(operations, pa.ChunkedArray) else operations
        )
        if len(encoded.dictionary) > MOST_OPERATION_NAMES:
            self._op_codes = None
            return
        self._op_codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
        self.operation_names.data = {"text": [shorten(text, 90) for text in encoded.dictionary.to_pylist()]}

    def _peak_marks(self, peaks) -> list[PeakMark]:
        s, stacked = self._series, self.layout_mode == "stacked"
        std_y = int(s["std"][peaks.standard_step]) if stacked else peaks.standard
        intl_y = (
            int(s["std"][peaks.interleaved_step] + s["intl"][peaks.interleaved_step]) if stacked else peaks.interleaved
        )
        return [
            PeakMark(
                "total peak", peaks.total_step, peaks.total, f"total peak {peaks.total:,} B at step {peaks.total_step}"
            ),
            PeakMark(
                "standard peak",
                peaks.standard_step,
                std_y,
                f"standard peak {peaks.standard:,} B at step {peaks.standard_step}",
            ),
            PeakMark(
                "interleaved peak",
                peaks.interleaved_step,
                intl_y,
                f"interleaved peak {peaks.interleaved:,} B at step {peaks.interleaved_step}",
            ),
        ]

    def _refresh_points(self) -> None:
        """Send the visible window, downsampled per pixel column."""
        s = self._series
        if s is None:
            return
        n = s["std"].size
        start, stop = window_of(*self._window, n)
        edited = self.state.data.edited
        keep = minmax_indices(
            [s["total"], s["std_line"], s["intl"], s["ghost"]] if edited else [s["total"], s["std_line"], s["intl"]],
            start,
            stop,
            PIXEL_COLUMNS,
        )
        ex = self.state.data.arrays.exchange_rows
        std, intl = s["std"][keep], s["intl"][keep]
        if self._op_codes is not None:
            op = self._op_codes[keep]
        else:  # many distinct texts: the points' own, sent with them (an edit that keeps the points: already there)
            op = np.arange(keep.size, dtype=np.int32)
            current = self.usage_source.data.get("step")
            if not (isinstance(current, np.ndarray) and np.array_equal(current, keep)):
                self.operation_names.data = {
                    "text": [shorten(text, 90) for text in s["operation"].take(keep).to_pylist()]
                }
        columns = {
            "step": keep,
            "std": std,
            "intl": intl,
            "exch": np.full(keep.size, ex),
            "si": std + intl,
            "total": std + intl + ex,
            "std_line": std + ex,
            "eff": std + intl + s["support"],
            "source": s["source"][keep],
            "count": s["count"][keep],
            "ghost": s["ghost"][keep],
        }
        update_columns(self.usage_source, {**columns, "mid": np.full(keep.size, self._y_end * 0.45), "op": op})
        self._refresh_marks(start, stop)
        shown = stop - start
        self._info.object = (
            f"{n:,} steps; showing steps {start:,}–{max(stop - 1, start):,} with {keep.size:,} points"
            + (" (min/max per pixel column: peaks are kept)" if keep.size < shown else "")
        )

    def _refresh_marks(self, start: int, stop: int) -> None:
        """Loop regions and Repeat boundaries of the window, left out while too dense to read."""
        steps = self.state.data.opened.steps
        inside = (steps.loop_last >= start) & (steps.loop_first < stop)
        loops = np.flatnonzero(inside)
        if loops.size > MOST_MARKS:
            loops = loops[:0]
        self.loop_source.data = {"left": steps.loop_first[loops] - 0.5, "right": steps.loop_last[loops] + 0.5}
        self.repeat_source.data = {"x": thinned(steps.repeat_steps, start, stop, MOST_MARKS)}

    @param.depends("layout_mode", watch=True)
    def _on_mode(self):
        self._show_mode(self.layout_mode == "stacked")
        if self._overview_of is not None:
            self.show_overview(self._overview_of)
        elif self._series is not None and self.state.data is not None:
            self._redraw()

    def _on_values(self, *_):
        """The live range of the value open in the editor (``state.focus_value``), or none."""
        data, focus = self.state.data, self.state.focus_value
        where = value_focus(data, focus) if data is not None and focus is not None else None
        if where is None:
            self.value_range.visible = False
        else:
            self.value_range.update(left=where.first - 0.5, right=where.last + 0.5, visible=True)

    def _on_step(self, *_):
        step = self.state.selected_step
        self.selected_span.location = step
        data = self.state.data
        if data is None:
            return
        operation = data.opened.steps.operation[step].as_py() if data.arrays.n_steps else ""
        self._step_line.object = (
            f'<span data-testid="ts-selected-step"><b>Step {step}</b> of {data.arrays.n_steps:,}</span> '
            f"<code style='opacity:0.8'>{esc(shorten(operation, 90))}</code>"
        )

    # ------------------------------------------------------------------ events

    def _on_tap(self, event):
        if event.x is not None and self.state.data is not None:
            self.state.select_step(round(event.x))

    def _on_ranges(self, event):
        self._window = (event.x0, event.x1)
        self._refresh_points()

    def __panel__(self):
        return pn.Column(
            pn.FlexBox(
                pn.pane.HTML("<b>Timeline</b> · click a step (keys: ←/→, Home/End, p)", margin=(8, 10)),
                self._mode,
                self._info,
                sizing_mode="stretch_width",
            ),
            self._step_line,
            self._pane,
            sizing_mode="stretch_width",
            css_classes=["ts-timeline"],
        )
