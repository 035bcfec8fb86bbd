"""Per-tile figures after what-if edits, and how well tilescope's estimate reproduces a file's.

- **Reading a v2/v3 file back** (``FileTiles``). The file records every value's ``tile_shards`` and
  ``tile_bytes`` and every step's ``tile_scratch``, not how they were made. Per value, tilescope
  infers what §2 needs and the file does not say: the tile offset (``tile_estimate.infer_offset``:
  the smallest rotation of the estimate's per-owner shards that gives the recorded ones) and the
  allocation (``tile_estimate.infer_allocation``: alignment and tail from the recorded pairs).
  Per step with scratch, the value whose owners hold it: among the values that start being live
  at that step, the lowest id whose spread (§2.6) reproduces the recorded ``tile_scratch``.
- **An edit** (``edited_figures``) re-estimates the edited values only (with their inferred
  offset and allocation) and re-spreads the scratch of the steps whose first result they are;
  every other value's and step's recorded runs are kept as they are. With no edit the figures are
  the file's, the same object.
- ``agreement`` lists, per value and step, why the estimate does not reproduce the file.

Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tilescope.models.tiling import TensorTiling

from .model import Plan, ProfileArrays, TilePlan, ValueBytes, plan_of_tile_plan
from .tile_estimate import (
    Allocation,
    LayoutUnresolvable,
    TileRuns,
    infer_allocation,
    infer_offset,
    on_device,
    spread_scratch,
)
from .tile_figures import (
    TileFigures,
    _Estimator,
    estimate_figures,
    recorded_allocation,
    recorded_figures,
    recorded_usage,
    scratch_owners,
    scratch_runs,
)
from .tile_usage import StepPeaks, TileUsage, on_device_runs, tile_plan_of


@dataclass(frozen=True)
class Inferred:
    """What §2 needs for a value and the file does not record, read back from its figures."""

    offset: int | None
    allocation: Allocation | None
    reason: str | None  # why the estimate does not reproduce the file's figures, None when it does


class FileTiles:
    """A profile's recorded per-tile figures and what tilescope infers from them (module doc)."""

    def __init__(self, arrays: ProfileArrays, figures: TileFigures):
        self.arrays = arrays
        self.figures = figures
        self._estimator = _Estimator(arrays, None)
        self._inferred: dict[int, Inferred] = {}
        self._scratch_steps: dict[int, list[int]] = {}

    def inferred(self, row: int) -> Inferred:
        found = self._inferred.get(row)
        if found is None:
            found = self._inferred[row] = self._infer(row)
        return found

    def _infer(self, row: int) -> Inferred:
        a = self.arrays
        shard, allocated = self.figures.value_runs(row).dense(a.device_tiles)
        copies = int(a.copies[row])
        held = shard > 0
        if copies < 1 or np.any(allocated[held] % copies):
            return Inferred(None, None, f"tile_bytes are not a multiple of copies {copies}")
        allocation = infer_allocation(shard[held], allocated[held] // copies, int(a.region[row]), copies)
        try:
            elements = self._estimator.elements(row)
        except LayoutUnresolvable as exc:
            return Inferred(None, allocation, f"layout unresolvable: {exc}")
        per_owner = elements * int(a.element_bytes[row])
        offset = infer_offset(per_owner, shard)
        reason = None
        if offset is None:
            reason = (
                f"no tile offset puts the estimate's per-owner shards ({_summary(per_owner)}) on the recorded "
                f"tile_shards ({_summary(shard[held])} on {int(held.sum()):,} tiles)"
            )
        elif allocation is None:
            reason = "no alignment and tail of §2.4 turns the recorded tile_shards into tile_bytes"
        elif offset != 0:
            reason = f"reproduced with tile offset {offset}, which the file does not record"
        return Inferred(offset, allocation, reason)

    @cached_property
    def scratch_owner(self) -> np.ndarray:
        """Per step, the value row whose owners hold its recorded scratch, −1 (none or not found).

        Candidates: the values that start being live at the step (its results), lowest id first,
        then the other values live there (an in-place result's storage is its input's root)."""
        a = self.arrays
        out = np.full(a.n_steps, -1, dtype=np.int64)
        for step in np.flatnonzero((a.scratch_standard != 0) | (a.scratch_interleaved != 0)).tolist():
            live = (a.interval_first <= step) & (a.interval_last >= step)
            starting = a.interval_first == step
            rows = np.unique(a.interval_row[live])
            first = set(a.interval_row[starting].tolist())
            order = sorted(rows.tolist(), key=lambda r: (r not in first, int(a.value_ids[r])))
            start, stop, columns = self.figures.scratch.runs(step)
            recorded = [on_device_runs(start, stop, c, a.device_tiles) for c in columns]
            for row in order:
                if self._spread_matches(step, row, recorded):
                    out[step] = row
                    break
        return out

    def scratch_steps_of(self, row: int) -> list[int]:
        """The steps with scratch, among those where value ``row`` is live, whose recorded
        ``tile_scratch`` its owners give (§2.6) and no result of the step before it in
        ``scratch_owner``'s order gives too: the steps whose first result it is taken to be. Only
        this value's steps are looked at (what an edit of it needs), not every step's owner."""
        found = self._scratch_steps.get(row)
        if found is None:
            a = self.arrays
            scratch = (a.scratch_standard != 0) | (a.scratch_interleaved != 0)
            steps: list[int] = []
            for k in a.intervals_of(row):
                first, last = int(a.interval_first[k]), int(a.interval_last[k])
                for step in (first + np.flatnonzero(scratch[first : last + 1])).tolist():
                    start, stop, columns = self.figures.scratch.runs(step)
                    recorded = [on_device_runs(start, stop, c, a.device_tiles) for c in columns]
                    if self._spread_matches(step, row, recorded) and not self._earlier_result(step, row, recorded):
                        steps.append(step)
            found = self._scratch_steps[row] = steps
        return found

    def _earlier_result(self, step: int, row: int, recorded: list[np.ndarray]) -> bool:
        """Whether a value that starts being live at ``step`` and comes before ``row`` in
        ``scratch_owner``'s order (results first, lowest id first) gives the same spread: the
        scratch is then that result's (the other values live there are not tried)."""
        a = self.arrays
        starting = a.interval_row[a.interval_first == step]
        mine = (row not in starting.tolist(), int(a.value_ids[row]))
        return any(
            (False, int(a.value_ids[other])) < mine and self._spread_matches(step, int(other), recorded)
            for other in starting.tolist()
            if other != row
        )

    def _spread_matches(self, step: int, row: int, recorded: list[np.ndarray]) -> bool:
        a = self.arrays
        try:
            elements = self._estimator.elements(row)
        except LayoutUnresolvable:
            return False
        offset = self.inferred(row).offset
        if offset is None:
            return False
        for scratch, tiles in zip((a.scratch_standard[step], a.scratch_interleaved[step]), recorded):
            if not np.array_equal(on_device(spread_scratch(int(scratch), elements), offset, a.device_tiles), tiles):
                return False
        return True

    def agreement(self) -> list[tuple[str, int, str]]:
        """("value", id, reason) for each value, ("step", index, reason) for each step with scratch,
        whose recorded figures tilescope's estimate does not reproduce (with offset 0)."""
        out = []
        for row in range(self.arrays.n_values):
            reason = self.inferred(row).reason
            if reason is not None:
                out.append(("value", int(self.arrays.value_ids[row]), reason))
        a = self.arrays
        for step in np.flatnonzero(
            ((a.scratch_standard != 0) | (a.scratch_interleaved != 0)) & (self.scratch_owner < 0)
        ).tolist():
            out.append(("step", step, "no value starting at this step has owners that give the recorded tile_scratch"))
        return out


def _summary(values: np.ndarray) -> str:
    if not values.size:
        return "none"
    low, high = int(values.min()), int(values.max())
    return f"{low:,} B" if low == high else f"{low:,}–{high:,} B"


def edited_figures(
    arrays: ProfileArrays, base: TileFigures, tilings: dict[int, TensorTiling], file: FileTiles | None = None
) -> tuple[TileFigures, list[int], list[int]]:
    """``base`` with the values of ``tilings`` (a WhatIf's: value row → edited tiling) re-estimated,
    and the scratch of the steps whose first result they are spread again (module doc); and the
    value rows and steps replaced.

    With ``file`` (a v2/v3 file's ``FileTiles``) each edited value keeps its inferred tile offset and
    allocation; without (a v1 file's estimate) offset 0 and the allocation of its recorded scalars.
    """
    if not tilings:
        return base, [], []
    estimator = _Estimator(arrays, tilings)
    rows: dict[int, TileRuns] = {}
    offsets: dict[int, int] = {}
    for row in sorted(tilings):
        offset, allocation = 0, recorded_allocation(arrays, row)
        if file is not None:
            inferred = file.inferred(row)
            offset = inferred.offset or 0
            allocation = inferred.allocation or allocation
        offsets[row] = offset
        shard = estimator.elements(row) * int(arrays.element_bytes[row])
        allocated = allocation.sizes(shard) * allocation.copies
        rows[row] = TileRuns.of_dense(
            on_device(shard, offset, arrays.device_tiles), on_device(allocated, offset, arrays.device_tiles)
        )
    if file is not None:
        held = {step: row for row in sorted(tilings) for step in file.scratch_steps_of(row)}
    else:
        owners = scratch_owners(arrays)
        held = {step: int(owners[step]) for step in np.flatnonzero(np.isin(owners, list(tilings))).tolist()}
    steps = {}
    for step, row in sorted(held.items()):
        steps[step] = scratch_runs(arrays, step, row, estimator.elements(row), offsets[row])
    return base.with_values(rows, steps), sorted(rows), sorted(steps)


def edited_usage(
    arrays: ProfileArrays, base: TileUsage, tilings: dict[int, TensorTiling], file: FileTiles | None = None
) -> TileUsage:
    """The per-tile usage of ``base``'s plan with ``tilings`` applied: ``base`` itself without
    edits; else ``base``'s figures (the file's recorded usage for v2/v3, its estimate for v1) plus
    what the edits change, on the steps where they change anything."""
    figures, rows, steps = edited_figures(arrays, base.figures, tilings, file)
    if figures is base.figures:
        return base
    return TileUsage.edited_from(base, figures, rows, steps)


# ----------------------------------------------------------------------------- a profile's own, kept on its arrays


def _memo(arrays: ProfileArrays, key: str, compute):
    # ProfileArrays is shared read-only by every plan of a file: what is derived from the file
    # alone is kept on it (two threads may both compute; the results are equal).
    found = arrays.__dict__.get(key)
    if found is None:
        found = arrays.__dict__[key] = compute()
    return found


def file_figures(arrays: ProfileArrays) -> TileFigures:
    """The file plan's per-tile figures: recorded (v2/v3) or tilescope's estimate (v1)."""
    return _memo(arrays, "_tile_figures", lambda: recorded_figures(arrays) or estimate_figures(arrays))


def file_tiles(arrays: ProfileArrays) -> FileTiles | None:
    """What tilescope infers from a v2/v3 file's per-tile figures (None for v1)."""
    if arrays.tiles is None:
        return None
    return _memo(arrays, "_file_tiles", lambda: FileTiles(arrays, file_figures(arrays)))


def file_usage(arrays: ProfileArrays, file_plan: Plan | None = None) -> TileUsage:
    """The file plan's per-tile usage: a v2/v3 file's recorded tile_usage, or the sweep of a v1
    file's estimate. ``file_plan``: the file's plan per tile, whose per-step figures are taken
    rather than summed again (``model.per_tile_plan``)."""

    def compute() -> TileUsage:
        usage = TileUsage(arrays, file_figures(arrays), recorded_usage(arrays))
        tp = getattr(file_plan, "tiles", None)
        if tp is not None and usage.recorded is not None:
            usage.__dict__["step_peaks"] = step_peaks_of(tp)
        return usage

    return _memo(arrays, "_tile_usage", compute)


def plan_usage(arrays: ProfileArrays, tilings: dict[int, TensorTiling], file_plan: Plan | None = None) -> TileUsage:
    """The per-tile usage of the plan with ``tilings`` (a WhatIf's; {} for the file's plan)."""
    return edited_usage(arrays, file_usage(arrays, file_plan), tilings, file_tiles(arrays))


def step_peaks_of(tp: TilePlan) -> StepPeaks:
    """``StepPeaks`` of a plan per tile's per-step figures (the same tie rule: the last tile)."""
    return StepPeaks(
        most={"standard": tp.largest[:, 0], "interleaved": tp.largest[:, 1], "total": tp.usage.sum(axis=1)},
        tile={"standard": tp.largest_tile[:, 0], "interleaved": tp.largest_tile[:, 1], "total": tp.usage_tile},
        usage_standard=tp.usage[:, 0],
        usage_interleaved=tp.usage[:, 1],
        usage_tile=tp.usage_tile,
    )


def whatif_plan(
    arrays: ProfileArrays, figures: ValueBytes, tilings: dict[int, TensorTiling], file_plan: Plan | None = None
) -> tuple[Plan, TileUsage]:
    """The plan per tile of a v2/v3 profile with ``tilings`` applied: the edited values' figures
    are the maxima of their re-estimated per-tile figures (§1.4), the per-step usage the peak
    tile's, the peaks by the file's version (``model.plan_of_tile_plan``)."""
    usage = plan_usage(arrays, tilings, file_plan)
    shard, aligned, held = (figures.shard.copy(), figures.aligned.copy(), figures.bytes.copy())
    for row in tilings:
        runs = usage.figures.value_runs(row)
        shard[row], held[row] = runs.max_shard, runs.max_bytes
        aligned[row] = runs.max_bytes // max(int(arrays.copies[row]), 1)
    plan = plan_of_tile_plan(arrays, ValueBytes(shard, aligned, held), tile_plan_of(usage))
    plan.__dict__[PLAN_USAGE] = usage  # kept with the plan it made: the views read it (usage_of_plan)
    return plan, usage


PLAN_USAGE = "_tile_usage"


def usage_of_plan(plan: Plan) -> TileUsage | None:
    """The per-tile usage a what-if plan of a v2/v3 profile was made from, if it was."""
    return plan.__dict__.get(PLAN_USAGE)
