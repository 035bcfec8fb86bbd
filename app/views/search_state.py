"""The search-state view: the planner's saved search for a graph (docs/formats.md §3).

What it shows, top to bottom:
- the graph: inputs, operations and outputs with their shapes;
- the config's key figures (tile count, tile memory budget, reservation, the other byte budgets) and
  the remaining options as written;
- the recipe (each operation's plan, the open boundaries, its settings: version 8's
  ``recipe.options`` with ``tile_mapping`` in words) and the search's bookkeeping (attempts; in
  versions 1–3 ``mapping`` and ``mapping_checked``);
- the visited recipes, each with how it differs from the incumbent (``derived.search_visited``; the
  file gives no reason why a visited recipe was not kept, and the view says so);
- per operation (a picker when the graph has several): the chosen plan among its alternatives, as
  a sortable table of the dispatch parameters (the chosen row marked, pinned on top and tinted) and
  a scatter of the alternatives over two numeric parameters the user picks (chosen one starred);
- per input, the format it arrives in beside the format the plan requires (tile count and bytes
  per tile), so a conversion and its cost are visible;
- a tiling editor on a required format: the drag bands and numeric inputs of
  ``app.widgets.tiling_widget.TilingWidget``; shard bytes follow live and an invalid count is
  refused with the rule it breaks (``planner.tiling_rules``, the rules the profile editor uses),
  shown at its handle.

What it shows is computed by ``tilescope.derived.search_rows`` from a parsed state: construct as
``SearchStateView(search_state=<models.search_state.SearchState>)``, or, as the app does,
``SearchStateView(state=<app.state.SessionState>)`` whose open file is a search state (parsed when
it was opened, in the worker thread). ``SearchStateView.from_path(path)`` loads a file.

Edits here are explorations of one required format; they are kept per view (per session) and do
not change the file or the plan.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import panel as pn
import param
from bokeh.core.properties import value as text_value
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, PlainText
from bokeh.models.widgets.tables import NumberFormatter
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from tilescope.app.assets import static_text
from tilescope.app.format import esc
from tilescope.app.state import SessionState
from tilescope.app.views.search_html import (
    TABLE_CSS,
    chosen_row_styles,
    config_html,
    formats_html,
    graph_html,
    recipe_html,
    visited_html,
)
from tilescope.app.widgets.count_inputs import CountInputs
from tilescope.app.widgets.tiling_widget import TilingWidget, committed_count
from tilescope.derived.search_rows import (
    ALTERNATIVE,
    CHOSEN,
    COST,
    OUTPUT_KEY,
    FormatPair,
    SearchData,
    costliest_conversion,
    format_figures,
    refusal_text,
    scatter_data,
)
from tilescope.derived.values import tiling_summary
from tilescope.loaders.search_state import load_search_state
from tilescope.models.format import fmt_bytes, fmt_signed_bytes
from tilescope.models.search_state import SearchState
from tilescope.models.tiling import TensorTiling
from tilescope.planner import tiling_rules
from tilescope.planner.shards import ShapeMismatch, shard_bytes

CSS = static_text("search_state.css")


class SearchStateView(pn.viewable.Viewer):
    """The search-state view (see the module doc for how to construct it)."""

    search_state = param.ClassSelector(class_=SearchState, default=None, allow_None=True)
    state = param.ClassSelector(class_=SessionState, default=None, allow_None=True, doc="the app's session, if any")

    def __init__(self, **params):
        super().__init__(**params)
        self.error = ""
        opened = self.state.search if self.state is not None else None
        if self.search_state is None and opened is not None:
            self.search_state = opened.search_state
            self.rows: SearchData | None = opened.view_data  # shared by every session with the file open
        else:
            self.rows = SearchData.of(self.search_state) if self.search_state is not None else None
        self._edits: dict[tuple[int, str], TensorTiling] = {}  # (operation, target key) → edited required tiling
        if self.search_state is None:
            message = "No search state is open."
            self._layout = pn.Column(
                pn.pane.HTML(f"<div class='ts-sv'><div class='ts-error' data-testid='ts-search-error'>{esc(message)}</div></div>",
                             stylesheets=[CSS], sizing_mode="stretch_width"),
                sizing_mode="stretch_width",
            )
            return
        self._build()

    @classmethod
    def from_path(cls, path: str | Path) -> SearchStateView:
        return cls(search_state=load_search_state(path))

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        s = self.search_state
        self.tile_limit = s.tile_count
        html = {"stylesheets": [CSS], "sizing_mode": "stretch_width"}
        n_ops = len(s.graph.operations)
        self.header = pn.pane.HTML(
            f"<div class='ts-sv' data-testid='ts-search-header'><h3>Search state: {esc(s.source)}</h3>"
            f"version <span data-testid='ts-search-version'>{s.version}</span> · {n_ops} operation{'s' if n_ops != 1 else ''} · {s.tile_count:,} tiles · "
            f"tile memory budget {esc(fmt_bytes(s.tile_memory_budget_bytes))}</div>", **html,
        )
        self.graph_pane = pn.pane.HTML(graph_html(s), **html)
        self.config_pane = pn.pane.HTML(config_html(s), **html)
        self.recipe_pane = pn.pane.HTML(recipe_html(s), **html)
        self.visited_pane = pn.pane.HTML(visited_html(self.rows.visited), **html)

        self.operation_select = pn.widgets.Select(
            label="Operation", options={f"operation {op.id}: {op.kind_name}": op.id for op in s.graph.operations},
            width=320, visible=n_ops > 1,
        )
        self.choice_pane = pn.pane.HTML("", **html)
        self.formats_pane = pn.pane.HTML("", **html)

        self.table = pn.widgets.Tabulator(
            pd.DataFrame(), show_index=False, disabled=True, selectable=1, height=400, layout="fit_data_table", pagination=None,
            sizing_mode="stretch_width", header_align="left", stylesheets=[TABLE_CSS],
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

        self.edit_target = pn.widgets.Select(label="Required format to re-tile", width=320)
        self.edit_target.param.watch(lambda _: self._refresh_editor(), "value")
        self.widget = TilingWidget(sizing_mode="stretch_width", min_height=120)
        self.widget.param.watch(self._on_committed, "committed")
        self._count_inputs = CountInputs(self.widget, self.commit)
        self.edit_figures = pn.pane.HTML("", **html)
        self.reset_button = pn.widgets.Button(label="Reset this format", width=150)
        self.reset_button.on_click(lambda _: self.reset_edit())

        self.operation_select.param.watch(lambda _: self._show_operation(), "value")
        self._layout = pn.Column(
            self.header,
            self.graph_pane,
            self.config_pane,
            self.recipe_pane,
            self.visited_pane,
            self._rule(),
            self.operation_select,
            self.choice_pane,
            self.formats_pane,
            pn.pane.HTML("<div class='ts-sv'><h4>Alternatives</h4></div>", **html),
            self.table,
            pn.Row(self.x_select, self.y_select, pn.pane.HTML(
                "<div class='ts-sv ts-note' style='margin-top:22px'>Each circle is a set of alternatives with these two "
                "parameter values (bigger: more of them); the star is the chosen plan; a row picked in the table is ringed.</div>",
                stylesheets=[CSS], width=520)),
            self.chart,
            self._rule(),
            pn.pane.HTML("<div class='ts-sv'><h4>Tiling editor: try another tiling of a required format</h4></div>", **html),
            pn.Row(self.edit_target, pn.Column(pn.Spacer(height=18), self.reset_button)),
            self.widget,
            self.edit_figures,
            sizing_mode="stretch_width",
            css_classes=["ts-search-view"],
        )
        self._show_operation()

    @staticmethod
    def _rule():
        # Not pn.layout.Divider: its stylesheet comes from a CDN, unreachable offline.
        return pn.pane.HTML("<hr style='border: 0; border-top: 1px solid #d9e2ec; margin: 6px 0'>", sizing_mode="stretch_width")

    def _figure(self):
        fig = figure(width=980, height=420, tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        # coloured by rank (the best rank among the alternatives a circle stands for): dark = fewer bytes
        self._rank_colors = LinearColorMapper(palette=Viridis256, low=1, high=2)
        points = fig.scatter("x", "y", source=self._points, size="size", fill_color={"field": "rank", "transform": self._rank_colors},
                             fill_alpha=0.7, line_color="#1e3a8a", line_alpha=0.6, legend_label="alternatives (size: how many; colour: rank)")
        fig.scatter("x", "y", source=self._selected, size=22, marker="diamond", fill_alpha=0, line_color="#0f766e",
                    line_width=3, legend_label="selected row")
        fig.scatter("x", "y", source=self._chosen, size=24, marker="star", fill_color="#f59e0b", line_color="#92400e",
                    line_width=1.5, legend_label="chosen")
        # Tooltip labels are fixed text; values are numbers and digit lists only.
        fig.add_tools(HoverTool(renderers=[points], tooltips=[("x", "@x"), ("y", "@y"), ("alternatives", "@count"),
                                                             ("best rank", "@rank"), ("indices", "@examples")]))
        self._rank_bar = ColorBar(color_mapper=self._rank_colors, title="rank (1 = fewest bytes)", width=10, visible=False)
        fig.add_layout(self._rank_bar, "right")
        legend = fig.legend[0]
        legend.label_text_font_size = "11px"
        fig.add_layout(legend, "right")  # outside the plot: it never hides a point
        self._fig = fig
        return fig

    # ------------------------------------------------------------------ one operation

    @property
    def operation_id(self) -> int:
        return int(self.operation_select.value)

    def _show_operation(self) -> None:
        s = self.search_state
        if self.operation_select.value is None:  # a graph without operations has no plans to show
            self.pairs, self.alternatives = [], None
            self.choice_pane.object = "<div class='ts-sv' data-testid='ts-search-choice'>The graph has no operations.</div>"
            self.edit_target.options = {}
            self._refresh_editor()
            return
        op = s.graph.operation(self.operation_id)
        plans = s.plans[op.id]
        self.pairs = self.rows.pairs(op.id)
        self.alternatives = self.rows.alternatives(op.id)
        n = len(plans.alternatives)
        if plans.chosen is None:
            choice = f"operation {op.id} <b>{esc(op.kind_name)}</b>: no plan chosen among <span data-testid='ts-search-count'>{n}</span> alternatives"
        else:
            plan = plans.chosen_plan
            choice = (
                f"operation {op.id} <b>{esc(op.kind_name)}</b>: chosen plan is alternative "
                f"<b data-testid='ts-search-chosen'>{plans.chosen}</b> of <span data-testid='ts-search-count'>{n}</span> "
                f"<span class='ts-note'>(dispatch {esc(plan.dispatch_kind or '—')}; output aliasing {esc(plan.output_aliasing or '—')})</span>"
            )
        same = (
            f"All {n} alternatives require the same formats; they differ only in their dispatch parameters."
            if self.alternatives.same_requirements else "Alternatives differ in the formats they require: see the B/tile columns."
        )
        rank = self.alternatives.chosen_rank
        if self.alternatives.basis is None:
            ranked = "The file gives nothing to estimate the alternatives' cost by: they are not ranked."
        elif rank is None:
            ranked = f"Alternatives ranked by {esc(self.alternatives.basis)}."
        else:
            ranked = (f"By {esc(self.alternatives.basis)}, the chosen plan ranks <b data-testid='ts-search-rank'>{rank}</b> of {n} "
                      "(1 = fewest bytes; the planner may weigh more than bytes).")
        self.choice_pane.object = (f"<div class='ts-sv ts-choice' data-testid='ts-search-choice'>{choice}<div class='ts-note'>{esc(same)}</div>"
                                   f"<div class='ts-note' data-testid='ts-search-ranking'>{ranked}</div></div>")
        self.formats_pane.object = formats_html(self.pairs)
        self._show_table()
        self._show_axes()
        targets = {f"{p.label} ({'output' if p.key == OUTPUT_KEY else 'input ' + p.key})": p.key for p in self.pairs if p.shape is not None}
        self.edit_target.options = targets
        first = costliest_conversion(self.pairs) or next(iter(targets.values()), None)
        if self.edit_target.value == first:
            self._refresh_editor()
        else:
            self.edit_target.value = first

    def _show_table(self) -> None:
        alts = self.alternatives
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

    def _show_axes(self) -> None:
        alts = self.alternatives
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
        x, y = self.x_select.value, self.y_select.value
        if x is None or y is None:
            return
        points, chosen = scatter_data(self.alternatives, x, y)
        titles = self.alternatives.titles
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
        x, y = self.x_select.value, self.y_select.value
        frame = self.alternatives.frame
        if not rows or x is None or y is None or rows[0] >= len(frame):
            return {"x": [], "y": [], "alternative": []}
        row = frame.iloc[rows[0]]
        if pd.isna(row[x]) or pd.isna(row[y]):
            return {"x": [], "y": [], "alternative": []}
        return {"x": [float(row[x])], "y": [float(row[y])], "alternative": [int(row[ALTERNATIVE])]}

    def _on_table_selection(self, *_):
        with pn.io.unlocked():
            self._selected.data = self._selected_point()

    # ------------------------------------------------------------------ tiling editor

    def _target(self) -> FormatPair | None:
        key = self.edit_target.value
        return next((p for p in self.pairs if p.key == key), None)

    def tiling_of(self, key: str) -> TensorTiling:
        """The required tiling of target ``key`` as edited here (the plan's when not edited)."""
        pair = next(p for p in self.pairs if p.key == key)
        return self._edits.get((self.operation_id, key), pair.required.format.layout.tiling)

    def edited_shard_bytes(self, key: str) -> int:
        pair = next(p for p in self.pairs if p.key == key)
        return shard_bytes(pair.shape, pair.required.format.precision.element_bytes, self.tiling_of(key))

    def _refresh_editor(self) -> None:
        pair = self._target()
        if pair is None:
            self.widget.param.update(**self._count_inputs.clear(), axes=[], show_replicas=False, disabled=True, message="", message_axis="")
            self.edit_figures.object = "<div class='ts-sv ts-note'>Nothing to re-tile: no required format with a known shape.</div>"
            return
        tiling = self.tiling_of(pair.key)
        try:
            bands = tiling_rules.axis_bands(pair.shape, tiling, self.tile_limit)
        except ShapeMismatch as exc:
            self.widget.param.update(**self._count_inputs.clear(), axes=[], show_replicas=False, disabled=True)
            self.edit_figures.object = f"<div class='ts-sv'><div class='ts-error'>{esc(exc)}</div></div>"
            return
        stops = tiling_rules.replica_stops(tiling, self.tile_limit)
        valid = tiling_rules.valid_replica_counts(tiling, self.tile_limit)
        counts = {str(k): int(band["partitions"]) for k, band in enumerate(bands)}
        counts[tiling_rules.REPLICAS] = int(tiling.replicas)
        self.widget.param.update(
            **self._count_inputs.show(counts, identity=(self.operation_id, pair.key, len(bands))),
            axes=bands,
            replicas=int(tiling.replicas),
            replica_counts=stops,
            valid_replica_counts=tiling_rules.accepted(stops, valid),
            max_replicas=max(valid[-1] if valid else 0, 1),
            tile_product=math.prod(a.partitions for a in tiling.axes),
            device_tiles=self.tile_limit,
            show_replicas=True,
            disabled=False,
        )
        self.reset_button.disabled = (self.operation_id, pair.key) not in self._edits
        self.edit_figures.object = self._edit_figures_html(pair, tiling)

    def _edit_figures_html(self, pair: FormatPair, tiling: TensorTiling) -> str:
        element = pair.required.format.precision.element_bytes
        edited = shard_bytes(pair.shape, element, tiling)
        required = pair.required.shard_bytes
        is_edited = (self.operation_id, pair.key) in self._edits
        rows = []
        if pair.arrives is not None:
            rows.append(("arrives in", format_figures(pair.arrives.format, pair.arrives.shard_bytes), tiling_summary(pair.arrives.format.layout.tiling), ""))
        rows.append(("plan requires", format_figures(pair.required.format, required), tiling_summary(pair.required.format.layout.tiling), ""))
        change = "" if not is_edited or required is None else f"{fmt_signed_bytes(edited - required)} per tile vs the plan"
        tiles = tiling.tile_count
        rows.append((
            "edited" if is_edited else "edited (no change yet)",
            f"{fmt_bytes(edited)} on {tiles:,} tile{'s' if tiles != 1 else ''}",
            f"{tiling_summary(tiling)} ({tiles:,} of {self.tile_limit:,} tiles)", change,
        ))
        body = "".join(
            f"<tr{' class=ts-edited' if label.startswith('edited') and is_edited else ''}><td class='k'>{esc(label)}</td>"
            f"<td class='ts-big' data-testid='ts-edit-{esc(label.split()[0])}'>{esc(figure)}</td>"
            f"<td class='ts-debug'>{esc(detail)}</td><td>{esc(note)}</td></tr>"
            for label, figure, detail, note in rows
        )
        return (
            f"<div class='ts-sv' data-testid='ts-search-edit-figures'><table>{body}</table>"
            "<div class='ts-note'>An exploration: the plan and the file are unchanged. Allowed: 1 to blocks partitions per axis, "
            f"at least 1 replica, at most {self.tile_limit:,} tiles (the config's tile count).</div></div>"
        )

    @property
    def count_inputs(self) -> list:
        """The numeric inputs beside the bands: one per axis, then replicas."""
        return self._count_inputs.fields

    def _on_committed(self, event) -> None:
        found = committed_count(event.new)
        if found is not None:
            self.commit(*found)

    def commit(self, key: str, count: int) -> str | None:
        """Set handle ``key`` ("0", "1", … or "replicas") of the shown target to ``count``.
        Returns why it was refused (also shown at the handle), or None."""
        pair = self._target()
        if pair is None or key not in self._count_inputs.counts:
            return None
        tiling = self.tiling_of(pair.key)
        handle = key if key == tiling_rules.REPLICAS else int(key)
        violation = tiling_rules.count_violation(pair.shape, tiling, handle, count, self.tile_limit)
        if violation is not None:
            refusal = refusal_text(pair.shape, tiling, handle, count, violation, self.tile_limit)
            self.widget.param.update(message=refusal, message_axis=key, revision=self.widget.revision + 1)
            self._count_inputs.snap_back()  # the typed count snaps back too
            return refusal
        edited = tiling_rules.with_count(tiling, handle, count)
        target = (self.operation_id, pair.key)
        if edited == pair.required.format.layout.tiling:
            self._edits.pop(target, None)
        else:
            self._edits[target] = edited
        self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
        self._refresh_editor()
        return None

    def reset_edit(self) -> None:
        pair = self._target()
        if pair is not None:
            self._edits.pop((self.operation_id, pair.key), None)
            self.widget.param.update(message="", message_axis="", revision=self.widget.revision + 1)
            self._refresh_editor()


def search_state_page(context) -> pn.Column:
    """The page of a search state (``derived.opening.FILE_KINDS``' view for it): the view, then
    the upload box. ``context``: ``app.page_context.PageContext``."""
    return pn.Column(SearchStateView(state=context.state), context.upload_box, sizing_mode="stretch_width", scroll=True,
                     css_classes=["ts-search-column"], stylesheets=[static_text("page.css")])
