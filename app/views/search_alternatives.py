"""The search-state view's alternatives of one operation: a sortable table of the dispatch
parameters (the chosen row pinned on top and tinted) and a scatter over two numeric parameters the
user picks (circles sized by how many alternatives share the point and coloured by rank; the chosen
one starred, a row picked in the table ringed). Rows and points: ``derived.search_rows``.
"""

from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.core.properties import value as text_value
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, PlainText
from bokeh.models.widgets.tables import NumberFormatter
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.views.search_html import TABLE_CSS, chosen_row_styles
from tilescope.app.widgets.tables import Table
from tilescope.derived.search_rows import ALTERNATIVE, CHOSEN, COST, Alternatives, scatter_data

CSS = themed_css("search_state.css")


class SearchAlternatives:
    """The alternatives half of ``SearchStateView`` (a mixin: the table, axis pickers and chart are
    the view's attributes, as the tests read them). The view sets ``alternatives``."""

    alternatives: Alternatives | None

    def _build_alternatives(self, html: dict) -> list:
        """The table, the axis pickers and the chart; returns the rows the view lays out."""
        self.table = Table(
            pd.DataFrame(),
            show_index=False,
            disabled=True,
            selectable=1,
            height=400,
            layout="fit_data_table",
            pagination=None,
            sizing_mode="stretch_width",
            header_align="left",
            stylesheets=[TABLE_CSS],
        )
        self.table.param.watch(self._on_table_selection, "selection")
        self.table.style.apply(chosen_row_styles, axis=None)
        self.x_select = pn.widgets.Select(label="x axis", width=220, css_classes=["ts-x-axis"])
        self.y_select = pn.widgets.Select(label="y axis", width=220, css_classes=["ts-y-axis"])
        self.x_select.param.watch(self._on_axes, "value")
        self.y_select.param.watch(self._on_axes, "value")
        self._points = ColumnDataSource({"x": [], "y": [], "count": [], "examples": [], "size": [], "rank": []})
        self._chosen = ColumnDataSource({"x": [], "y": [], "alternative": []})
        self._selected = ColumnDataSource({"x": [], "y": [], "alternative": []})
        self.chart = pn.pane.Bokeh(self._figure(), width=980, height=420, sizing_mode="fixed")
        return [
            pn.pane.HTML("<div class='ts-sv'><h4>Alternatives</h4></div>", **html),
            self.table,
            pn.Row(
                self.x_select,
                self.y_select,
                pn.pane.HTML(
                    "<div class='ts-sv ts-note' style='margin-top:22px'>Each circle is a set of alternatives with these two "
                    "parameter values (bigger: more of them); the star is the chosen plan; a row picked in the table is ringed.</div>",
                    stylesheets=[CSS],
                    width=520,
                ),
            ),
            self.chart,
        ]

    def _figure(self):
        fig = figure(width=980, height=420, tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        # coloured by rank (the best rank among the alternatives a circle stands for): dark = fewer bytes
        self._rank_colors = LinearColorMapper(palette=Viridis256, low=1, high=2)
        points = fig.scatter(
            "x",
            "y",
            source=self._points,
            size="size",
            fill_color={"field": "rank", "transform": self._rank_colors},
            fill_alpha=0.7,
            line_color="#1e3a8a",
            line_alpha=0.6,
            legend_label="alternatives (size: how many; colour: rank)",
        )
        fig.scatter(
            "x",
            "y",
            source=self._selected,
            size=22,
            marker="diamond",
            fill_alpha=0,
            line_color="#0f766e",
            line_width=3,
            legend_label="selected row",
        )
        fig.scatter(
            "x",
            "y",
            source=self._chosen,
            size=24,
            marker="star",
            fill_color="#f59e0b",
            line_color="#92400e",
            line_width=1.5,
            legend_label="chosen",
        )
        # Tooltip labels are fixed text; values are numbers and digit lists only.
        fig.add_tools(
            HoverTool(
                renderers=[points],
                tooltips=[
                    ("x", "@x"),
                    ("y", "@y"),
                    ("alternatives", "@count"),
                    ("best rank", "@rank"),
                    ("indices", "@examples"),
                ],
            )
        )
        self._rank_bar = ColorBar(
            color_mapper=self._rank_colors, title="rank (1 = fewest bytes)", width=10, visible=False
        )
        fig.add_layout(self._rank_bar, "right")
        legend = fig.legend[0]
        legend.label_text_font_size = "11px"
        fig.add_layout(legend, "right")  # outside the plot: it never hides a point
        self._fig = fig
        return fig

    def _show_table(self, alts: Alternatives) -> None:
        frame = alts.frame
        chosen = alts.chosen_row
        text_columns = [c for c in frame.columns if frame[c].dtype == object and c != CHOSEN]
        self.table.param.update(
            value=frame,
            titles={c: esc(t) for c, t in alts.titles.items()},  # Tabulator writes titles as HTML
            formatters={**{c: {"type": "plaintext"} for c in text_columns}, COST: NumberFormatter(format="0,0")},
            frozen_rows=[chosen] if chosen is not None else [],
            selection=[],
        )
        # Scrolled, not paged: the chosen row stays pinned on top (Tabulator pages tables over 200 rows by default).
        self.table.pagination = None

    def _show_axes(self, alts: Alternatives) -> None:
        options = {alts.titles[c]: c for c in alts.numeric}
        x = alts.numeric[0]
        y = alts.numeric[1] if len(alts.numeric) > 1 else alts.numeric[0]
        with param.parameterized.discard_events(self.x_select), param.parameterized.discard_events(self.y_select):
            self.x_select.param.update(options=options, value=x)
            self.y_select.param.update(options=options, value=y)
        self._draw_chart()

    def _on_axes(self, *_):
        self._draw_chart()

    def _draw_chart(self) -> None:
        x, y, alts = self.x_select.value, self.y_select.value, self.alternatives
        if x is None or y is None or alts is None:
            return
        points, chosen = scatter_data(alts, x, y)
        titles = alts.titles
        with pn.io.unlocked():  # Bokeh models changed from a callback: send the changes with the session's lock
            self._points.data = points
            ranks = points["rank"]
            self._rank_bar.visible = bool(ranks) and max(ranks) > 0
            if self._rank_bar.visible:
                self._rank_colors.update(low=1, high=max(max(ranks), 2))
            self._chosen.data = chosen
            self._selected.data = self._selected_point()
            self._fig.xaxis.axis_label = PlainText(text=titles[x])  # PlainText: never read as TeX
            self._fig.yaxis.axis_label = PlainText(text=titles[y])
            if chosen["alternative"]:
                self._fig.legend.items[2].label = text_value(f"chosen: alternative {chosen['alternative'][0]}")

    def _selected_point(self) -> dict:
        rows = self.table.selection
        x, y, alts = self.x_select.value, self.y_select.value, self.alternatives
        if not rows or x is None or y is None or alts is None or rows[0] >= len(alts.frame):
            return {"x": [], "y": [], "alternative": []}
        frame = alts.frame
        row = frame.iloc[rows[0]]
        if pd.isna(row[x]) or pd.isna(row[y]):
            return {"x": [], "y": [], "alternative": []}
        return {"x": [float(row[x])], "y": [float(row[y])], "alternative": [int(row[ALTERNATIVE])]}

    def _on_table_selection(self, *_):
        with pn.io.unlocked():
            self._selected.data = self._selected_point()
