"""The compare form's PNG: the peaks as A | B | Δ, both timelines overlaid per region on the aligned
step axis with the difference between them filled (red where B uses more, green where less), and
each peak's attribution as a waterfall from A's peak to B's through its largest parts.

Drawn like ``report.png``: matplotlib's ``Figure`` on the Agg canvas (no pyplot state), text from
the files with mathtext off, one drawing at a time (``report.png._DRAW_LOCK``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from tilescope.derived.compare import FIGURES, Comparison
from tilescope.models.format import fmt_bytes, fmt_signed_bytes

from .png import _DRAW_LOCK, PLAIN, draw_provenance, label_text
from .provenance import Provenance, provenance_of

WATERFALL_PARTS = 8  # largest parts drawn per waterfall (compare_attribution.csv has them all)
ZOOM_SHARE = 0.1  # a change spanning less than this share of the aligned steps gets a zoom beside its region
ZOOM_MIN_STEPS = 40  # the zoom shows at least this many steps
SIDE_COLOURS = {"a": "#1f77b4", "b": "#ff7f0e"}
MORE, LESS = "#d62728", "#2ca02c"  # B above A, B below A


def _side_lines(comparison: Comparison, file_a: str, file_b: str) -> str:
    out = []
    for key, side, file in (("A", comparison.a, file_a), ("B", comparison.b, file_b)):
        scope = side.profile.header.get("scope") or ""
        edits = f"; edited: {len(side.edits)} edits" if side.edits else ""
        out.append(f"{key}: {label_text(Path(file).name, 60)} (scope {label_text(scope, 30)}){edits}")
    steps, match = comparison.steps, comparison.values
    if steps.mode == "same":
        out.append(f"steps: same (source, operation) sequence, matched by index ({steps.n_a:,})")
    else:
        out.append(
            f"steps: aligned (LCS): {steps.matched.size:,} matched, {steps.unmatched_a.size:,} only in A, {steps.unmatched_b.size:,} only in B"
        )
    out.append(
        f"values: {int(match.matched.sum()):,} matched, {match.only_a.size:,} only in A, {match.only_b.size:,} only in B; "
        f"{len(comparison.changed_values):,} listed in compare_values.csv"
    )
    return "\n".join(out)


def summary_table_text(comparison: Comparison) -> str:
    pa, pb, d = comparison.a.plan.peaks, comparison.b.plan.peaks, comparison.delta
    rows = [f"{'':<17}{'A':<32}{'B':<32}Δ (B − A)"]
    for label, x, y, sx, sy, delta in (
        ("standard peak", pa.standard, pb.standard, pa.standard_step, pb.standard_step, d.standard),
        ("interleaved peak", pa.interleaved, pb.interleaved, pa.interleaved_step, pb.interleaved_step, d.interleaved),
        ("total peak", pa.total, pb.total, pa.total_step, pb.total_step, d.total),
    ):
        rows.append(f"{label:<17}{fmt_bytes(x) + f' @{sx}':<32}{fmt_bytes(y) + f' @{sy}':<32}{fmt_signed_bytes(delta)}")
    rows.append(
        f"{'effective peak':<17}{fmt_bytes(pa.effective_peak_bytes):<32}{fmt_bytes(pb.effective_peak_bytes):<32}"
        f"{fmt_signed_bytes(d.effective_peak_bytes)}"
    )
    rows.append(
        f"{'fits budget':<17}{('yes' if pa.fits_budget else 'NO'):<32}{('yes' if pb.fits_budget else 'NO'):<32}"
    )
    return "\n".join(rows)


def _series(comparison: Comparison, region: str) -> tuple[np.ndarray, np.ndarray]:
    """A's and B's usage of one region on the aligned axis as drawn (standard and total with the
    exchange rows, as their peaks count them), NaN where the side has no step."""
    o = comparison.overlay
    pick = {
        "standard": (o.a_standard, o.b_standard),
        "interleaved": (o.a_interleaved, o.b_interleaved),
        "total": (o.a_total, o.b_total),
    }
    a, b = (x.astype(np.float64) for x in pick[region])
    if region != "interleaved":
        a, b = a + o.a_exchange_rows, b + o.b_exchange_rows
    a[o.a_step < 0] = np.nan
    b[o.b_step < 0] = np.nan
    return a, b


def changed_positions(comparison: Comparison) -> np.ndarray:
    """Aligned positions where any region's usage differs between A and B, or one side has no step."""
    changed = np.zeros(comparison.overlay.a_step.size, dtype=bool)
    for region in ("standard", "interleaved", "total"):
        a, b = _series(comparison, region)
        changed |= np.isnan(a) != np.isnan(b)
        changed |= ~np.isnan(a) & ~np.isnan(b) & (a != b)
    return np.flatnonzero(changed)


def zoom_window(comparison: Comparison) -> tuple[int, int] | None:
    """The aligned positions ``[start, stop)`` a zoom shows: the changed steps with a margin, when
    they span less than ``ZOOM_SHARE`` of the axis (a change at steps 45–47 of 23,200 is a hairline
    on the full axis); None when the change is wide enough to see, or there is none."""
    changed, n = changed_positions(comparison), comparison.overlay.a_step.size
    if changed.size == 0:
        return None
    first, last = int(changed[0]), int(changed[-1])
    pad = max((last - first) // 4, (ZOOM_MIN_STEPS - (last - first + 1)) // 2, 3)
    start, stop = max(first - pad, 0), min(last + pad + 1, n)
    return (start, stop) if stop - start < ZOOM_SHARE * n else None


def _draw_overlay(ax, comparison: Comparison, region: str, window: tuple[int, int] | None = None) -> None:
    """One region's A and B on the aligned axis; ``window``: only those positions (the zoom)."""
    a, b = _series(comparison, region)
    x = np.arange(a.size)
    if window is not None:
        a, b, x = a[window[0] : window[1]], b[window[0] : window[1]], x[window[0] : window[1]]
    both = ~np.isnan(a) & ~np.isnan(b)
    ax.fill_between(x, a, b, where=both & (b > a), color=MORE, alpha=0.35, step="mid", linewidth=0, label="B above A")
    ax.fill_between(x, a, b, where=both & (b < a), color=LESS, alpha=0.35, step="mid", linewidth=0, label="B below A")
    ax.plot(x, a, drawstyle="steps-mid", color=SIDE_COLOURS["a"], linewidth=1.1, label="A")
    ax.plot(x, b, drawstyle="steps-mid", color=SIDE_COLOURS["b"], linewidth=1.1, label="B", alpha=0.9)
    attribution = comparison.attribution(region)
    positions_a = np.flatnonzero(comparison.overlay.a_step == attribution.a_step)
    positions_b = np.flatnonzero(comparison.overlay.b_step == attribution.b_step)
    for positions, peak, key in ((positions_a, attribution.a_peak, "a"), (positions_b, attribution.b_peak, "b")):
        if positions.size and (window is None or window[0] <= positions[0] < window[1]):
            ax.plot([positions[0]], [peak], marker="v", color=SIDE_COLOURS[key], markersize=8, linestyle="none")
    unmatched = ~both & ~(np.isnan(a) & np.isnan(b))
    if unmatched.any():
        ax.fill_between(
            x,
            0,
            1,
            where=unmatched,
            transform=ax.get_xaxis_transform(),
            color="0.5",
            alpha=0.12,
            step="mid",
            linewidth=0,
            label="steps on one side only",
        )
    if window is not None:
        ax.set_xlim(window[0] - 0.5, window[1] - 0.5)
        finite = np.concatenate((a[~np.isnan(a)], b[~np.isnan(b)]))
        ax.set_ylim(0, max(float(finite.max()) if finite.size else 0.0, 1.0) * 1.1)
        ax.set_title(f"zoom: steps {window[0]:,}–{window[1] - 1:,} (shaded on the left)", loc="left", fontsize=9)
        ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
        ax.grid(True, alpha=0.25)
        ax.tick_params(labelsize=7)
        return
    with_exchange = "" if region == "interleaved" else " + exchange rows"
    ax.set_title(
        f"{region}{with_exchange}: A {attribution.a_peak:,} B @ {attribution.a_step}, B {attribution.b_peak:,} B @ "
        f"{attribution.b_step} ({fmt_signed_bytes(attribution.delta)})",
        loc="left",
        fontsize=10,
    )
    ax.set_xlim(-0.5, max(a.size - 0.5, 0.5))
    finite = np.concatenate((a[~np.isnan(a)], b[~np.isnan(b)]))
    ax.set_ylim(0, max(float(finite.max()) if finite.size else 0.0, 1.0) * 1.1)
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.grid(True, alpha=0.25)
    ax.tick_params(labelsize=7)
    ax.legend(loc="lower right", fontsize=7, ncol=5, framealpha=0.9)


def waterfall_steps(comparison: Comparison, figure: str, parts: int = WATERFALL_PARTS) -> list[tuple[str, int]]:
    """The waterfall's bars after A's peak: the largest ``parts`` values, the rest as one bar,
    scratch and exchange rows (when not 0). Their sum is B's peak − A's peak."""
    a = comparison.attribution(figure)
    bars = [
        (f"{label_text(p.name, 34)} [{'—' if p.a_id is None else p.a_id}→{'—' if p.b_id is None else p.b_id}]", p.bytes)
        for p in a.parts[:parts]
    ]
    rest = a.parts[parts:]
    if rest:
        bars.append((f"{len(rest):,} more values", sum(p.bytes for p in rest)))
    if a.scratch_delta:
        bars.append(("scratch", a.scratch_delta))
    if a.exchange_rows_delta:
        bars.append(("exchange rows", a.exchange_rows_delta))
    return bars


def _draw_waterfall(ax, comparison: Comparison, figure: str) -> None:
    a = comparison.attribution(figure)
    bars = waterfall_steps(comparison, figure)
    labels = [f"A peak @{a.a_step}"] + [label for label, _ in bars] + [f"B peak @{a.b_step}"]
    running = [a.a_peak]
    for _, size in bars:
        running.append(running[-1] + size)
    high = max(running + [a.b_peak])
    # From 0: an axis starting near the peaks makes a +114,688 B change on a 2,975,000 B peak look
    # like a doubling. The bars' labels give each part exactly, however thin the bar.
    left = 0
    y = np.arange(len(labels))
    ax.barh(y[0], a.a_peak - left, left=left, color=SIDE_COLOURS["a"])
    for k, (_, size) in enumerate(bars, 1):
        start = running[k - 1]
        ax.barh(y[k], size, left=start, color=MORE if size > 0 else LESS)
        ax.text(max(start, start + size), y[k], f" {size:+,}", va="center", fontsize=6.5)
    ax.barh(y[-1], a.b_peak - left, left=left, color=SIDE_COLOURS["b"])
    ax.text(a.a_peak, y[0], f" {a.a_peak:,}", va="center", fontsize=6.5)
    ax.text(a.b_peak, y[-1], f" {a.b_peak:,}", va="center", fontsize=6.5)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7, **PLAIN)
    ax.invert_yaxis()
    ax.set_xlim(left, max(high, 1) * 1.35)  # room for the labels at the bars' ends
    ax.xaxis.set_major_locator(MaxNLocator(3))  # seven-digit tick labels side by side: three fit
    ax.xaxis.set_major_formatter(lambda v, _: f"{int(v):,}")
    ax.tick_params(axis="x", labelsize=6.5)
    ax.set_title(f"{figure} peak: {fmt_signed_bytes(a.delta)}", loc="left", fontsize=10)
    ax.grid(True, axis="x", alpha=0.25)


def compare_provenance(comparison: Comparison, file_a: str, file_b: str) -> Provenance:
    return provenance_of((file_a, comparison.a.profile.content_sha256), (file_b, comparison.b.profile.content_sha256))


def compare_figure(comparison: Comparison, file_a: str, file_b: str, made: Provenance | None = None) -> Figure:
    """The header, the three regions' overlays (each with a zoom beside it when the change is too
    narrow to see on the whole axis: ``zoom_window``), and the three waterfalls."""
    figure = Figure(figsize=(18, 17), dpi=100)
    FigureCanvasAgg(figure)
    figure.text(0.01, 0.992, "tilescope compare: A → B", fontsize=13, weight="bold", va="top")
    draw_provenance(figure, made or compare_provenance(comparison, file_a, file_b))
    figure.text(
        0.01, 0.972, _side_lines(comparison, file_a, file_b), fontsize=8.5, family="monospace", va="top", **PLAIN
    )
    figure.text(0.52, 0.972, summary_table_text(comparison), fontsize=8.5, family="monospace", va="top", **PLAIN)
    window = zoom_window(comparison)
    for k, region in enumerate(("standard", "interleaved", "total")):
        ax = figure.add_axes(
            (0.06, 0.745 - k * 0.18, 0.92 if window is None else 0.62, 0.145), label=f"overlay {region}"
        )
        _draw_overlay(ax, comparison, region)
        if window is not None:
            ax.axvspan(window[0] - 0.5, window[1] - 0.5, color="0.2", alpha=0.12, linewidth=0)
            zoom = figure.add_axes((0.73, 0.745 - k * 0.18, 0.25, 0.145), label=f"zoom {region}")
            _draw_overlay(zoom, comparison, region, window)
        if k == 2:
            ax.set_xlabel("aligned step" if comparison.steps.mode != "same" else "step")
    for k, name in enumerate(FIGURES):
        _draw_waterfall(
            figure.add_axes((0.15 + k * 0.335, 0.035, 0.16, 0.27), label=f"waterfall {name}"), comparison, name
        )
    figure.text(
        0.01,
        0.335,
        "Attribution: A's peak → B's peak, value by value (bytes live at B's peak step − at A's), then scratch and exchange rows",
        fontsize=10,
        weight="bold",
        va="bottom",
    )
    return figure


def compare_png(comparison: Comparison, file_a: str, file_b: str) -> bytes:
    out = io.BytesIO()
    made = compare_provenance(comparison, file_a, file_b)
    with _DRAW_LOCK:
        compare_figure(comparison, file_a, file_b, made).savefig(
            out, format="png", dpi=100, metadata=made.png_metadata()
        )
    return out.getvalue()
