"""Both timelines overlaid, one chart per region (standard and total with the exchange rows, as
their peaks count them), on the aligned step axis: A blue, B orange, the difference filled red
where B uses more and green where less, positions where only one side has a step shaded grey,
each side's peak marked, the selected value's live steps shaded in both sides' colours.

At scale the browser never gets every position: ``tilescope.derived.series.minmax_indices`` keeps,
per pixel column of the visible window, the first and last position and those holding the
minimum and maximum of A, B and their difference, so no peak and no spike of the difference
disappears at any zoom (as ``app.views.timeline``). Clicking a chart selects A's step there.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import panel as pn
import param
from bokeh.events import RangesUpdate, Tap
from bokeh.models import ColumnDataSource, HoverTool, LabelSet, LegendItem, Range1d, Span

from tilescope.app.glyphs import band
from tilescope.app.one_message import one_message
from tilescope.app.ranges_update import settle_quickly
from tilescope.app.step_figure import legend_below, step_figure
from tilescope.app.views.compare_part import ComparePart
from tilescope.app.views.compare_selection import CompareSelection
from tilescope.app.y_follow import follow_y
from tilescope.derived.compare_data import REGIONS
from tilescope.derived.series import minmax_indices, window_of
from tilescope.models.format import shorten
from tilescope.report.compare_png import LESS, MORE, SIDE_COLOURS  # the PNG's colours

PIXEL_COLUMNS = 600
ONE_SIDED = "#9e9e9e"
POINT_FIELDS = ("x", "a", "b", "hi", "lo", "a_step", "b_step", "delta", "operation")
TITLES = MappingProxyType(
    {
        "standard": "standard + exchange rows",
        "interleaved": "interleaved",
        "total": "total (both regions + exchange rows)",
    }
)
WITH_OPERATION = "total"  # the one chart whose hover names the step's operation (text is the bulk of a chart's points)


def _empty() -> dict:
    return {k: [] for k in POINT_FIELDS}


def overlay_points(compare, region: str, keep: np.ndarray, with_operation: bool = False) -> dict:
    """The chart's columns at positions ``keep``: NaN where a side has no step (lines break there).
    ``hi``/``lo`` are the larger and smaller of A and B (the one present where the other has no
    step): the band from A up to ``hi`` is where B uses more, from ``lo`` up to A where it uses
    less (no band where a side has no step: A is NaN, or both bounds are A)."""
    s = compare.series(region)
    steps = compare.comparison.steps
    has_a, has_b = s.has_a[keep], s.has_b[keep]
    a = np.where(has_a, s.a[keep], np.nan)
    b = np.where(has_b, s.b[keep], np.nan)
    a_step, b_step = steps.a_step[keep], steps.b_step[keep]
    operation: list[str] = []
    if with_operation:
        from_a = (
            compare.a.opened.steps.operation.take(np.maximum(a_step, 0)).to_pylist()
            if compare.a.arrays.n_steps
            else [""] * keep.size
        )
        from_b = (
            compare.b.opened.steps.operation.take(np.maximum(b_step, 0)).to_pylist()
            if compare.b.arrays.n_steps
            else [""] * keep.size
        )
        operation = [shorten(x if i >= 0 else y, 160) for x, y, i in zip(from_a, from_b, a_step.tolist())]
    return {
        "x": keep.astype(np.int32),
        "a": a,
        "b": b,
        "hi": np.fmax(a, b),
        "lo": np.fmin(a, b),
        "a_step": a_step.astype(np.int32),
        "b_step": b_step.astype(np.int32),
        "delta": np.where(has_a & has_b, s.b[keep] - s.a[keep], 0).astype(np.int32),
        "operation": operation or [""] * keep.size,
    }


class CompareTimelineView(ComparePart):
    selection = param.ClassSelector(class_=CompareSelection)

    def __init__(self, **params):
        super().__init__(**params)
        self._window: tuple[float | None, float | None] = (None, None)
        self._shown_window: tuple | None = None
        self._axis_of = None  # the CompareData whose aligned axis the x range was fitted to
        self.x_range = Range1d(-0.5, 0.5)
        self.points = {r: ColumnDataSource(_empty(), name=f"ts-compare-points-{r}") for r in REGIONS}
        self.peaks = {
            r: ColumnDataSource({"x": [], "y": [], "label": [], "color": []}, name=f"ts-compare-peaks-{r}")
            for r in REGIONS
        }
        self.one_sided = ColumnDataSource({"left": [], "right": []}, name="ts-compare-one-sided")
        self.lives = ColumnDataSource({"left": [], "right": [], "color": []}, name="ts-compare-selected-lives")
        self.step_spans: dict[str, Span] = {}
        self.figures = {r: self._build_figure(r) for r in REGIONS}
        # zoomed in, each y axis follows the steps in view (in the browser: no round trip): its top
        # 1.12 × the highest of A and B ("hi") in view, room for the peak labels
        follow_y(
            self.x_range,
            [self.figures[r].y_range for r in REGIONS],
            [[self.points[r]] for r in REGIONS],
            x0="x",
            x1="x",
            top="hi",
            pad=0.12,
        )
        self._info = pn.pane.HTML(
            "",
            css_classes=["ts-compare-note"],
            styles={
                "font-size": "12px",
                "color": "color-mix(in srgb, var(--panel-on-background-color, #222) 65%, transparent)",
            },
        )
        self.gate.watch(self._redraw, ["compare"])
        self.gate.watch(self._on_step, ["selected_step"])
        self.selection.param.watch(self._on_entry, ["entry"])
        self._redraw()

    # ------------------------------------------------------------------ figures

    def _build_figure(self, region: str):
        last = region == REGIONS[-1]
        fig = step_figure(  # three charts on one x range: the page scrolls under the wheel, no shared toolbar above
            f"ts-compare-{region}",
            210 if last else 180,
            x_label="aligned step position" if last else None,
            x_range=self.x_range,
            x_format="0",
            title=TITLES[region],
            active_scroll=None,
            toolbar_location="right",
            min_border_left=None,
        )
        band(fig, self.one_sided, ONE_SIDED, 0.15)
        band(fig, self.lives, "color", 0.12)  # each side's colour
        src = self.points[region]
        more = fig.varea(x="x", y1="a", y2="hi", source=src, fill_color=MORE, fill_alpha=0.35)
        less = fig.varea(x="x", y1="lo", y2="a", source=src, fill_color=LESS, fill_alpha=0.35)
        line_a = fig.line(x="x", y="a", source=src, line_color=SIDE_COLOURS["a"], line_width=1.4)
        line_b = fig.line(x="x", y="b", source=src, line_color=SIDE_COLOURS["b"], line_width=1.4, line_alpha=0.9)
        hover_line = fig.line(x="x", y="hi", source=src, line_alpha=0, line_width=6)
        tooltips = [
            ("position", "@x"),
            ("A step", "@a_step"),
            ("B step", "@b_step"),
            ("A", "@a{0,0} B"),
            ("B", "@b{0,0} B"),
            ("B − A", "@delta{+0,0} B"),
        ]
        if region == WITH_OPERATION:
            tooltips.insert(3, ("operation", "@operation"))
        fig.add_tools(
            HoverTool(renderers=[hover_line], mode="vline", tooltips=tooltips)
        )  # @field tooltips render text, never HTML
        fig.scatter(
            x="x",
            y="y",
            source=self.peaks[region],
            marker="inverted_triangle",
            size=11,
            fill_color="color",
            line_color="white",
        )
        # dark ink on a light chip: readable on the light and the dark theme alike
        fig.add_layout(
            LabelSet(
                x="x",
                y="y",
                text="label",
                source=self.peaks[region],
                text_font_size="10px",
                y_offset=8,
                x_offset=6,
                text_color="#1f2933",
                background_fill_color="#ffffff",
                background_fill_alpha=0.85,
            )
        )
        span = self.step_spans[region] = Span(
            location=0, dimension="height", line_color="#111", line_width=1.2, line_alpha=0.7
        )
        fig.add_layout(span)
        if last:
            legend_below(
                fig,
                [
                    LegendItem(label="A", renderers=[line_a]),
                    LegendItem(label="B", renderers=[line_b]),
                    LegendItem(label="B above A", renderers=[more]),
                    LegendItem(label="B below A", renderers=[less]),
                ],
            )
        fig.on_event(Tap, one_message(self._on_tap))
        fig.on_event(RangesUpdate, one_message(self._on_ranges))
        settle_quickly(fig)
        return fig

    # ------------------------------------------------------------------ data

    def _redraw(self, *_):
        compare = self.state.compare
        if compare is None:
            for r in REGIONS:
                self.points[r].data, self.peaks[r].data = _empty(), {"x": [], "y": [], "label": [], "color": []}
            self.one_sided.data, self.lives.data = {"left": [], "right": []}, {"left": [], "right": [], "color": []}
            self._axis_of = None
            return
        n = compare.n_positions
        shown = self._axis_of
        if (
            shown is None or shown.a.opened is not compare.a.opened or shown.b.opened is not compare.b.opened
        ):  # another axis
            self._window = (None, None)
            self.x_range.update(start=-0.5, end=max(n - 0.5, 0.5), bounds=(-0.5, max(n - 0.5, 0.5)))
        self._axis_of = compare
        first, last = compare.one_sided_runs
        self.one_sided.data = {"left": first - 0.5, "right": last + 0.5}
        for region in REGIONS:
            s = compare.series(region)
            top = max(int(s.a.max(initial=0)), int(s.b.max(initial=0)), 1)
            self.figures[region].y_range.update(start=0, end=top * 1.12)
            self.peaks[region].data = self._peak_marks(compare, region)
        self._shown_window = None
        self._refresh_points()
        self._on_step()
        self._on_entry()

    def _peak_marks(self, compare, region: str) -> dict:
        attribution = compare.comparison.attribution(region)
        pos_a, pos_b = compare.positions
        marks = [
            (
                int(pos_a[attribution.a_step]),
                attribution.a_peak,
                f"A {attribution.a_peak:,} B @{attribution.a_step}",
                SIDE_COLOURS["a"],
            ),
            (
                int(pos_b[attribution.b_step]),
                attribution.b_peak,
                f"B {attribution.b_peak:,} B @{attribution.b_step}",
                SIDE_COLOURS["b"],
            ),
        ]
        marks = [m for m in marks if m[0] >= 0]
        return {
            "x": [m[0] for m in marks],
            "y": [m[1] for m in marks],
            "label": [m[2] for m in marks],
            "color": [m[3] for m in marks],
        }

    def _refresh_points(self) -> None:
        compare = self.state.compare
        if compare is None:
            return
        n = compare.n_positions
        start, stop = window_of(*self._window, n)
        if self._shown_window == (compare, start, stop):
            return
        self._shown_window = (compare, start, stop)
        shown = 0
        for region in REGIONS:
            s = compare.series(region)
            keep = minmax_indices([s.a, s.b, s.delta], start, stop, PIXEL_COLUMNS)
            self.points[region].data = overlay_points(compare, region, keep, region == WITH_OPERATION)
            shown = max(shown, keep.size)
        self._info.object = (
            f"{n:,} aligned positions; showing {start:,}–{max(stop - 1, start):,} with ≤ {shown:,} points per chart"
            + (
                " (min/max of A, B and B − A per pixel column: peaks and spikes are kept)"
                if shown < stop - start
                else ""
            )
            + ". Grey: steps on one side only."
        )

    def _on_step(self, *_):
        compare = self.state.compare
        if compare is None:
            return
        pos_a, _ = compare.positions
        step = self.state.selected_step
        location = int(pos_a[step]) if 0 <= step < pos_a.size else -10
        for span in self.step_spans.values():
            span.location = location

    def _on_entry(self, *_):
        compare = self.state.compare
        view = compare.entry_view(self.selection.entry) if compare is not None else None
        if view is None:
            self.lives.data = {"left": [], "right": [], "color": []}
            return
        left = np.concatenate((view.a.first_position, view.b.first_position)) - 0.5
        right = np.concatenate((view.a.last_position, view.b.last_position)) + 0.5
        colors = [SIDE_COLOURS["a"]] * view.a.first_position.size + [SIDE_COLOURS["b"]] * view.b.first_position.size
        self.lives.data = {"left": left, "right": right, "color": colors}

    # ------------------------------------------------------------------ events

    def _on_tap(self, event):
        compare = self.state.compare
        if compare is None or event.x is None:
            return
        position = round(event.x)
        a_step = compare.comparison.steps.a_step
        if 0 <= position < a_step.size and a_step[position] >= 0:
            self.state.select_step(int(a_step[position]))

    def _on_ranges(self, event):
        self._window = (event.x0, event.x1)
        self._refresh_points()

    def __panel__(self):
        return pn.Column(
            pn.FlexBox(  # wraps in a narrow panel (a Row cut the note at the right)
                pn.pane.HTML(
                    "<b>Timelines, A and B overlaid</b> — wheel zooms; click selects A's step", margin=(8, 10)
                ),
                self._info,
                sizing_mode="stretch_width",
            ),
            *[pn.pane.Bokeh(self.figures[r], sizing_mode="stretch_width") for r in REGIONS],
            sizing_mode="stretch_width",
            css_classes=["ts-compare-timeline"],
        )
