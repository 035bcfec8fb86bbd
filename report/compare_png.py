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

from tilescope.derived.compare import FIGURES, Comparison
from tilescope.models.format import fmt_bytes, fmt_signed_bytes

from .png import _DRAW_LOCK, PLAIN, label_text

WATERFALL_PARTS = 8  # largest parts drawn per waterfall (compare_attribution.csv has them all)
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
        out.append(f"steps: aligned (LCS): {steps.matched.size:,} matched, {steps.unmatched_a.size:,} only in A, {steps.unmatched_b.size:,} only in B")
    out.append(f"values: {int(match.matched.sum()):,} matched, {match.only_a.size:,} only in A, {match.only_b.size:,} only in B; "
               f"{len(comparison.changed_values):,} listed in compare_values.csv")
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
    rows.append(f"{'effective peak':<17}{fmt_bytes(pa.effective_peak_bytes):<32}{fmt_bytes(pb.effective_peak_bytes):<32}"
                f"{fmt_signed_bytes(d.effective_peak_bytes)}")
    rows.append(f"{'fits budget':<17}{('yes' if pa.fits_budget else 'NO'):<32}{('yes' if pb.fits_budget else 'NO'):<32}")
    return "\n".join(rows)


def _series(comparison: Comparison, region: str) -> tuple[np.ndarray, np.ndarray]:
    """A's and B's usage of one region on the aligned axis as drawn (standard and total with the
    exchange rows, as their peaks count them), NaN where the side has no step."""
    o = comparison.overlay
    pick = {"standard": (o.a_standard, o.b_standard), "interleaved": (o.a_interleaved, o.b_interleaved), "total": (o.a_total, o.b_total)}
    a, b = (x.astype(np.float64) for x in pick[region])
    if region != "interleaved":
        a, b = a + o.a_exchange_rows, b + o.b_exchange_rows
    a[o.a_step < 0] = np.nan
    b[o.b_step < 0] = np.nan
    return a, b


def _draw_overlay(ax, comparison: Comparison, region: str) -> None:
    a, b = _series(comparison, region)
    x = np.arange(a.size)
    both = ~np.isnan(a) & ~np.isnan(b)
    ax.fill_between(x, a, b, where=both & (b > a), color=MORE, alpha=0.35, step="mid", linewidth=0, label="B above A")
    ax.fill_between(x, a, b, where=both & (b < a), color=LESS, alpha=0.35, step="mid", linewidth=0, label="B below A")
    ax.plot(x, a, drawstyle="steps-mid", color=SIDE_COLOURS["a"], linewidth=1.1, label="A")
    ax.plot(x, b, drawstyle="steps-mid", color=SIDE_COLOURS["b"], linewidth=1.1, label="B", alpha=0.9)
    attribution = comparison.attribution(region)
    positions_a = np.flatnonzero(comparison.overlay.a_step == attribution.a_step)
    positions_b = np.flatnonzero(comparison.overlay.b_step == attribution.b_step)
    for positions, peak, key in ((positions_a, attribution.a_peak, "a"), (positions_b, attribution.b_peak, "b")):
        if positions.size:
            ax.plot([positions[0]], [peak], marker="v", color=SIDE_COLOURS[key], markersize=8, linestyle="none")
    unmatched = ~both & ~(np.isnan(a) & np.isnan(b))
    if unmatched.any():
        ax.fill_between(x, 0, 1, where=unmatched, transform=ax.get_xaxis_transform(), color="0.5", alpha=0.12, step="mid",
                        linewidth=0, label="steps on one side only")
    with_exchange = "" if region == "interleaved" else " + exchange rows"
    ax.set_title(f"{region}{with_exchange}: A {attribution.a_peak:,} B @ {attribution.a_step}, B {attribution.b_peak:,} B @ "
                 f"{attribution.b_step} ({fmt_signed_bytes(attribution.delta)})", loc="left", fontsize=10)
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
    bars = [(f"{label_text(p.name, 34)} [{'—' if p.a_id is None else p.a_id}→{'—' if p.b_id is None else p.b_id}]", p.bytes)
            for p in a.parts[:parts]]
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
    low, high = min(running + [a.b_peak]), max(running + [a.b_peak])
    pad = max((high - low) * 0.15, high * 0.01, 1)
    left = max(low - pad, 0)
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
    ax.set_xlim(left, high + pad * 1.6)
    ax.xaxis.set_major_formatter(lambda v, _: f"{int(v):,}")
    ax.tick_params(axis="x", labelsize=6.5, rotation=20)
    ax.set_title(f"{figure} peak: {fmt_signed_bytes(a.delta)}", loc="left", fontsize=10)
    ax.grid(True, axis="x", alpha=0.25)


def compare_figure(comparison: Comparison, file_a: str, file_b: str) -> Figure:
    figure = Figure(figsize=(18, 17), dpi=100)
    FigureCanvasAgg(figure)
    figure.text(0.01, 0.992, "tilescope compare: A → B", fontsize=13, weight="bold", va="top")
    figure.text(0.01, 0.972, _side_lines(comparison, file_a, file_b), fontsize=8.5, family="monospace", va="top", **PLAIN)
    figure.text(0.52, 0.972, summary_table_text(comparison), fontsize=8.5, family="monospace", va="top", **PLAIN)
    for k, region in enumerate(("standard", "interleaved", "total")):
        ax = figure.add_axes((0.05, 0.745 - k * 0.18, 0.93, 0.145))
        _draw_overlay(ax, comparison, region)
        if k == 2:
            ax.set_xlabel("aligned step" if comparison.steps.mode != "same" else "step")
    for k, name in enumerate(FIGURES):
        _draw_waterfall(figure.add_axes((0.15 + k * 0.335, 0.035, 0.16, 0.27)), comparison, name)
    figure.text(0.01, 0.335, "Attribution: A's peak → B's peak, value by value (bytes live at B's peak step − at A's), then scratch and exchange rows",
                fontsize=10, weight="bold", va="bottom")
    return figure


def compare_png(comparison: Comparison, file_a: str, file_b: str) -> bytes:
    out = io.BytesIO()
    with _DRAW_LOCK:
        compare_figure(comparison, file_a, file_b).savefig(out, format="png", dpi=100)
    return out.getvalue()
