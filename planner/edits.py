"""What-if tiling edits: validate a set of edits together, then re-plan incrementally.

Semantics (docs/formats.md §2):

- An edit sets the partition count of one axis position of a value's tiling, or its replica count;
  the tiling's ``tile_count`` follows (product of partitions times replicas).
- Values sharing a ``root`` share one layout, so an edit of any of them (an alias such as value 48,
  root 45) is an edit of the root and of every value with that root: an *alias class*.
- With ``whole_storage_group=True`` the same change is also applied to every member of the storage
  group of the value the edit names (``storage_group`` of that value, not of its root), each member
  again with its whole alias class. A partition edit skips members whose tiling has no axis at that
  position (they are left as they are). A member whose resulting layout is invalid refuses the whole
  set, and the error names that member.
- Validation looks at the layouts that result from the whole set together (so "axis 1 partitions
  9 → 18 and replicas 54 → 27" passes although its first half alone would exceed the device): every
  edited axis has at least 1 partition and at most its blocks (``shards.axis_blocks`` of the
  resulting tiling), replicas are at least 1, the tile count is at most the device's, and the value
  and axis position exist. An axis the set did not edit but whose blocks the edit changed (a later
  axis cutting the same dimension, or a ``Linear`` axis after it) is held to the same rule, and such
  an axis with ``padding: Reject`` must still need no padding. The first violation raises
  ``EditError`` naming the value, the axis and the rule; nothing is applied.
- Later edits of the same class and axis override earlier ones.
- A value's allocation granule stays as inferred from the file (``ProfileArrays.granule``); its
  ``copies`` too.

Re-planning is incremental: only the edited classes' bytes change, so the new per-step usage is the
base usage plus each changed value's byte delta over its live intervals. The work is proportional to
the edited values' lifetimes (plus a copy of the per-step and per-value arrays and the peaks' argmax).
``apply_edits`` expects ``base_plan`` to be the plan of the recorded tilings (``compute_plan(arrays)``).
``extend_edits`` adds edits to a ``WhatIf`` the same way, re-validating only the classes they touch:
edit after edit, a sequence costs time linear in its length (``tilescope plan --each``).

Every figure stays exact: the loader refuses a profile in which any value, at its largest cost
under any partition counts (one partition per axis), or any step with all its live values so,
could pass 2^53 bytes (docs/formats.md §6), and an edit can only choose partition and replica counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tilescope.models.edits import TilingEdit
from tilescope.models.errors import TilescopeError
from tilescope.models.tiling import TensorTiling

from . import tiling_rules
from .model import Peaks, Plan, ProfileArrays, ValueBytes, peaks_of
from .shards import aligned_bytes, shard_bytes
from .tile_estimate import LayoutUnresolvable
from .tile_whatif import whatif_plan
from .tiling_rules import REPLICAS, tiling_violation

RULE_UNKNOWN_VALUE = "no such value"
RULE_UNKNOWN_AXIS = "no such axis position"
RULE_UNRESOLVABLE = (
    "the compiler's layout resolution refuses the edited layout (a per-tile profile is re-estimated per tile)"
)


class EditError(TilescopeError):
    """An edit set that cannot be applied. ``axis`` is an axis position, ``"replicas"``, or None."""

    def __init__(self, value: int, axis: int | str | None, rule: str, detail: str = ""):
        self.value = value
        self.axis = axis
        self.rule = rule
        self.detail = detail
        where = f"value {value}"
        if axis == REPLICAS:
            where += " replicas"
        elif axis is not None:
            where += f" axis {axis}"
        super().__init__(f"{where}: {rule}" + (f" ({detail})" if detail else ""))


@dataclass(frozen=True)
class AppliedEdit:
    edit: TilingEdit
    applied_to: list[int]  # ids of every value whose tiling the edit set, ascending


@dataclass(frozen=True)
class PlanDiff:
    """The edited plan against the unedited one."""

    step_standard: np.ndarray  # after - before, per step
    step_interleaved: np.ndarray
    peaks_before: Peaks
    peaks_after: Peaks
    changed_values: list[tuple[int, int, int]]  # (value id, bytes before, bytes after), ascending id


@dataclass(frozen=True)
class _History:
    """The edits applied so far, newest last, as a chain: extending it copies nothing."""

    previous: _History | None
    applied: AppliedEdit
    length: int


@dataclass(frozen=True)
class WhatIf:
    plan: Plan
    tilings: dict[int, TensorTiling]  # value row → edited tiling (every row of every edited class)
    diff: PlanDiff
    base: Plan = field(repr=False)  # the unedited plan the edits were applied to
    whole_storage_group: bool = False
    history: _History | None = field(default=None, repr=False)
    # What extend_edits continues from: each edited class's pending layout (by root row) and
    # every value row whose bytes differ from the base plan's, with (id, before, after).
    classes: dict[int, _ClassEdit] = field(default_factory=dict, repr=False, compare=False)
    changed: dict[int, tuple[int, int, int]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def applied(self) -> list[AppliedEdit]:
        """One entry per edit, in order."""
        out = []
        link = self.history
        while link is not None:
            out.append(link.applied)
            link = link.previous
        return out[::-1]

    @cached_property
    def edits(self) -> tuple[TilingEdit, ...]:
        return tuple(a.edit for a in self.applied)

    @property
    def last_applied(self) -> AppliedEdit | None:
        return self.history.applied if self.history is not None else None


# ----------------------------------------------------------------------------- resolving edits


@dataclass
class _ClassEdit:
    """The pending layout of one alias class (keyed by its root row) and who set what on it."""

    tiling: TensorTiling
    # axis position (or REPLICAS) → (value id to name in errors, how it was reached), latest edit last
    named: dict[int | str, tuple[int, str]] = field(default_factory=dict)


def _edit_axis(edit: TilingEdit) -> int | str:
    return REPLICAS if edit.replicas is not None else int(edit.axis)  # type: ignore[arg-type]


def _row_of(arrays: ProfileArrays, edit: TilingEdit) -> int:
    row = arrays.row_of_id.get(int(edit.value))
    if row is None:
        raise EditError(edit.value, _edit_axis(edit), RULE_UNKNOWN_VALUE)
    return row


def _target_roots(
    arrays: ProfileArrays, edit: TilingEdit, row: int, whole_storage_group: bool
) -> list[tuple[int, int, str]]:
    """(root row, value id named in errors, how it was reached) for every class the edit reaches."""
    own_root = int(arrays.root_rows[row])
    out = [(own_root, int(edit.value), "")]
    if not whole_storage_group or arrays.storage_groups is None:
        return out
    group = int(arrays.storage_groups[row])
    seen = {own_root}
    for member in arrays.storage_group_rows.get(group, []):
        root = int(arrays.root_rows[member])
        if root in seen:
            continue
        if edit.axis is not None and edit.axis >= arrays.axes_count[root]:
            continue  # this member's tiling has no such axis position: left unchanged (module doc)
        seen.add(root)
        out.append((root, int(arrays.value_ids[member]), f"storage group {group} of value {edit.value}"))
    return out


def _pending_layouts(
    arrays: ProfileArrays, classes: dict[int, _ClassEdit], edits: Sequence[TilingEdit], whole_storage_group: bool
) -> tuple[list[int], list[list[int]]]:
    """Apply each edit to its classes' tilings in ``classes`` (unvalidated; a class taken over from
    an earlier WhatIf is copied before it changes). Returns the root rows touched, in the order
    first touched, and the root rows each edit reached."""
    touched: dict[int, None] = {}
    reached: list[list[int]] = []
    for edit in edits:
        row = _row_of(arrays, edit)
        axis = _edit_axis(edit)
        own_root = int(arrays.root_rows[row])
        if isinstance(axis, int) and not 0 <= axis < arrays.axes_count[own_root]:  # (the one str: REPLICAS)
            raise EditError(
                edit.value, axis, RULE_UNKNOWN_AXIS, f"its tiling has {int(arrays.axes_count[own_root])} axes"
            )
        roots = []
        for root, named, via in _target_roots(arrays, edit, row, whole_storage_group):
            pending = classes.get(root)
            if pending is None:
                pending = classes[root] = _ClassEdit(arrays.tiling(root))
            elif root not in touched:  # shared with the WhatIf extended: copy on write
                pending = classes[root] = _ClassEdit(pending.tiling, dict(pending.named))
            touched[root] = None
            if isinstance(axis, str):  # REPLICAS
                pending.tiling = pending.tiling.with_replicas(int(edit.count))
            else:
                pending.tiling = pending.tiling.with_partitions(axis, int(edit.count))
            pending.named.pop(axis, None)  # re-insert: the latest edit is named for whole-layout rules
            pending.named[axis] = (named, via)
            roots.append(root)
        reached.append(roots)
    return list(touched), reached


# ----------------------------------------------------------------------------- validation


def _validate_class(arrays: ProfileArrays, root: int, pending: _ClassEdit) -> None:
    """The rules of ``planner.tiling_rules``, blamed on the value (and route) that set the handle."""
    violation = tiling_violation(
        arrays.shapes[root], pending.tiling, list(pending.named), arrays.device_tiles, recorded=arrays.tiling(root)
    )
    if violation is None:
        return
    named, via = pending.named.get(violation.axis) or next(iter(pending.named.values()))
    detail = f"{violation.detail}; reached through {via}" if via else violation.detail
    raise EditError(named, violation.axis, violation.rule, detail)


# ----------------------------------------------------------------------------- re-planning


def _interval_span(arrays: ProfileArrays, row: int) -> tuple[int, int]:
    """Interval indices [start, stop) of one value row (intervals are sorted by row)."""
    start = int(np.searchsorted(arrays.interval_row, row, side="left"))
    stop = int(np.searchsorted(arrays.interval_row, row, side="right"))
    return start, stop


def _new_figures(
    arrays: ProfileArrays, rows: list[int], tilings: dict[int, TensorTiling]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    shard = np.array(
        [shard_bytes(arrays.shapes[r], int(arrays.element_bytes[r]), tilings[r]) for r in rows], dtype=np.int64
    )
    granule = arrays.granule[rows]
    aligned = np.array([aligned_bytes(int(s), int(g)) for s, g in zip(shard, granule)], dtype=np.int64)
    return shard, aligned, aligned * arrays.copies[rows]


def apply_edits(
    arrays: ProfileArrays, base_plan: Plan, edits: Sequence[TilingEdit], *, whole_storage_group: bool = False
) -> WhatIf:
    """The plan with ``edits`` applied to the recorded tilings (see the module doc).

    Raises EditError (nothing applied) when the resulting layouts are invalid.
    """
    start = WhatIf(
        base_plan,
        {},
        _diff(base_plan, base_plan.usage_standard, base_plan.usage_interleaved, base_plan.peaks, {}),
        base_plan,
        whole_storage_group,
    )
    return extend_edits(arrays, start, edits)


def extend_edits(arrays: ProfileArrays, whatif: WhatIf, edits: Sequence[TilingEdit]) -> WhatIf:
    """``apply_edits(arrays, whatif.base, whatif.edits + edits)``, in time proportional to what
    the new edits touch (plus a copy of the per-step and per-value arrays), not to the edits
    before them: validation only of the classes they change (the others were valid), re-planning
    only of those classes' values, from ``whatif``'s plan. ``whatif`` is left as it was.
    """
    edits = tuple(edits)
    classes = dict(whatif.classes)
    touched, reached = _pending_layouts(arrays, classes, edits, whatif.whole_storage_group)
    touched_set = set(touched)
    for root, pending in classes.items():  # in the order classes were first edited, as a full apply
        if root in touched_set:
            _validate_class(arrays, root, pending)

    tilings = dict(whatif.tilings)
    rows = []
    for root in touched:
        for row in arrays.alias_rows[root]:
            tilings[row] = classes[root].tiling
            rows.append(row)
    rows.sort()

    base, now = whatif.base.figures, whatif.plan.figures
    figures = ValueBytes(now.shard.copy(), now.aligned.copy(), now.bytes.copy())
    usage = [whatif.plan.usage_standard.copy(), whatif.plan.usage_interleaved.copy()]
    changed = dict(whatif.changed)
    if rows:
        shard, aligned, cost = _new_figures(arrays, rows, tilings)
        figures.shard[rows], figures.aligned[rows], figures.bytes[rows] = shard, aligned, cost
        for row, new in zip(rows, cost.tolist()):
            old = int(now.bytes[row])
            if new != old:
                region_usage = usage[int(arrays.region[row])]
                start, stop = _interval_span(arrays, row)
                for first, last in zip(
                    arrays.interval_first[start:stop].tolist(), arrays.interval_last[start:stop].tolist()
                ):
                    region_usage[first : last + 1] += new - old
            original = int(base.bytes[row])
            if new != original:
                changed[row] = (int(arrays.value_ids[row]), original, new)
            else:
                changed.pop(row, None)
    peaks = peaks_of(arrays, usage[0], usage[1], figures.bytes)
    plan = Plan(figures, usage[0], usage[1], peaks)
    if arrays.tiles is not None:
        # A v2/v3 profile is planned per tile: the edited values re-estimated per tile, the other
        # values' and steps' recorded figures kept (planner.tile_whatif).
        try:
            plan, _ = whatif_plan(arrays, figures, tilings, whatif.base)
        except LayoutUnresolvable as exc:
            last = edits[-1] if edits else None
            raise EditError(
                last.value if last else -1, _edit_axis(last) if last else None, RULE_UNRESOLVABLE, str(exc)
            ) from None
        usage = [plan.usage_standard, plan.usage_interleaved]
        peaks = plan.peaks
        for row in rows:
            new, original = int(plan.figures.bytes[row]), int(base.bytes[row])
            if new != original:
                changed[row] = (int(arrays.value_ids[row]), original, new)
            else:
                changed.pop(row, None)

    ids = arrays.value_ids
    history = whatif.history
    for edit, roots in zip(edits, reached):
        applied = AppliedEdit(edit, sorted(int(ids[r]) for root in roots for r in arrays.alias_rows[root]))
        history = _History(history, applied, (history.length if history else 0) + 1)
    return WhatIf(
        plan,
        tilings,
        _diff(whatif.base, usage[0], usage[1], peaks, changed),
        whatif.base,
        whatif.whole_storage_group,
        history,
        classes,
        changed,
    )


def _diff(base_plan: Plan, standard: np.ndarray, interleaved: np.ndarray, peaks: Peaks, changed: dict) -> PlanDiff:
    return PlanDiff(
        step_standard=standard - base_plan.usage_standard,
        step_interleaved=interleaved - base_plan.usage_interleaved,
        peaks_before=base_plan.peaks,
        peaks_after=peaks,
        changed_values=sorted(changed.values()),
    )


# ----------------------------------------------------------------------------- valid counts


def current_tiling(arrays: ProfileArrays, row: int, tilings: dict[int, TensorTiling] | None = None) -> TensorTiling:
    """The value's tiling after ``tilings`` (a WhatIf's), else as recorded (its root's layout)."""
    root = int(arrays.root_rows[row])
    tilings = tilings or {}
    found = tilings.get(row) or tilings.get(root)
    return found if found is not None else arrays.tiling(root)


def valid_partition_counts(
    arrays: ProfileArrays, row: int, axis_position: int, tilings: dict[int, TensorTiling] | None = None
) -> range:
    """Every partition count the axis can take, the rest of the (possibly edited) tiling kept."""
    tiling = current_tiling(arrays, row, tilings)
    shape = arrays.shapes[int(arrays.root_rows[row])]
    return tiling_rules.valid_partition_counts(shape, tiling, axis_position, arrays.device_tiles)


def valid_replica_counts(arrays: ProfileArrays, row: int, tilings: dict[int, TensorTiling] | None = None) -> range:
    """Every replica count the value can take, its (possibly edited) partitions kept."""
    return tiling_rules.valid_replica_counts(current_tiling(arrays, row, tilings), arrays.device_tiles)
