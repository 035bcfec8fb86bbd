"""A loaded memory profile → its fields of ``profiles`` and its partitions
(``schema.PROFILE_TABLES``): the loader's tables with the profile key and the planner's
recomputation (``planner.model.plan_profile``; mismatches from ``planner.check.check_plan``)."""

from __future__ import annotations

import pyarrow as pa

from tilescope.models.profile import MemoryProfile
from tilescope.planner.check import Mismatch, check_plan
from tilescope.planner.model import plan_profile
from tilescope.planner.tile_check import MoreMismatches

from .schema import PROFILE_TABLES


def _keyed(name: str, key: str, table: pa.Table, extra: dict[str, object] | None = None) -> pa.Table:
    columns = {"profile_key": pa.repeat(pa.scalar(key, pa.string()), table.num_rows)}
    columns.update(zip(table.column_names, table.columns))
    columns.update(extra or {})
    return pa.table(columns).cast(PROFILE_TABLES[name])


def _figure_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _mismatches_table(key: str, mismatches: list) -> pa.Table:
    rows = [
        {
            "profile_key": key,
            "subject": m.scope,
            "key": m.key,
            "field": m.field,
            "recorded": _figure_text(m.recorded),
            "recomputed": _figure_text(m.recomputed),
            "tile": m.tile,
        }
        for m in mismatches
        if isinstance(m, Mismatch)  # (a v2/v3 field's mismatches past the listed ones are only counted)
    ]
    return pa.Table.from_pylist(rows, schema=PROFILE_TABLES["mismatches"])


def memory_profile_rows(profile: MemoryProfile, key: str) -> tuple[dict, dict[str, pa.Table]]:
    """The ``profiles`` fields a memory profile fills, and its partitions keyed ``key``."""
    arrays, plan = plan_profile(profile)
    mismatches = check_plan(profile, arrays, plan)
    more = sum(m.count for m in mismatches if isinstance(m, MoreMismatches))
    header, peaks, figures = profile.header, plan.peaks, plan.figures
    peak_tiles = plan.peak_tiles or {}
    fields = {
        "kind": "memory_profile",
        "scope": header["scope"],
        "standard_peak": peaks.standard,
        "interleaved_peak": peaks.interleaved,
        "total_peak": peaks.total,
        "effective_peak_bytes": peaks.effective_peak_bytes,
        "fits_budget": peaks.fits_budget,
        "standard_peak_step": peaks.standard_step,
        "interleaved_peak_step": peaks.interleaved_step,
        "total_peak_step": peaks.total_step,
        "n_values": profile.n_values,
        "n_steps": profile.n_steps,
        "check_mismatches": sum(not isinstance(m, MoreMismatches) for m in mismatches) + more,
        "budget_bytes": header["budget_bytes"],
        "interleaved_budget_bytes": header["interleaved_budget_bytes"],
        "format_version": header["version"],
        "standard_peak_tile": peak_tiles.get("standard"),
        "interleaved_peak_tile": peak_tiles.get("interleaved"),
        "total_peak_tile": peak_tiles.get("total"),
    }
    # Plan arrays are indexed by value row and by step index: the values and steps tables' order.
    tables = {
        "profile_headers": _keyed("profile_headers", key, profile.profile),
        "values": _keyed(
            "values",
            key,
            profile.values,
            {
                "recomputed_shard_bytes": pa.array(figures.shard, pa.int64()),
                "recomputed_aligned_bytes": pa.array(figures.aligned, pa.int64()),
                "recomputed_bytes": pa.array(figures.bytes, pa.int64()),
            },
        ),
        "axes": _keyed("axes", key, profile.axes),
        "steps": _keyed(
            "steps",
            key,
            profile.steps,
            {
                "recomputed_usage_standard": pa.array(plan.usage_standard, pa.int64()),
                "recomputed_usage_interleaved": pa.array(plan.usage_interleaved, pa.int64()),
            },
        ),
        "live_intervals": _keyed("live_intervals", key, profile.live_intervals),
        "mismatches": _mismatches_table(key, mismatches),
        # v2/v3: the file's per-tile runs, so a profile rebuilt from the dataset plans per tile
        # (and verifies) as the file did; empty for v1.
        "value_tiles": _keyed("value_tiles", key, profile.value_tiles),
        "step_tiles": _keyed("step_tiles", key, profile.step_tiles),
    }
    return fields, tables
