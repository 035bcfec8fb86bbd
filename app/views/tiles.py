"""Tiles: the explorer tile by tile (docs/compiler-formats.md §7, the compiler's own v2/v3 viewer).

- **Which tile** (``SessionState.selected_tile``, the URL's ``tile=``): the peak tile (the step and
  tile where a tile holds the most, both selected), the selected step's peak tile, a typed tile, or a
  click in the tile map below. Until one is chosen the step's peak tile is shown (a file opens on
  its total-peak step, so that is the peak tile, as the compiler's viewer opens).
- **The tile's timeline**: its standard, interleaved and total at every step beside the old bound,
  the device-wide sum of the largest shards (v1's ``usage``; v2/v3's ``coarse_usage``), and the
  budget less the support reserve (what a tile's total must stay under). A click selects a step.
  Long profiles are drawn from ``derived.series.minmax_indices`` points per pixel column of the
  visible window (re-chosen on zoom), so no peak disappears.
- **At this step, on this tile**: for each live root, the alias with the most bytes on the tile:
  payload, padding, total (``derived.tile_rows.tile_step``); the tile's scratch.
- **The tile map** (``app.views.tile_map.TileUsageMap``): every tile at the step, coloured by what
  it holds.

On a v1 file every figure here is tilescope's estimate (the file records no per-tile figures), and
the view says so above everything else.
"""

from __future__ import annotations

import asyncio
from functools import partial

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.events import RangesUpdate, Tap
from bokeh.models import ColumnDataSource, HoverTool, LegendItem, NumberFormatter, Span

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.glyphs import draw
from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.step_figure import legend_below, step_figure
from tilescope.app.views.tile_map import TileUsageMap
from tilescope.app.widgets.tables import Table
from tilescope.derived import tile_usage as tu
from tilescope.derived.overview import PIXEL_COLUMNS
from tilescope.derived.series import minmax_indices, window_of
from tilescope.derived.tile_rows import (
    TILE_COLUMNS,
    TileLines,
    prepare_tiles,
    step_peak,
    tile_lines,
    tile_step,
    tiles_ready,
)
from tilescope.models.format import fmt_bytes

CSS = themed_css("tiles.css")
LINE_FIELDS = ("step", "std", "intl", "total", "coarse")
COLORS = {"std": "#4C78A8", "intl": "#F58518", "total": "#2E7D32", "coarse": "#777777", "budget": "#C62828"}
TABLE_TITLES = {
    "id": "value",
    "root": "root",
    "name": "name",
    "region": "region",
    "copies": "copies",
    "payload": "payload B",
    "padding": "padding B",
    "total": "total B",
}
ESTIMATE_NOTE = (
    "A version 1 file records no per-tile figures: every per-tile figure here is tilescope's estimate "
    "(docs/compiler-formats.md §2, tile offsets 0), not the compiler's."
)


def source_html(source: str, version: int) -> str:
    if source == "estimate":
        return f"<div class='ts-tile-source ts-estimate' data-testid='ts-tile-source' data-source='estimate'>{esc(ESTIMATE_NOTE)}</div>"
    return (
        f"<div class='ts-tile-source' data-testid='ts-tile-source' data-source='file'>Per-tile figures from the file "
        f"(version {version}); what-if edits re-estimate the edited values only.</div>"
    )


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class TilesView(pn.viewable.Viewer):
    """Constructed as ``TilesView(state=…, opener=…)``; with the session's ``app.open_flow.SessionOpener``
    the first per-tile figures of a plan and the peak tile's sweep run in a load worker (seconds on
    a long v1 profile), never on the session's loop; without one (tests, notebooks) they run in place."""

    state = param.ClassSelector(class_=SessionState)
    opener = param.Parameter(default=None, doc="app.open_flow.SessionOpener of the session, if any")

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)
        self._lines: TileLines | None = None
        self._window: tuple[float | None, float | None] = (None, None)
        self.tile_input = pn.widgets.IntInput(
            label="tile", value=0, start=0, end=0, width=110, css_classes=["ts-tile-input"]
        )
        self.peak_button = pn.widgets.Button(  # as wide as its label
            label="peak tile", description="the step and tile where a tile holds the most"
        )
        self.step_peak_button = pn.widgets.Button(
            label="the step's peak tile", description="the tile holding the most at the selected step"
        )
        self._source = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10), stylesheets=[CSS])
        self._header = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10), stylesheets=[CSS])
        self.lines = ColumnDataSource({k: [] for k in LINE_FIELDS}, name="ts-tile-series")
        self.figure = self._build_figure()
        self.table = Table(
            pd.DataFrame(
                {c: pd.Series([], dtype=object if c in ("name", "region") else "int64") for c in TILE_COLUMNS}
            ),
            show_index=False,
            disabled=True,
            selectable=False,
            titles=TABLE_TITLES,
            # Whole bytes, whatever the first frame's dtypes (Tabulator keeps the formatters it starts with).
            formatters={
                "name": {"type": "plaintext"},
                **{c: NumberFormatter(format="0,0") for c in ("copies", "payload", "padding", "total")},
            },
            sizing_mode="stretch_width",
            # each column as wide as its data; the table scrolls sideways inside the panel when the
            # names need it (fixed widths squeezed the name column to 40 px at 1024 px and cut it)
            layout="fit_data_table",
            hidden_columns=["root"],
            pagination="local",
            page_size=15,
            height=560,
            css_classes=["ts-tile-rows"],
        )
        self.map = TileUsageMap(state=self.state)
        self.tile_input.param.watch(one_message(self._on_typed), "value")
        self.peak_button.on_click(one_message(lambda _: self.go_to_peak_tile()))
        self.step_peak_button.on_click(one_message(lambda _: self.go_to_step_peak_tile()))
        self.gate.watch(self._redraw, ["data"])
        self.gate.watch(self._on_tile, ["selected_tile"])
        self.gate.watch(self._on_step, ["selected_step"])
        self._redraw()

    def _build_figure(self):
        fig = step_figure("ts-tile-timeline", 260, "bytes on the tile")
        src = self.lines
        coarse = draw(
            fig,
            "line",
            x="step",
            y="coarse",
            source=src,
            line_color=COLORS["coarse"],
            line_dash="dashed",
            line_width=1.3,
        )
        std = draw(fig, "line", x="step", y="std", source=src, line_color=COLORS["std"], line_width=1.5)
        intl = draw(fig, "line", x="step", y="intl", source=src, line_color=COLORS["intl"], line_width=1.5)
        total = draw(fig, "line", x="step", y="total", source=src, line_color=COLORS["total"], line_width=2)
        self.budget_span = Span(
            location=0, dimension="width", line_color=COLORS["budget"], line_dash="dotted", line_width=1.5
        )
        self.step_span = Span(
            location=0, dimension="height", line_color="#111111", line_width=1.5, line_alpha=0.8, level="overlay"
        )
        fig.add_layout(self.budget_span)
        fig.add_layout(self.step_span)
        fig.add_tools(
            HoverTool(
                renderers=[total],
                mode="vline",
                tooltips=[
                    ("step", "@step"),
                    ("tile total", "@total{0,0} B"),
                    ("standard", "@std{0,0} B"),
                    ("interleaved", "@intl{0,0} B"),
                    ("old bound (device-wide)", "@coarse{0,0} B"),
                ],
            )
        )
        legend_below(
            fig,
            [
                LegendItem(label="tile total", renderers=[total]),
                LegendItem(label="tile standard", renderers=[std]),
                LegendItem(label="tile interleaved", renderers=[intl]),
                LegendItem(label="old bound (device-wide)", renderers=[coarse]),
            ],
            ncols=2,
            click_policy="hide",
            spacing=2,
            padding=4,
        )
        fig.on_event(Tap, one_message(self._on_tap))
        fig.on_event(RangesUpdate, one_message(self._on_ranges))
        return fig

    # ------------------------------------------------------------------ which tile

    @property
    def tile(self) -> int | None:
        """The tile shown: the selected one, else the step's peak tile."""
        if self.state.selected_tile is not None:
            return int(self.state.selected_tile)
        if self.state.data is None or not tiles_ready(self.state.data):
            return None  # (the step's peak tile is known once the plan's per-tile figures are)
        return step_peak(self.state.data, self.state.selected_step)[0]

    def go_to_peak_tile(self) -> None:
        data = self.state.data
        if data is None:
            return
        if self.opener is not None and _loop_running():  # a sweep of every step and tile: in a worker
            self._work = asyncio.ensure_future(  # (held: a task nobody holds may be collected)
                self._in_worker(data, lambda progress: tu.peak_tiles(data)["total"], self._select_peak)
            )
            return
        self._select_peak(data, tu.peak_tiles(data)["total"])

    def _select_peak(self, data, found: tuple[int, int]) -> None:
        if self.state.data is data:
            self.state.select_step(found[0])
            self.state.select_tile(found[1])

    async def _in_worker(self, data, job, then) -> None:
        """``job(progress)`` in a load worker, then ``then(data, result)`` on the loop (under the
        document lock); a failure is said, nothing else changes."""
        try:
            result = await self.opener.run(job, label="per-tile figures")
        except Exception as exc:
            await self.opener.in_session(partial(setattr, self.state, "error", f"tiles: {exc}"))
            return
        await self.opener.in_session(partial(then, data, result))

    def go_to_step_peak_tile(self) -> None:
        data = self.state.data
        if data is not None and tiles_ready(data):
            self.state.select_tile(step_peak(data, self.state.selected_step)[0])

    def _on_typed(self, event) -> None:
        if self.state.data is not None and event.new is not None and event.new != self.tile:
            refused = self.state.select_tile(int(event.new))
            if refused:
                self.state.error = refused

    # ------------------------------------------------------------------ data

    def _redraw(self, *_):
        data = self.state.data
        if data is None:
            return
        tiles = int(data.arrays.device_tiles)
        self.tile_input.end = max(tiles - 1, 0)
        self._source.object = source_html(tu.source(data), int(data.arrays.version))
        self.budget_span.location = max(int(data.arrays.budget_bytes) - int(data.arrays.support_reserve_bytes), 0)
        if self.state.selected_tile is not None and self.state.selected_tile >= tiles:
            self.state.select_tile(None)
        self._window = (None, None)
        self.figure.x_range.update(start=-0.5, end=max(data.arrays.n_steps - 0.5, 0.5))
        if not tiles_ready(data):
            if self.opener is not None and _loop_running():
                self._header.object = (
                    "<div class='ts-tile-header' data-testid='ts-tile-computing'>computing this plan's "
                    "per-tile figures…</div>"
                )
                self._work = asyncio.ensure_future(self._in_worker(data, partial(prepare_tiles, data), self._ready))
                return
            prepare_tiles(data)
        self._on_tile()

    def _ready(self, data, _result) -> None:
        if self.state.data is data:
            self._redraw()

    def _on_tile(self, *_):
        data = self.state.data
        if data is None or not tiles_ready(data):
            return
        tile = self.tile
        if tile is None:
            return
        if self.tile_input.value != tile:
            self.tile_input.value = tile
        self._lines = tile_lines(data, tile)
        lines = self._lines
        highest = max(int(lines.coarse.max(initial=0)), int(lines.total.max(initial=0)), 1)
        budget = int(self.budget_span.location)
        # The budget line joins the scale only when it is near the data: far above, it would
        # flatten the tile's lines into the bottom of the chart (the header says the figures).
        top = (budget if budget <= 1.5 * highest else highest) * 1.05
        self.figure.y_range.update(start=0, end=top)
        self._draw_window()
        self._on_step()

    def _on_step(self, *_):
        data = self.state.data
        if data is None or not tiles_ready(data):
            return
        tile = self.tile
        if tile is None:
            return
        step = self.state.selected_step
        if self.state.selected_tile is None and (self._lines is None or self._lines.tile != tile):
            self._on_tile()  # the step's peak tile moved with the step
            return
        self.step_span.location = step
        found = tile_step(data, tile, step)
        self.table.value = found.rows
        self._header.object = self._header_html(found, data)
        self.map.show(step, tile)

    def _header_html(self, found, data) -> str:
        lines = self._lines
        coarse = int(lines.coarse[found.step]) if lines is not None else 0
        peak_tile, peak_bytes = step_peak(data, found.step)
        which = "selected" if self.state.selected_tile is not None else "the step's peak tile"
        return (
            f"<div class='ts-tile-header' data-testid='ts-tile-header'>Tile <b data-testid='ts-tile-selected'>{found.tile}</b> "
            f"({which}) at step <b data-testid='ts-tile-step'>{found.step}</b>: "
            f"standard <span data-testid='ts-tile-standard'>{esc(fmt_bytes(found.standard))}</span> · "
            f"interleaved <span data-testid='ts-tile-interleaved'>{esc(fmt_bytes(found.interleaved))}</span> · "
            f"total <span data-testid='ts-tile-total'>{esc(fmt_bytes(found.standard + found.interleaved))}</span> "
            f"(scratch {found.scratch_standard:,} B standard, {found.scratch_interleaved:,} B interleaved)<br>"
            f"the step's peak tile is <span data-testid='ts-tile-step-peak'>{peak_tile}</span> "
            f"({esc(fmt_bytes(peak_bytes))}); old bound (every tile, sum of the largest shards) "
            f"<span data-testid='ts-tile-coarse'>{esc(fmt_bytes(coarse))}</span></div>"
        )

    def _draw_window(self) -> None:
        lines = self._lines
        if lines is None:
            return
        n = lines.standard.size
        start, stop = window_of(*self._window, n)
        keep = minmax_indices(
            [lines.total, lines.standard, lines.interleaved, lines.coarse], start, stop, PIXEL_COLUMNS
        )
        self.lines.data = {
            "step": keep,
            "std": lines.standard[keep].astype(np.float64),
            "intl": lines.interleaved[keep].astype(np.float64),
            "total": lines.total[keep].astype(np.float64),
            "coarse": lines.coarse[keep].astype(np.float64),
        }

    # ------------------------------------------------------------------ events

    def _on_tap(self, event) -> None:
        if event.x is not None and self.state.data is not None:
            self.state.select_step(round(event.x))

    def _on_ranges(self, event) -> None:
        self._window = (event.x0, event.x1)
        self._draw_window()

    def set_shown(self, shown: bool) -> None:
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            pn.FlexBox(
                pn.pane.HTML("<b>Tiles</b>", margin=(12, 10)),
                self.tile_input,
                self.peak_button,
                self.step_peak_button,
                sizing_mode="stretch_width",
            ),
            self._source,
            self._header,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            pn.pane.HTML(
                "<b>At this step, on this tile</b> — per live root, the alias with the most bytes here", margin=(8, 10)
            ),
            self.table,
            self.map,
            sizing_mode="stretch_width",
            css_classes=["ts-tiles"],
        )
