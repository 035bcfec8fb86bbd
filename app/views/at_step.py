"""At this step: the values live at the selected step, ranked by bytes, with the step's scratch and
the exchange-row reservation, and a bar splitting the step's bytes by value (one lane per region).
"""

from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.events import Tap
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d
from bokeh.palettes import Category20_20
from bokeh.plotting import figure

from tilescope.app.format import esc
from tilescope.app.glyphs import draw
from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.views.glossary import term_html
from tilescope.app.views.values_table import TITLES, table_formatters
from tilescope.app.widgets.figure_pane import FigurePane
from tilescope.app.widgets.selection import TABLE_SELECTION, SelectionLink, adds
from tilescope.app.widgets.tables import Table
from tilescope.models.format import fmt_bytes, shorten

COLUMNS = (
    "id",
    "name",
    "region",
    "bytes",
    "share",
    "shard",
    "aligned",
    "storage_group",
    "root",
    "first_step",
    "last_step",
    "tiling",
)
LANES = {"standard": 1, "interleaved": 0}
SEGMENT_FIELDS = ("left", "right", "bottom", "top", "lane", "label", "value_id", "bytes", "color")
PAGE_ROWS = 15
# A fixed height (the header, PAGE_ROWS rows of 36 px, the paginator, room for a horizontal
# scrollbar): sized by its rows, the table was drawn twice per step click (Panel redraws a
# Tabulator whose element resized), which was half of the click's time in the browser.
TABLE_HEIGHT = 660


class AtStepView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self.step_input = pn.widgets.IntInput(
            label="step", value=0, start=0, end=0, width=100, css_classes=["ts-step-input"]
        )
        self._buttons = {
            # no fixed widths: each button is as wide as its label (a fixed one cut "standard peak")
            "previous": pn.widgets.Button(label="◀", description="previous step (← key)"),
            "next": pn.widgets.Button(label="▶", description="next step (→ key)"),
            "total": pn.widgets.Button(label="total peak", description="the total peak's step (p key)"),
            "standard": pn.widgets.Button(label="standard peak"),
            "interleaved": pn.widgets.Button(label="interleaved peak"),
        }
        self._header = pn.pane.HTML("", sizing_mode="stretch_width")
        self.segments = ColumnDataSource({k: [] for k in SEGMENT_FIELDS}, name="ts-step-split")
        self.bar = self._build_bar()
        self.table = Table(
            pd.DataFrame({c: [] for c in COLUMNS}),
            show_index=False,
            disabled=True,
            **TABLE_SELECTION,
            pagination="local",
            page_size=PAGE_ROWS,
            titles={**TITLES, "share": "share of step"},
            formatters={**table_formatters(COLUMNS), "share": {"type": "plaintext"}},
            sizing_mode="stretch_width",
            css_classes=["ts-step-values"],
            layout="fit_data_table",
            height=TABLE_HEIGHT,
        )
        self._link = SelectionLink(self.state, self.table, watch=self.gate.watch)
        self.step_input.param.watch(one_message(lambda e: self.state.select_step(e.new)), "value")
        self._buttons["previous"].on_click(one_message(lambda e: self.state.select_step(self.state.selected_step - 1)))
        self._buttons["next"].on_click(one_message(lambda e: self.state.select_step(self.state.selected_step + 1)))
        for kind in ("total", "standard", "interleaved"):
            self._buttons[kind].on_click(one_message(lambda e, kind=kind: self._go_to_peak(kind)))
        self.gate.watch(self._redraw, ["data"])
        self.gate.watch(self._on_step, ["selected_step"])
        self._redraw()

    def _build_bar(self):
        fig = figure(
            name="ts-step-bar",
            height=130,
            sizing_mode="stretch_width",
            tools="xpan,xwheel_zoom,reset",
            toolbar_location="right",
            # Both ranges set by the server: an auto-ranging x range would send its computed end back
            # after every step (one more round trip per click).
            x_range=Range1d(0, 1),
            y_range=Range1d(-0.6, 1.6),
            x_axis_label="bytes at this step (per tile)",
        )
        draw(
            fig,
            "quad",
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.segments,
            fill_color="color",
            line_color="white",
            line_width=0.5,
            name="segments",
        )
        fig.xaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.ticker = [0, 1]
        fig.yaxis.major_label_overrides = {0: "interleaved", 1: "standard"}
        fig.add_tools(HoverTool(tooltips=[("", "@label"), ("bytes", "@bytes{0,0} B")]))
        fig.on_event(Tap, one_message(self._on_tap))
        return fig

    # ------------------------------------------------------------------ data

    def _redraw(self, *_):
        data = self.state.data
        if data is None:
            return
        self.step_input.end = max(data.arrays.n_steps - 1, 0)
        # One scale for every step of the plan (its fuller lane at its peak): a step click then
        # leaves the axis alone (a range per step re-laid the chart out on every click), and steps
        # compare at a glance.
        series = data.series
        end = max(int(series.standard_line.max(initial=0)), int(series.interleaved.max(initial=0))) * 1.02 or 1
        self.bar.x_range.update(start=0, end=end, reset_start=0, reset_end=end)
        self._on_step()

    def _on_step(self, *_):
        data = self.state.data
        if data is None:
            return
        step = self.state.selected_step
        if self.step_input.value != step:
            self.step_input.value = step
        live_set = data.live_at(step)
        live = data.values.iloc[live_set.rows]
        total = live_set.usage_total
        table = live.assign(share=[f"{b / total:.1%}" if total else "" for b in live_set.bytes.tolist()])[
            list(COLUMNS)
        ].reset_index(drop=True)
        self.table.value = table
        self._link.sync()
        scratch = {"standard": live_set.scratch_standard, "interleaved": live_set.scratch_interleaved}
        usage = {"standard": live_set.usage_standard, "interleaved": live_set.usage_interleaved}
        self.segments.data = self._segments(live, scratch, data.arrays.exchange_rows)
        self._header.object = self._header_html(data, step, len(live), usage, scratch)

    def _segments(self, live: pd.DataFrame, scratch: dict, exchange_rows: int) -> dict:
        data: dict[str, list] = {k: [] for k in SEGMENT_FIELDS}

        def add(region, width, label, value_id, color):
            lane = LANES[region]
            left = cursor[region]
            cursor[region] += width
            data["left"].append(left)
            data["right"].append(left + width)
            data["lane"].append(lane)
            data["bottom"].append(lane - 0.4)
            data["top"].append(lane + 0.4)
            data["label"].append(label)
            data["value_id"].append(value_id)
            data["bytes"].append(width)
            data["color"].append(color)

        cursor = {"standard": 0, "interleaved": 0}
        if exchange_rows:
            add("standard", exchange_rows, "exchange-row reservation", -1, "#BDBDBD")
        for k, row in enumerate(live.itertuples(index=False)):
            add(
                row.region,
                int(row.bytes),
                f"value {row.id}: {shorten(row.name, 80)}",
                int(row.id),
                Category20_20[k % 20],
            )
        for region, size in scratch.items():
            if size:
                add(region, size, f"scratch ({region})", -1, "#555555")
        return data

    @staticmethod
    def _header_html(data, step: int, live_count: int, usage: dict, scratch: dict) -> str:
        steps = data.opened.steps
        operation = steps.operation[step].as_py()
        source, count = int(steps.source[step]), int(steps.execution_count[step])
        ex = data.arrays.exchange_rows
        return (
            f'<div data-testid="ts-step-header" style="font-size:13px">'
            f'<b>Step <span data-testid="ts-step-index">{step}</span></b> of {data.arrays.n_steps:,}: '
            f"<code>{esc(shorten(operation, 240))}</code> · source op {source} · runs ×{count}<br>"
            f'<span data-testid="ts-step-live-count">{live_count}</span> values live · '
            f"{term_html('standard')} {esc(fmt_bytes(usage['standard']))} (scratch {scratch['standard']:,} B) · "
            f"{term_html('interleaved')} {esc(fmt_bytes(usage['interleaved']))} (scratch {scratch['interleaved']:,} B) · "
            f"{term_html('exchange rows')} {ex:,} B · "
            f"{term_html('total')} {esc(fmt_bytes(usage['standard'] + usage['interleaved'] + ex))}"
            f"</div>"
        )

    # ------------------------------------------------------------------ actions

    def _go_to_peak(self, kind: str):
        if self.state.data is not None:
            self.state.select_step(getattr(self.state.data.plan.peaks, f"{kind}_step"))

    def _on_tap(self, event):
        if event.x is None or event.y is None:
            return
        data = self.segments.data
        lane = 1 if event.y > 0.5 else 0
        for left, right, seg_lane, value_id in zip(data["left"], data["right"], data["lane"], data["value_id"]):
            if seg_lane == lane and left <= event.x < right and value_id >= 0:
                self.state.click_value(value_id, add=adds(event))
                return

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        b = self._buttons
        return pn.Column(
            pn.FlexBox(
                pn.pane.HTML("<b>At this step</b>", margin=(12, 10)),
                self.step_input,
                b["previous"],
                b["next"],
                b["total"],
                b["standard"],
                b["interleaved"],
                sizing_mode="stretch_width",
            ),
            self._header,
            FigurePane(self.bar, sizing_mode="stretch_width"),
            self.table,
            sizing_mode="stretch_width",
            css_classes=["ts-at-step"],
        )
