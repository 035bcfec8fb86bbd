"""Compare every figure a profile records with the planner's recomputation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.profile import MemoryProfile

from .model import Plan, ProfileArrays


@dataclass(frozen=True)
class Mismatch:
    scope: str  # "value", "step" or "profile"
    key: int | None  # value id or step index; None for profile-wide figures
    field: str
    recorded: object
    recomputed: object

    def __str__(self) -> str:
        where = {"value": f"value {self.key}", "step": f"step {self.key}"}.get(self.scope, "profile")
        return f"{where}: {self.field} recorded {self.recorded}, recomputed {self.recomputed}"


def _array_mismatches(scope: str, keys: np.ndarray, field: str, recorded: np.ndarray, recomputed: np.ndarray) -> list[Mismatch]:
    bad = np.flatnonzero(recorded != recomputed)
    return [Mismatch(scope, int(keys[i]), field, int(recorded[i]), int(recomputed[i])) for i in bad]


def check_plan(profile: MemoryProfile, arrays: ProfileArrays, plan: Plan) -> list[Mismatch]:
    """Every difference between recorded and recomputed figures, values first, then steps, then peaks."""
    out: list[Mismatch] = []
    ids = arrays.value_ids
    out += _array_mismatches("value", ids, "shard_bytes", arrays.recorded_shard, plan.figures.shard)
    out += _array_mismatches("value", ids, "aligned_bytes", arrays.recorded_aligned, plan.figures.aligned)
    out += _array_mismatches("value", ids, "bytes", arrays.recorded_bytes, plan.figures.bytes)
    memory_class = profile.values.column("memory_class").to_pylist()
    for row, layout in enumerate(profile.values.column("layout").to_pylist()):
        # The layout's own memory class must agree with the value's `class` (docs/formats.md invariant).
        if f"memory_class: {memory_class[row]}" not in layout:
            out.append(Mismatch("value", int(ids[row]), "layout memory_class", memory_class[row], "differs in layout"))
    steps = profile.steps
    index = steps.column("index").to_numpy()
    out += _array_mismatches("step", index, "usage.standard", steps.column("usage_standard").to_numpy(), plan.usage_standard)
    out += _array_mismatches("step", index, "usage.interleaved", steps.column("usage_interleaved").to_numpy(), plan.usage_interleaved)
    h, p = profile.header, plan.peaks
    for field, recorded, recomputed in (
        ("peak.standard", h["peak_standard"], p.standard),
        ("peak.interleaved", h["peak_interleaved"], p.interleaved),
        ("peak.total", h["peak_total"], p.total),
        ("peak.maximum_standard_allocation", h["maximum_standard_allocation"], p.maximum_standard_allocation),
        ("standard_peak_step", h["standard_peak_step"], p.standard_step),
        ("interleaved_peak_step", h["interleaved_peak_step"], p.interleaved_step),
        ("total_peak_step", h["total_peak_step"], p.total_step),
        ("effective_peak_bytes", h["effective_peak_bytes"], p.effective_peak_bytes),
        ("fits_budget", h["fits_budget"], p.fits_budget),
    ):
        if recorded != recomputed:
            out.append(Mismatch("profile", None, field, recorded, recomputed))
    return out
