"""Compare every figure a profile records with the planner's recomputation, and report the
invariants of docs/formats.md §2 that ``check`` (not the loader) answers for (docs/formats.md §6):

- an axis with ``padding: Reject`` needs no padding (its size is a multiple of its
  ``padding_multiple``); tilescope still pads it as §2 computes, so its figures are never smaller
  than the file's rule allows;
- at most one value of an alias class is live at a step (they share one storage); each is still
  counted, as §2's usage rule says, so the step's usage is never smaller than the file's.

Everything else §2 states is refused by the loader (``loaders.profile_values``,
``loaders.profile_checks``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.profile import MemoryProfile

from .model import Plan, ProfileArrays
from .shards import shard_cuts

RULE_REJECT_PADDING = "padding Reject needs no padding"
RULE_ONE_ALIAS_LIVE = "one value of an alias class live per step"


@dataclass(frozen=True)
class Mismatch:
    scope: str  # "value", "step" or "profile"
    key: int | None  # value id or step index; None for profile-wide figures
    field: str
    recorded: object
    recomputed: object
    tile: int | None = None  # the device tile, for a per-tile figure (versions 2 and 3)

    @property
    def where(self) -> str:
        where = {"value": f"value {self.key}", "step": f"step {self.key}"}.get(self.scope, "profile")
        return where + (f" tile {self.tile}" if self.tile is not None else "")

    def __str__(self) -> str:
        return f"{self.where}: {self.field} recorded {self.recorded}, recomputed {self.recomputed}"


@dataclass(frozen=True)
class Violation:
    """An invariant of docs/formats.md §2 the file breaks, which ``check`` reports (docs/formats.md §6)."""

    scope: str  # "value" or "step"
    key: int  # value id or step index
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.scope} {self.key}: {self.rule}: {self.detail}"


def _array_mismatches(
    scope: str, keys: np.ndarray, field: str, recorded: np.ndarray, recomputed: np.ndarray
) -> list[Mismatch]:
    bad = np.flatnonzero(recorded != recomputed)
    return [Mismatch(scope, int(keys[i]), field, int(recorded[i]), int(recomputed[i])) for i in bad]


def check_plan(profile: MemoryProfile, arrays: ProfileArrays, plan: Plan) -> list:
    """Every difference between recorded and recomputed figures (values first, then steps, then
    peaks), then every invariant violation (``check_invariants``). A v2/v3 profile is checked by
    its version's rules (``planner.tile_check``; the plan is its plan per tile)."""
    out: list = []
    ids = arrays.value_ids
    out += _array_mismatches("value", ids, "shard_bytes", arrays.recorded_shard, plan.figures.shard)
    out += _array_mismatches("value", ids, "aligned_bytes", arrays.recorded_aligned, plan.figures.aligned)
    out += _array_mismatches("value", ids, "bytes", arrays.recorded_bytes, plan.figures.bytes)
    steps = profile.steps
    index = steps.column("index").to_numpy()
    recorded_std, recorded_intl = (
        steps.column("usage_standard").to_numpy(),
        steps.column("usage_interleaved").to_numpy(),
    )
    if arrays.tiles is not None and plan.tiles is not None:
        from .tile_check import step_mismatches, value_mismatches

        # usage is checked against the file's own tile_usage, each tile_usage against the
        # reconstruction the plan is made of: together, the plan's usage.
        out += value_mismatches(arrays)
        out += step_mismatches(arrays, np.stack((recorded_std, recorded_intl), axis=1))
    else:
        out += _array_mismatches("step", index, "usage.standard", recorded_std, plan.usage_standard)
        out += _array_mismatches("step", index, "usage.interleaved", recorded_intl, plan.usage_interleaved)
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
    return out + check_invariants(arrays)


def check_invariants(arrays: ProfileArrays) -> list[Violation]:
    """The invariants ``check`` reports (module doc): values in file order, then steps."""
    return reject_padding_violations(arrays) + alias_overlap_violations(arrays)


def reject_padding_violations(arrays: ProfileArrays) -> list[Violation]:
    """Each value with an axis whose padding is ``Reject`` but whose size needs padding."""
    out: list[Violation] = []
    seen: dict[tuple, list[tuple[int, int, int]]] = {}  # (layout, shape) → (axis, size, multiple) of each bad axis
    for row in range(arrays.n_values):
        key = (arrays.layout_text[row], arrays.shapes[row])
        bad = seen.get(key)
        if bad is None:
            tiling = arrays.tiling(row)
            cuts = shard_cuts(arrays.shapes[row], tiling)[1]
            bad = seen[key] = [
                (k, cut.size, axis.padding_multiple)
                for k, (axis, cut) in enumerate(zip(tiling.axes, cuts))
                if axis.padding == "Reject" and cut.size % axis.padding_multiple
            ]
        for k, size, multiple in bad:
            out.append(
                Violation(
                    "value",
                    int(arrays.value_ids[row]),
                    RULE_REJECT_PADDING,
                    f"axis {k} has size {size:,}, not a multiple of its padding_multiple {multiple} (padded to "
                    f"{-(-size // multiple) * multiple:,} as docs/formats.md §2 computes)",
                )
            )
    return out


def alias_overlap_violations(arrays: ProfileArrays) -> list[Violation]:
    """Each run of steps where two values of one alias class are both live, at its first step."""
    roots = arrays.root_rows[arrays.interval_row]
    order = np.lexsort((arrays.interval_first, roots))
    root, first, last, row = (
        roots[order],
        arrays.interval_first[order],
        arrays.interval_last[order],
        arrays.interval_row[order],
    )
    if root.size < 2:
        return []
    # Within one class (sorted by first step) an interval overlaps an earlier one when it starts
    # before the latest end so far: a running maximum that restarts at each class (offset by class).
    span = arrays.n_steps + 1
    reach = np.maximum.accumulate(root * span + last)
    same_class = root[1:] == root[:-1]
    overlaps = np.flatnonzero(same_class & (first[1:] <= reach[:-1] - root[1:] * span)) + 1
    out = []
    for i in overlaps.tolist():
        j = i - 1  # the class's intervals are contiguous: find the earlier one still live at first[i]
        while j >= 0 and root[j] == root[i] and not (last[j] >= first[i] and row[j] != row[i]):
            j -= 1
        if j < 0 or root[j] != root[i]:
            continue  # (a value's own runs never overlap)
        end = min(int(last[i]), int(last[j]))
        ids = arrays.value_ids
        out.append(
            Violation(
                "step",
                int(first[i]),
                RULE_ONE_ALIAS_LIVE,
                f"values {int(ids[row[j]])} and {int(ids[row[i]])} share the storage of value {int(ids[root[i]])} and are both live "
                f"at steps {int(first[i])}–{end} (each is counted)",
            )
        )
    return sorted(out, key=lambda v: v.key)
