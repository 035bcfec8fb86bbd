"""The timeline's figure: the Bokeh figure of ``app.views.timeline.TimelineView``, its column
sources, glyphs and annotations, the stacked and separate modes' renderers and legend items, the
theme's ink, the budget labels and the peak labels' rows (placed by ``derived.peak_labels``).

What is drawn and when (a plan or a cached profile's overview, the visible window, the selected
step, clicks and zooms) is the view's (``app/views/timeline.py``).
"""

from __future__ import annotations

from bokeh.events import RangesUpdate, Tap
from bokeh.models import (
    BoxAnnotation,
    ColumnDataSource,
    CustomJS,
    CustomJSHover,
    HoverTool,
    Label,
    LabelSet,
    LegendItem,
    Span,
)

from tilescope.app.assets import static_text
from tilescope.app.glyphs import band
from tilescope.app.glyphs import draw as _draw
from tilescope.app.one_message import one_message
from tilescope.app.ranges_update import settle_quickly
from tilescope.app.step_figure import legend_below, step_figure
from tilescope.derived.peak_labels import PeakMark, place_labels
from tilescope.models.glossary import GLOSSARY

TOOLTIP = static_text("timeline_tooltip.html")
SELECT_JS = static_text("timeline_select.js")
OPERATION_JS = static_text("timeline_operation.js")
PEAK_NOTE_JS = static_text("timeline_peak_note.js")
COLORS = {
    "standard": "#4C78A8",
    "interleaved": "#F58518",
    "exchange": "#9D9D9D",
    "budget": "#C62828",
    "effective": "#8E24AA",
}
VALUE_RANGE_COLOR = "#00897B"  # teal: apart from the regions' blue and orange, the budget's red, the peaks' yellow
INK = {False: "#111111", True: "#E8E8E8"}  # marks and the selected-step line, per theme (dark?)
BUDGET_INK = {
    False: COLORS["budget"],
    True: "#FF8A80",
}  # the budget and reserve labels: 4.5:1 or more on either background
USAGE_FIELDS = (
    "step",
    "std",
    "intl",
    "exch",
    "si",
    "total",
    "std_line",
    "eff",
    "mid",
    "op",
    "source",
    "count",
    "ghost",
)
PEAK_FIELDS = ("x", "y", "label", "label_y", "align", "offset", "definition")


def empty_columns(fields) -> dict:
    return {k: [] for k in fields}


def _budget_span(color: str) -> Span:
    """A budget's dashed line across the plot (its height set by the view)."""
    return Span(location=0, dimension="width", line_color=color, line_dash="dashed", line_width=1.5)


def _budget_label(color: str, y_offset: int) -> Label:
    """A budget's label at the plot's left edge, ``y_offset`` px above (below if negative) its line."""
    return Label(x=8, y=0, x_units="screen", text="", text_font_size="11px", text_color=color, y_offset=y_offset)


class TimelineFigure:
    """The figure half of ``TimelineView`` (a mixin: the view's figure, sources and annotations stay
    its attributes, as the tests and the page read them)."""

    def _build_figure(self, on_tap, on_ranges) -> None:
        """Build ``self.figure`` and its sources; ``on_tap(event)`` and ``on_ranges(event)``: the view's
        handlers of a click and of a zoom/pan (each one message at a time)."""
        self._dark = False
        self.usage_source = ColumnDataSource(empty_columns(USAGE_FIELDS), name="ts-timeline-usage")
        self.operation_names = ColumnDataSource({"text": []}, name="ts-timeline-operations")  # what ``op`` codes name
        self.loop_source = ColumnDataSource({"left": [], "right": []}, name="ts-timeline-loops")
        self.repeat_source = ColumnDataSource({"x": []}, name="ts-timeline-repeats")
        self.near_peak_source = ColumnDataSource({"left": [], "right": []}, name="ts-timeline-near-peak")
        self.peak_source = ColumnDataSource(empty_columns(PEAK_FIELDS), name="ts-timeline-peaks")
        fig = step_figure("ts-timeline", 300, "bytes per tile")
        src = self.usage_source
        self.near_peak = band(fig, self.near_peak_source, "#FFC107", 0.30)
        band(fig, self.loop_source, "#7b61ff", 0.07, name="loops")
        self.repeat_glyph = _draw(
            fig,
            "segment",
            x0="x",
            x1="x",
            y0=0,
            y1=1e15,
            source=self.repeat_source,
            line_color="#7b61ff",
            line_dash="dotted",
            line_width=1,
        )
        self.stacked = [
            _draw(fig, "varea", x="step", y1=0, y2="std", source=src, fill_color=COLORS["standard"], fill_alpha=0.75),
            _draw(
                fig, "varea", x="step", y1="std", y2="si", source=src, fill_color=COLORS["interleaved"], fill_alpha=0.75
            ),
            _draw(
                fig,
                "varea",
                x="step",
                y1="si",
                y2="total",
                source=src,
                fill_color=COLORS["exchange"],
                fill_alpha=0.35,
                hatch_pattern="/",
                hatch_alpha=0.3,
            ),
        ]
        # The separate mode's lines are drawn the first time that mode is chosen (``_separate_lines``):
        # most sessions never switch, and each line is four Bokeh models to build and send.
        self.separate: list = []
        self.ghost = _draw(
            fig,
            "line",
            x="step",
            y="ghost",
            source=src,
            line_color=INK[False],
            line_dash="dashed",
            line_width=1.2,
            line_alpha=0.7,
            visible=False,
        )
        # Invisible carrier of the hover, at mid-height: the tooltip opens beside it, inside the plot.
        self.hover_line = _draw(fig, "line", x="step", y="mid", source=src, line_alpha=0, line_width=6)
        fig.add_tools(
            HoverTool(
                renderers=[self.hover_line],
                mode="vline",
                attachment="horizontal",
                # app/static/timeline_tooltip.html: Bokeh escapes every @field it fills in (none uses
                # {safe}), so operation text from the file stays text; the template caps the width.
                tooltips=TOOLTIP,
                formatters={
                    "@op": CustomJSHover(args={"names": self.operation_names}, code=OPERATION_JS),
                    # at a peak step, the peak: one tooltip (the marks' own covered this one)
                    "@mid": CustomJSHover(
                        args={"usage": self.usage_source, "peaks": self.peak_source}, code=PEAK_NOTE_JS
                    ),
                },
            )
        )
        self.budget_span, self.interleaved_budget_span = (_budget_span(COLORS[k]) for k in ("budget", "interleaved"))
        self.support_band = BoxAnnotation(
            bottom=0,
            top=0,
            fill_color=COLORS["budget"],
            fill_alpha=0.10,
            hatch_pattern="x",
            hatch_alpha=0.18,
            hatch_color=COLORS["budget"],
        )
        # The live range of the value open in the editor (the last one selected, e.g. by the header's
        # search): where it is on the timeline.
        self.value_range = BoxAnnotation(
            left=0,
            right=0,
            fill_color=VALUE_RANGE_COLOR,
            fill_alpha=0.16,
            line_color=VALUE_RANGE_COLOR,
            line_alpha=0.9,
            line_dash="dashed",
            visible=False,
            name="ts-timeline-value-live",
        )
        # On the overlay layer: moving it repaints that layer alone, not every series of the chart.
        self.selected_span = Span(
            location=0,
            dimension="height",
            line_color=INK[False],
            line_width=1.5,
            line_alpha=0.8,
            name="ts-selected-step-line",
            level="overlay",
        )
        self.budget_label = _budget_label(COLORS["budget"], 3)
        self.support_label = _budget_label(COLORS["budget"], -14)  # under the budget line: the reserve's band
        self.ibudget_label = _budget_label(COLORS["interleaved"], 3)
        for annotation in (
            self.value_range,
            self.support_band,
            self.budget_span,
            self.interleaved_budget_span,
            self.selected_span,
            self.budget_label,
            self.support_label,
            self.ibudget_label,
        ):
            fig.add_layout(annotation)
        ps = self.peak_source
        self.leaders = _draw(
            fig,
            "segment",
            x0="x",
            x1="x",
            y0="y",
            y1="label_y",
            source=ps,
            line_color=INK[False],
            line_alpha=0.45,
            line_dash="dotted",
        )
        self.peak_marks = _draw(
            fig,
            "scatter",
            x="x",
            y="y",
            source=ps,
            marker="inverted_triangle",
            size=11,
            fill_color=INK[False],
            line_color="white",
        )
        self.peak_labels = LabelSet(
            x="x",
            y="label_y",
            text="label",
            source=ps,
            text_font_size="11px",
            x_offset="offset",
            text_align="align",
            text_baseline="bottom",
            text_color=INK[False],
        )
        fig.add_layout(self.peak_labels)
        self.ghost_legend = LegendItem(label="before edits (total)", renderers=[self.ghost], visible=False)
        self.legend = legend_below(
            fig,
            [
                LegendItem(label="standard", renderers=[self.stacked[0]]),
                LegendItem(label="interleaved", renderers=[self.stacked[1]]),
                LegendItem(label="exchange rows (not in fits)", renderers=[self.stacked[2]], name="stacked"),
                LegendItem(label="≥ 95% of the total peak", renderers=[self.near_peak]),
                self.ghost_legend,
            ],
            ncols=3,
            click_policy="none",
            spacing=2,
            padding=4,
            margin=4,
        )
        fig.js_on_event(Tap, CustomJS(args={"span": self.selected_span}, code=SELECT_JS))  # the line moves at once
        fig.on_event(Tap, one_message(on_tap))
        fig.on_event(RangesUpdate, one_message(on_ranges))
        settle_quickly(fig)
        self.figure = fig

    def set_dark(self, dark: bool) -> None:
        """The marks, leader lines and selected-step line in the theme's ink (the theme itself
        recolours the background, axes and grid in the browser)."""
        self._dark = bool(dark)
        ink = INK[self._dark]
        self.selected_span.line_color = ink
        self.ghost.glyph.line_color = ink
        self.leaders.glyph.line_color = ink
        self.peak_marks.glyph.fill_color = ink
        self.peak_labels.text_color = ink
        self.budget_label.text_color = self.support_label.text_color = BUDGET_INK[self._dark]

    def _label_budgets(self, arrays, stacked: bool) -> None:
        """The budget, support-reserve and interleaved-budget labels of ``arrays``' budgets (an
        ``ArraysView`` or an overview: the same fields)."""
        budget, ibudget, support = arrays.budget_bytes, arrays.interleaved_budget_bytes, arrays.support_reserve_bytes
        if stacked:
            self.budget_label.update(
                y=budget, text=f"budget {budget:,} B (interleaved budget {ibudget:,} B: separate view)"
            )
            self.support_label.update(
                y=budget,
                visible=True,
                text=f"support reserve {support:,} B: fits while the orange top stays below this band",
            )
        else:
            self.budget_label.update(y=budget, text=f"budget {budget:,} B: fits while the purple line stays below")
            self.support_label.visible = False
        self.ibudget_label.update(
            y=ibudget, text=f"interleaved budget {ibudget:,} B: fits while the orange line stays below"
        )

    @staticmethod
    def _peak_data(marks: list[PeakMark], n: int, y_end: float) -> dict:
        placed = place_labels(marks, n, y_end)
        return {
            "x": [p.mark.step for p in placed],
            "y": [p.mark.y for p in placed],
            "label": [p.mark.text for p in placed],
            "label_y": [p.y for p in placed],
            "align": [p.align for p in placed],
            "offset": [p.offset for p in placed],
            "definition": [GLOSSARY[p.mark.name] for p in placed],
        }

    def _separate_lines(self) -> None:
        """Draw the separate mode's four lines (once), under the marks drawn after them, and name
        them in the legend: standard and interleaved beside their areas, total and fits after
        the exchange rows' item."""
        fig, src = self.figure, self.usage_source
        before = list(fig.renderers)
        self.separate = [
            _draw(fig, "line", x="step", y="std_line", source=src, line_color=COLORS["standard"], line_width=1.6),
            _draw(fig, "line", x="step", y="intl", source=src, line_color=COLORS["interleaved"], line_width=1.6),
            _draw(fig, "line", x="step", y="total", source=src, line_color="#777777", line_width=1.0, line_alpha=0.8),
            _draw(
                fig,
                "line",
                x="step",
                y="eff",
                source=src,
                line_color=COLORS["effective"],
                line_width=1.2,
                line_dash="dashdot",
            ),
        ]
        at = before.index(self.stacked[-1]) + 1  # where they were drawn when built with the areas
        fig.renderers = before[:at] + self.separate + before[at:]
        items = self.legend.items
        items[0].renderers = [*items[0].renderers, self.separate[0]]
        items[1].renderers = [*items[1].renderers, self.separate[1]]
        self.legend.items = (
            items[:3]
            + [
                LegendItem(label="total", renderers=[self.separate[2]], name="separate"),
                LegendItem(label="std + intl + support reserve (fits)", renderers=[self.separate[3]], name="separate"),
            ]
            + items[3:]
        )

    def _show_mode(self, stacked: bool) -> None:
        """Show the stacked areas, or the separate mode's lines, with their legend items."""
        if not stacked and not self.separate:
            self._separate_lines()
        for r in self.stacked:
            r.visible = stacked
        for r in self.separate:
            r.visible = not stacked
        self.support_band.visible = stacked
        for item in self.legend.items:  # only the current mode's items: the legend stays two rows
            if item.name in ("stacked", "separate"):
                item.visible = (item.name == "stacked") == stacked
        self.interleaved_budget_span.visible = self.ibudget_label.visible = not stacked
