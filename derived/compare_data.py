"""``CompareData``: two ``PlanData`` side by side and what the compare views show of them, computed
once per pair (each result on first use, kept; ``warm`` computes them all, in the app's worker
thread) and read by every compare view and the compare export.

Two modes:

- ``FILE``: A is the session's current plan (its what-if plan when edited), B another profile's
  file plan. An edit of A makes a new pair (``following``): B stays, the comparison is redone.
- ``WHATIF``: A is the file's plan, B the session's what-if plan of the same file.

Positions are those of the aligned step axis (``compare_match``): in ``"same"`` mode position
``p`` is step ``p`` of both; in ``"aligned"`` mode each side's steps sit at their own positions,
-1 where a side has no step there. Pure: numpy and pandas, no Panel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tilescope.models.lazy import lazy

from .compare import FIGURES, CompareSide, Comparison, compare_plans
from .compare_match import SAME
from .compare_values import ValueDiff, changes_text
from .plan_data import PlanData
from .series import runs_where

FILE = "file"
WHATIF = "whatif"
REGIONS = ("standard", "interleaved", "total")
CHANGED_COLUMNS = (
    "entry",
    "status",
    "name",
    "a_id",
    "b_id",
    "a_bytes",
    "b_bytes",
    "delta_bytes",
    "a_tiling",
    "b_tiling",
    "changes",
)


def changed_values_columns(comparison: Comparison) -> dict[str, list]:
    """The changed-values table as columns (``ValueDiff`` order: largest |delta| first): what the
    app's table shows and ``compare_values.csv`` holds (ids and bytes None on an absent side)."""
    diffs = comparison.changed_values
    column = lambda key: [getattr(v, key) for v in diffs]  # noqa: E731
    return {
        "entry": column("entry"),
        "status": column("status"),
        "name": column("name"),
        "a_id": column("a_id"),
        "b_id": column("b_id"),
        "a_bytes": column("a_bytes"),
        "b_bytes": column("b_bytes"),
        "delta_bytes": column("delta_bytes"),
        "a_tiling": column("a_tiling"),
        "b_tiling": column("b_tiling"),
        "changes": [changes_text(v.changes) for v in diffs],
    }


@dataclass(frozen=True)
class RegionSeries:
    """One region's usage of both sides on the aligned axis, as the peaks count it (standard and
    total with the exchange rows): 0 where a side has no step (``has_a``/``has_b`` say where)."""

    region: str
    a: np.ndarray
    b: np.ndarray
    has_a: np.ndarray
    has_b: np.ndarray

    @property
    def matched(self) -> np.ndarray:
        return self.has_a & self.has_b

    @property
    def delta(self) -> np.ndarray:
        """b − a where both sides have a step, else 0."""
        return np.where(self.matched, self.b - self.a, 0)


@dataclass(frozen=True)
class SideLife:
    """One side's live intervals of a compared value (empty when absent or never live itself)."""

    side: str  # "A" or "B"
    value_id: int | None
    bytes: int | None
    first_step: np.ndarray
    last_step: np.ndarray
    first_position: np.ndarray
    last_position: np.ndarray


@dataclass(frozen=True)
class EntryView:
    """A compared value (a matched pair or a one-sided value) and its lifetimes in both."""

    entry: int
    name: str
    status: str  # "changed", "same", "only_a", "only_b"
    diff: ValueDiff | None  # None for an unchanged pair
    a: SideLife
    b: SideLife


def _positions_of_steps(axis_steps: np.ndarray, n_steps: int) -> np.ndarray:
    """Position on the aligned axis of each of a side's steps."""
    out = np.full(n_steps, -1, dtype=np.int64)
    present = axis_steps >= 0
    out[axis_steps[present]] = np.flatnonzero(present)
    return out


@dataclass(frozen=True, eq=False)
class CompareData:
    a: PlanData
    b: PlanData
    mode: str  # FILE or WHATIF
    a_name: str  # each side's file as the user named it (report files name them so)
    b_name: str

    # ------------------------------------------------------------------ making pairs

    @staticmethod
    def against_file(
        current: PlanData, other: PlanData, current_name: str | None = None, other_name: str | None = None
    ) -> CompareData:
        return CompareData(current, other, FILE, current_name or current.opened.name, other_name or other.opened.name)

    @staticmethod
    def whatif_against_file(current: PlanData, name: str | None = None) -> CompareData:
        name = name or current.opened.name
        return CompareData(current.base, current, WHATIF, name, name)

    def following(self, current: PlanData, name: str | None = None) -> CompareData:
        """The same comparison for the session's new current plan (after an edit, undo or reset).
        The step alignment and value match are kept when the profiles are the same ones."""
        if self.mode == WHATIF:
            if self.b is current:
                return self
            out = CompareData.whatif_against_file(current, name or self.a_name)
        else:
            if self.a is current:
                return self
            out = CompareData.against_file(current, self.b, name or self.a_name, self.b_name)
        if out.a.opened is self.a.opened and out.b.opened is self.b.opened:
            done = self.__dict__.get("comparison")
            if done is not None and "steps" in done.__dict__ and "values" in done.__dict__:
                out.__dict__["_matching"] = (done.steps, done.values)
        return out

    # ------------------------------------------------------------------ the comparison

    @lazy
    def comparison(self) -> Comparison:
        steps, values = self.__dict__.pop("_matching", (None, None))  # from the comparison this one follows
        return compare_plans(CompareSide.of(self.a), CompareSide.of(self.b), steps=steps, values=values)

    @property
    def a_label(self) -> str:
        return self.comparison.a.label

    @property
    def b_label(self) -> str:
        return self.comparison.b.label

    def warm(self) -> CompareData:
        """Compute everything the compare views show first (the app calls this in a worker thread)."""
        c = self.comparison
        for figure in FIGURES:
            c.attribution(figure)
        for region in REGIONS:
            self.series(region)
        self.changed_frame, self.one_sided_runs, self.positions  # noqa: B018 (computed and kept)
        return self

    # ------------------------------------------------------------------ the aligned axis

    @lazy
    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """(position of each of A's steps, position of each of B's steps)."""
        s = self.comparison.steps
        return _positions_of_steps(s.a_step, s.n_a), _positions_of_steps(s.b_step, s.n_b)

    @property
    def n_positions(self) -> int:
        return int(self.comparison.steps.a_step.size)

    def series(self, region: str) -> RegionSeries:
        memo = self.__dict__.setdefault("_series", {})
        found = memo.get(region)
        if found is None:
            o = self.comparison.overlay
            a, b = {
                "standard": (o.a_standard, o.b_standard),
                "interleaved": (o.a_interleaved, o.b_interleaved),
                "total": (o.a_total, o.b_total),
            }[region]
            has_a, has_b = o.a_step >= 0, o.b_step >= 0
            if region != "interleaved":
                a, b = np.where(has_a, a + o.a_exchange_rows, 0), np.where(has_b, b + o.b_exchange_rows, 0)
            found = memo[region] = RegionSeries(region, a, b, has_a, has_b)
        return found

    @lazy
    def one_sided_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) positions of each run of positions where only one side has a step."""
        s = self.comparison.steps
        return runs_where((s.a_step < 0) | (s.b_step < 0))

    def step_line(self) -> str:
        s = self.comparison.steps
        if s.mode == SAME:
            return f"steps matched by index: the same (source, operation) sequence of {s.n_a:,} steps"
        return f"steps aligned by LCS: {s.matched.size:,} matched, {s.unmatched_a.size:,} only in A, {s.unmatched_b.size:,} only in B"

    def value_line(self) -> str:
        match = self.comparison.values
        changed = sum(1 for v in self.comparison.changed_values if v.status == "changed")
        return (
            f"values matched by name and order of appearance: {int(match.matched.sum()):,} matched ({changed:,} changed), "
            f"{match.only_a.size:,} only in A, {match.only_b.size:,} only in B"
        )

    # ------------------------------------------------------------------ values

    @lazy
    def changed_frame(self) -> pd.DataFrame:
        """The changed values as a table (``CHANGED_COLUMNS``; absent ids and bytes are NaN)."""
        columns = changed_values_columns(self.comparison)
        frame = pd.DataFrame({k: columns[k] for k in CHANGED_COLUMNS})
        for key in ("a_id", "b_id", "a_bytes", "b_bytes"):
            frame[key] = pd.array(columns[key], dtype="float64") if len(frame) else pd.Series([], dtype="float64")
        frame["entry"] = frame["entry"].astype("int64")
        frame["delta_bytes"] = frame["delta_bytes"].astype("int64")
        return frame

    @lazy
    def diff_of_entry(self) -> dict[int, ValueDiff]:
        return {v.entry: v for v in self.comparison.changed_values}

    def entry_of_a_id(self, value_id: int) -> int:
        """The entry of A's value ``value_id`` (-1 if A has no such value)."""
        row = self.a.arrays.row_of_id.get(int(value_id))
        return -1 if row is None else int(self.comparison.values.entry_of_a_row[row])

    def entry_of_b_id(self, value_id: int) -> int:
        row = self.b.arrays.row_of_id.get(int(value_id))
        return -1 if row is None else int(self.comparison.values.entry_of_b_row[row])

    def a_id_of(self, entry: int) -> int | None:
        row = int(self.comparison.values.a_row[entry])
        return None if row < 0 else int(self.a.arrays.value_ids[row])

    def _life(self, side: str, data: PlanData, row: int, positions: np.ndarray) -> SideLife:
        if row < 0:
            empty = np.zeros(0, dtype=np.int64)
            return SideLife(side, None, None, empty, empty, empty, empty)
        arrays = data.arrays
        span = arrays.intervals_of(row)
        first, last = arrays.interval_first[span.start : span.stop], arrays.interval_last[span.start : span.stop]
        return SideLife(
            side,
            int(arrays.value_ids[row]),
            int(data.plan.figures.bytes[row]),
            first,
            last,
            positions[first],
            positions[last],
        )

    def entry_view(self, entry: int) -> EntryView | None:
        """The value of ``entry`` in both profiles (None for no entry)."""
        match = self.comparison.values
        if not 0 <= entry < match.n_entries:
            return None
        a_row, b_row = int(match.a_row[entry]), int(match.b_row[entry])
        diff = self.diff_of_entry.get(entry)
        status = diff.status if diff is not None else "same"
        pos_a, pos_b = self.positions
        return EntryView(
            entry,
            str(match.name[entry]),
            status,
            diff,
            self._life("A", self.a, a_row, pos_a),
            self._life("B", self.b, b_row, pos_b),
        )
