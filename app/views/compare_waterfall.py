"""Each peak's change as a waterfall: from A's peak (at A's peak step) to B's peak (at B's) through
the largest parts (a value's part: its bytes live at B's peak step minus at A's), the other values
as one bar, scratch and exchange rows; the same bars as the compare PNG
(``report.compare_png.waterfall_steps``). Beside it the exact figures, which add up to the delta.
Clicking a value's bar selects that value.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.events import Tap
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, NumeralTickFormatter, Range1d
from bokeh.plotting import figure

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.one_message import one_message
from tilescope.app.views.compare_part import ComparePart
from tilescope.app.views.compare_selection import CompareSelection
from tilescope.derived.compare import FIGURES
from tilescope.models.format import fmt_bytes, fmt_signed_bytes
from tilescope.report.compare_png import LESS, MORE, SIDE_COLOURS, WATERFALL_PARTS, waterfall_steps

CSS = themed_css("compare.css")
BAR_FIELDS = ("left", "right", "bottom", "top", "color", "label", "bytes", "running", "entry")


def waterfall_rows(attribution, bars: list[tuple[str, int]], parts: list) -> dict:
    """The chart's bars, top to bottom: A's peak, ``bars`` (each from the running sum), B's peak.
    ``entry`` is the compared value of a part's bar (-1 for the others)."""
    labels = [f"A peak @{attribution.a_step}"] + [label for label, _ in bars] + [f"B peak @{attribution.b_step}"]
    running = [attribution.a_peak]
    for _, size in bars:
        running.append(running[-1] + size)
    left, right, colors, sizes = [0], [attribution.a_peak], [SIDE_COLOURS["a"]], [attribution.a_peak]
    for k, (_, size) in enumerate(bars, 1):
        left.append(min(running[k - 1], running[k]))
        right.append(max(running[k - 1], running[k]))
        colors.append(MORE if size > 0 else LESS)
        sizes.append(size)
    left.append(0)
    right.append(attribution.b_peak)
    colors.append(SIDE_COLOURS["b"])
    sizes.append(attribution.b_peak)
    y = np.arange(len(labels), dtype=float)
    entries = [-1] + [parts[k].entry if k < len(parts) else -1 for k in range(len(bars))] + [-1]
    return {
        "left": left,
        "right": right,
        "bottom": y - 0.38,
        "top": y + 0.38,
        "color": colors,
        "label": labels,
        "bytes": sizes,
        "running": running + [attribution.b_peak],
        "entry": entries,
    }


def waterfall_html(attribution, bars: list[tuple[str, int]], figure_name: str) -> str:
    """The waterfall's figures, exact (every label escaped); the sum line checks the accounting."""
    rows = [
        f'<tr><td>A peak at step {attribution.a_step}</td><td class="ts-fig" data-testid="ts-compare-waterfall-a">{esc(fmt_bytes(attribution.a_peak))}</td></tr>'
    ]
    rows += [
        f"<tr><td>{esc(label)}</td><td class='ts-fig'>{esc(fmt_signed_bytes(size))}</td></tr>" for label, size in bars
    ]
    rows.append(
        f'<tr><td>B peak at step {attribution.b_step}</td><td class="ts-fig" data-testid="ts-compare-waterfall-b">{esc(fmt_bytes(attribution.b_peak))}</td></tr>'
    )
    total = sum(size for _, size in bars)
    return (
        f'<div class="ts-compare-entry" data-testid="ts-compare-waterfall" data-figure="{esc(figure_name)}"><table>{"".join(rows)}</table>'
        f'<div class="ts-compare-note">Σ bars = <span class="ts-fig" data-testid="ts-compare-waterfall-sum">{esc(fmt_signed_bytes(total))}</span>'
        f" = B peak − A peak ({len(attribution.parts):,} values with a part, {attribution.live_unchanged:,} live at both unchanged)</div></div>"
    )


def opening_figure(comparison) -> str:
    """The peak the waterfall opens on: the total, unless the total did not move while a region's
    peak did (an edit of the standard region under an interleaved-led total shows ±0 there); then
    the region whose peak moved most."""
    a, b = comparison.a.plan.peaks, comparison.b.plan.peaks
    change = {name: abs(int(getattr(b, name)) - int(getattr(a, name))) for name in FIGURES}
    if change["total"] or not any(change.values()):
        return "total"
    return max(FIGURES, key=lambda name: change[name])


class CompareWaterfallView(ComparePart):
    selection = param.ClassSelector(class_=CompareSelection)
    figure_name = param.Selector(default="total", objects=list(FIGURES), doc="the peak whose change is shown")

    def __init__(self, **params):
        super().__init__(**params)
        self.bars = ColumnDataSource({k: [] for k in BAR_FIELDS}, name="ts-compare-waterfall-bars")
        self.figure = self._build_figure()
        self._choice = pn.widgets.RadioButtonGroup.from_param(self.param.figure_name, label="")
        self._figures = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._opened = None  # the comparison the choice was made for (a new one opens on its changed peak)
        self.gate.watch(self._redraw, ["compare"])
        self._redraw()

    def _build_figure(self):
        fig = figure(
            name="ts-compare-waterfall",
            height=330,
            sizing_mode="stretch_width",
            tools="xpan,xwheel_zoom,reset,save",
            active_scroll=None,
            toolbar_location="right",
            y_range=Range1d(1, 0),
            x_range=Range1d(0, 1),
            x_axis_label="bytes per tile",
        )
        glyphs = fig.quad(
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.bars,
            fill_color="color",
            line_color="white",
        )
        fig.xaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.major_label_text_font_size = "10px"
        self._ticks = FixedTicker(
            ticks=[]
        )  # one ticker, its ticks updated: a new model per refresh re-walks the whole document
        fig.yaxis.ticker = self._ticks
        fig.add_tools(
            HoverTool(
                renderers=[glyphs],
                tooltips=[("", "@label"), ("bytes", "@bytes{+0,0} B"), ("running", "@running{0,0} B")],
            )
        )
        fig.on_event(Tap, one_message(self._on_tap))
        return fig

    @param.depends("figure_name", watch=True)
    def _redraw(self, *_):
        compare = self.state.compare
        if compare is None:
            self.bars.data = {k: [] for k in BAR_FIELDS}
            self._figures.object = ""
            return
        if compare is not self._opened:
            self._opened = compare
            opening = opening_figure(compare.comparison)
            if opening != self.figure_name:
                self.figure_name = opening  # redraws (the watcher above)
                return
        attribution = compare.comparison.attribution(self.figure_name)
        bars = waterfall_steps(compare.comparison, self.figure_name)
        rows = waterfall_rows(attribution, bars, list(attribution.parts[:WATERFALL_PARTS]))
        self.bars.data = rows
        n = len(rows["label"])
        self._ticks.ticks = list(range(n))
        self.figure.yaxis.major_label_overrides = dict(enumerate(rows["label"]))
        low = min(min(rows["running"]), min(attribution.a_peak, attribution.b_peak))
        high = max(rows["right"])
        pad = max((high - low) * 0.15, high * 0.01, 1)
        self.figure.x_range.update(start=max(low - pad, 0), end=high + pad, bounds=(max(low - pad, 0), high + pad))
        self.figure.y_range.update(start=n - 0.5, end=-0.5)
        self._figures.object = waterfall_html(attribution, bars, self.figure_name)

    def _on_tap(self, event):
        if event.y is None:
            return
        k = round(event.y)
        entries = self.bars.data["entry"]
        if 0 <= k < len(entries) and entries[k] >= 0:
            self.selection.select(int(entries[k]))

    def __panel__(self):
        return pn.Column(
            # one column: the title, the region choice, the chart, its figures (side by side, the
            # figures' fixed 520 px pushed the choice and the Δ column out of the side panel)
            pn.pane.HTML(
                "<b>Attribution at the peak</b>: A's peak → B's peak, the largest parts first; click a bar to select its value",
                margin=(8, 10),
                sizing_mode="stretch_width",
            ),
            self._choice,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            self._figures,
            sizing_mode="stretch_width",
            css_classes=["ts-compare-waterfall"],
        )
