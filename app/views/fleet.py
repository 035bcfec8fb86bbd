"""The fleet view: a dataset written by ``tilescope batch`` (``?dataset=NAME`` or ``--args --dataset
DIR``, see ``app.fleet_open``) as a sortable, filterable table of its profiles with their peaks and
fits, a chart of one peak per profile grouped by folder (``derived.fleet_rows``), and the files
that failed with their errors.

Clicking a row opens that profile in this session through the session's opener
(``app.open_flow.SessionOpener``: in a load worker); ticking two and pressing *compare* gives the compare view's
``?file=A&compare=B`` link (A the one first by path, e.g. the earlier nightly run), or calls ``compare`` (the compare view's entry point, when the app
passes one) after opening A. The dataset's rows are read in a load worker (bounded in threads
and in time), after every file was checked to be a regular Parquet file of its table
(``fleet.layout``: a FIFO in a dataset is refused, never read); a dataset that cannot be read
shows its one-line error and keeps what was open. Text from the dataset (paths,
scopes, errors) is escaped: the table's text columns use Tabulator's ``plaintext`` formatter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, NumeralTickFormatter
from bokeh.models.widgets.tables import NumberFormatter
from bokeh.plotting import figure
from bokeh.transform import factor_cmap

from tilescope.app.assets import BUTTONS_CSS, themed_css
from tilescope.app.fleet_open import DatasetRequest, Fleet, compare_link, load_fleet, open_row, row_source
from tilescope.app.format import esc
from tilescope.app.open_flow import SessionOpener
from tilescope.app.state import SessionState, error_text
from tilescope.app.widgets.tables import LabelledTabulator
from tilescope.derived.fleet_rows import (
    BYTE_COLUMNS,
    COUNT_COLUMNS,
    FAILED,
    FIGURES,
    FIT_UNKNOWN,
    FITS,
    LOADED,
    OVER,
    SEARCH_STATE,
    TABLE_COLUMNS,
    TEXT_COLUMNS,
    chart_bars,
    failures,
    table_frame,
)
from tilescope.derived.opening import Opened
from tilescope.models.format import fmt_bytes

CSS = themed_css("fleet.css")
TITLES = {
    "path": "path",
    "scope": "scope",
    "status": "status",
    "standard_peak": "standard peak B",
    "interleaved_peak": "interleaved peak B",
    "total_peak": "total peak B",
    "effective_peak_bytes": "effective peak B",
    "fits": "fits",
    "budget_bytes": "budget B",
    "n_values": "values",
    "n_steps": "steps",
    "check_mismatches": "check mismatches",
}
PAGE_SIZE = 20
FIT_COLOURS = {FITS: "#2e7d32", OVER: "#c62828", FIT_UNKNOWN: "#9e9e9e"}  # the bars' colours: the fit verdict
BUDGET_COLOUR = "#ff9800"  # (orange: seen on the light and the dark background)

Adopt = Callable[
    ..., None
]  # shows an opened file: adopt(opened, requested=NAME or None) (app.page_router.PageRouter.adopt)
Compare = Callable[[str], Awaitable[bool]]  # compare the open profile with a data-root file


def _formatters() -> dict:
    out = {c: {"type": "plaintext"} for c in TEXT_COLUMNS}
    out.update({c: NumberFormatter(format="0,0", nan_format="") for c in (*BYTE_COLUMNS, *COUNT_COLUMNS)})
    return out


class FleetView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    showing = param.Boolean(default=True, doc="the fleet is shown (False: a profile opened from it is)")
    fleet = param.Parameter(default=None, doc="app.fleet_open.Fleet: the dataset shown; None until one loaded")

    def __init__(self, *, opener: SessionOpener, adopt: Adopt | None = None, compare: Compare | None = None, **params):
        super().__init__(**params)
        self.opener, self.shared, self.data_root = opener, opener.shared, opener.data_root
        self._adopt, self._in_session, self._compare = adopt, opener.in_session, compare
        self.header = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.figure_choice = pn.widgets.Select(
            label="chart", options={v: k for k, v in FIGURES.items()}, value="total_peak", width=200
        )
        self.source = ColumnDataSource(
            {"x": [], "value": [], "text": [], "path": [], "fit": [], "budget": [], "budget_text": []},
            name="ts-fleet-bars",
        )
        self.chart = figure(
            name="ts-fleet-chart",
            x_range=FactorRange(),
            height=320,
            sizing_mode="stretch_width",
            toolbar_location="right",
            tools="xpan,xwheel_zoom,reset,save",
            y_axis_label="bytes per tile",
        )
        # colour: the fit verdict as recorded (derived.fleet_rows); the mark across a bar: its budget
        bars = self.chart.vbar(
            x="x",
            top="value",
            width=0.8,
            source=self.source,
            line_color=None,
            fill_color=factor_cmap("fit", list(FIT_COLOURS.values()), list(FIT_COLOURS)),
            legend_field="fit",
        )
        self.budget_marks = self.chart.rect(
            x="x",
            y="budget",
            width=0.95,
            height=2,
            height_units="screen",
            source=self.source,
            fill_color=BUDGET_COLOUR,
            line_color=None,
            legend_label="budget",
        )
        self.chart.add_tools(
            HoverTool(
                renderers=[bars],
                tooltips=[("path", "@path"), ("figure", "@text"), ("budget", "@budget_text"), ("", "@fit")],
            )
        )  # fields render as text
        self.chart.legend.orientation = "horizontal"
        self.chart.legend.location = "top_left"
        self.chart.legend.click_policy = "none"
        self.chart.yaxis.formatter = NumeralTickFormatter(format="0,0")
        self.chart.xaxis.major_label_orientation = 0.9
        self.chart.y_range.start = 0
        self.table = LabelledTabulator(
            table_frame_empty(),
            show_index=False,
            disabled=True,
            selectable="checkbox",
            pagination="remote",
            page_size=PAGE_SIZE,
            header_filters=True,
            titles=TITLES,
            formatters=_formatters(),
            sizing_mode="stretch_width",
            css_classes=["ts-fleet-table"],
            layout="fit_data_table",
        )
        self.compare_button = pn.widgets.Button(
            label="compare the two ticked", color="primary", width=200, disabled=True, stylesheets=[BUTTONS_CSS]
        )
        self.compare_note = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.failure_list = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.back = pn.widgets.Button(label="← fleet", color="light", width=320, css_classes=["ts-fleet-back"])
        self._page = None
        self.table.on_click(self._on_click)
        self.table.param.watch(self._on_tick, "selection")
        self.compare_button.on_click(self._on_compare)
        self.back.on_click(lambda *_: setattr(self, "showing", True))
        self.figure_choice.param.watch(lambda *_: self._draw_chart(), "value")

    # ------------------------------------------------------------------ the dataset

    async def open(self, request: DatasetRequest) -> str | None:
        """Read the requested dataset in a worker thread and show it; the problem (one line) when
        it cannot be shown, and nothing changes."""
        path = request.path
        if path is None:
            return request.problem
        state = self.state
        await self._in_session(state.begin_load)
        try:
            fleet = await self.opener.run(lambda _progress: load_fleet(path, request.name), label=request.name)
        except Exception as exc:  # bad dataset (InputError, TilescopeError) or anything else: say it
            await self._in_session(partial(state.param.update, loading=False, progress=1.0, status=""))
            return error_text(exc)
        await self._in_session(partial(self._show, fleet))
        return None

    def _show(self, fleet: Fleet) -> None:
        profiles = fleet.profiles
        frame = table_frame(profiles)
        self.table.value = frame
        counts = frame["status"].value_counts()
        self.header.object = (
            f'<div class="ts-fleet-head" data-testid="ts-fleet-head"><b>dataset <span data-testid="ts-fleet-name">{esc(fleet.name)}</span></b>: '
            f'<span data-testid="ts-fleet-count">{len(frame):,}</span> files — {counts.get(LOADED, 0):,} memory profiles, '
            f"{counts.get(SEARCH_STATE, 0):,} search states, {counts.get(FAILED, 0):,} failed. "
            "Click a row to open it; tick two to compare.</div>"
        )
        failed = failures(profiles)
        self.failure_list.object = (
            ""
            if not failed
            else (
                f'<div class="ts-fleet-failures" data-testid="ts-fleet-failures"><b>{len(failed):,} failed</b><ul>'
                + "".join(
                    f'<li><span class="ts-fleet-path">{esc(p)}</span>: <span class="ts-fleet-error">{esc(e)}</span></li>'
                    for p, e in failed
                )
                + "</ul></div>"
            )
        )
        self.back.label = f"← fleet {fleet.name}"
        self.fleet = fleet
        self._draw_chart()
        self.state.param.update(
            loading=False, progress=1.0, error="", status=f"dataset {fleet.name}: {len(frame):,} files"
        )

    def _draw_chart(self) -> None:
        if self.fleet is None:
            return
        bars = chart_bars(self.fleet.profiles, self.figure_choice.value)
        self.chart.x_range.factors = bars.factors
        self.source.data = {
            "x": bars.factors,
            "value": bars.values,
            "text": [fmt_bytes(v) for v in bars.values],
            "path": bars.paths,
            "fit": bars.fits,
            "budget": [float("nan") if b is None else b for b in bars.budgets],
            "budget_text": ["not recorded" if b is None else fmt_bytes(b) for b in bars.budgets],
        }
        legend = self.chart.legend[0]
        for item in legend.items:
            if self.budget_marks in item.renderers:
                item.label = {"value": bars.budget_label}
        self.chart.title.text = f"{FIGURES[bars.figure]} per profile, grouped by folder ({len(bars.groups):,} groups)"

    # ------------------------------------------------------------------ opening and comparing

    async def _on_click(self, event) -> None:
        if self.fleet is None or event.column not in TABLE_COLUMNS:  # (the tick box is not a column)
            return
        await self.open_position(int(event.row))

    async def open_position(self, position: int) -> bool:
        """Open row ``position`` of the dataset's profiles in this session (``app.fleet_open.open_row``)."""
        fleet = self.fleet
        if fleet is None:
            return False
        found: list = []  # the row's RowSource, from the worker
        job = partial(open_row, fleet, position, self.data_root, self.shared, found=found)  # (staged, progress)

        def adopt(opened: Opened) -> None:  # named as it opened (a data-root name, or DATASET:PATH)
            source = found[0] if found else None
            requested = source.name if source is not None and source.path is not None else None
            if self._adopt is not None:
                self._adopt(opened, requested=requested)  # (the URL's file=: a file under the data root)
            else:
                self.state.adopt(opened)

        if not await self.opener.open(job, "", adopt):
            return False
        await self._in_session(partial(setattr, self, "showing", False))
        return True

    def _on_tick(self, *_):
        picked = self.table.selection
        self.compare_button.disabled = len(picked) != 2
        self.compare_note.object = (
            '<span class="ts-fleet-note">tick two profiles to compare them</span>' if len(picked) > 2 else ""
        )

    async def _on_compare(self, *_):
        fleet, picked = self.fleet, sorted(self.table.selection)
        if fleet is None or len(picked) != 2:
            return
        try:
            a, b = await self.opener.run(lambda _progress: [row_source(fleet, p, self.data_root) for p in picked])
        except Exception as exc:
            await self._in_session(partial(self.state.fail, f"compare: {error_text(exc)}"))
            return
        link = compare_link(a, b)
        if link is not None and self._compare is not None:
            if await self.open_position(picked[0]):
                await self._compare(b.name)
            return
        await self._in_session(partial(setattr, self.compare_note, "object", compare_note_html(a, b, link)))

    @property
    def page(self) -> pn.Column:
        """The view's layout, built once (what the page's body holds)."""
        if self._page is None:
            self._page = pn.Column(
                self.header,
                pn.Row(self.figure_choice, sizing_mode="stretch_width"),
                self.chart,
                pn.Row(self.compare_button, self.compare_note, sizing_mode="stretch_width"),
                self.table,
                self.failure_list,
                sizing_mode="stretch_width",
            )
        return self._page

    def __panel__(self):
        return self.page


def table_frame_empty() -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in TABLE_COLUMNS})


def compare_note_html(a, b, link: str | None) -> str:
    """The compare view's link for two rows, or why there is none."""
    if link is not None:
        return (
            f'<a class="ts-fleet-link" data-testid="ts-fleet-compare-link" href="{esc(link)}" target="_blank" rel="noopener">'
            f"compare {esc(a.name)} → {esc(b.name)}</a>"
        )
    alone = [s.name for s in (a, b) if s.path is None]
    return (
        '<span class="ts-fleet-note" data-testid="ts-fleet-compare-note">comparing in the page needs both input files under the '
        f"data root, unchanged since the batch; {esc(' and '.join(alone))} "
        f"{'opens' if len(alone) == 1 else 'open'} from the dataset only (<code>tilescope regress</code> compares datasets)</span>"
    )
