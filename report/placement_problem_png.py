"""A placement problem's picture as a PNG (matplotlib's Agg, no browser): the compiler's placement
(``assigned_root_spans``) beside tilescope's, each the address × event picture the app draws
(``derived.placement_problem_view``): allowed ranges, the host scratch range, the region boundary,
the memory-element grid, a rectangle per placed request."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from tilescope.derived.placement_problem_view import Picture, ProblemGeometry, is_interleaved

COLOURS = ("#4C78A8", "#F58518")  # standard, interleaved


def _draw(ax, geometry: ProblemGeometry, picture: Picture, title: str) -> None:
    p = geometry.problem
    x0, x1 = -1.0, geometry.end_event + 1.0
    for start, end in p.ranges:
        ax.axhspan(start, end, color="#2E7D32", alpha=0.07, linewidth=0)
    if p.host_scratch_range is not None and not p.plain:
        ax.axhspan(*p.host_scratch_range, facecolor="none", edgecolor="#E65100", hatch="//", alpha=0.35, linewidth=0)
    for line in geometry.grid():
        ax.axhline(line, color="0.6", linewidth=0.3, alpha=0.6)
    if not p.plain:
        ax.axhline(
            p.region_boundary,
            color="black",
            linestyle="--",
            linewidth=1.0,
            label=f"region boundary {p.region_boundary:,}",
        )
    if picture.request.size:
        boxes = np.stack(
            (
                np.stack((picture.left, picture.bottom), 1),
                np.stack((picture.right, picture.bottom), 1),
                np.stack((picture.right, picture.top), 1),
                np.stack((picture.left, picture.top), 1),
            ),
            axis=1,
        )
        colours = [COLOURS[is_interleaved(p, int(k))] for k in picture.request.tolist()]
        ax.add_collection(
            PolyCollection(list(boxes), facecolors=colours, edgecolors="white", linewidths=0.3, alpha=0.85)
        )
    ax.set_xlim(x0, x1)
    ax.set_ylim(geometry.low - 4096, max(geometry.high, picture.height) + 4096)
    ax.set_title(title, loc="left", fontsize=9)
    ax.set_xlabel("event", fontsize=8)
    ax.set_ylabel("address (bytes)", fontsize=8)
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.tick_params(labelsize=7)


def problem_png(geometry: ProblemGeometry, spans: dict, headline: str) -> bytes:
    """The PNG's bytes: the compiler's placement (left) and tilescope's (right)."""
    p = geometry.problem
    compiler, ours = (Picture.of(geometry, p.assigned_root_spans), Picture.of(geometry, spans))
    figure = Figure(figsize=(14, 6.5), dpi=100)
    FigureCanvasAgg(figure)
    n = len(p.requests)
    titles = (
        (
            f"compiler: {n - len(compiler.missing):,} of {n:,} requests placed"
            + (f", up to address {compiler.height:,}" if compiler.height else "")
        )
        if p.assigned_root_spans
        else "compiler: the dump records no assigned_root_spans (the older form)",
        f"tilescope: {headline}; {n - len(ours.missing):,} of {n:,} placed"
        + (f", up to address {ours.height:,}" if ours.height else ""),
    )
    for i, (picture, title) in enumerate(((compiler, titles[0]), (ours, titles[1]))):
        _draw(figure.add_subplot(1, 2, i + 1), geometry, picture, title)
    figure.suptitle(f"{p.name}: tile {p.tile}" if p.tile is not None else p.name, fontsize=10)
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return out.getvalue()
