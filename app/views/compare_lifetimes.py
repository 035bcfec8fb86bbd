"""The selected compared value in both profiles: what it is in A and in B (id, bytes, tiling, what
changed) and its live steps on the aligned axis, one lane per side (the same x range as the
overlaid timelines). File text (names, tilings) is escaped; chart text is drawn, not parsed.
"""

from __future__ import annotations

from types import MappingProxyType

import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d
from bokeh.plotting import figure

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.views.compare_part import ComparePart
from tilescope.app.views.compare_selection import CompareSelection
from tilescope.derived.compare_values import changes_text
from tilescope.derived.values import tiling_summary
from tilescope.models.format import fmt_bytes, fmt_signed_bytes, shorten, step_range
from tilescope.report.compare_png import SIDE_COLOURS

CSS = themed_css("compare.css")
LANES = MappingProxyType({"A": 1, "B": 0})
BAR_FIELDS = ("left", "right", "bottom", "top", "color", "side", "value_id", "bytes", "steps")
STATUS_TEXT = MappingProxyType(
    {"changed": "changed", "same": "the same in both", "only_a": "only in A", "only_b": "only in B"}
)


def _side_text(side, tiling: str | None) -> str:
    if side.value_id is None:
        return f"<td>{side.side}</td><td colspan='3'>absent</td>"
    runs = ", ".join(
        step_range(int(f), int(l)) for f, l in zip(side.first_step.tolist()[:6], side.last_step.tolist()[:6])
    )
    more = f" (+{side.first_step.size - 6:,} more)" if side.first_step.size > 6 else ""
    live = f"live {runs}{more}" if side.first_step.size else "never live itself (an alias: its root holds its bytes)"
    return (
        f"<td>{side.side}</td><td>#{side.value_id}</td><td class='ts-fig' data-testid='ts-compare-entry-{side.side.lower()}-bytes'>"
        f"{esc(fmt_bytes(side.bytes))}</td><td>{esc(tiling or '')}</td><td>{esc(live)}</td>"
    )


def entry_html(view, compare) -> str:
    if view is None:
        return '<div class="ts-compare-entry" data-testid="ts-compare-entry-none">Select a changed value (table, waterfall or any view of the page) to see it in both profiles.</div>'
    diff = view.diff
    if diff is not None:
        tilings = (diff.a_tiling, diff.b_tiling)
        change = changes_text(diff.changes)
        delta = f"Δ {fmt_signed_bytes(diff.delta_bytes)}" + (f"; {change}" if change else "")
    else:
        match = compare.comparison.values
        tilings = (
            tiling_summary(compare.a.tiling(int(match.a_row[view.entry]))),
            tiling_summary(compare.b.tiling(int(match.b_row[view.entry]))),
        )
        delta = "no difference"
    rows = "".join(
        f"<tr>{_side_text(side, tiling)}</tr>" for side, tiling in ((view.a, tilings[0]), (view.b, tilings[1]))
    )
    return (
        f'<div class="ts-compare-entry" data-testid="ts-compare-entry" data-entry="{view.entry}">'
        f'<b data-testid="ts-compare-entry-name">{esc(shorten(view.name, 200))}</b> — {esc(STATUS_TEXT[view.status])}; '
        f'<span data-testid="ts-compare-entry-delta">{esc(delta)}</span><table>{rows}</table></div>'
    )


def life_bars(view) -> dict:
    out: dict[str, list] = {k: [] for k in BAR_FIELDS}
    if view is None:
        return out
    for side in (view.a, view.b):
        n = side.first_position.size
        lane = LANES[side.side]
        out["left"] += (side.first_position - 0.5).tolist()
        out["right"] += (side.last_position + 0.5).tolist()
        out["bottom"] += [lane - 0.3] * n
        out["top"] += [lane + 0.3] * n
        out["color"] += [SIDE_COLOURS[side.side.lower()]] * n
        out["side"] += [side.side] * n
        out["value_id"] += [side.value_id] * n
        out["bytes"] += [side.bytes] * n
        out["steps"] += [step_range(int(f), int(l)) for f, l in zip(side.first_step.tolist(), side.last_step.tolist())]
    return out


class CompareLifetimesView(ComparePart):
    selection = param.ClassSelector(class_=CompareSelection)
    x_range = param.ClassSelector(class_=Range1d, default=None, doc="shared with the overlaid timelines")

    def __init__(self, **params):
        super().__init__(**params)
        self.bars = ColumnDataSource({k: [] for k in BAR_FIELDS}, name="ts-compare-lifetime-bars")
        self.figure = self._build_figure()
        self._text = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self.gate.watch(self._redraw, ["compare"])
        self.selection.param.watch(self._redraw, ["entry"])
        self._redraw()

    def _build_figure(self):
        fig = figure(
            name="ts-compare-lifetimes",
            height=140,
            sizing_mode="stretch_width",
            tools="xpan,xwheel_zoom,reset",
            active_scroll=None,
            toolbar_location="right",
            x_range=self.x_range if self.x_range is not None else Range1d(-0.5, 0.5),
            y_range=Range1d(-0.6, 1.6),
            x_axis_label="aligned step position",
        )
        glyphs = fig.quad(
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.bars,
            fill_color="color",
            line_color="color",
        )
        fig.xaxis.formatter = NumeralTickFormatter(format="0")
        fig.yaxis.ticker = [0, 1]
        fig.yaxis.major_label_overrides = {1: "A", 0: "B"}
        fig.add_tools(
            HoverTool(
                renderers=[glyphs], tooltips=[("", "@side #@value_id"), ("bytes", "@bytes{0,0} B"), ("live", "@steps")]
            )
        )
        return fig

    def _redraw(self, *_):
        compare = self.state.compare
        view = compare.entry_view(self.selection.entry) if compare is not None else None
        self.bars.data = life_bars(view)
        self._text.object = entry_html(view, compare) if compare is not None else ""
        if self.x_range is None and compare is not None:
            self.figure.x_range.update(
                start=-0.5, end=max(compare.n_positions - 0.5, 0.5), bounds=(-0.5, max(compare.n_positions - 0.5, 0.5))
            )

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<b>The selected value in A and B</b>", margin=(8, 10)),
            self._text,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            css_classes=["ts-compare-lifetimes"],
        )
