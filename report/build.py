"""The exported report of a memory plan: one PNG and CSV tables, built on the server or the CLI.

Pure: loaders/planner output in, bytes out. Drawing uses matplotlib's ``Figure`` with the Agg
canvas directly (no pyplot, hence no process-wide figure state; safe to call from any session).
No browser, no Panel, no Bokeh.

Files of a report (``Report.files``, in this order):

- ``report.png``: the timeline, the breakdown of the selected step, the lifetimes of the largest
  values, the summary figures (before → after when edited) and the applied edits;
- ``values.csv``: one row per value, figures recomputed from the (edited) tilings beside the
  file's recorded figures;
- ``steps.csv``: one row per step, usage recomputed from the file's tilings (and after the edits
  when edited) beside the recorded usage;
- ``step_<N>_breakdown.csv``: the values live at step N, largest first;
- ``edits.json`` (the edit-set file format of ``models.edits``) and ``edits.csv``.

Every CSV goes through ``tilescope.report.csv_safe`` (file text cannot become a spreadsheet formula).
Text from the file drawn on the PNG is drawn with mathtext off (``parse_math=False``), so a ``$``
in a name is a dollar sign, not TeX.
"""
from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tilescope.models.edits import edit_set_json, write_atomically
from tilescope.models.errors import InputError
from tilescope.models.format import fmt_bytes
from tilescope.models.profile import MemoryProfile
from tilescope.models.tiling import TensorTiling
from tilescope.planner.model import Peaks, Plan, ProfileArrays

from .csv_safe import to_csv_bytes

if TYPE_CHECKING:  # planner.edits is only needed for its type here
    from tilescope.planner.edits import WhatIf

PNG_NAME = "report.png"
VALUES_CSV = "values.csv"
STEPS_CSV = "steps.csv"
EDITS_JSON = "edits.json"
EDITS_CSV = "edits.csv"

BREAKDOWN_BARS = 20  # values drawn in the breakdown chart (the CSV has them all)
GANTT_ROWS = 20  # largest values drawn in the lifetimes chart
LABEL_CHARS = 42  # value names are cut to this many characters on the PNG
REGION_COLOURS = ("#1f77b4", "#ff7f0e")
PLAIN = {"parse_math": False, "usetex": False}  # for every text drawn from the file
# matplotlib shares its FreeType font objects process-wide and they are not thread-safe; the app
# draws reports in worker threads, so drawing is serialised. A lock, not state: it holds no data.
_DRAW_LOCK = threading.Lock()


def breakdown_name(step: int) -> str:
    return f"step_{step}_breakdown.csv"


# ----------------------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class ReportInput:
    """What a report is built from; ``plan`` is the current plan (the what-if plan when edited)."""

    profile: MemoryProfile
    arrays: ProfileArrays
    base_plan: Plan
    whatif: "WhatIf | None"
    step: int

    @property
    def edited(self) -> bool:
        return self.whatif is not None

    @property
    def plan(self) -> Plan:
        return self.whatif.plan if self.whatif is not None else self.base_plan

    @property
    def edits(self) -> tuple:
        return tuple(self.whatif.edits) if self.whatif is not None else ()


def report_input(profile: MemoryProfile, arrays: ProfileArrays, base_plan: Plan, whatif: "WhatIf | None" = None,
                 selected_step: int | None = None) -> ReportInput:
    """Validate the step (default: the current plan's total peak step)."""
    if arrays.n_steps == 0:
        raise InputError("$.timeline.steps", "at least one step to report on", "none", file=profile.source)
    plan = whatif.plan if whatif is not None else base_plan
    step = plan.peaks.total_step if selected_step is None else selected_step
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < arrays.n_steps:
        raise InputError("--step", f"a step index in 0..{arrays.n_steps - 1}", str(step))
    return ReportInput(profile, arrays, base_plan, whatif, int(step))


# ----------------------------------------------------------------------------- tables


def live_rows(arrays: ProfileArrays, step: int) -> np.ndarray:
    """Value rows live at ``step`` (each once), in value order."""
    hit = (arrays.interval_first <= step) & (arrays.interval_last >= step)
    return np.unique(arrays.interval_row[hit])


def live_ranges(arrays: ProfileArrays) -> tuple[np.ndarray, np.ndarray]:
    """First and last live step per value row (-1 for a value never live, e.g. an alias)."""
    first = np.full(arrays.n_values, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(arrays.n_values, -1, dtype=np.int64)
    np.minimum.at(first, arrays.interval_row, arrays.interval_first)
    np.maximum.at(last, arrays.interval_row, arrays.interval_last)
    first[last < 0] = -1
    return first, last


def _nullable(column: np.ndarray) -> pa.Array:
    return pa.array(column, pa.int64(), mask=column < 0)


def _partitions_text(tiling: TensorTiling) -> str:
    return " ".join(f"{axis.axis}={axis.partitions}" for axis in tiling.axes)


def tiling_columns(data: ReportInput) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """tile_count, replicas and the partitions text per value row, edited tilings applied.

    Built from the axes columns rather than one TensorTiling per row: profiles have 10⁵ values.
    """
    arrays, c = data.arrays, data.arrays.axes_columns
    tile_count, replicas = arrays.tile_counts.copy(), arrays.replicas.copy()
    kind, index = c["axis_kind"], c["axis_index"]
    axis_text = [
        f"{k}={p}" if i < 0 else f"{k}({i})={p}" for k, i, p in zip(kind.tolist(), index.tolist(), c["partitions"].tolist())
    ]
    starts, counts = arrays.axes_start.tolist(), arrays.axes_count.tolist()
    partitions = [" ".join(axis_text[s : s + n]) for s, n in zip(starts, counts)]
    for row, tiling in (data.whatif.tilings.items() if data.edited else ()):
        tile_count[row], replicas[row] = tiling.tile_count, tiling.replicas
        partitions[row] = _partitions_text(tiling)
    return tile_count, replicas, partitions


def values_table(data: ReportInput) -> pa.Table:
    v, arrays, figures = data.profile.values, data.arrays, data.plan.figures
    tile_count, replicas, partitions = tiling_columns(data)
    first, last = live_ranges(arrays)
    columns: dict[str, Any] = {
        "id": v.column("id"),
        "name": v.column("name"),
        "group": v.column("group"),
        "storage_group": v.column("storage_group"),
        "root": v.column("root"),
        "region": v.column("region"),
        "shape": v.column("shape"),
        "precision": v.column("precision"),
        "tile_count": pa.array(tile_count, pa.int64()),
        "replicas": pa.array(replicas, pa.int64()),
        "partitions": pa.array(partitions, pa.string()),
        "shard_bytes": pa.array(figures.shard, pa.int64()),
        "aligned_bytes": pa.array(figures.aligned, pa.int64()),
        "bytes": pa.array(figures.bytes, pa.int64()),
    }
    if data.edited:
        columns["bytes_before_edits"] = pa.array(data.base_plan.figures.bytes, pa.int64())
        columns["edited"] = pa.array([row in data.whatif.tilings for row in range(arrays.n_values)], pa.bool_())
    columns.update(
        {
            "recorded_shard_bytes": v.column("shard_bytes"),
            "recorded_aligned_bytes": v.column("aligned_bytes"),
            "recorded_bytes": v.column("bytes"),
            "copies": v.column("copies"),
            "granule": pa.array(arrays.granule, pa.int64()),
            "first_live_step": _nullable(first),
            "last_live_step": _nullable(last),
            "layout_error": v.column("layout_error"),
        }
    )
    return pa.table(columns)


def steps_table(data: ReportInput) -> pa.Table:
    s, base = data.profile.steps, data.base_plan
    columns: dict[str, Any] = {
        name: s.column(name)
        for name in ("index", "source", "operation_kind", "operation", "execution_count", "live_count", "scratch_standard", "scratch_interleaved")
    }
    columns["usage_standard"] = pa.array(base.usage_standard, pa.int64())
    columns["usage_interleaved"] = pa.array(base.usage_interleaved, pa.int64())
    columns["usage_total"] = pa.array(base.usage_standard + base.usage_interleaved, pa.int64())
    if data.edited:
        after = data.plan
        columns["usage_standard_after_edits"] = pa.array(after.usage_standard, pa.int64())
        columns["usage_interleaved_after_edits"] = pa.array(after.usage_interleaved, pa.int64())
        columns["usage_total_after_edits"] = pa.array(after.usage_standard + after.usage_interleaved, pa.int64())
    columns["recorded_usage_standard"] = s.column("usage_standard")
    columns["recorded_usage_interleaved"] = s.column("usage_interleaved")
    return pa.table(columns)


def breakdown_rows(data: ReportInput) -> np.ndarray:
    """Rows live at the report's step, largest (current) bytes first, ties by value order."""
    rows = live_rows(data.arrays, data.step)
    cost = data.plan.figures.bytes[rows]
    return rows[np.lexsort((rows, -cost))]


def breakdown_table(data: ReportInput) -> pa.Table:
    """The values live at the step; ``share`` is of the step's usage in both regions (scratch
    included, exchange rows not: they are a whole-program reservation)."""
    plan, v = data.plan, data.profile.values
    rows = breakdown_rows(data)
    step_usage = int(plan.usage_standard[data.step] + plan.usage_interleaved[data.step])
    cost = plan.figures.bytes[rows]
    take = pa.array(rows, pa.int64())
    columns: dict[str, Any] = {
        "rank": pa.array(np.arange(1, rows.size + 1), pa.int64()),
        "id": v.column("id").take(take),
        "name": v.column("name").take(take),
        "group": v.column("group").take(take),
        "storage_group": v.column("storage_group").take(take),
        "region": v.column("region").take(take),
        "bytes": pa.array(cost, pa.int64()),
        "share": pa.array(np.round(cost / step_usage, 6) if step_usage else np.zeros(rows.size), pa.float64()),
    }
    if data.edited:
        columns["bytes_before_edits"] = pa.array(data.base_plan.figures.bytes[rows], pa.int64())
    return pa.table(columns)


def edits_table(data: ReportInput) -> pa.Table:
    edits = data.edits
    return pa.table(
        {
            "position": pa.array(range(len(edits)), pa.int64()),
            "value": pa.array([e.value for e in edits], pa.int64()),
            "axis": pa.array([e.axis for e in edits], pa.int64()),
            "partitions": pa.array([e.partitions for e in edits], pa.int64()),
            "replicas": pa.array([e.replicas for e in edits], pa.int64()),
            "applied_to": pa.array([" ".join(map(str, _applied_to(data, e))) for e in edits], pa.string()),
            "description": pa.array([e.describe() for e in edits], pa.string()),
        }
    )


def _applied_to(data: ReportInput, edit) -> list[int]:
    """Value ids the edit touched (its value, its root and the root's aliases, or its storage group)."""
    for applied in data.whatif.applied:
        if applied.edit == edit:
            return list(applied.applied_to)
    return [edit.value]


def report_tables(profile: MemoryProfile, arrays: ProfileArrays, base_plan: Plan, whatif=None, selected_step: int | None = None) -> dict[str, bytes]:
    """The CSV files and edits.json, by file name (no PNG: cheap enough for every click)."""
    return tables_of(report_input(profile, arrays, base_plan, whatif, selected_step))


def tables_of(data: ReportInput) -> dict[str, bytes]:
    """The CSVs and edits.json, in ``report_names`` order."""
    return {
        VALUES_CSV: to_csv_bytes(values_table(data)),
        STEPS_CSV: to_csv_bytes(steps_table(data)),
        breakdown_name(data.step): to_csv_bytes(breakdown_table(data)),
        EDITS_JSON: edit_set_json(data.edits).encode(),
        EDITS_CSV: to_csv_bytes(edits_table(data)),
    }


# ----------------------------------------------------------------------------- the PNG


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
        ("fits budget", "yes" if p.fits_budget else "NO"),
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
    lines += [
        f"{'budget':<17}{fmt_bytes(arrays.budget_bytes)}; interleaved {fmt_bytes(arrays.interleaved_budget_bytes)}",
        f"{'reserved':<17}exchange rows {fmt_bytes(arrays.exchange_rows)} (standard peaks include them); "
        f"support {fmt_bytes(arrays.support_reserve_bytes)} (the effective peak includes it)",
    ]
    return "\n".join(lines)


def edits_text(data: ReportInput, limit: int = 10) -> str:
    if not data.edited:
        return "No edits: the plan of the file's own tilings."
    lines = [f"Applied edits ({len(data.edits)}):"]
    for applied in data.whatif.applied[:limit]:
        others = [i for i in applied.applied_to if i != applied.edit.value]
        also = f" (also values {', '.join(map(str, others))})" if others else ""
        lines.append(f"  {applied.edit.describe()}{also}")
    if len(data.whatif.applied) > limit:
        lines.append(f"  … and {len(data.whatif.applied) - limit} more (edits.csv)")
    return "\n".join(lines)


def _value_label(data: ReportInput, row: int) -> str:
    name = data.profile.values.column("name")[row].as_py()
    return f"{label_text(name)} [{int(data.arrays.value_ids[row])}]"


def _draw_usage(ax, arrays: ProfileArrays, plan: Plan, *, ghost: bool) -> None:
    """Standard (with the exchange rows it always carries), interleaved and total usage per step."""
    steps = np.arange(arrays.n_steps)
    standard = plan.usage_standard + arrays.exchange_rows
    total = plan.usage_standard + plan.usage_interleaved + arrays.exchange_rows
    series = (
        ("standard + exchange rows", standard, REGION_COLOURS[0]),
        ("interleaved", plan.usage_interleaved, REGION_COLOURS[1]),
        ("total (both regions + exchange rows)", total, "black"),
    )
    for label, values, colour in series:
        if ghost:
            ax.plot(steps, values, drawstyle="steps-mid", color="0.6", linestyle="--", linewidth=1, alpha=0.8,
                    label="before edits" if label == "total (both regions + exchange rows)" else None)
        else:
            ax.plot(steps, values, drawstyle="steps-mid", color=colour, linewidth=1.4, label=label)


def _draw_timeline(ax, data: ReportInput) -> None:
    arrays, plan, p = data.arrays, data.plan, data.plan.peaks
    if data.edited:
        _draw_usage(ax, arrays, data.base_plan, ghost=True)
    _draw_usage(ax, arrays, plan, ghost=False)
    ax.axhline(arrays.exchange_rows, color=REGION_COLOURS[0], linestyle=":", linewidth=1, label="exchange rows (whole program)")
    ax.axhline(arrays.interleaved_budget_bytes, color=REGION_COLOURS[1], linestyle="--", linewidth=1, label="interleaved budget")
    ax.axhline(arrays.budget_bytes, color="red", linestyle="--", linewidth=1, label="budget (for the effective peak)")
    # (step, bytes, colour, label, marker, label offset): the effective and total peaks share a
    # step, so their labels go on opposite sides.
    marks = (
        (p.standard_step, p.standard, REGION_COLOURS[0], "standard peak", "v", (6, 4)),
        (p.interleaved_step, p.interleaved, REGION_COLOURS[1], "interleaved peak", "v", (6, 4)),
        (p.total_step, p.total, "black", "total peak", "v", (6, 6)),
        (p.total_step, p.effective_peak_bytes, "red", "effective peak", "x", (6, -24)),
    )
    for step, value, colour, label, marker, offset in marks:
        ax.plot([step], [value], marker=marker, color=colour, markersize=8, linestyle="none")
        ax.annotate(f"{label}\n{value:,} B @ {step}", (step, value), textcoords="offset points", xytext=offset, fontsize=7,
                    color=colour, bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    ax.axvline(data.step, color="0.3", linewidth=0.8, alpha=0.6)
    ax.set_xlim(-0.5, max(arrays.n_steps - 0.5, 0.5))
    ax.set_ylim(0, max(arrays.budget_bytes, p.total, p.effective_peak_bytes) * 1.12)
    ax.set_title("Timeline: bytes per tile at each step", loc="left", fontsize=11)
    ax.set_xlabel("step")
    ax.set_ylabel("bytes per tile")
    ax.yaxis.set_major_formatter(lambda y, _: f"{int(y):,}")
    ax.grid(True, alpha=0.25)
    ax.legend(loc="upper right", fontsize=7, ncol=4, framealpha=0.9)


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
    ax.set_title(f"Live at step {step}{which}: {rows.size} values, {fmt_bytes(values_total)} + scratch {scratch:,} B",
                 loc="left", fontsize=10)
    if rows.size > shown.size:
        rest = int(plan.figures.bytes[rows[shown.size:]].sum())
        ax.set_xlabel(f"bytes per tile; {rows.size - shown.size} smaller values ({rest:,} B) not drawn: see {breakdown_name(step)}", fontsize=8)
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
    edited = data.whatif.tilings if data.edited else {}
    # The largest values, plus the edited ones (however small the edit made them), largest first.
    chosen = set(by_size[:GANTT_ROWS].tolist()) | {r for r in by_size[GANTT_ROWS:].tolist() if r in edited}
    largest = np.array([r for r in by_size.tolist() if r in chosen], dtype=np.int64)
    for y, row in enumerate(largest):
        spans = [(int(arrays.interval_first[k]) - 0.5, int(arrays.interval_last[k] - arrays.interval_first[k]) + 1) for k in arrays.intervals_of(row)]
        colour = REGION_COLOURS[int(arrays.region[row])]
        # The edge keeps a short lifetime visible when thousands of steps share the axis.
        ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=colour, edgecolors="red" if int(row) in edited else colour, linewidth=1.5)
    ax.set_yticks(np.arange(largest.size))
    ax.set_yticklabels([f"{_value_label(data, int(r))} {int(cost[r]):,} B" for r in largest], fontsize=7, **PLAIN)
    ax.invert_yaxis()
    ax.axvline(data.step, color="0.3", linewidth=0.8, alpha=0.6)
    ax.set_xlim(-0.5, max(arrays.n_steps - 0.5, 0.5))
    title = f"Lifetimes: the {min(GANTT_ROWS, largest.size)} largest values" + (" + the edited (red outline)" if edited else "")
    ax.set_title(title, loc="left", fontsize=10)
    ax.set_xlabel("step")
    ax.grid(True, axis="x", alpha=0.25)
    ax.tick_params(axis="x", labelsize=7)


def report_figure(data: ReportInput) -> Figure:
    """Header text on top, the timeline across, breakdown and lifetimes side by side below
    (explicit axes rectangles: the value-name labels need a wide left margin the timeline does not)."""
    figure = Figure(figsize=(16, 13), dpi=100)
    FigureCanvasAgg(figure)
    source = Path(data.profile.source).name
    scope = data.profile.header.get("scope") or ""
    figure.text(0.01, 0.988, f"tilescope report: {source}  (scope {scope})", fontsize=13, weight="bold", va="top", **PLAIN)
    figure.text(0.01, 0.962, summary_text(data), fontsize=8.5, family="monospace", va="top", **PLAIN)
    figure.text(0.64, 0.962, edits_text(data), fontsize=8.5, family="monospace", va="top", **PLAIN)
    _draw_timeline(figure.add_axes((0.06, 0.51, 0.92, 0.33)), data)
    _draw_breakdown(figure.add_axes((0.21, 0.05, 0.26, 0.41)), data)
    _draw_lifetimes(figure.add_axes((0.71, 0.05, 0.27, 0.41)), data)
    return figure


def png_of(data: ReportInput) -> bytes:
    out = io.BytesIO()
    with _DRAW_LOCK:
        report_figure(data).savefig(out, format="png", dpi=100)
    return out.getvalue()


def report_png(profile: MemoryProfile, arrays: ProfileArrays, base_plan: Plan, whatif=None, selected_step: int | None = None) -> bytes:
    return png_of(report_input(profile, arrays, base_plan, whatif, selected_step))


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class Report:
    """File name → content, in writing order; ``step`` is the breakdown's step."""

    files: dict[str, bytes]
    step: int

    @property
    def png(self) -> bytes:
        return self.files[PNG_NAME]

    @property
    def breakdown_name(self) -> str:
        return breakdown_name(self.step)


def build_report(profile: MemoryProfile, arrays: ProfileArrays, base_plan: Plan, whatif: "WhatIf | None" = None,
                 selected_step: int | None = None) -> Report:
    """The whole report. ``selected_step`` defaults to the current plan's total peak step."""
    return report_of(report_input(profile, arrays, base_plan, whatif, selected_step))


def report_of(data: ReportInput) -> Report:
    return Report({PNG_NAME: png_of(data), **tables_of(data)}, data.step)


def report_names(step: int) -> list[str]:
    """The file names of a report whose breakdown is at ``step``, in writing order."""
    return [PNG_NAME, VALUES_CSV, STEPS_CSV, breakdown_name(step), EDITS_JSON, EDITS_CSV]


def check_targets(out_dir: str | Path, names: list[str], *, overwrite: bool = False) -> list[Path]:
    """The paths to write; InputError if ``out_dir`` is not a directory or (without ``overwrite``)
    any of the files exists already. Callers check before the slow build, and again when writing."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError("--out", "a directory", "an existing file", file=str(out))
    targets = [out / name for name in names]
    if not overwrite:
        for path in targets:
            if path.exists():
                raise InputError("--out", "files that do not exist yet (pass --overwrite to replace them)", "an existing file", file=str(path))
    return targets


def write_report(report: Report, out_dir: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write every file of the report into ``out_dir`` (created if missing).

    Without ``overwrite`` nothing is written when any of the files exists already (InputError
    naming the first one); each file is written atomically.
    """
    targets = check_targets(out_dir, list(report.files), overwrite=overwrite)
    try:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("--out", "a directory that can be created", exc.strerror or str(exc), file=str(out_dir)) from None
    for path, data in zip(targets, report.files.values()):
        write_atomically(path, data, overwrite=overwrite)
    return targets
