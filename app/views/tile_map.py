"""Tile map: the device's tiles on a grid (``derived.tile_map``), coloured by the bytes each holds at
the selected step — the plan's per-tile figures, the same the Tiles tab shows (``derived.tile_usage``:
a v2/v3 file's own, tilescope's §2 estimate for a v1 file, labelled "estimate") — the worst tile
outlined red against the planner's sum-of-maxima estimate, and what the worst tile — or a clicked
one, outlined black — holds, most bytes first. Follows the selected step, the region choice and
every edit.

A device above ``derived.tile_map.MAX_MAP_TILES`` tiles gets no grid, and the view says so.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import panel as pn
import param
from bokeh.events import Tap
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper, NumeralTickFormatter, Range1d
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from tilescope.app.assets import themed_css
from tilescope.app.format import esc, esc_name
from tilescope.app.glyphs import draw
from tilescope.app.one_message import one_message
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.derived.tile_map import TILE_REGIONS, TileMap, check_tile_count, grid_columns, tile_map
from tilescope.derived.tile_rows import prepare_tiles, tiles_ready
from tilescope.derived.tile_usage import at_step
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes, shorten

CSS = themed_css("tile_map.css")
MAP_PX = 380  # the figure's width at most (grid and colour bar): it fits the side panel at 1024 px
BAR_PX = 90  # the colour bar and its labels beside the grid
TILE_FIELDS = ("x", "y", "tile", "bytes", "share")
MARK_FIELDS = ("x", "y", "color")  # the outlined tiles: the worst (red) and the clicked one (black)
HOLDINGS_SHOWN = 12


def grid_cell(columns: int) -> int:
    """A cell's side in pixels: the grid and its colour bar within ``MAP_PX``, 2 to 9 pixels."""
    return min(max((MAP_PX - BAR_PX) // columns, 2), 9)


def tile_grid_figure(name: str, source, marked, mapper, share_label: str, on_tap):
    """The tile grid both maps draw: one cell per tile coloured by its bytes, the marked tiles
    outlined, a hover with the tile's share of ``share_label``, a tap that selects a tile."""
    fig = figure(
        name=name,
        width=MAP_PX,
        height=300,
        tools="save",
        toolbar_location=None,
        output_backend="webgl",
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(0.5, -0.5),
    )
    fig.axis.visible = False
    fig.grid.visible = False
    cells = draw(
        fig,
        "rect",
        x="x",
        y="y",
        width=0.92,
        height=0.92,
        source=source,
        fill_color={"field": "bytes", "transform": mapper},
        line_color=None,
    )
    draw(
        fig,
        "rect",
        x="x",
        y="y",
        width=1.0,
        height=1.0,
        source=marked,
        fill_alpha=0,
        line_color="color",
        line_width=2.5,
    )
    fig.add_tools(
        HoverTool(
            renderers=[cells], tooltips=[("tile", "@tile"), ("bytes", "@bytes{0,0} B"), (share_label, "@share{0.0 %}")]
        )
    )
    fig.add_layout(
        ColorBar(color_mapper=mapper, width=10, formatter=NumeralTickFormatter(format="0,0"), title="bytes"), "right"
    )
    fig.on_event(Tap, one_message(on_tap))
    return fig


class TileMapView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)
    region = param.Selector(default="total", objects=list(TILE_REGIONS), doc="bytes of which region colour the tiles")
    tile = param.Integer(default=None, allow_None=True, doc="the clicked tile (None: the worst tile)")

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self.source = ColumnDataSource({k: [] for k in TILE_FIELDS}, name="ts-tile-map-tiles")
        self.marked = ColumnDataSource({k: [] for k in MARK_FIELDS}, name="ts-tile-map-marked")
        self.mapper = LinearColorMapper(palette=Viridis256, low=0, high=1)
        self.figure = self._build_figure()
        self._map: TileMap | None = None
        self._region = pn.widgets.RadioButtonGroup.from_param(self.param.region, label="")
        self._worst_button = pn.widgets.Button(label="worst tile")  # as wide as its label
        self._worst_button.on_click(one_message(lambda event: setattr(self, "tile", None)))
        self._head = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._holdings = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._pane = pn.pane.Bokeh(self.figure)
        self.gate.watch(self._redraw, ["data"])
        self.gate.watch(self._refresh, ["selected_step"])
        self._redraw()

    def _build_figure(self):
        return tile_grid_figure("ts-tile-map", self.source, self.marked, self.mapper, "of the old bound", self._on_tap)

    # ------------------------------------------------------------------ data

    def _redraw(self, *_):
        data = self.state.data
        if self.tile is not None and (data is None or self.tile >= data.arrays.device_tiles):
            self.tile = None  # a tile the new profile does not have (refreshes)
            return
        self._refresh()

    @param.depends("region", "tile", watch=True)
    def _refresh(self, *_):
        data = self.state.data
        self._map = None
        if data is None:
            return self._show_nothing("")
        step = self.state.selected_step
        try:
            check_tile_count(int(data.arrays.device_tiles))
            if not tiles_ready(data):  # the plan's per-tile figures: file-sized, in the load workers
                if self.state.compute(data, partial(prepare_tiles, data), partial(self._prepared, data)):
                    self._show_nothing(
                        '<div class="ts-tile-head" data-testid="ts-tile-map-computing">computing this plan\'s '
                        "per-tile figures…</div>"
                    )
                return
            found = tile_map(data, step, self.region)
        except TilescopeError as exc:  # too many tiles for a map, or a tiling the device cannot hold
            return self._show_nothing(
                f'<div class="ts-tile-refused" data-testid="ts-tile-map-refused">tile map: {esc(exc)}</div>'
            )
        self._map = found
        shown = found.worst_tile if self.tile is None else self.tile
        tiles = np.arange(found.device_tiles, dtype=np.int32)  # ≤ MAX_MAP_TILES
        estimate = max(found.estimate, 1)
        self.mapper.update(low=0, high=estimate)
        self.source.data = {  # bytes as float64: exact to 2⁵³ and sent as binary (an int64 beyond 2³¹ is not)
            "x": tiles % found.columns,
            "y": tiles // found.columns,
            "tile": tiles,
            "bytes": found.bytes.astype(np.float64),
            "share": (found.bytes / estimate).astype(np.float32),
        }
        marked = [(found.worst_tile, "#C62828")] + ([(shown, "#000000")] if self.tile is not None else [])
        self.marked.data = {
            "x": [found.position(t)[0] for t, _ in marked],
            "y": [found.position(t)[1] for t, _ in marked],
            "color": [c for _, c in marked],
        }
        self.figure.x_range.update(start=-0.5, end=found.columns - 0.5)
        self.figure.y_range.update(start=found.rows - 0.5, end=-0.5)  # tile 0 top left
        cell = grid_cell(found.columns)
        self.figure.update(width=found.columns * cell + BAR_PX, height=max(80, found.rows * cell + 20))
        self._head.object = self._head_html(found, data.edited)
        self._holdings.object = self._holdings_html(found, shown, data)

    def _prepared(self, data, outcome) -> None:
        if isinstance(outcome, BaseException):
            self._show_nothing(
                f'<div class="ts-tile-refused" data-testid="ts-tile-map-refused">tile map: {esc(outcome)}</div>'
            )
        elif self.state.data is data:
            self._refresh()

    def _show_nothing(self, message: str) -> None:
        self.source.data = {k: [] for k in TILE_FIELDS}
        self.marked.data = {k: [] for k in MARK_FIELDS}
        self._head.object = message
        self._holdings.object = ""

    @staticmethod
    def _head_html(m: TileMap, edited: bool) -> str:
        share = m.worst_bytes / m.estimate if m.estimate else 0.0
        plan = "the what-if plan" if edited else "the file's plan"
        figures = " · per-tile figures: tilescope's estimate (a v1 file records none)" if m.source == "estimate" else ""
        return (
            f'<div class="ts-tile-head" data-testid="ts-tile-head">{m.device_tiles:,} tiles at step '
            f'<span data-testid="ts-tile-step">{m.step}</span> ({esc(m.region)}, {plan}): worst tile '
            f'<b data-testid="ts-tile-worst">{m.worst_tile}</b> holds '
            f'<span class="ts-fig" data-testid="ts-tile-worst-bytes">{esc(fmt_bytes(m.worst_bytes))}</span> of the old bound '
            f'<span class="ts-fig" data-testid="ts-tile-estimate">{esc(fmt_bytes(m.estimate))}</span> ({share:.1%}); '
            f"the least-loaded tile holds {esc(fmt_bytes(int(m.bytes.min()) if m.bytes.size else 0))}"
            f'<span data-testid="ts-tile-map-source">{figures}</span>. '
            f'<span class="note">Tile t at column t mod {m.columns}, row t div {m.columns} (the file gives no physical layout); '
            f"colour scale 0 to the old bound.</span></div>"
        )

    @staticmethod
    def _holdings_html(m: TileMap, tile: int, data) -> str:
        lines, more = m.holdings(tile, HOLDINGS_SHOWN)
        names = data.profile.values.column("name")
        rows = []
        for line in lines:
            if line.kind == "value":
                what = f"#{int(data.arrays.value_ids[line.row])} {esc_name(shorten(str(names[line.row].as_py()), 120))}"
            else:
                what = f"scratch of step {m.step}"
            rows.append(
                f'<tr data-kind="{line.kind}"><td>{what}</td><td>{esc(line.region)}</td>'
                f'<td class="n">{esc(fmt_bytes(line.bytes))}</td><td class="n">{esc(fmt_bytes(line.planned))}</td></tr>'
            )
        which = "worst tile" if tile == m.worst_tile else "clicked tile"
        extra = f'<div class="note">and {more:,} more values holding bytes there</div>' if more else ""
        return (
            f'<div class="ts-tile-holdings" data-testid="ts-tile-holdings"><b>Tile <span data-testid="ts-tile-shown">{tile}</span></b> '
            f'({which}): <span class="ts-fig" data-testid="ts-tile-shown-bytes">{esc(fmt_bytes(int(m.bytes[tile])))}</span>, most bytes first'
            f"<table><tr><th>what</th><th>region</th><th>on this tile</th><th>planner (every tile)</th></tr>{''.join(rows)}</table>{extra}</div>"
        )

    # ------------------------------------------------------------------ events

    def _on_tap(self, event):
        if self._map is None or event.x is None or event.y is None:
            return
        tile = self._map.tile_at(event.x, event.y)
        if tile is not None:
            self.tile = tile
            self.state.select_tile(tile)  # the Tiles tab shows the same tile

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            # wraps: the title, the region choice and the button side by side overlapped in a Row
            pn.FlexBox(
                pn.pane.HTML("<b>Tile map</b> — click a tile to list what it holds", margin=(8, 10)),
                self._region,
                self._worst_button,
                align_items="center",
                sizing_mode="stretch_width",
            ),
            self._head,
            self._pane,
            self._holdings,
            css_classes=["ts-tile-map"],
            sizing_mode="stretch_width",
        )


USAGE_FIELDS = ("x", "y", "tile", "bytes", "share")


class TileUsageMap(pn.viewable.Viewer):
    """Every device tile at one step coloured by what it holds there (standard + interleaved) by the
    plan's per-tile figures (``derived.tile_usage``: the file's, or tilescope's estimate of a v1
    file), the shown tile outlined black and the step's peak tile red; a click selects a tile
    (``SessionState.select_tile``). Drawn by the tiles view (``app.views.tiles``), which calls
    ``show`` when its step or tile changes; the grid is ``derived.tile_map``'s."""

    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.source = ColumnDataSource({k: [] for k in USAGE_FIELDS}, name="ts-tile-usage-tiles")
        self.marked = ColumnDataSource({k: [] for k in MARK_FIELDS}, name="ts-tile-usage-marked")
        self.mapper = LinearColorMapper(palette=Viridis256, low=0, high=1)
        self.figure = self._build_figure()
        self._columns = 1
        self._tiles = 0
        self._head = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))

    def _build_figure(self):
        return tile_grid_figure(
            "ts-tile-usage-map", self.source, self.marked, self.mapper, "of the old bound", self._on_tap
        )

    def show(self, step: int, tile: int) -> None:
        """Draw the tiles at ``step``, ``tile`` outlined."""
        data = self.state.data
        if data is None:
            return
        try:
            check_tile_count(int(data.arrays.device_tiles))
        except TilescopeError as exc:
            self.source.data = {k: [] for k in USAGE_FIELDS}
            self.marked.data = {k: [] for k in MARK_FIELDS}
            self._head.object = (
                f'<div class="ts-tile-refused" data-testid="ts-tile-usage-refused">tile map: {esc(exc)}</div>'
            )
            return
        standard, interleaved = at_step(data, step)
        held = np.asarray(standard) + np.asarray(interleaved)
        tiles = held.size
        columns = grid_columns(tiles)
        self._columns, self._tiles = columns, tiles
        series = data.series
        bound = max(int(series.standard[step]) + int(series.interleaved[step]), 1)
        index = np.arange(tiles, dtype=np.int32)
        self.mapper.update(low=0, high=max(int(held.max(initial=0)), 1))
        self.source.data = {
            "x": index % columns,
            "y": index // columns,
            "tile": index,
            "bytes": held.astype(np.float64),
            "share": (held / bound).astype(np.float32),
        }
        peak = int(tiles - 1 - np.argmax(held[::-1])) if tiles else 0
        marks = [(peak, "#C62828"), (int(tile), "#000000")]
        self.marked.data = {
            "x": [t % columns for t, _ in marks],
            "y": [t // columns for t, _ in marks],
            "color": [c for _, c in marks],
        }
        rows = -(-tiles // columns)
        self.figure.x_range.update(start=-0.5, end=columns - 0.5)
        self.figure.y_range.update(start=rows - 0.5, end=-0.5)
        cell = grid_cell(columns)
        self.figure.update(width=columns * cell + BAR_PX, height=max(80, rows * cell + 20))
        self._head.object = (
            f'<div class="ts-tile-head" data-testid="ts-tile-usage-head">{tiles:,} tiles at step {step}: tile {int(tile)} outlined '
            f"black, the step's peak tile {peak} red ({esc(fmt_bytes(int(held[peak]) if tiles else 0))}). "
            f'<span class="note">Tile t at column t mod {columns}, row t div {columns}; click a tile to show it.</span></div>'
        )

    def _on_tap(self, event) -> None:
        if event.x is None or event.y is None or not self._tiles:
            return
        column, row = math.floor(event.x + 0.5), math.floor(event.y + 0.5)
        if 0 <= column < self._columns and row >= 0 and row * self._columns + column < self._tiles:
            self.state.select_tile(row * self._columns + column)

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<b>Tile map</b> — what each tile holds at this step; click a tile", margin=(8, 10)),
            self._head,
            pn.pane.Bokeh(self.figure),
            sizing_mode="stretch_width",
            css_classes=["ts-tile-usage-map"],
        )
