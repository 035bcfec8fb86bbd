"""The memory-profile half of ``tilescope summary``."""

from __future__ import annotations

from .opening import OpenedProfile


def memory_profile_summary(opened: OpenedProfile) -> dict:
    profile, plan = opened.profile, opened.plan
    p, h = plan.peaks, profile.header
    return {
        "kind": "memory_profile",
        "version": h["version"],
        "scope": h["scope"],
        "tile_count": h["tile_count"],
        "budget_bytes": h["budget_bytes"],
        "interleaved_budget_bytes": h["interleaved_budget_bytes"],
        "values": profile.n_values,
        "steps": profile.n_steps,
        "live_intervals": profile.live_intervals.num_rows,
        "storage_groups": len(set(profile.values.column("storage_group").to_pylist())),
        "peak": {
            "standard": p.standard,
            "interleaved": p.interleaved,
            "total": p.total,
            "exchange_rows": p.exchange_rows,
            "maximum_standard_allocation": p.maximum_standard_allocation,
        },
        "standard_peak_step": p.standard_step,
        "interleaved_peak_step": p.interleaved_step,
        "total_peak_step": p.total_step,
        "effective_peak_bytes": p.effective_peak_bytes,
        "fits_budget": p.fits_budget,
        "peak_tiles": plan.peak_tiles,  # versions 2 and 3 (docs/formats.md §7); null for version 1
    }
