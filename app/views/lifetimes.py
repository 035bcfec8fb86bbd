"""Lifetimes: a Gantt chart, one lane per value and one bar per live run, coloured by region, bar
thickness growing with bytes. The ``largest`` values (slider) are drawn individually, lanes
ordered by first live step; every other live value is summed per step into one band under the
lanes. Selected values are outlined black, the other members of their storage groups orange.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import panel_material_ui as pmui
import param
from bokeh.events import Tap
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d, Span
from bokeh.plotting import figure

from tilescope.app.glyphs import draw
from tilescope.app.one_message import one_message
from tilescope.app.plan_prep import LIFETIMES_DRAWN
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.widgets.selection import adds
from tilescope.derived.series import minmax_indices
from tilescope.models.format import shorten

REGION_COLORS = {0: "#4C78A8", 1: "#F58518"}
REST_COLOR = "#9E9E9E"
BAR_FIELDS = (
    "left",
    "right",
    "bottom",
    "top",
    "lane",
    "value_id",
    "name",
    "bytes",
    "region",
    "storage_group",
    "steps",
    "color",
    "line_color",
    "line_width",
)
REST_POINTS = 800  # pixel columns of the band: ≤ 4 points each


class LifetimesView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    largest = param.Integer(
        default=LIFETIMES_DRAWN, bounds=(5, 2000), doc="values drawn individually (the rest form one band)"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self.bars = ColumnDataSource({k: [] for k in BAR_FIELDS}, name="ts-lifetime-bars")
        self.rest = ColumnDataSource({"step": [], "y1": [], "y2": [], "bytes": [], "live": []}, name="ts-lifetime-rest")
        self.figure = self._build_figure()
        self._slider = pmui.IntSlider.from_param(  # Material's slider names its handle by the label;
            # no description: Material draws it as an icon with an aria-label on a role-less span
            self.param.largest,
            label="values drawn individually",
            width=240,
            step=5,
            description="",
        )
        self._note = pn.pane.HTML("", styles={"font-size": "12px", "opacity": "0.75"})
        self._lanes = 0
        self._storage_group = None
        self._bar_rows = np.zeros(0, dtype=np.int64)
        self._profile_shown = None  # the profile the x range was fitted to
        self._band_bottom = 2.5
        self.gate.watch(self._redraw, ["data"])
        self.gate.watch(self._on_selection, ["selected_values"])
        self.gate.watch(self._on_step, ["selected_step"])
        self._redraw()

    def _build_figure(self):
        fig = figure(
            name="ts-lifetimes",
            height=460,
            sizing_mode="stretch_width",
            tools="xpan,ypan,xwheel_zoom,box_zoom,reset,save",
            active_scroll=None,
            x_axis_label="step",
            y_axis_label="values (largest; by first live step)",
            output_backend="webgl",
            x_range=Range1d(-0.5, 0.5),
            y_range=Range1d(-2.5, 1),
        )
        fig.xaxis.formatter = NumeralTickFormatter(format="0")
        fig.yaxis.major_label_text_font_size = "0px"
        fig.yaxis.major_tick_line_color = None
        self.rest_area = draw(
            fig, "varea", x="step", y1="y1", y2="y2", source=self.rest, fill_color=REST_COLOR, fill_alpha=0.6
        )
        self.bar_glyphs = draw(
            fig,
            "quad",
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.bars,
            fill_color="color",
            fill_alpha=0.85,
            line_color="line_color",
            line_width="line_width",
        )
        fig.add_tools(
            HoverTool(
                renderers=[self.bar_glyphs],
                tooltips=[
                    ("value", "@value_id"),
                    ("name", "@name"),
                    ("bytes", "@bytes{0,0} B"),
                    ("region", "@region"),
                    ("storage group", "@storage_group"),
                    ("live", "@steps"),
                ],
            ),
            HoverTool(
                renderers=[self.rest_area],
                tooltips=[("step", "@step"), ("other values live", "@live"), ("their bytes", "@bytes{0,0} B")],
            ),
        )
        self.step_span = Span(location=0, dimension="height", line_color="#111", line_width=1.2, line_alpha=0.7)
        fig.add_layout(self.step_span)
        fig.on_event(Tap, one_message(self._on_tap))
        return fig

    @param.depends("largest", watch=True)
    def _on_largest(self):
        self._redraw()

    def _redraw(self, *_):
        data = self.state.data
        if data is None:
            return
        arrays, cost = data.arrays, data.plan.figures.bytes
        self._storage_group = arrays.storage_groups
        names = data.profile.values.column("name")
        g = data.gantt(self.largest)
        self._lanes = g.rows.size
        biggest = max(int(cost[g.rows].max(initial=1)), 1)
        thickness = 0.25 + 0.65 * np.sqrt(cost[g.bar_row] / biggest)
        regions = arrays.region[g.bar_row]
        self._bar_rows = g.bar_row
        self.bars.data = {
            "left": g.bar_first - 0.5,
            "right": g.bar_last + 0.5,
            "bottom": g.bar_lane - thickness / 2,
            "top": g.bar_lane + thickness / 2,
            "lane": g.bar_lane,
            "value_id": arrays.value_ids[g.bar_row],
            "name": [shorten(n, 120) for n in names.take(g.bar_row).to_pylist()],
            "bytes": cost[g.bar_row],
            "region": np.where(regions == 1, "interleaved", "standard"),
            "storage_group": self._storage_group[g.bar_row],
            "steps": [f"{a}–{b}" for a, b in zip(g.bar_first.tolist(), g.bar_last.tolist())],
            "color": [REGION_COLORS[int(r)] for r in regions],
            **self._outline(g.bar_row),
        }
        keep = minmax_indices([g.rest_bytes], 0, arrays.n_steps, REST_POINTS)
        top = max(int(g.rest_bytes.max(initial=0)), 1)
        # lanes run top to bottom (y axis flipped); the band sits under the last lane, a fifth of the chart high
        band = max(2.0, 0.25 * self._lanes)
        base = self._lanes + 0.5 + band
        self._band_bottom = base
        self.rest.data = {
            "step": keep,
            "y1": np.full(keep.size, base),
            "y2": base - band * g.rest_bytes[keep] / top,
            "bytes": g.rest_bytes[keep],
            "live": g.rest_live[keep],
        }
        if self.figure.x_range.end <= 0.5 or self._profile_shown is not data.opened:
            self._profile_shown = data.opened
            self.figure.x_range.update(
                start=-0.5, end=max(arrays.n_steps - 0.5, 0.5), bounds=(-0.5, max(arrays.n_steps - 0.5, 0.5))
            )
        self.figure.y_range.update(start=self._band_bottom + 0.3, end=-1)
        self._note.object = lanes_note(g.rows.size, g.rest_count)
        self._on_step()

    def _outline(self, bar_rows: np.ndarray) -> dict:
        selected = np.isin(self.state.arrays.value_ids[bar_rows], list(self.state.selected_values))
        selected_rows = [
            self.state.arrays.row_of_id[i] for i in self.state.selected_values if i in self.state.arrays.row_of_id
        ]
        groups = np.unique(self._storage_group[selected_rows]) if selected_rows else np.zeros(0, dtype=np.int64)
        mates = np.isin(self._storage_group[bar_rows], groups) & ~selected
        # unselected bars are outlined in their own colour so a one-step bar stays at least a pixel wide
        own = np.array([REGION_COLORS[int(r)] for r in self.state.arrays.region[bar_rows]], dtype=object)
        line_color = np.where(selected, "#000000", np.where(mates, "#E65100", own))
        line_width = np.where(selected, 2.5, np.where(mates, 2.0, 1.0))
        return {"line_color": line_color, "line_width": line_width}

    def _on_selection(self, *_):
        if self.state.data is None or not len(self.bars.data["value_id"]):
            return
        self.bars.data = {**dict(self.bars.data), **self._outline(self._bar_rows)}

    def _on_step(self, *_):
        self.step_span.location = self.state.selected_step

    def set_dark(self, dark: bool) -> None:
        self.step_span.line_color = "#E8E8E8" if dark else "#111111"

    def _on_tap(self, event):
        if event.x is None or event.y is None:
            return
        d = self.bars.data
        step, y = event.x, event.y
        hit = (
            (np.asarray(d["left"]) <= step)
            & (np.asarray(d["right"]) >= step)
            & (np.abs(np.asarray(d["lane"]) - y) <= 0.5)
        )
        hits = np.flatnonzero(hit)
        if hits.size:
            self.state.click_value(int(d["value_id"][hits[0]]), add=adds(event))

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            pn.Row(pn.pane.HTML("<b>Lifetimes</b>", margin=(12, 10)), self._slider),
            self._note,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            css_classes=["ts-lifetimes"],
        )


def lanes_note(drawn: int, rest: int) -> str:
    """The note under the chart: how many values have a lane, and what the grey band holds (none:
    no band to speak of, issue #27 item 11 — it said "the other 0 live values")."""
    lanes = "1 value drawn in a lane of its own" if drawn == 1 else f"{drawn:,} largest values drawn one lane each"
    if rest == 0:
        band = "no other value is live, so there is no grey band"
    else:
        band = (
            f"the other {'live value forms' if rest == 1 else f'{rest:,} live values form'} the grey band at the bottom "
            "(height ∝ their bytes per step)"
        )
    return (
        f"{lanes} (thickness ∝ √bytes, blue standard, orange interleaved); {band}. "
        "Click a bar to select its value (Ctrl/Shift-click adds it)."
    )
