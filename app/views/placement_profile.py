"""A placement profile (``placement-{pid}.json``, compiler-formats.md §5) in the app: choose a tile;
see where the compiler placed its allocations (an address × event picture, each row a rectangle
coloured by kind, the fixed reservations grey), and beside it tilescope's solver on the same
allocations (``derived.placement_profile_view.tile_problem``), with the figures that compare them:
the compiler's placed top, the live lower bound (and the lowest address it allows), tilescope's
height, each difference said in a sentence.

The solve runs in a load worker with the app's time limit (as the dump view's); until it answers the
figures say "solving…". Labels come from the file: the tooltips render them as text, the figures
escape them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import MappingProxyType

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, NumeralTickFormatter, Range1d
from bokeh.models.annotations import Span
from bokeh.plotting import figure

from tilescope.app.assets import BUTTONS_CSS, themed_css
from tilescope.app.format import esc
from tilescope.app.state import error_text
from tilescope.derived.placement_opened import APP_TIME_LIMIT_S, OpenedPlacementProfile, Solved, solved
from tilescope.derived.placement_profile_figures import TileFigures
from tilescope.derived.placement_profile_view import TileRows
from tilescope.models.placement_profile import KINDS

CSS = themed_css("placement.css")
INK = MappingProxyType({False: "#111111", True: "#E8E8E8"})  # lines in the theme's ink (light, dark)
KIND_COLORS = MappingProxyType(
    {"parameter": "#54A24B", "activation": "#4C78A8", "scratch": "#B279A2", "support": "#9D9D9D", "padding": "#D0D0D0"}
)
FIELDS = ("left", "right", "bottom", "top", "color", "kind", "label", "first", "last", "bytes", "payload")
COMPILER, TILESCOPE = "the compiler's placement", "tilescope's placement"


def _empty() -> dict:
    return {k: [] for k in FIELDS}


def rect_data(
    rows: TileRows, labels: tuple[str, ...], starts: np.ndarray | None = None, movable: np.ndarray | None = None
) -> dict:
    """Rectangles of the tile's rows; with ``starts`` (tilescope's base per request, -1 where none), the
    movable rows at tilescope's addresses and the fixed ones where they are."""
    bottom = rows.start.astype(np.float64)
    keep = np.ones(rows.size, dtype=bool)
    if starts is not None and movable is not None:
        bottom = bottom.copy()
        bottom[movable] = starts
        keep[movable[starts < 0]] = False
    size = (rows.end - rows.start).astype(np.float64)
    kinds = np.array(KINDS, dtype=object)[rows.kind]
    return {
        "left": (rows.x_of(rows.first) - 0.5)[keep],
        "right": (rows.x_of(rows.last) + 0.5)[keep],
        "bottom": bottom[keep],
        "top": (bottom + size)[keep],
        "color": [KIND_COLORS[k] for k in kinds[keep]],
        "kind": list(kinds[keep]),
        "label": [labels[int(i)] for i in rows.label[keep]],
        "first": [str(int(e)) for e in rows.first[keep]],
        "last": ["end" if e == 4294967295 else str(int(e)) for e in rows.last[keep]],
        "bytes": size[keep],
        "payload": (rows.payload_end - rows.start).astype(np.float64)[keep],  # the rest of the row is tail and padding
    }


class PlacementProfileView(pn.viewable.Viewer):
    """The view of an opened placement profile (module doc); ``run`` and ``in_session`` as the dump view's."""

    opened = param.ClassSelector(class_=OpenedPlacementProfile)

    def __init__(
        self,
        run: Callable[..., Awaitable] | None = None,
        in_session: Callable[[Callable], Awaitable] | None = None,
        **params,
    ):
        super().__init__(**params)
        self._run, self._in_session = run, in_session
        p = self.opened.profile
        tiles = p.tiles
        options = {
            f"tile {lg} (physical {ph}, {n:,} allocations)": i
            for i, (lg, ph, n) in enumerate(
                zip(
                    tiles.column("logical").to_pylist(),
                    tiles.column("physical").to_pylist(),
                    tiles.column("rows").to_pylist(),
                )
            )
        }
        self.picker = pn.widgets.Select(
            name="tile",
            options=options,
            value=0 if options else None,
            width=340,
            css_classes=["ts-pp-tile"],
            margin=(5, 10),
        )
        self.which = pn.widgets.RadioButtonGroup(
            options=[COMPILER, TILESCOPE],
            value=COMPILER,
            color="primary",
            css_classes=["ts-pp-toggle"],
            stylesheets=[BUTTONS_CSS],
            width=420,
            margin=(5, 10),
        )
        self.source = ColumnDataSource(_empty(), name="ts-pp-rects")
        self.spans = {
            name: Span(location=0, dimension="width", line_color=c, line_dash=d, line_width=1.5)
            for name, c, d in (
                ("placed", INK[False], "solid"),
                ("bound", "#2E7D32", "dashed"),
                ("tilescope", "#C62828", "dotted"),
            )
        }
        self.figure = self._figure()
        self.head = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self.figures: TileFigures | None = None
        self.result: Solved | None = None
        self.error = ""
        # the planner's estimate of the same build (a v2/v3 memory profile), when one is given
        self.estimate_source = ColumnDataSource(
            {"step": [], "standard": [], "interleaved": [], "total": []}, name="ts-pp-estimate"
        )
        self.estimate_figure = self._estimate_figure()
        self.estimate_note = pn.pane.HTML(
            '<div class="note" data-testid="ts-pp-estimate">No memory profile of the same build is open beside it '
            "(add <code>&amp;profile=NAME</code> to the address to see the planner's estimate per step).</div>",
            stylesheets=[CSS],
            sizing_mode="stretch_width",
        )
        self.estimate_pane = pn.Column(self.estimate_note, width=420)
        self._estimates = None  # logical tile → derived.tile_estimate.TileEstimate (None: no profile)
        self._estimate_name = ""
        self.picker.param.watch(self._on_tile, "value")
        self.which.param.watch(lambda *_: self._draw(), "value")
        self._layout = pn.Column(
            pn.pane.HTML(
                f'<h3 style="margin:4px 10px">Placement profile: {esc(self.opened.name)} · {p.tile_count:,} tiles</h3>',
                stylesheets=[CSS],
                sizing_mode="stretch_width",
            ),
            pn.Row(self.picker, self.which),
            self.head,
            pn.Row(
                pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"), self.estimate_pane, sizing_mode="stretch_width"
            ),
            sizing_mode="stretch_width",
            css_classes=["ts-pp"],
            stylesheets=[CSS],
        )
        self._select(0)

    def _figure(self):
        fig = figure(
            name="ts-pp-plot",
            height=520,
            sizing_mode="stretch_width",
            tools="pan,wheel_zoom,box_zoom,reset",
            active_scroll="wheel_zoom",
            toolbar_location="above",
            x_axis_label="event (the last: after the program)",
            y_axis_label="address (bytes)",
            x_range=Range1d(-1, 1),
            y_range=Range1d(self.opened.profile.start, self.opened.profile.end),
        )
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        rects = fig.quad(
            source=self.source,
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            fill_color="color",
            fill_alpha=0.8,
            line_color="white",
            line_width=0.4,
        )
        fig.add_tools(
            HoverTool(
                renderers=[rects],
                tooltips=[  # plain @field tooltips render text, never HTML
                    ("", "@label"),
                    ("kind", "@kind"),
                    ("address", "@bottom{0,0} – @top{0,0}"),
                    ("bytes", "@bytes{0,0}"),
                    ("payload", "@payload{0,0}"),
                    ("events", "@first – @last"),
                ],
            )
        )
        for span in self.spans.values():
            fig.add_layout(span)
        return fig

    # ------------------------------------------------------------------ a tile

    def _on_tile(self, event) -> None:
        if event.new is not None:
            self._select(int(event.new))
            if self._run is not None:
                pn.state.execute(self.solve)
            else:
                self.solve_here()

    def _estimate_figure(self):
        fig = figure(
            name="ts-pp-estimate-plot",
            height=300,
            width=400,
            tools="pan,wheel_zoom,reset",
            toolbar_location="above",
            x_axis_label="step",
            y_axis_label="estimated bytes on this tile",
        )
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.line(
            "step",
            "total",
            source=self.estimate_source,
            line_color=INK[False],
            legend_label="total",
            name="ts-pp-estimate-total",
        )
        fig.line("step", "standard", source=self.estimate_source, line_color="#4C78A8", legend_label="standard")
        fig.line("step", "interleaved", source=self.estimate_source, line_color="#F58518", legend_label="interleaved")
        fig.legend.location = "top_left"
        fig.add_tools(
            HoverTool(
                tooltips=[
                    ("step", "@step"),
                    ("total", "@total{0,0} B"),
                    ("standard", "@standard{0,0} B"),
                    ("interleaved", "@interleaved{0,0} B"),
                ],
                mode="vline",
            )
        )
        return fig

    def set_estimates(self, estimate_of, name: str) -> None:
        """Show the planner's estimate from a memory profile of the same build: ``estimate_of(logical
        tile)`` gives its ``TileEstimate`` (``name``: the profile as the user named it)."""
        self._estimates, self._estimate_name = estimate_of, name
        self.estimate_pane.objects = [self.estimate_note, pn.pane.Bokeh(self.estimate_figure)]
        self._draw_estimate()

    def estimate_failed(self, message: str) -> None:
        self.estimate_note.object = (
            f'<div class="bad" data-testid="ts-pp-estimate">The memory profile was not opened: {esc(message)}</div>'
        )

    def _draw_estimate(self) -> None:
        f = self.figures
        if self._estimates is None or f is None:
            return
        estimate = self._estimates(f.rows.logical)
        if estimate is None:
            self.estimate_source.data = {"step": [], "standard": [], "interleaved": [], "total": []}
            count = self._estimates.tile_count
            self.estimate_note.object = (
                f'<div class="note" data-testid="ts-pp-estimate">{esc(self._estimate_name)} has {count} tiles: '
                f"tile {f.rows.logical} is not among them.</div>"
            )
            return
        steps = np.arange(estimate.total.size)
        self.estimate_source.data = {
            "step": steps,
            "standard": estimate.standard,
            "interleaved": estimate.interleaved,
            "total": estimate.total,
        }
        sentence = estimate.sentence(f.live, f.placed_top - self.opened.profile.start)
        self.estimate_note.object = f'<div data-testid="ts-pp-estimate"><b>Planner estimate</b> ({esc(self._estimate_name)}): {esc(sentence)}</div>'

    def _select(self, position: int) -> None:
        if self.opened.profile.tile_count == 0:
            self.head.object = '<div class="note">The profile has no tiles.</div>'
            return
        self.figures = TileFigures(self.opened, position)
        self.result, self.error = None, ""
        rows = self.figures.rows
        self.figure.x_range.update(start=-1, end=rows.end_event + 1, reset_start=-1, reset_end=rows.end_event + 1)
        self._draw()
        self._draw_estimate()

    async def solve(self) -> None:
        """tilescope's solve of the shown tile, in a load worker."""
        figures = self.figures
        if figures is None:
            return
        if self._run is None or self._in_session is None:
            return self.solve_here()
        try:
            result = await self._run(
                lambda progress: solved(figures.problem, APP_TIME_LIMIT_S, progress), label=self.opened.name
            )
        except Exception as exc:
            message = error_text(exc)
            await self._in_session(lambda: self._failed(figures, message))
            return
        await self._in_session(lambda: self._show(figures, result))

    def solve_here(self) -> None:
        if self.figures is not None:
            self._show(self.figures, solved(self.figures.problem, APP_TIME_LIMIT_S))

    def _failed(self, figures: TileFigures, message: str) -> None:
        if figures is self.figures:
            self.error = message
            self._draw()

    def _show(self, figures: TileFigures, result: Solved) -> None:
        if figures is self.figures:  # (another tile was chosen meanwhile: its own solve answers it)
            self.result = result
            self._draw()

    def _draw(self) -> None:
        f = self.figures
        if f is None:
            return
        starts = None
        if self.which.value == TILESCOPE:
            starts = np.full(f.movable.size, -1.0)
            if self.result is not None:
                for i, req in enumerate(f.problem.requests):
                    span = self.result.spans.get(req.roots[0][0])
                    if span is not None:
                        starts[i] = span[0]
        self.source.data = rect_data(
            f.rows, self.opened.profile.labels, starts, f.movable if starts is not None else None
        )
        self.spans["placed"].location = f.placed_top
        self.spans["bound"].location = f.bound
        height = self.result.height if self.result is not None and self.result.height else None
        self.spans["tilescope"].visible = height is not None
        self.spans["tilescope"].location = height or 0
        # the addresses in use, not the whole tile memory: from the base to the highest mark, and a margin
        p = self.opened.profile
        top = max(f.placed_top, f.bound, height or 0)
        top = min(p.end, top + max((top - p.start) // 20, 1024))
        self.figure.y_range.update(start=p.start, end=top, reset_start=p.start, reset_end=top)
        lines = "".join(
            f'<div data-testid="{tid}">{esc(text)}</div>' for tid, text in f.sentences(self.result, self.error)
        )
        figures = (
            f'<div class="ts-pp-figures">placed top <b data-testid="ts-pp-placed-top">{f.placed_top:,}</b> · lower bound '
            f'<b data-testid="ts-pp-live">{f.live:,}</b> B live (address ≥ <b data-testid="ts-pp-bound-address">{f.bound:,}</b>) · '
            f'tilescope <b data-testid="ts-pp-height">{"…" if self.result is None else (f"{height:,}" if height else self.result.verdict)}</b>'
            f"<span class=\"note\"> (lines: the compiler's top solid, the bound dashed green, tilescope's height dotted red)</span></div>"
        )
        self.head.object = f'<div class="ts-pp-head" data-testid="ts-pp-head">{figures}{lines}</div>'

    def set_dark(self, dark: bool) -> None:
        """The compiler's top and the estimate's total in the theme's ink."""
        ink = INK[bool(dark)]
        self.spans["placed"].line_color = ink
        for renderer in self.estimate_figure.select(name="ts-pp-estimate-total"):
            renderer.glyph.line_color = ink

    def __panel__(self):
        return self._layout
