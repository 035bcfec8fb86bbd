"""Addresses: the placement (``state.data.placement``) as an address × step view per region. Each
allocation is a rectangle at its offset over its live steps (values in the region's colour,
scratch violet, the exchange rows grey, the selected value black); free addresses stay white; the
placed top, the lower bound (the hatched band between them is the fragmentation) and the region's
capacity are marked.

At scale the browser never gets every allocation: ``derived.addresses.address_rects`` keeps
every allocation at least ``MIN_PX`` pixels wide and tall in the visible window as its own rectangle
and aggregates the rest into cells of a duller region colour, more opaque the more of them is used; the window is
re-aggregated on every zoom or pan (RangesUpdate) and after every edit (the what-if plan's
placement is re-placed incrementally by ``PlanData.placement``). The two regions share the step
axis. Clicking an allocation selects its value (or says what it is).
"""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np
import panel as pn
import param
from bokeh.events import RangesUpdate, Tap
from bokeh.models import (
    BoxAnnotation,
    ColumnDataSource,
    HoverTool,
    Label,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from tilescope.app.assets import themed_css
from tilescope.app.format import esc
from tilescope.app.glyphs import draw
from tilescope.app.one_message import one_message
from tilescope.app.ranges_update import settle_quickly
from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState
from tilescope.app.views.placement_summary import verdict_html
from tilescope.app.y_follow import follow_y
from tilescope.derived.addresses import address_rects
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes, shorten, step_range
from tilescope.planner.placement import REGION_NAMES, Placement

CSS = themed_css("placement.css")
WIDTH_PX, HEIGHT_PX = 1000, 260  # the pixel budget of one region's window (the plot's size, about)
MIN_PX = 3.0  # allocations smaller than this (either way) are aggregated into cells of this size
REGION_COLORS = MappingProxyType({"standard": "#4C78A8", "interleaved": "#F58518"})
AGGREGATE_COLORS = MappingProxyType(
    {"standard": "#6F8FB5", "interleaved": "#C98A4B"}
)  # the region's colour, duller: many small allocations
SCRATCH, EXCHANGE, SELECTED = "#7B61FF", "#9D9D9D", "#111111"
KIND_COLORS = ("value", "scratch", "exchange_rows", "selected")  # the ``shade`` column of an allocation drawn alone
SHADE_SELECTED = KIND_COLORS.index("selected")
ALLOCATION_FIELDS = ("left", "right", "bottom", "top", "shade", "id", "size", "first", "last", "label")
CELL_FIELDS = ("left", "right", "bottom", "top", "alpha", "count", "fill")
NAME_CHARS = 80


def _empty(fields) -> dict:
    return {k: [] for k in fields}


def _palette(region: str) -> list[str]:
    """Colours by ``shade`` (KIND_COLORS order)."""
    return [REGION_COLORS[region], SCRATCH, EXCHANGE, SELECTED]


class AddressesView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=SessionState)

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = ShownGate(self.state)  # its tab may be hidden: app.shown_gate
        self.x_range = Range1d(-0.5, 0.5)  # shared: both regions over the same steps
        # per region: the allocations drawn alone, and the cells aggregating the small ones (numbers
        # only: a per-rectangle text column would be most of every update at scale)
        self.sources = {r: ColumnDataSource(_empty(ALLOCATION_FIELDS), name=f"ts-address-{r}") for r in REGION_NAMES}
        self.cells = {r: ColumnDataSource(_empty(CELL_FIELDS), name=f"ts-address-{r}-cells") for r in REGION_NAMES}
        self.marks: dict[str, dict] = {}
        self.figures = {r: self._build_figure(r) for r in REGION_NAMES}
        # zoomed or panned to a window of steps, each region's offsets follow what is placed there
        # (its top 1.06 × the highest allocation in view, as the whole view's); a y zoom is the user's
        follow_y(
            self.x_range,
            [self.figures[r].y_range for r in REGION_NAMES],
            [[self.sources[r], self.cells[r]] for r in REGION_NAMES],
            x0="left",
            x1="right",
            top="top",
            pad=0.06,
            on_data=False,
        )
        self._steps: tuple[float, float] | None = None  # zoomed step window (None: every step)
        self._addresses: dict[str, tuple[float, float] | None] = dict.fromkeys(REGION_NAMES)
        self._fitted: dict[str, tuple[float, float]] = dict.fromkeys(REGION_NAMES, (0.0, 1.0))
        self._shown_profile = None  # the opened profile the step axis was fitted to
        self._placement: Placement | None = None
        self._notes = {
            r: pn.pane.HTML("", css_classes=["ts-address-note"], stylesheets=[CSS], sizing_mode="stretch_width")
            for r in REGION_NAMES
        }
        self._header = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self._picked = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=(0, 10))
        self.gate.watch(self._redraw, ["data", "ready"])
        self.gate.watch(self._on_selection, ["selected_values"])
        self.gate.watch(self._on_step, ["selected_step"])
        self._redraw()

    # ------------------------------------------------------------------ figures

    def _build_figure(self, region: str):
        fig = figure(
            name=f"ts-address-{region}-plot",
            height=HEIGHT_PX + 60,
            sizing_mode="stretch_width",
            tools="xpan,xwheel_zoom,ywheel_zoom,box_zoom,reset,save",
            active_scroll=None,
            toolbar_location="above",
            x_axis_label="step",
            y_axis_label=f"{region} offset (bytes)",
            output_backend="webgl",
            x_range=self.x_range,
            y_range=Range1d(0, 1),
        )
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.xaxis.formatter = NumeralTickFormatter(format="0")
        frag = BoxAnnotation(
            bottom=0,
            top=0,
            fill_color="#C62828",
            fill_alpha=0.10,
            hatch_pattern="/",
            hatch_alpha=0.35,
            hatch_color="#C62828",
            line_alpha=0,
        )
        fig.add_layout(frag)
        cells = draw(
            fig,
            "quad",
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.cells[region],
            fill_color=AGGREGATE_COLORS[region],
            fill_alpha="alpha",
            line_alpha=0,
        )
        mapper = LinearColorMapper(palette=_palette(region), low=-0.5, high=len(KIND_COLORS) - 0.5)
        rects = draw(
            fig,
            "quad",
            left="left",
            right="right",
            bottom="bottom",
            top="top",
            source=self.sources[region],
            fill_color={"field": "shade", "transform": mapper},
            fill_alpha=0.85,
            line_color={"field": "shade", "transform": mapper},
            line_alpha=0.9,
            line_width=0.6,
        )
        fig.add_tools(
            HoverTool(
                renderers=[rects],
                tooltips=[  # plain @field tooltips render text, never HTML
                    ("", "@label"),
                    ("offset", "@bottom{0,0} B"),
                    ("bytes", "@size{0,0} B"),
                    ("steps", "@first – @last"),
                ],
            ),
            HoverTool(
                renderers=[cells],
                tooltips=[
                    ("", "small allocations"),
                    ("allocations touching", "@count"),
                    ("area used", "@fill{0 %}"),
                    ("offsets", "@bottom{0,0} – @top{0,0} B"),
                    ("steps", "@left{0} – @right{0}"),
                ],
            ),
        )
        spans = {
            "placed": Span(location=0, dimension="width", line_color="#111111", line_width=1.5),
            "lower_bound": Span(
                location=0, dimension="width", line_color="#2E7D32", line_dash="dashed", line_width=1.5
            ),
            "capacity": Span(location=0, dimension="width", line_color="#C62828", line_dash="dashed", line_width=1.5),
            "step": Span(location=0, dimension="height", line_color="#111111", line_width=1.0, line_alpha=0.6),
        }
        labels = {
            name: Label(
                x=6,
                y=0,
                x_units="screen",
                text="",
                text_font_size="11px",
                text_color=spans[name].line_color,
                y_offset=offset,
                background_fill_color="white",
                background_fill_alpha=0.7,
            )
            for name, offset in (("placed", 3), ("lower_bound", -15), ("capacity", 3))
        }
        for annotation in (*spans.values(), *labels.values()):
            fig.add_layout(annotation)
        self.marks[region] = {"spans": spans, "labels": labels, "fragmentation": frag}
        fig.on_event(Tap, one_message(lambda event, region=region: self._on_tap(region, event)))
        fig.on_event(RangesUpdate, one_message(lambda event, region=region: self._on_ranges(region, event)))
        settle_quickly(fig)
        return fig

    # ------------------------------------------------------------------ data

    def _redraw(self, *_):
        data = self.state.data
        self._placement = None
        if data is None:
            return self._clear("")
        try:
            placement = self._placement = self.state.result(data, "placement")  # (a large plan's: in the background)
        except TilescopeError as exc:  # a refusal (int64 limits, a broken invariant): say it, draw nothing
            return self._clear(f'<div class="bad" data-testid="ts-address-error">placement refused: {esc(exc)}</div>')
        if placement is None:  # being placed in the load workers: drawn when ``ready`` says so
            return self._clear('<div class="note" data-testid="ts-address-pending">placing the allocations…</div>')
        n = data.arrays.n_steps
        if self._shown_profile is not data.opened:
            self._shown_profile = data.opened
            self._steps = None
            self._addresses = dict.fromkeys(REGION_NAMES)
            self.x_range.update(
                start=-0.5,
                end=max(n - 0.5, 0.5),
                reset_start=-0.5,
                reset_end=max(n - 0.5, 0.5),
                bounds=(-0.5, max(n - 0.5, 0.5)),
            )
        for region in REGION_NAMES:
            self._show_marks(placement, region)
        self._header.object = self._header_html(placement)
        self._picked.object = ""
        self._on_step()
        self._refresh(*REGION_NAMES)

    def _clear(self, message: str) -> None:
        for region in REGION_NAMES:
            self.sources[region].data = _empty(ALLOCATION_FIELDS)
            self.cells[region].data = _empty(CELL_FIELDS)
            self._notes[region].object = ""
        self._header.object = message
        self._picked.object = ""

    def _show_marks(self, placement: Placement, region: str) -> None:
        figures = placement.regions[region]
        marks = self.marks[region]
        top = max(figures.placed, figures.lower_bound, 1)
        # the capacity line is drawn when it is near enough to the placement to keep the allocations readable
        shown_capacity = figures.capacity if figures.capacity <= 2 * top else None
        fitted = (0.0, 1.06 * max(top, shown_capacity or 0))
        self._fitted[region] = fitted
        if self._addresses[region] is None:
            self.figures[region].y_range.update(
                start=fitted[0], end=fitted[1], reset_start=fitted[0], reset_end=fitted[1]
            )
        else:
            self.figures[region].y_range.update(reset_start=fitted[0], reset_end=fitted[1])
        spans, labels = marks["spans"], marks["labels"]
        spans["placed"].location = figures.placed
        spans["lower_bound"].location = figures.lower_bound
        spans["capacity"].location = figures.capacity
        spans["capacity"].visible = labels["capacity"].visible = shown_capacity is not None
        labels["placed"].update(
            y=figures.placed, text=f"placed {figures.placed:,} B (fragmentation {figures.fragmentation:,} B)"
        )
        labels["lower_bound"].update(y=figures.lower_bound, text=f"lower bound {figures.lower_bound:,} B")
        labels["capacity"].update(
            y=figures.capacity, text=f"capacity {figures.capacity:,} B ({'fits' if figures.fits else 'does not fit'})"
        )
        marks["fragmentation"].update(bottom=figures.lower_bound, top=figures.placed)

    def _header_html(self, placement: Placement) -> str:
        parts = []
        for region in REGION_NAMES:
            f = placement.regions[region]
            capacity = (
                ""
                if f.capacity <= 2 * max(f.placed, 1)
                else f" (capacity {esc(fmt_bytes(f.capacity))} is above the plot)"
            )
            parts.append(
                f'<span class="ts-region-{region}"><b>{region}</b>: placed '
                f'<span data-testid="ts-address-placed-{region}">{esc(fmt_bytes(f.placed))}</span>, lower bound {esc(fmt_bytes(f.lower_bound))}, '
                f"fragmentation {esc(fmt_bytes(f.fragmentation))}{capacity}</span>"
            )
        verdicts = "".join(
            f'<div class="note"><b>{esc(r)}</b>: {verdict_html(r, placement.regions[r], "ts-address-verdict")} — '
            f'<span data-testid="ts-address-proof-{r}">{esc(placement.regions[r].proof)}</span></div>'
            for r in REGION_NAMES
        )
        return f'<div class="ts-address-head" data-testid="ts-address-head">{" · ".join(parts)}{verdicts}</div>'

    def _window(self, placement: Placement, region: str) -> tuple[int, int, int, int] | None:
        """(first step, last step, low, high) of the visible window, clipped to the profile and the
        region's addresses; None when nothing of the profile is visible."""
        n = self.state.data.arrays.n_steps
        f = placement.regions[region]
        x0, x1 = self._steps if self._steps is not None else (-0.5, n - 0.5)
        zoomed = self._addresses[region]
        y0, y1 = zoomed if zoomed is not None else self._fitted[region]
        # step s is drawn over [s − 0.5, s + 0.5]: visible when that overlaps (x0, x1)
        first, last = max(math.floor(x0 - 0.5) + 1, 0), min(math.ceil(x1 + 0.5) - 1, n - 1)
        low, high = max(math.floor(y0), 0), min(math.ceil(y1), max(f.placed, f.lower_bound, 1))
        if last < first or high <= low:
            return None
        return first, last, low, high

    def _refresh(self, *regions: str) -> None:
        """Re-aggregate the visible window of ``regions``."""
        placement = self._placement
        if placement is None:
            return
        arrays = self.state.data.arrays
        names = self.state.data.profile.values.column("name")
        for region in regions:
            window = self._window(placement, region)
            if window is None:
                self.sources[region].data = _empty(ALLOCATION_FIELDS)
                self.cells[region].data = _empty(CELL_FIELDS)
                self._notes[
                    region
                ].object = f'<span data-testid="ts-address-note-{region}">{region}: nothing in this window</span>'
                continue
            first, last, low, high = window
            r = address_rects(
                placement,
                region,
                first_step=first,
                last_step=last,
                low=low,
                high=high,
                width_px=WIDTH_PX,
                height_px=HEIGHT_PX,
                min_px=MIN_PX,
                keep_ids=self.state.selected_values,
            )
            alone, cell = r.allocation >= 0, r.allocation < 0
            kinds = r.kind_names()[alone]
            ids = r.id[alone]
            selected = np.isin(ids, np.asarray(self.state.selected_values, dtype=np.int64)) & (ids >= 0)
            rows = placement.value_row[r.allocation[alone]]
            # Bokeh sends float64, int32 and int8 arrays as binary (an int64 beyond 2³¹ would go as a
            # list): addresses, sizes and ids as float64, exact up to 2⁵³, the loader's limit
            self.sources[region].data = {
                "left": r.first[alone] - 0.5,
                "right": r.last[alone] + 0.5,
                "bottom": r.offset[alone].astype(np.float64),
                "top": (r.offset + r.bytes)[alone].astype(np.float64),
                "shade": np.where(selected, SHADE_SELECTED, r.kind[alone]).astype(np.int8),
                "id": ids.astype(np.float64),
                "size": r.bytes[alone].astype(np.float64),
                "first": r.first[alone].astype(np.float64),
                "last": r.last[alone].astype(np.float64),
                "label": self._labels(kinds, ids, rows, r.first[alone], names),
            }
            self.cells[region].data = {
                "left": r.first[cell] - 0.5,
                "right": r.last[cell] + 0.5,
                "bottom": r.offset[cell].astype(np.float64),
                "top": (r.offset + r.bytes)[cell].astype(np.float64),
                "alpha": (0.15 + 0.7 * r.fill[cell]).astype(np.float32),
                "count": r.count[cell].astype(np.float64),
                "fill": r.fill[cell].astype(np.float32),
            }
            shown = f"{r.size:,} rectangles for {int((r.allocation >= 0).sum()) + r.aggregated:,} allocations"
            if r.aggregated:
                shown += f" ({r.aggregated:,} smaller than {MIN_PX:g} px drawn as cells, more opaque the fuller)"
            self._notes[region].object = (
                f'<span data-testid="ts-address-note-{region}">{region}: {esc(step_range(first, last))} of {arrays.n_steps:,}, '
                f"offsets {low:,}–{high:,} B: {shown}</span>"
            )

    @staticmethod
    def _labels(kinds, ids, rows, first, names) -> list[str]:
        """Hover text per allocation drawn alone (plain text: Bokeh tooltips do not render it as HTML)."""
        is_value = rows >= 0
        value_names = iter(names.take(rows[is_value]).to_pylist() if is_value.any() else [])
        out = []
        for kind, value_id, step in zip(kinds.tolist(), ids.tolist(), first.tolist()):
            if kind == "value":
                out.append(f"value #{value_id} {shorten(str(next(value_names)), NAME_CHARS)}")
            elif kind == "scratch":
                out.append(f"scratch of step {step}")
            else:
                out.append("exchange rows (whole program)")
        return out

    # ------------------------------------------------------------------ events

    def _on_selection(self, *_):
        self._refresh(*REGION_NAMES)

    def _on_step(self, *_):
        for region in REGION_NAMES:
            self.marks[region]["spans"]["step"].location = self.state.selected_step

    def _on_ranges(self, region: str, event) -> None:
        if self._placement is None or event.x0 is None or event.y0 is None:
            return
        n = self.state.data.arrays.n_steps
        steps = None if _close((event.x0, event.x1), (-0.5, n - 0.5)) else (event.x0, event.x1)
        addresses = None if _close((event.y0, event.y1), self._fitted[region]) else (event.y0, event.y1)
        changed = [r for r in REGION_NAMES if r == region and addresses != self._addresses[r]]
        if steps != self._steps:
            changed = list(REGION_NAMES)
        self._steps, self._addresses[region] = steps, addresses
        if changed:
            self._refresh(*changed)

    def allocation_at(self, region: str, step: float, address: float) -> int | None:
        """The allocation of ``region`` drawn at (step, address), or None (free space)."""
        p = self._placement
        if p is None or step is None or address is None:
            return None
        s = math.floor(step + 0.5)
        hit = np.flatnonzero(
            (p.region == REGION_NAMES.index(region))
            & (p.first_step <= s)
            & (p.last_step >= s)
            & (p.offset <= address)
            & (p.offset + p.bytes > address)
        )
        return int(hit[0]) if hit.size else None

    def _on_tap(self, region: str, event) -> None:
        k = self.allocation_at(region, event.x, event.y)
        p = self._placement
        if k is None or p is None:
            self._picked.object = ""
            return
        where = f"offset {int(p.offset[k]):,} B, {esc(fmt_bytes(int(p.bytes[k])))}, {esc(step_range(int(p.first_step[k]), int(p.last_step[k])))}"
        if p.value_id[k] >= 0:
            name = self.state.data.profile.values.column("name")[int(p.value_row[k])].as_py()
            self._picked.object = (
                f'<div class="ts-address-picked" data-testid="ts-address-picked">value #{int(p.value_id[k])} '
                f"{esc(shorten(str(name), 160))}: {where}</div>"
            )
            self.state.select_values([int(p.value_id[k])])
        else:
            what = "scratch" if p.kind_names()[k] == "scratch" else "exchange rows"
            self._picked.object = (
                f'<div class="ts-address-picked" data-testid="ts-address-picked">{what} ({region}): {where}</div>'
            )

    def set_shown(self, shown: bool) -> None:
        """Hidden, the view waits; shown again, it catches up (``app.shown_gate``)."""
        self.gate.set_shown(shown)

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML(
                "<b>Addresses</b> — every allocation at its offset over its live steps; click one to select its value; "
                "wheel zooms steps (and offsets over the y axis)",
                margin=(8, 10),
            ),
            self._header,
            self._picked,
            *[
                item
                for r in REGION_NAMES
                for item in (self._notes[r], pn.pane.Bokeh(self.figures[r], sizing_mode="stretch_width"))
            ],
            sizing_mode="stretch_width",
            css_classes=["ts-addresses"],
        )


def _close(window: tuple[float, float], fitted: tuple[float, float]) -> bool:
    """Whether a range the browser reports is the one we set (not a zoom): floats round-trip loosely."""
    span = max(abs(fitted[1] - fitted[0]), 1.0)
    return abs(window[0] - fitted[0]) <= 1e-6 * span and abs(window[1] - fitted[1]) <= 1e-6 * span
