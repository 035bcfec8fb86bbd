"""The report's inputs and its CSV tables (and edits.json), built from a plan: bytes out, no drawing.

- ``values.csv``: one row per value, figures recomputed from the (edited) tilings beside the
  file's recorded figures;
- ``steps.csv``: one row per step, usage recomputed from the file's tilings (and after the edits
  when edited) beside the recorded usage;
- ``step_<N>_breakdown.csv``: the values live at step N, largest first;
- ``edits.json`` (the edit-set file format of ``models.edits``) and ``edits.csv``;
- ``allocations.csv``: every allocation of the placement of the current plan (``planner.placement``):
  kind, value id and name, region, offset, end, bytes, granule, first and last step.

Every CSV goes through ``tilescope.report.csv_safe`` (file text cannot become a spreadsheet formula).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tilescope.derived.plan_data import PlanData
from tilescope.models.edits import edit_set_json
from tilescope.models.errors import InputError
from tilescope.models.profile import MemoryProfile
from tilescope.models.tiling import TensorTiling
from tilescope.planner.model import Plan, ProfileArrays
from tilescope.planner.placement import Placement

from .csv_safe import to_csv_bytes

if TYPE_CHECKING:  # planner.edits is only needed for its type here
    from tilescope.planner.edits import AppliedEdit, WhatIf

PNG_NAME = "report.png"
VALUES_CSV = "values.csv"
STEPS_CSV = "steps.csv"
EDITS_JSON = "edits.json"
EDITS_CSV = "edits.csv"
ALLOCATIONS_CSV = "allocations.csv"


def breakdown_name(step: int) -> str:
    return f"step_{step}_breakdown.csv"


# ----------------------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class ReportInput:
    """What a report is built from: a plan's derived data and the step of the breakdown."""

    data: PlanData
    step: int

    @property
    def profile(self) -> MemoryProfile:
        return self.data.profile

    @property
    def arrays(self) -> ProfileArrays:
        return self.data.arrays

    @property
    def base_plan(self) -> Plan:
        return self.data.base.plan

    @property
    def whatif(self) -> WhatIf | None:
        return self.data.whatif

    @property
    def edited(self) -> bool:
        return self.data.edited

    @property
    def plan(self) -> Plan:
        """The current plan (the what-if plan when edited)."""
        return self.data.plan

    @property
    def edits(self) -> tuple:
        return tuple(self.whatif.edits) if self.whatif is not None else ()

    @property
    def edited_tilings(self) -> dict[int, TensorTiling]:
        """Value row → edited tiling ({} without edits)."""
        return self.whatif.tilings if self.whatif is not None else {}

    @property
    def applied_edits(self) -> list[AppliedEdit]:
        """The edits as applied, in order ([] without edits)."""
        return self.whatif.applied if self.whatif is not None else []


def report_input(data: PlanData, selected_step: int | None = None) -> ReportInput:
    """Validate the step (default: the current plan's total peak step)."""
    arrays = data.arrays
    if arrays.n_steps == 0:
        raise InputError("$.timeline.steps", "at least one step to report on", "none", file=data.profile.source)
    step = data.plan.peaks.total_step if selected_step is None else selected_step
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or not 0 <= step < arrays.n_steps:
        raise InputError("--step", f"a step index in 0..{arrays.n_steps - 1}", str(step))
    return ReportInput(data, int(step))


# ----------------------------------------------------------------------------- tables


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
        f"{k}={p}" if i < 0 else f"{k}({i})={p}"
        for k, i, p in zip(kind.tolist(), index.tolist(), c["partitions"].tolist())
    ]
    starts, counts = arrays.axes_start.tolist(), arrays.axes_count.tolist()
    partitions = [" ".join(axis_text[s : s + n]) for s, n in zip(starts, counts)]
    for row, tiling in data.edited_tilings.items():
        tile_count[row], replicas[row] = tiling.tile_count, tiling.replicas
        partitions[row] = _partitions_text(tiling)
    return tile_count, replicas, partitions


def values_table(data: ReportInput) -> pa.Table:
    v, arrays, figures = data.profile.values, data.arrays, data.plan.figures
    tile_count, replicas, partitions = tiling_columns(data)
    first, last = data.data.opened.live_ranges
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
        columns["edited"] = pa.array([row in data.edited_tilings for row in range(arrays.n_values)], pa.bool_())
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
        for name in (
            "index",
            "source",
            "operation_kind",
            "operation",
            "execution_count",
            "live_count",
            "scratch_standard",
            "scratch_interleaved",
        )
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
    """Rows live at the report's step, largest (current) bytes first, ties by value id."""
    return data.data.live_at(data.step).rows


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
    for applied in data.applied_edits:
        if applied.edit == edit:
            return list(applied.applied_to)
    return [edit.value]


def placement_of(data: ReportInput) -> Placement:
    """The placement of the report's current plan (the what-if plan when edited)."""
    return data.data.placement


def allocations_table(data: ReportInput, placement: Placement | None = None) -> pa.Table:
    """One row per allocation, in the placement's order (live intervals, scratch, exchange rows)."""
    p = placement if placement is not None else placement_of(data)
    is_value = p.value_row >= 0
    if data.arrays.n_values and p.n_allocations:
        names = data.profile.values.column("name").take(pa.array(np.where(is_value, p.value_row, 0), pa.int64()))
        names = pc.if_else(pa.array(is_value), names.cast(pa.string()), pa.scalar(None, pa.string()))
    else:
        names = pa.nulls(p.n_allocations, pa.string())
    return pa.table(
        {
            "kind": pa.array(p.kind_names().tolist(), pa.string()),
            "id": pa.array(p.value_id, pa.int64(), mask=~is_value),
            "name": names,
            "region": pa.array(p.region_names().tolist(), pa.string()),
            "offset": pa.array(p.offset, pa.int64()),
            "end": pa.array(p.offset + p.bytes, pa.int64()),
            "bytes": pa.array(p.bytes, pa.int64()),
            "granule": pa.array(p.granule, pa.int64()),
            "first_step": pa.array(p.first_step, pa.int64()),
            "last_step": pa.array(p.last_step, pa.int64()),
        }
    )


def report_tables(data: PlanData, selected_step: int | None = None) -> dict[str, bytes]:
    """The CSV files and edits.json, by file name (no PNG: cheap enough for every click)."""
    return tables_of(report_input(data, selected_step))


def tables_of(data: ReportInput) -> dict[str, bytes]:
    """The CSVs and edits.json, in ``report_names`` order."""
    return {
        VALUES_CSV: to_csv_bytes(values_table(data)),
        STEPS_CSV: to_csv_bytes(steps_table(data)),
        breakdown_name(data.step): to_csv_bytes(breakdown_table(data)),
        EDITS_JSON: edit_set_json(data.edits).encode(),
        EDITS_CSV: to_csv_bytes(edits_table(data)),
        ALLOCATIONS_CSV: to_csv_bytes(allocations_table(data)),
    }
