"""The report PNG's placement panels: the address × step view of each region (every allocation a
rectangle at its offset over its live steps; ``derived.addresses`` aggregates the ones too small to
see), with the placed top, the lower bound and the capacity marked and the figures in the title.

``add_placement_panels(figure, data)`` makes the figure taller and draws the panels in the new strip
at the bottom, moving what was drawn before up unchanged (so ``report.png`` only calls it).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from tilescope.derived.addresses import AGGREGATE, address_rects
from tilescope.models.format import fmt_bytes
from tilescope.planner.placement import Placement

from .tables import ReportInput, placement_of

PANEL_INCHES = 4.6  # height of the strip the panels are drawn in
# Read-only mappings: the app imports the report in every session's process.
KIND_COLOURS = MappingProxyType({"value": None, "scratch": "#9467bd", "exchange_rows": "#8c564b", AGGREGATE: "0.45"})
VALUE_COLOURS = MappingProxyType({"standard": "#1f77b4", "interleaved": "#ff7f0e"})
EDITED_EDGE = "red"


def extend_downward(figure: Figure, inches: float) -> float:
    """Add ``inches`` at the bottom of the figure, keeping everything drawn so far where it was
    relative to the top; returns the new strip's height as a fraction of the figure."""
    width, height = figure.get_size_inches()
    new_height = height + inches
    scale = height / new_height
    strip = inches / new_height
    for ax in figure.axes:
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position((x0, strip + y0 * scale, w, h * scale))
    for text in figure.texts:
        x, y = text.get_position()
        text.set_position((x, strip + y * scale))
    figure.set_size_inches(width, new_height)
    return strip


def _title(name: str, placement: Placement) -> str:
    r = placement.regions[name]
    share = f" ({100 * r.fragmentation / r.lower_bound:.2f} %)" if r.lower_bound else ""
    return (
        f"{name.capitalize()} region: placed {fmt_bytes(r.placed)}, fragmentation {r.fragmentation:,} B{share}\n"
        f"lower bound {fmt_bytes(r.lower_bound)}; capacity {fmt_bytes(r.capacity)}: {r.verdict}"  # the region's solver verdict; the fit verdict is the summary's
    )


def draw_address_view(ax, data: ReportInput, placement: Placement, name: str, width_px: int, height_px: int) -> None:
    edited_ids = sorted(int(data.arrays.value_ids[r]) for r in data.edited_tilings)
    rects = address_rects(placement, name, width_px=width_px, height_px=height_px, keep_ids=edited_ids)
    left, right = rects.first - 0.5, rects.last + 0.5
    bottom, top = rects.offset, rects.offset + rects.bytes
    boxes = np.stack(
        (
            np.stack((left, bottom), 1),
            np.stack((right, bottom), 1),
            np.stack((right, top), 1),
            np.stack((left, top), 1),
        ),
        axis=1,
    ).astype(float)
    kinds = rects.kind_names()
    colours = []
    for kind, fill in zip(kinds.tolist(), rects.fill.tolist()):
        colour = KIND_COLOURS[kind] or VALUE_COLOURS[name]
        alpha = 0.25 + 0.75 * fill if kind == AGGREGATE else 0.85
        colours.append((*to_rgb(colour), alpha))
    edited = set(edited_ids)
    # A thin white edge keeps neighbouring allocations of one colour apart; edited values in red.
    edges = [
        EDITED_EDGE if i in edited else ("white" if k != AGGREGATE else "none")
        for i, k in zip(rects.id.tolist(), kinds.tolist())
    ]
    widths = [1.0 if i in edited else 0.3 for i in rects.id.tolist()]
    ax.add_collection(PolyCollection(list(boxes), facecolors=colours, edgecolors=edges, linewidths=widths))
    r = placement.regions[name]
    ax.axhline(r.placed, color="black", linewidth=1.2, label=f"placed {r.placed:,} B")
    ax.axhline(r.lower_bound, color="green", linestyle="--", linewidth=1, label=f"lower bound {r.lower_bound:,} B")
    y_max = max(r.placed, r.lower_bound, 1) * 1.08
    if r.capacity <= y_max * 1.3:
        ax.axhline(r.capacity, color="red", linestyle=":", linewidth=1, label=f"capacity {r.capacity:,} B")
        y_max = max(y_max, r.capacity * 1.05)
    ax.axvline(data.step, color="0.3", linewidth=0.8, alpha=0.6)
    ax.set_xlim(rects.first_step - 0.5, rects.last_step + 0.5)
    ax.set_ylim(0, y_max)
    ax.set_title(_title(name, placement), loc="left", fontsize=9)
    ax.set_xlabel(
        "step"
        + (f"  ({rects.aggregated:,} allocations too small to see drawn as grey cells)" if rects.aggregated else ""),
        fontsize=8,
    )
    ax.set_ylabel("offset in region (bytes)", fontsize=8)
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.tick_params(labelsize=7)
    ax.legend(loc="upper right", fontsize=7, framealpha=0.9)


def add_placement_panels(figure: Figure, data: ReportInput) -> None:
    """The standard and interleaved address views side by side in a new strip at the bottom."""
    placement = placement_of(data)
    strip = extend_downward(figure, PANEL_INCHES)
    width_in = figure.get_size_inches()[0]
    dpi = figure.dpi
    bottom, height = strip * 0.16, strip * 0.66
    for x0, name in ((0.06, "standard"), (0.55, "interleaved")):
        ax = figure.add_axes((x0, bottom, 0.42, height))
        draw_address_view(
            ax, data, placement, name, int(0.42 * width_in * dpi), int(height * figure.get_size_inches()[1] * dpi)
        )
