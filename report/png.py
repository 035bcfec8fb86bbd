"""The report's PNG: the timeline, the breakdown of the selected step, the lifetimes of the largest
values, the summary figures (before → after when edited), the applied edits and the placement's
address views (``report.placement_png``).

Drawing uses matplotlib's ``Figure`` with the Agg canvas directly (no pyplot, hence no
process-wide figure state; safe to call from any session). Text from the file is drawn with
mathtext off (``parse_math=False``), so a ``$`` in a name is a dollar sign, not TeX.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tilescope.derived.fit_verdict import FitVerdict, fit_verdict
from tilescope.derived.peak_labels import PeakMark, place_labels, y_end_for
from tilescope.derived.plan_data import PlanData
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes
from tilescope.planner.model import Peaks, Plan, ProfileArrays

from .placement_png import add_placement_panels
from .provenance import Provenance, provenance_of
from .tables import ReportInput, breakdown_name, breakdown_rows, report_input

BREAKDOWN_BARS = 20  # values drawn in the breakdown chart (the CSV has them all)
GANTT_ROWS = 20  # largest values drawn in the lifetimes chart
LABEL_CHARS = 42  # value names are cut to this many characters on the PNG
REGION_COLOURS = ("#1f77b4", "#ff7f0e")
PLAIN: dict[str, Any] = {"parse_math": False, "usetex": False}  # for every text drawn from the file
# matplotlib shares its FreeType font objects process-wide and they are not thread-safe; the app
# draws reports in worker threads, so drawing is serialised. A lock, not state: it holds no data.
_DRAW_LOCK = threading.Lock()


def label_text(name: str, limit: int = LABEL_CHARS) -> str:
    """One line of at most ``limit`` characters (control characters and runs of spaces → one space)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in name).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _peak_lines(p: Peaks) -> list[tuple[str, str]]:
    return [
        ("standard peak", f"{fmt_bytes(p.standard)} at step {p.standard_step}"),
        ("interleaved peak", f"{fmt_bytes(p.interleaved)} at step {p.interleaved_step}"),
        ("total peak", f"{fmt_bytes(p.total)} at step {p.total_step}"),
        ("effective peak", fmt_bytes(p.effective_peak_bytes)),
    ]


def report_verdict(data: PlanData) -> FitVerdict:
    """The plan's one fit verdict (``derived.fit_verdict``): the estimate and the placement."""
    try:
        return fit_verdict(data.plan.peaks, data.arrays, data.placement)
    except TilescopeError as exc:
        return fit_verdict(data.plan.peaks, data.arrays, None, refused=str(exc))


def _continued(text: str) -> list[str]:
    """``text`` under the summary's labels, a line per "; "-separated part (later parts indented)."""
    first, *rest = text.split("; ")
    return [f"{'':<17}{first}" + (";" if rest else "")] + [
        f"{'':<19}{part}" + (";" if k < len(rest) - 1 else "") for k, part in enumerate(rest)
    ]


def summary_text(data: ReportInput) -> str:
    """The summary figures; ``before → after`` per line when edited."""
    arrays = data.arrays
    before = _peak_lines(data.base_plan.peaks)
    lines = []
    if data.edited:
        after = _peak_lines(data.plan.peaks)
        for (label, old), (_, new) in zip(before, after):
            lines.append(f"{label:<17}{old}" + ("" if old == new else f"  →  {new}"))
    else:
        lines += [f"{label:<17}{text}" for label, text in before]
    verdict, was = report_verdict(data.data), report_verdict(data.data.base).word if data.edited else None
    lines += [
        f"{'fits budget':<17}{verdict.word}" + ("" if was in (None, verdict.word) else f"  (was {was})"),
        f"{'':<17}{verdict.reason}",
        # one region per line ("; "): whole, these lines ran under the edits column at 0.64
        *_continued(f"estimate (the compiler's fits_budget): {verdict.estimate_text}"),
        *_continued(f"placed: {verdict.placed_text}"),
        f"{'budget':<17}{fmt_bytes(arrays.budget_bytes)}; interleaved {fmt_bytes(arrays.interleaved_budget_bytes)}",
        f"{'reserved':<17}exchange rows {fmt_bytes(arrays.exchange_rows)} (standard peaks include them); "
        f"support {fmt_bytes(arrays.support_reserve_bytes)} (the effective peak includes it)",
    ]
    return "\n".join(lines)


def edits_text(data: ReportInput, limit: int = 10) -> str:
    if not data.edited:
        return "No edits: the plan of the file's own tilings."
    lines = [f"Applied edits ({len(data.edits)}):"]
    for applied in data.applied_edits[:limit]:
        others = [i for i in applied.applied_to if i != applied.edit.value]
        also = f" (also values {', '.join(map(str, others))})" if others else ""
        lines.append(f"  {applied.edit.describe()}{also}")
    if len(data.applied_edits) > limit:
        lines.append(f"  … and {len(data.applied_edits) - limit} more (edits.csv)")
    return "\n".join(lines)


def _value_label(data: ReportInput, row: int) -> str:
    name = data.profile.values.column("name")[row].as_py()
    return f"{label_text(name)} [{int(data.arrays.value_ids[row])}]"


DENSE_STEPS = 2000  # above this many steps the timeline is drawn as per-column envelopes, with a zoom on the total peak
ENVELOPE_COLUMNS = 1200  # columns of the envelope (about one per pixel of the 16-inch figure)


def _envelope(values: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre step, min, max) of ``values`` per column: every extreme kept, a readable band drawn."""
    n = values.size
    starts = np.unique(np.linspace(0, n, min(columns, n) + 1).astype(np.int64)[:-1])
    ends = np.append(starts[1:], n)
    return (starts + ends - 1) / 2, np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)


def _usage_series(arrays: ProfileArrays, plan: Plan) -> tuple:
    standard = plan.usage_standard + arrays.exchange_rows
    total = plan.usage_standard + plan.usage_interleaved + arrays.exchange_rows
    return (
        ("standard + exchange rows", standard, REGION_COLOURS[0]),
        ("interleaved", plan.usage_interleaved, REGION_COLOURS[1]),
        ("total (both regions + exchange rows)", total, "black"),
    )


def _draw_usage(ax, arrays: ProfileArrays, plan: Plan, *, ghost: bool, window: tuple[int, int] | None = None) -> None:
    """Standard (with the exchange rows it always carries), interleaved and total usage per step;
    a long profile (more than ``DENSE_STEPS`` in view) as per-column min–max bands."""
    start, stop = window if window is not None else (0, arrays.n_steps)
    steps = np.arange(start, stop)
    dense = stop - start > DENSE_STEPS
    for label, values, colour in _usage_series(arrays, plan):
        values = values[start:stop]
        shown = "before edits" if ghost and label.startswith("total") else (None if ghost else label)
        colour = "0.6" if ghost else colour
        if dense:
            x, low, high = _envelope(values, ENVELOPE_COLUMNS)
            ax.fill_between(x, low, high, color=colour, alpha=0.25 if ghost else 0.45, linewidth=0, step="mid")
            ax.plot(
                x,
                high,
                drawstyle="steps-mid",
                color=colour,
                linewidth=0.7,
                linestyle="--" if ghost else "-",
                label=shown,
            )
        else:
            ax.plot(
                steps,
                values,
                drawstyle="steps-mid",
                color=colour,
                linewidth=1 if ghost else 1.4,
                linestyle="--" if ghost else "-",
                alpha=0.8 if ghost else 1.0,
                label=shown,
            )


def _draw_budgets(ax, arrays: ProfileArrays, legend: bool = True) -> None:
    ax.axhline(
        arrays.exchange_rows,
        color=REGION_COLOURS[0],
        linestyle=":",
        linewidth=1,
        label="exchange rows (whole program)" if legend else None,
    )
    ax.axhline(
        arrays.interleaved_budget_bytes,
        color=REGION_COLOURS[1],
        linestyle="--",
        linewidth=1,
        label="interleaved budget" if legend else None,
    )
    ax.axhline(
        arrays.budget_bytes,
        color="red",
        linestyle="--",
        linewidth=1,
        label="budget (for the effective peak)" if legend else None,
    )


def _draw_peak_marks(ax, data: ReportInput, y_top: float) -> float:
    """Marks at the peaks, their labels in lanes of their own at the top (``derived.peak_labels``),
    joined by leader lines: no two labels overlap, however close the peaks. Returns the y limit."""
    p, n = data.plan.peaks, data.arrays.n_steps
    colours = {
        "standard peak": REGION_COLOURS[0],
        "interleaved peak": REGION_COLOURS[1],
        "total peak": "black",
        "effective peak": "red",
    }
    marks = [
        PeakMark("standard peak", p.standard_step, p.standard, f"standard peak {p.standard:,} B @ {p.standard_step}"),
        PeakMark(
            "interleaved peak",
            p.interleaved_step,
            p.interleaved,
            f"interleaved peak {p.interleaved:,} B @ {p.interleaved_step}",
        ),
        PeakMark("total peak", p.total_step, p.total, f"total peak {p.total:,} B @ {p.total_step}"),
        PeakMark(
            "effective peak",
            p.total_step,
            p.effective_peak_bytes,
            f"effective peak {p.effective_peak_bytes:,} B (no exchange rows, + support reserve)",
        ),
    ]
    y_end = y_end_for(y_top, len(marks))
    for placed in place_labels(marks, n, y_end):
        mark, colour = placed.mark, colours[placed.mark.name]
        ax.plot(
            [mark.step],
            [mark.y],
            marker="x" if mark.name == "effective peak" else "v",
            color=colour,
            markersize=8,
            linestyle="none",
        )
        ax.annotate(
            mark.text,
            (mark.step, mark.y),
            xytext=(mark.step, placed.y),
            textcoords="data",
            fontsize=7.5,
            color=colour,
            ha=placed.align,
            va="bottom",
            # the leader line leaves the label's corner on the peak's step: it runs straight down
            arrowprops={
                "arrowstyle": "-",
                "linestyle": ":",
                "color": colour,
                "linewidth": 0.8,
                "shrinkA": 0,
                "relpos": (0.0 if placed.align == "left" else 1.0, 0.0),
            },
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
            **PLAIN,
        )
    return y_end


def _draw_timeline(ax, data: ReportInput) -> None:
    arrays, plan, p = data.arrays, data.plan, data.plan.peaks
    if data.edited:
        _draw_usage(ax, arrays, data.base_plan, ghost=True)
    _draw_usage(ax, arrays, plan, ghost=False)
    _draw_budgets(ax, arrays)
    y_end = _draw_peak_marks(ax, data, max(arrays.budget_bytes, p.total, p.effective_peak_bytes))
    ax.axvline(data.step, color="0.3", linewidth=0.8, alpha=0.6)
    ax.set_xlim(-0.5, max(arrays.n_steps - 0.5, 0.5))
    ax.set_ylim(0, y_end)
    dense = arrays.n_steps > DENSE_STEPS
    ax.set_title(
        "Timeline: bytes per tile at each step" + (" (min–max per column; every peak kept)" if dense else ""),
        loc="left",
        fontsize=11,
    )
    ax.set_xlabel("step")
    ax.set_ylabel("bytes per tile")
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.xaxis.set_major_formatter(lambda x, _: f"{int(x):,}")
    ax.grid(True, alpha=0.25)
    # under the plot (inside it the legend would cover data or a peak label), in the band the
    # figure keeps free above the lower panels' titles: at most 4 entries a row, so 2 rows
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.16), fontsize=7, ncol=4, frameon=False, borderaxespad=0)


def peak_window(n_steps: int, step: int) -> tuple[int, int]:
    """The steps a long profile's peak zoom shows: about 120 around ``step``."""
    half = 60
    start = max(min(step - half, n_steps - 2 * half), 0)
    return start, min(start + 2 * half + 1, n_steps)


def _draw_peak_zoom(ax, data: ReportInput) -> None:
    """A long profile's total peak up close, every step drawn."""
    arrays, plan, p = data.arrays, data.plan, data.plan.peaks
    window = peak_window(arrays.n_steps, p.total_step)
    if data.edited:
        _draw_usage(ax, arrays, data.base_plan, ghost=True, window=window)
    _draw_usage(ax, arrays, plan, ghost=False, window=window)
    _draw_budgets(ax, arrays, legend=False)
    ax.plot([p.total_step], [p.total], marker="v", color="black", markersize=8, linestyle="none")
    ax.axvline(p.total_step, color="black", linewidth=0.6, alpha=0.5)
    ax.set_xlim(window[0] - 0.5, window[1] - 0.5)
    ax.set_ylim(0, max(arrays.budget_bytes, p.total, p.effective_peak_bytes) * 1.08)
    ax.set_title(f"Around the total peak: steps {window[0]:,}–{window[1] - 1:,}", loc="left", fontsize=10)
    ax.set_xlabel("step")
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.xaxis.set_major_formatter(lambda x, _: f"{int(x):,}")
    ax.grid(True, alpha=0.25)
    ax.tick_params(labelsize=7)


def _draw_breakdown(ax, data: ReportInput) -> None:
    plan, arrays, step = data.plan, data.arrays, data.step
    rows = breakdown_rows(data)
    shown = rows[:BREAKDOWN_BARS]
    cost = plan.figures.bytes[shown]
    y = np.arange(shown.size)
    ax.barh(y, cost, color=[REGION_COLOURS[int(arrays.region[r])] for r in shown])
    ax.set_yticks(y)
    ax.set_yticklabels([_value_label(data, int(r)) for r in shown], fontsize=7, **PLAIN)
    ax.invert_yaxis()
    for yi, c in zip(y, cost):
        ax.text(c, yi, f" {int(c):,}", va="center", fontsize=6.5)
    values_total = int(plan.figures.bytes[rows].sum())
    scratch = int(arrays.scratch_standard[step] + arrays.scratch_interleaved[step]) if arrays.n_steps else 0
    which = " (total peak)" if step == plan.peaks.total_step else " (selected)"
    ax.set_title(
        f"Live at step {step}{which}: {rows.size} values, {fmt_bytes(values_total)} + scratch {scratch:,} B",
        loc="left",
        fontsize=10,
    )
    if rows.size > shown.size:
        rest = int(plan.figures.bytes[rows[shown.size :]].sum())
        ax.set_xlabel(
            f"bytes per tile; {rows.size - shown.size} smaller values ({rest:,} B) not drawn: see {breakdown_name(step)}",
            fontsize=8,
        )
    else:
        ax.set_xlabel("bytes per tile")
    ax.set_xlim(0, (cost.max() if cost.size else 1) * 1.25)
    ax.xaxis.set_major_formatter(lambda x, _: f"{int(x):,}")
    ax.tick_params(axis="x", labelsize=7)


def _draw_lifetimes(ax, data: ReportInput) -> None:
    arrays, cost = data.arrays, data.plan.figures.bytes
    has_interval = np.zeros(arrays.n_values, dtype=bool)
    has_interval[arrays.interval_row] = True
    candidates = np.flatnonzero(has_interval)
    by_size = candidates[np.lexsort((candidates, -cost[candidates]))]
    edited = data.edited_tilings
    # The largest values, plus the edited ones (however small the edit made them), largest first.
    chosen = set(by_size[:GANTT_ROWS].tolist()) | {r for r in by_size[GANTT_ROWS:].tolist() if r in edited}
    largest = np.array([r for r in by_size.tolist() if r in chosen], dtype=np.int64)
    for y, row in enumerate(largest):
        spans = [
            (int(arrays.interval_first[k]) - 0.5, int(arrays.interval_last[k] - arrays.interval_first[k]) + 1)
            for k in arrays.intervals_of(row)
        ]
        colour = REGION_COLOURS[int(arrays.region[row])]
        # The edge keeps a short lifetime visible when thousands of steps share the axis.
        ax.broken_barh(
            spans, (y - 0.4, 0.8), facecolors=colour, edgecolors="red" if int(row) in edited else colour, linewidth=1.5
        )
    ax.set_yticks(np.arange(largest.size))
    ax.set_yticklabels([f"{_value_label(data, int(r))} {int(cost[r]):,} B" for r in largest], fontsize=7, **PLAIN)
    ax.invert_yaxis()
    ax.axvline(data.step, color="0.3", linewidth=0.8, alpha=0.6)
    ax.set_xlim(-0.5, max(arrays.n_steps - 0.5, 0.5))
    title = f"Lifetimes: the {min(GANTT_ROWS, largest.size)} largest values" + (
        " + the edited (red outline)" if edited else ""
    )
    ax.set_title(title, loc="left", fontsize=10)
    ax.set_xlabel("step")
    ax.grid(True, axis="x", alpha=0.25)
    ax.tick_params(axis="x", labelsize=7)


def report_provenance(data: ReportInput) -> Provenance:
    return provenance_of((data.profile.source, data.profile.content_sha256))


def draw_provenance(figure: Figure, made: Provenance) -> None:
    """The provenance line, top right of the header (``report.provenance``)."""
    figure.text(0.99, 0.995, made.line(), fontsize=7.5, color="0.35", ha="right", va="top", **PLAIN)


def report_figure(data: ReportInput, made: Provenance | None = None) -> Figure:
    """Header text on top, the timeline across, breakdown and lifetimes side by side below
    (explicit axes rectangles: the value-name labels need a wide left margin the timeline does not;
    the timeline's seven-digit tick labels and its y label need 0.08 of the width)."""
    # 14 in tall: the header's summary holds the fit verdict's four lines above the timeline
    figure = Figure(figsize=(16, 14), dpi=100)
    FigureCanvasAgg(figure)
    source = label_text(Path(data.profile.source).name, 60)
    scope = label_text(data.profile.header.get("scope") or "", 40)
    figure.text(
        0.01, 0.988, f"tilescope report: {source}  (scope {scope})", fontsize=13, weight="bold", va="top", **PLAIN
    )
    draw_provenance(figure, made or report_provenance(data))
    figure.text(0.01, 0.962, summary_text(data), fontsize=8.5, family="monospace", va="top", **PLAIN)
    figure.text(0.64, 0.962, edits_text(data), fontsize=8.5, family="monospace", va="top", **PLAIN)
    if data.arrays.n_steps > DENSE_STEPS:  # a long profile: the overview, and its total peak up close beside it
        _draw_timeline(figure.add_axes((0.08, 0.492, 0.60, 0.288)), data)
        _draw_peak_zoom(figure.add_axes((0.74, 0.492, 0.24, 0.288)), data)
    else:
        _draw_timeline(figure.add_axes((0.08, 0.492, 0.90, 0.288)), data)
    # the lower panels' titles stay below the timeline's two-row legend
    _draw_breakdown(figure.add_axes((0.21, 0.046, 0.26, 0.344)), data)
    _draw_lifetimes(figure.add_axes((0.71, 0.046, 0.27, 0.344)), data)
    add_placement_panels(figure, data)
    return figure


def png_of(data: ReportInput) -> bytes:
    out = io.BytesIO()
    made = report_provenance(data)
    with _DRAW_LOCK:
        report_figure(data, made).savefig(out, format="png", dpi=100, metadata=made.png_metadata())
    return out.getvalue()


def report_png(data: PlanData, selected_step: int | None = None) -> bytes:
    return png_of(report_input(data, selected_step))
