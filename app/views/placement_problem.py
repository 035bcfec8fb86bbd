"""A placement problem (a compiler's placement dump, compiler-formats.md §4) in the app: the address
× event picture of its requests, the compiler's own placement beside tilescope's, the verdict and its
proof, and the exports.

The picture (``derived.placement_problem_view``): the allowed ranges (green bands), the host scratch
range (hatched), the region boundary (dashed), the memory-element grid (thin lines: 16 KiB below
the boundary, 32 KiB above, as the dump says), each request a rectangle over its events at its
group's addresses (standard blue, interleaved orange). Hovering a rectangle outlines its conflict
partners (``static/placement_problem_hover.js``, in the browser). A toggle shows tilescope's
placement or the compiler's ``assigned_root_spans``.

tilescope's solver runs in one of the server's load workers (``app.load_pool``) with a time limit
(``derived.placement_opened.APP_TIME_LIMIT_S``), never on the session's loop; until it answers the
verdict reads "solving…", and past its limit it says "unknown" and why. The exports are browser
downloads built from what is open (nothing is written on the server).
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import MappingProxyType

import panel as pn
import param
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, NumeralTickFormatter, Range1d
from bokeh.models.annotations import Span
from bokeh.plotting import figure

from tilescope.app.assets import BUTTONS_CSS, static_text, themed_css
from tilescope.app.format import esc
from tilescope.app.state import error_text
from tilescope.derived.placement_opened import APP_TIME_LIMIT_S, OpenedPlacementDump, Solved, solved
from tilescope.derived.placement_problem_view import (
    Picture,
    ProblemGeometry,
    is_interleaved,
    solution_csv,
    solution_json,
)
from tilescope.models.format import fmt_bytes
from tilescope.report.placement_problem_png import problem_png

CSS = themed_css("placement.css")
INK = MappingProxyType({False: "#111111", True: "#E8E8E8"})  # lines in the theme's ink (light, dark)
HOVER_JS = static_text("placement_problem_hover.js")
CLASS_COLORS = MappingProxyType({False: "#4C78A8", True: "#F58518"})  # standard, interleaved
RECT_FIELDS = (
    "left",
    "right",
    "bottom",
    "top",
    "request",
    "roots",
    "bytes",
    "first",
    "last",
    "cls",
    "color",
    "partner_rows",
    "partners",
)
TILESCOPE, COMPILER = "tilescope's placement", "the compiler's placement"


def _empty(fields) -> dict:
    return {k: [] for k in fields}


def rect_data(geometry: ProblemGeometry, picture: Picture) -> dict:
    """The rectangles' columns; ``partner_rows`` names each rectangle's partners by row of these columns."""
    problem = geometry.problem
    row_of = {int(k): i for i, k in enumerate(picture.request.tolist())}
    out = _empty(RECT_FIELDS)
    for i, k in enumerate(picture.request.tolist()):
        r = problem.requests[k]
        out["left"].append(float(picture.left[i]))
        out["right"].append(float(picture.right[i]))
        out["bottom"].append(float(picture.bottom[i]))
        out["top"].append(float(picture.top[i]))
        out["request"].append(int(r.index))
        out["roots"].append(", ".join(str(root) for root, _ in r.roots[:6]) + (" …" if len(r.roots) > 6 else ""))
        out["bytes"].append(float(picture.top[i] - picture.bottom[i]))
        out["first"].append(str(r.first))
        out["last"].append(
            "end" if geometry.x(r.last) == geometry.end_event and r.last != geometry.end_event else str(r.last)
        )
        out["cls"].append(r.request_class)
        out["color"].append(CLASS_COLORS[is_interleaved(problem, k)])
        rows = [row_of[p] for p in geometry.partners[k] if p in row_of]
        out["partner_rows"].append(rows)
        out["partners"].append(len(geometry.partners[k]))
    return out


class PlacementProblemView(pn.viewable.Viewer):
    """The view of an opened dump (module doc). ``run`` runs ``job(progress)`` off the loop (the
    app's load pool) and ``in_session`` applies a change under the session's document lock; without
    them (a notebook, a test) the solve runs here and now."""

    opened = param.ClassSelector(class_=OpenedPlacementDump)

    def __init__(
        self,
        run: Callable[..., Awaitable] | None = None,
        in_session: Callable[[Callable], Awaitable] | None = None,
        **params,
    ):
        super().__init__(**params)
        self.geometry = self.opened.geometry
        self.result: Solved | None = None
        self.error = ""
        g, p = self.geometry, self.opened.problem
        self.rects = ColumnDataSource(_empty(RECT_FIELDS), name="ts-dump-rects")
        self.partners = ColumnDataSource(_empty(("left", "right", "bottom", "top", "request")), name="ts-dump-partners")
        self.compiler_picture = Picture.of(g, p.assigned_root_spans)
        self.figure = self._figure()
        self.which = pn.widgets.RadioButtonGroup(
            options=[TILESCOPE, COMPILER],
            value=TILESCOPE,
            color="primary",
            css_classes=["ts-dump-toggle"],
            stylesheets=[BUTTONS_CSS],
            width=420,
            margin=(5, 10),
        )
        self.which.param.watch(lambda *_: self._draw(), "value")
        self.head = pn.pane.HTML(self._head_html(), stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        stem = Path(self.opened.name).stem or "placement"
        self.downloads = pn.Row(
            self._button(f"{stem}.png", "Picture (PNG)", self._png, "ts-dump-export-png"),
            self._button(f"{stem}.tilescope-placement.csv", "Solution (CSV)", self._csv, "ts-dump-export-csv"),
            self._button(f"{stem}.tilescope-placement.json", "Solution (JSON)", self._json, "ts-dump-export-json"),
        )
        self._layout = pn.Column(
            self.head,
            pn.Row(self.which, self.downloads),
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            css_classes=["ts-dump"],
            stylesheets=[CSS],
        )
        self._draw()
        self._run, self._in_session = run, in_session

    # ------------------------------------------------------------------ solving

    async def solve(self) -> None:
        """tilescope's solve, in a load worker, then shown (the module doc)."""
        problem = self.opened.problem
        if self._run is None or self._in_session is None:
            return self.solve_here()
        try:
            result = await self._run(
                lambda progress: solved(problem, APP_TIME_LIMIT_S, progress), label=self.opened.name
            )
        except Exception as exc:
            message = error_text(exc)
            await self._in_session(lambda: self._failed(message))
            return
        await self._in_session(lambda: self._show(result))

    def solve_here(self) -> None:
        self._show(solved(self.opened.problem, APP_TIME_LIMIT_S))

    def _failed(self, message: str) -> None:
        self.error = message
        self.head.object = self._head_html()

    def _show(self, result: Solved) -> None:
        self.result = result
        self.head.object = self._head_html()
        self._draw()

    # ------------------------------------------------------------------ drawing

    def _figure(self):
        g, p = self.geometry, self.opened.problem
        x0, x1 = -1.0, g.end_event + 1.0
        top = max(g.high, self.compiler_picture.height)
        fig = figure(
            name="ts-dump-plot",
            height=560,
            sizing_mode="stretch_width",
            tools="pan,wheel_zoom,box_zoom,reset",
            active_scroll="wheel_zoom",
            toolbar_location="above",
            x_axis_label="event",
            y_axis_label="address (bytes)",
            x_range=Range1d(x0, x1),
            y_range=Range1d(g.low - 4096, top + 4096),
        )
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        ranges = {
            "left": [x0] * len(p.ranges),
            "right": [x1] * len(p.ranges),
            "bottom": [s for s, _ in p.ranges],
            "top": [e for _, e in p.ranges],
        }
        fig.quad(
            source=ColumnDataSource(ranges, name="ts-dump-ranges"),
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            fill_color="#2E7D32",
            fill_alpha=0.07,
            line_alpha=0,
        )
        if p.host_scratch_range is not None and not p.plain:
            hs, he = p.host_scratch_range
            fig.quad(
                left=[x0],
                right=[x1],
                bottom=[hs],
                top=[he],
                fill_color="#E65100",
                fill_alpha=0.06,
                hatch_pattern="/",
                hatch_alpha=0.3,
                hatch_color="#E65100",
                line_alpha=0,
                name="ts-dump-host",
            )
        grid = g.grid()
        fig.segment(
            source=ColumnDataSource({"x0": [x0] * len(grid), "x1": [x1] * len(grid), "y": grid}, name="ts-dump-grid"),
            x0="x0",
            x1="x1",
            y0="y",
            y1="y",
            line_color="#9E9E9E",
            line_alpha=0.45,
            line_width=0.6,
        )
        self.boundary = Span(
            location=p.region_boundary,
            dimension="width",
            line_color=INK[False],
            line_dash="dashed",
            line_width=1.5,
            visible=not p.plain,
        )
        fig.add_layout(self.boundary)
        rects = fig.quad(
            source=self.rects,
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            fill_color="color",
            fill_alpha=0.75,
            line_color="white",
            line_width=0.5,
        )
        fig.quad(
            source=self.partners,
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            fill_alpha=0,
            line_color="#C62828",
            line_width=2.5,
            name="ts-dump-partner-outline",
        )
        fig.add_tools(
            HoverTool(
                renderers=[rects],
                callback=CustomJS(args={"rects": self.rects, "partners": self.partners}, code=HOVER_JS),
                tooltips=[
                    ("request", "@request"),
                    ("roots", "@roots"),
                    ("class", "@cls"),
                    ("bytes", "@bytes{0,0}"),
                    ("address", "@bottom{0,0} – @top{0,0}"),
                    ("events", "@first – @last"),
                    ("conflict partners", "@partners"),
                ],
            )
        )
        return fig

    def _picture(self) -> Picture:
        if self.which.value == COMPILER:
            return self.compiler_picture
        return Picture.of(self.geometry, self.result.spans if self.result is not None else {})

    def _draw(self) -> None:
        self.rects.data = rect_data(self.geometry, self._picture())
        self.partners.data = _empty(("left", "right", "bottom", "top", "request"))

    def _head_html(self) -> str:
        p, g = self.opened.problem, self.geometry
        n = len(p.requests)
        edges = sum(g.conflict_counts) // 2
        facts = (
            (f"tile {p.tile}" if p.tile is not None else "tile not recorded")
            + f" · {n:,} requests · {edges:,} conflict edges · "
            + f"{len(p.ranges)} ranges, {fmt_bytes(p.total_capacity)} free"
        )
        compiler = {True: "placed it", False: "failed to place it", None: "did not record whether it placed it"}[
            p.placed
        ]
        spans = self.compiler_picture
        compiler_line = (
            (
                f"The compiler {compiler}; its assigned_root_spans place {n - len(spans.missing):,} of {n:,} requests"
                + (f", up to address {spans.height:,}." if spans.height else ".")
            )
            if p.assigned_root_spans
            else f"The compiler {compiler}; the dump records no assigned_root_spans (the older form), so its placement is not drawn."
        )
        if self.error:
            verdict, proof = ("unknown", f"tilescope's solver did not answer: {self.error}")
        elif self.result is None:
            verdict, proof = ("solving…", f"tilescope's solver is running (time limit {APP_TIME_LIMIT_S:g} s).")
        else:
            r = self.result
            verdict = r.headline
            height = f" Its placement ends at address {r.height:,}." if r.height else ""
            proof = f"{r.proof}.{height} ({r.nodes:,} nodes, {r.seconds:.3f} s)"
        cls = {"placed": "ok", "infeasible": "bad"}.get(self.result.verdict if self.result else "", "note")
        return (
            f'<div class="ts-dump-head" data-testid="ts-dump-head"><h3 style="margin:4px 0">Placement problem: {esc(self.opened.name)}</h3>'
            f"<div>{esc(facts)}</div><div>{esc(compiler_line)}</div>"
            f'<div>tilescope: <b class="{cls}" data-testid="ts-dump-verdict">{esc(verdict)}</b></div>'
            f'<div class="note" data-testid="ts-dump-proof">{esc(proof)}</div></div>'
        )

    # ------------------------------------------------------------------ exports

    def _button(self, filename: str, label: str, callback, css: str) -> pn.widgets.FileDownload:
        return pn.widgets.FileDownload(
            callback=callback,
            filename=filename,
            label=label,
            auto=True,
            embed=False,
            css_classes=[css],
            width=170,
            margin=(5, 10),
        )

    def _spans(self) -> dict:
        return self.result.spans if self.result is not None else {}

    def _verdict(self) -> str:
        return self.result.verdict if self.result is not None else "unknown"

    async def _png(self) -> io.BytesIO:
        """Drawn in a load worker (matplotlib's Agg) under its time limit, not on the session's loop
        (here without the app's load pool: a notebook, a test)."""
        geometry, spans, headline = (self.geometry, self._spans(), self.result.headline if self.result else "unknown")
        if self._run is None:
            return io.BytesIO(problem_png(geometry, spans, headline))
        return io.BytesIO(
            await self._run(
                lambda _progress: problem_png(geometry, spans, headline), label=f"{self.opened.name} picture"
            )
        )

    def _csv(self) -> io.BytesIO:
        return io.BytesIO(solution_csv(self.opened.problem, self._spans()).encode())

    def _json(self) -> io.BytesIO:
        return io.BytesIO(solution_json(self.opened.problem, self._spans(), self._verdict(), "tilescope").encode())

    def set_dark(self, dark: bool) -> None:
        """The boundary line in the theme's ink (the theme recolours background, axes and grid)."""
        self.boundary.line_color = INK[bool(dark)]

    def __panel__(self):
        return self._layout
