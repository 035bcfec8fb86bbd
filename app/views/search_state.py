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

The alternatives' table and chart are ``app.views.search_alternatives``, the tiling editor
``app.views.search_editor`` (mixins: their widgets are the view's attributes); the HTML sections
``app.views.search_html``.

Edits here are explorations of one required format; they are kept per view (per session) and do
not change the file or the plan.
"""

from __future__ import annotations

from pathlib import Path

import panel as pn
import param

from tilescope.app.assets import static_text
from tilescope.app.format import esc
from tilescope.app.state import SessionState
from tilescope.app.views.search_alternatives import CSS, SearchAlternatives
from tilescope.app.views.search_editor import SearchTilingEditor
from tilescope.app.views.search_html import config_html, formats_html, graph_html, recipe_html, visited_html
from tilescope.derived.search_rows import OUTPUT_KEY, SearchData, costliest_conversion
from tilescope.loaders.search_state import load_search_state
from tilescope.models.format import fmt_bytes
from tilescope.models.search_state import SearchState


class SearchStateView(SearchAlternatives, SearchTilingEditor, pn.viewable.Viewer):
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
        if self.search_state is None:
            message = "No search state is open."
            self._layout = pn.Column(
                pn.pane.HTML(
                    f"<div class='ts-sv'><div class='ts-error' data-testid='ts-search-error'>{esc(message)}</div></div>",
                    stylesheets=[CSS],
                    sizing_mode="stretch_width",
                ),
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
            f"tile memory budget {esc(fmt_bytes(s.tile_memory_budget_bytes))}</div>",
            **html,
        )
        self.graph_pane = pn.pane.HTML(graph_html(s), **html)
        self.config_pane = pn.pane.HTML(config_html(s), **html)
        self.recipe_pane = pn.pane.HTML(recipe_html(s), **html)
        assert self.rows is not None  # (built with a search state: its rows exist)
        self.visited_pane = pn.pane.HTML(visited_html(self.rows.visited), **html)

        self.operation_select = pn.widgets.Select(
            label="Operation",
            options={f"operation {op.id}: {op.kind_name}": op.id for op in s.graph.operations},
            width=320,
            visible=n_ops > 1,
        )
        self.choice_pane = pn.pane.HTML("", **html)
        self.formats_pane = pn.pane.HTML("", **html)

        alternatives = self._build_alternatives(html)  # (search_alternatives: the table and the chart)
        editor = self._build_editor(html)  # (search_editor: the tiling editor)
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
            *alternatives,
            self._rule(),
            *editor,
            sizing_mode="stretch_width",
            css_classes=["ts-search-view"],
        )
        self._show_operation()

    @staticmethod
    def _rule():
        # Not pn.layout.Divider: its stylesheet comes from a CDN, unreachable offline.
        return pn.pane.HTML(
            "<hr style='border: 0; border-top: 1px solid #d9e2ec; margin: 6px 0'>", sizing_mode="stretch_width"
        )

    # ------------------------------------------------------------------ one operation

    @property
    def operation_id(self) -> int:
        return int(self.operation_select.value)

    def _show_operation(self) -> None:
        s = self.search_state
        if self.operation_select.value is None:  # a graph without operations has no plans to show
            self.pairs, self.alternatives = [], None
            self.choice_pane.object = (
                "<div class='ts-sv' data-testid='ts-search-choice'>The graph has no operations.</div>"
            )
            self.edit_target.options = {}
            self._refresh_editor()
            return
        op = s.graph.operation(self.operation_id)
        plans = s.plans[op.id]
        rows = self.rows
        assert rows is not None  # (built with a search state: its rows exist)
        alternatives = rows.alternatives(op.id)
        self.pairs, self.alternatives = rows.pairs(op.id), alternatives
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
            if alternatives.same_requirements
            else "Alternatives differ in the formats they require: see the B/tile columns."
        )
        rank = alternatives.chosen_rank
        if alternatives.basis is None:
            ranked = "The file gives nothing to estimate the alternatives' cost by: they are not ranked."
        elif rank is None:
            ranked = f"Alternatives ranked by {esc(alternatives.basis)}."
        else:
            ranked = (
                f"By {esc(alternatives.basis)}, the chosen plan ranks <b data-testid='ts-search-rank'>{rank}</b> of {n} "
                "(1 = fewest bytes; the planner may weigh more than bytes)."
            )
        self.choice_pane.object = (
            f"<div class='ts-sv ts-choice' data-testid='ts-search-choice'>{choice}<div class='ts-note'>{esc(same)}</div>"
            f"<div class='ts-note' data-testid='ts-search-ranking'>{ranked}</div></div>"
        )
        self.formats_pane.object = formats_html(self.pairs)
        self._show_table(alternatives)
        self._show_axes(alternatives)
        targets = {
            f"{p.label} ({'output' if p.key == OUTPUT_KEY else 'input ' + p.key})": p.key
            for p in self.pairs
            if p.shape is not None
        }
        self.edit_target.options = targets
        first = costliest_conversion(self.pairs) or next(iter(targets.values()), None)
        if self.edit_target.value == first:
            self._refresh_editor()
        else:
            self.edit_target.value = first


def search_state_page(context) -> pn.Column:
    """The page of a search state (``derived.opening.FILE_KINDS``' view for it): the view, then
    the upload box. ``context``: ``app.page_context.PageContext``."""
    return pn.Column(
        SearchStateView(state=context.state),
        context.upload_box,
        sizing_mode="stretch_width",
        scroll=True,
        css_classes=["ts-search-column"],
        stylesheets=[static_text("page.css")],
    )
