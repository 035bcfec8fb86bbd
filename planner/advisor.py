"""Rank tiling edits that lower a chosen peak, each verified by re-planning it for real.

Candidates, for every alias class live at the peak's step (in the peak's region; both regions for
the total peak), on every axis of its tiling with more than one block per partition:

- the axis's partitions doubled, and the smallest count above the current one that shrinks the
  axis's blocks per partition (when that is not the doubled count);
- when such a count would exceed the device's tiles, the same count with the replicas lowered to
  the largest count that fits (e.g. value 84: axis 1 partitions 9 → 18 with replicas 54 → 27).

Replicas alone never shrink a shard (docs/formats.md §2), so they only appear paired with more
partitions. Each candidate set is re-planned with ``apply_edits`` (on top of the current what-if
edits when given); the list keeps the ones whose verified peak is lower, best saving first.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tilescope.models.edits import TilingEdit
from tilescope.models.tiling import TensorTiling

from .edits import EditError, WhatIf, apply_edits, current_tiling
from .live import live_rows_at
from .model import Peaks, Plan, ProfileArrays
from .shards import axis_blocks, ceil_div

PEAK_KINDS = ("standard", "interleaved", "total")


@dataclass(frozen=True)
class Suggestion:
    edits: tuple[TilingEdit, ...]
    description: str
    peak_before: int
    peak_after: int
    saving: int
    peak_step: int = 0  # the step of the chosen peak after the edit


@dataclass
class AdviceTally:
    """What ``advise`` tried, so an empty answer can say why (``why_none``)."""

    tried: int = 0  # candidate edit sets
    refused: int = 0  # of those, refused by apply_edits
    first_refusal: str = ""
    not_lower: int = 0  # re-planned, the peak not lowered
    lowest_after: int | None = None  # the lowest peak one of those left, and its step
    lowest_step: int = 0


def peak_value(peaks: Peaks, peak: str) -> int:
    return {"standard": peaks.standard, "interleaved": peaks.interleaved, "total": peaks.total}[peak]


def peak_step(peaks: Peaks, peak: str) -> int:
    return {"standard": peaks.standard_step, "interleaved": peaks.interleaved_step, "total": peaks.total_step}[peak]


def live_roots_at(arrays: ProfileArrays, step: int, regions: Sequence[int]) -> list[int]:
    """Root rows of the classes live at ``step`` in the given regions, ascending."""
    rows = live_rows_at(arrays, step)
    rows = rows[np.isin(arrays.region[rows], regions)]
    return sorted({int(r) for r in arrays.root_rows[rows]})


def _shrinking_counts(partitions: int, blocks: int) -> list[int]:
    """Doubled partitions, and the next count that lowers the blocks per partition (≤ blocks)."""
    per_partition = ceil_div(blocks, partitions)
    if per_partition <= 1:
        return []
    next_count = ceil_div(blocks, per_partition - 1)
    return sorted({n for n in (2 * partitions, next_count) if n <= blocks})


def candidate_edits(arrays: ProfileArrays, root: int, tiling: TensorTiling) -> Iterator[tuple[TilingEdit, ...]]:
    """Edit sets that split one class further (validity is left to apply_edits)."""
    value = int(arrays.value_ids[root])
    blocks = axis_blocks(arrays.shapes[root], tiling)
    for position, (axis, count) in enumerate(zip(tiling.axes, blocks)):
        for n in _shrinking_counts(axis.partitions, count):
            split = TilingEdit(value, axis=position, partitions=n)
            tiles_per_replica = math.prod(a.partitions for a in tiling.axes) // axis.partitions * n
            if tiles_per_replica * tiling.replicas <= arrays.device_tiles:
                yield (split,)
                continue
            replicas = min(tiling.replicas - 1, arrays.device_tiles // tiles_per_replica)
            if replicas >= 1:
                yield (split, TilingEdit(value, replicas=replicas))


def _describe(arrays: ProfileArrays, tiling: TensorTiling, edits: tuple[TilingEdit, ...]) -> str:
    parts = []
    for edit in edits:
        if edit.axis is None:  # a replicas edit (TilingEdit: axis and partitions, or replicas)
            parts.append(f"replicas {tiling.replicas} → {edit.replicas}")
        else:
            axis = tiling.axes[edit.axis]
            parts.append(f"axis {edit.axis} ({axis.axis}) partitions {axis.partitions} → {edit.partitions}")
    return f"value {edits[0].value}: " + ", ".join(parts)


def advise(
    arrays: ProfileArrays,
    plan: Plan,
    peak: str = "total",
    limit: int = 20,
    *,
    whatif: WhatIf | None = None,
    tally: AdviceTally | None = None,
) -> list[Suggestion]:
    """Verified edits that lower ``peak`` of ``plan``, best first.

    ``plan`` is the unedited plan, or ``whatif.plan`` when ``whatif`` is given: candidates are
    then added to its edits (and re-planned against its unedited base). ``tally``, when given, is
    filled with what was tried (for ``why_none``).
    """
    tally = tally if tally is not None else AdviceTally()
    if peak not in PEAK_KINDS:
        raise ValueError(f"peak must be one of {PEAK_KINDS}")
    base = whatif.base if whatif is not None else plan
    prior = whatif.edits if whatif is not None else ()
    tilings = whatif.tilings if whatif is not None else None
    group = whatif.whole_storage_group if whatif is not None else False

    before = peak_value(plan.peaks, peak)
    step = peak_step(plan.peaks, peak)
    regions = {"standard": [0], "interleaved": [1], "total": [0, 1]}[peak]
    found: list[Suggestion] = []
    for root in live_roots_at(arrays, step, regions):
        tiling = current_tiling(arrays, root, tilings)
        for edits in candidate_edits(arrays, root, tiling):
            tally.tried += 1
            try:
                result = apply_edits(arrays, base, prior + edits, whole_storage_group=group)
            except EditError as exc:
                tally.refused += 1
                tally.first_refusal = tally.first_refusal or str(exc)
                continue
            after = peak_value(result.plan.peaks, peak)
            if after >= before:
                tally.not_lower += 1
                if tally.lowest_after is None or after < tally.lowest_after:
                    tally.lowest_after, tally.lowest_step = after, peak_step(result.plan.peaks, peak)
            if after < before:
                found.append(
                    Suggestion(
                        edits,
                        _describe(arrays, tiling, edits),
                        before,
                        after,
                        before - after,
                        peak_step(result.plan.peaks, peak),
                    )
                )
    found.sort(key=lambda s: (-s.saving, len(s.edits), s.edits[0].value, s.description))
    return found[:limit]


def peak_steps(plan: Plan, peak: str) -> np.ndarray:
    """Every step at which ``peak`` is reached (the peak's own step among them), ascending."""
    usage = {
        "standard": plan.usage_standard,
        "interleaved": plan.usage_interleaved,
        "total": plan.usage_standard + plan.usage_interleaved,  # the exchange rows are the same at every step
    }[peak]
    return np.flatnonzero(usage == usage.max())


def why_none(plan: Plan, peak: str, tally: AdviceTally) -> str:
    """Why ``advise`` found nothing, from what it tried: nothing to split, every candidate refused,
    or candidates that left the peak where it was (typically because other steps reach it too)."""
    if tally.tried == 0:
        return (
            f"no value live at the {peak} peak's step has an axis with more than one block per partition, "
            "so no edit can split one further"
        )
    if tally.refused == tally.tried:
        return f"all {tally.tried:,} candidate edits were refused (the first: {tally.first_refusal})"
    ties = peak_steps(plan, peak)
    shown = ", ".join(str(int(s)) for s in ties[:5]) + (", …" if len(ties) > 5 else "")
    where = (
        f"the {peak} peak is reached at {len(ties):,} steps ({shown}), and an edit lowers only the steps where "
        "its value is live"
        if len(ties) > 1
        else f"the {peak} peak is reached at step {int(ties[0])} only"
    )
    refused = f"; {tally.refused:,} more were refused (the first: {tally.first_refusal})" if tally.refused else ""
    return (
        f"{where}: each of the {tally.not_lower:,} candidate edits that re-planned left the peak at "
        f"{tally.lowest_after:,} B or more (the lowest at step {tally.lowest_step}){refused}"
    )
