"""Timeline: per-step usage of the standard and interleaved regions with the exchange-row
reservation, the support reserve, both budgets, the peaks, loop regions and Repeat boundaries.

At scale the browser never gets every step: ``tilescope.derived.series.minmax_indices`` keeps, per pixel
column of the visible window, the first/last step and the steps holding each series' minimum and
maximum, so peaks survive any zoom; the window is recomputed on every zoom/pan (RangesUpdate).
Clicking the plot selects the nearest step.
"""
from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.events import RangesUpdate, Tap
from bokeh.models import (
    BoxAnnotation, ColumnDataSource, HoverTool, Label, LabelSet, Legend, LegendItem, NumeralTickFormatter, Range1d, Span,
)
from bokeh.plotting import figure

from tilescope.models.format import shorten
from tilescope.derived.series import minmax_indices, window_of
from tilescope.app.state import SessionState
from tilescope.app.view_guard import watch_state

PIXEL_COLUMNS = 700  # columns per visible window; each keeps first, last and min/max of every series
COLORS = {"standard": "#4C78A8", "interleaved": "#F58518", "exchange": "#9D9D9D", "ghost": "#222222", "budget": "#C62828"}
USAGE_FIELDS = ("step", "std", "intl", "exch", "std_top", "top", "total", "std_line", "operation", "source", "count", "ghost")


def _empty_usage() -> dict:
    return {k: [] for k in USAGE_FIELDS}


class TimelineView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    layout_mode = param.Selector(default="stacked", objects=["stacked", "separate"], doc="stacked areas, or one line per region")

    def __init__(self, **params):
        super().__init__(**params)
        self._window: tuple[float | None, float | None] = (None, None)
        self._series_of = None  # the opened profile the loop/repeat sources were built for
        self._series = None  # full-resolution per-step arrays of the current plan (dict of numpy)
        self.usage_source = ColumnDataSource(_empty_usage(), name="ts-timeline-usage")
        self.loop_source = ColumnDataSource({"left": [], "right": []}, name="ts-timeline-loops")
        self.repeat_source = ColumnDataSource({"x": []}, name="ts-timeline-repeats")
        self.peak_source = ColumnDataSource({"x": [], "y": [], "label": [], "align": [], "offset": []}, name="ts-timeline-peaks")
        self.figure = self._build_figure()
        self._mode = pn.widgets.RadioButtonGroup.from_param(self.param.layout_mode, button_type="default", name="")
        self._info = pn.pane.HTML("", styles={"font-size": "12px", "color": "#555"})
        self._pane = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
        watch_state(self.state, self._on_plan, ["data"])
        watch_state(self.state, self._on_step, ["selected_step"])
        self._show_mode()
        self._on_plan()

    # ------------------------------------------------------------------ figure

    def _build_figure(self):
        fig = figure(
            name="ts-timeline", height=330, sizing_mode="stretch_width", tools="xpan,xwheel_zoom,box_zoom,reset,save",
            active_scroll="xwheel_zoom", x_axis_label="step", y_axis_label="bytes per tile", toolbar_location="above",
            x_range=Range1d(-0.5, 0.5), y_range=Range1d(0, 1),
        )
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.xaxis.formatter = NumeralTickFormatter(format="0")
        src = self.usage_source
        fig.quad(left="left", right="right", bottom=0, top=1e15, source=self.loop_source, fill_color="#7b61ff", fill_alpha=0.07, line_alpha=0, name="loops")
        self.repeat_glyph = fig.segment(x0="x", x1="x", y0=0, y1=1e15, source=self.repeat_source, line_color="#7b61ff", line_dash="dotted", line_width=1)
        self.stacked = [
            fig.varea(x="step", y1=0, y2="exch", source=src, fill_color=COLORS["exchange"], fill_alpha=0.35, hatch_pattern="/", hatch_alpha=0.3),
            fig.varea(x="step", y1="exch", y2="std_top", source=src, fill_color=COLORS["standard"], fill_alpha=0.75),
            fig.varea(x="step", y1="std_top", y2="top", source=src, fill_color=COLORS["interleaved"], fill_alpha=0.75),
        ]
        self.separate = [
            fig.line(x="step", y="std_line", source=src, line_color=COLORS["standard"], line_width=1.6),
            fig.line(x="step", y="intl", source=src, line_color=COLORS["interleaved"], line_width=1.6),
            fig.line(x="step", y="total", source=src, line_color="#555555", line_width=1.0, line_alpha=0.8),
        ]
        self.ghost = fig.line(x="step", y="ghost", source=src, line_color=COLORS["ghost"], line_dash="dashed", line_width=1.2, line_alpha=0.7, visible=False)
        # invisible carrier of the hover: the top of the stack (or the standard line when separate)
        self.hover_line = fig.line(x="step", y="top", source=src, line_alpha=0, line_width=6)
        fig.add_tools(
            HoverTool(
                renderers=[self.hover_line], mode="vline",
                tooltips=[  # plain @field tooltips render text, never HTML (operation text is untrusted)
                    ("step", "@step"), ("operation", "@operation"), ("source op", "@source"), ("runs", "×@count"),
                    ("standard", "@std{0,0} B"), ("interleaved", "@intl{0,0} B"), ("exchange rows", "@exch{0,0} B"),
                    ("total", "@total{0,0} B"),
                ],
            )
        )
        self.budget_span = Span(location=0, dimension="width", line_color=COLORS["budget"], line_dash="dashed", line_width=1.5)
        self.interleaved_budget_span = Span(location=0, dimension="width", line_color=COLORS["interleaved"], line_dash="dashed", line_width=1.5)
        self.support_band = BoxAnnotation(bottom=0, top=0, fill_color=COLORS["budget"], fill_alpha=0.08, hatch_pattern="x", hatch_alpha=0.15, hatch_color=COLORS["budget"])
        self.selected_span = Span(location=0, dimension="height", line_color="#111", line_width=1.5, line_alpha=0.8)
        self.budget_label = Label(x=0, y=0, x_units="screen", text="", text_font_size="11px", text_color=COLORS["budget"], y_offset=3)
        self.ibudget_label = Label(x=0, y=0, x_units="screen", text="", text_font_size="11px", text_color=COLORS["interleaved"], y_offset=3)
        for annotation in (self.support_band, self.budget_span, self.interleaved_budget_span, self.selected_span, self.budget_label, self.ibudget_label):
            fig.add_layout(annotation)
        self.peak_marks = fig.scatter(x="x", y="y", source=self.peak_source, marker="inverted_triangle", size=11, fill_color="#111", line_color="white")
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.peak_source, text_font_size="11px", y_offset=8, x_offset="offset", text_align="align"))
        legend = Legend(
            items=[
                LegendItem(label="exchange rows", renderers=[self.stacked[0]]),
                LegendItem(label="standard (+ exchange rows when separate)", renderers=[self.stacked[1], self.separate[0]]),
                LegendItem(label="interleaved", renderers=[self.stacked[2], self.separate[1]]),
                LegendItem(label="total (separate view)", renderers=[self.separate[2]]),
            ],
            orientation="horizontal", label_text_font_size="11px", location="center",
        )
        self.ghost_legend = LegendItem(label="before edits (total)", renderers=[self.ghost], visible=False)
        legend.items.append(self.ghost_legend)
        fig.add_layout(legend, "below")
        fig.on_event(Tap, self._on_tap)
        fig.on_event(RangesUpdate, self._on_ranges)
        return fig

    # ------------------------------------------------------------------ data

    def _on_plan(self, *_):
        data = self.state.data
        if data is None:
            self._series = None
            self.usage_source.data = _empty_usage()
            return
        arrays, series, steps = data.arrays, data.series, data.opened.steps
        self._series = {
            "std": series.standard, "intl": series.interleaved, "total": series.total, "std_line": series.standard_line,
            "ghost": data.base.series.total, "count": steps.execution_count, "source": steps.source, "operation": steps.operation,
        }
        n = arrays.n_steps
        if self._series_of is not data.opened:
            self._series_of = data.opened
            self._window = (None, None)
            self.figure.x_range.update(start=-0.5, end=max(n - 0.5, 0.5))
            self.loop_source.data = {"left": steps.loop_first - 0.5, "right": steps.loop_last + 0.5}
            self.repeat_source.data = {"x": steps.repeat_steps}
        peaks = data.plan.peaks
        top = max(int(series.total.max(initial=0)), int(data.base.series.total.max(initial=0)), arrays.budget_bytes)
        self.figure.y_range.update(start=0, end=top * 1.08)
        self.budget_span.location = arrays.budget_bytes
        self.interleaved_budget_span.location = arrays.interleaved_budget_bytes
        self.support_band.update(bottom=arrays.budget_bytes - arrays.support_reserve_bytes, top=arrays.budget_bytes)
        self.budget_label.update(x=60, y=arrays.budget_bytes, text=f"budget {arrays.budget_bytes:,} B (support reserve {arrays.support_reserve_bytes:,} B shaded below)")
        self.ibudget_label.update(x=60, y=arrays.interleaved_budget_bytes, text=f"interleaved budget {arrays.interleaved_budget_bytes:,} B")
        self.peak_source.data = self._peak_marks(peaks)
        self.ghost.visible = self.ghost_legend.visible = data.edited
        self._on_step()
        self._refresh_points()

    def _peak_marks(self, peaks) -> dict:
        """One mark per peak step; peaks sharing a step share one label."""
        marks: dict[int, list] = {}
        for name, step, y, value in (
            ("total", peaks.total_step, peaks.total, peaks.total),
            ("standard", peaks.standard_step, self._standard_peak_y(peaks), peaks.standard),
            ("interleaved", peaks.interleaved_step, self._interleaved_peak_y(peaks), peaks.interleaved),
        ):
            mark = marks.setdefault((step, y), [])
            mark.append(f"{name} peak {value:,} B")
        n = self.state.data.arrays.n_steps
        return {
            "x": [step for step, _ in marks], "y": [y for _, y in marks], "label": [" · ".join(m) for m in marks.values()],
            # labels point into the plot: left of a late peak, right of an early one
            "align": ["right" if step > n / 2 else "left" for step, _ in marks],
            "offset": [-6 if step > n / 2 else 6 for step, _ in marks],
        }

    def _standard_peak_y(self, peaks) -> int:
        # stacked: the standard layer's top (exchange rows + standard usage) is the standard peak either way
        return peaks.standard

    def _interleaved_peak_y(self, peaks) -> int:
        if self.layout_mode == "separate":
            return peaks.interleaved
        return int(self._series["total"][peaks.interleaved_step])

    def _refresh_points(self) -> None:
        """Send the visible window, downsampled per pixel column."""
        s = self._series
        if s is None:
            return
        n = s["std"].size
        start, stop = window_of(*self._window, n)
        edited = self.state.data.edited
        keep = minmax_indices([s["total"], s["std_line"], s["intl"], s["ghost"]] if edited else [s["total"], s["std_line"], s["intl"]], start, stop, PIXEL_COLUMNS)
        ex = self.state.data.arrays.exchange_rows
        std, intl = s["std"][keep], s["intl"][keep]
        operations = s["operation"].take(keep).to_pylist()
        self.usage_source.data = {
            "step": keep, "std": std, "intl": intl, "exch": np.full(keep.size, ex), "std_top": std + ex,
            "top": std + intl + ex, "total": std + intl + ex, "std_line": std + ex,
            "operation": [shorten(op, 200) for op in operations], "source": s["source"][keep], "count": s["count"][keep],
            "ghost": s["ghost"][keep],
        }
        shown = stop - start
        self._info.object = (
            f"{n:,} steps; showing steps {start:,}–{max(stop - 1, start):,} with {keep.size:,} points"
            + (" (min/max per pixel column: peaks are kept)" if keep.size < shown else "")
        )

    @param.depends("layout_mode", watch=True)
    def _on_mode(self):
        self._show_mode()
        if self._series is not None and self.state.data is not None:
            self._on_plan()

    def _show_mode(self):
        stacked = self.layout_mode == "stacked"
        for r in self.stacked:
            r.visible = stacked
        for r in self.separate:
            r.visible = not stacked
        self.hover_line.glyph.y = "top" if stacked else "std_line"

    def _on_step(self, *_):
        self.selected_span.location = self.state.selected_step

    # ------------------------------------------------------------------ events

    def _on_tap(self, event):
        if event.x is not None and self.state.data is not None:
            self.state.select_step(int(round(event.x)))

    def _on_ranges(self, event):
        self._window = (event.x0, event.x1)
        self._refresh_points()

    def __panel__(self):
        return pn.Column(
            pn.Row(pn.pane.HTML("<b>Timeline</b> — click a step to select it; wheel zooms steps", margin=(8, 10)), self._mode, self._info),
            self._pane,
            sizing_mode="stretch_width",
            css_classes=["ts-timeline"],
        )
