"""Two memory plans side by side: every difference named, each peak's change accounted for.

    comparison = compare_plans(CompareSide(profile_a, arrays_a, plan_a), CompareSide.edited(profile_a, arrays_a, whatif))
    comparison = compare_plans(CompareSide.of(plan_data_a), CompareSide.of(plan_data_b))  # the app's PlanData
    comparison.delta            # PeakDelta: b − a of each peak and the effective peak
    comparison.steps            # StepAlignment: "same" or "aligned", the aligned step axis
    comparison.values           # ValueMatch: name + occurrence matching, unmatched values
    comparison.changed_values   # [ValueDiff], largest |delta| first
    comparison.attribution("total")  # Attribution: parts + scratch + exchange rows = delta
    comparison.overlay          # StepOverlay: both sides' usage per region on the aligned axis

A side is a loaded profile with its ``ProfileArrays`` and the plan compared: the file's plan
(``planner.model.plan_profile``) or a what-if plan (``planner.edits.apply_edits``), whose
``WhatIf`` gives the edited tilings. Everything is computed on first use and kept (the object is
immutable; computing a part twice from two threads gives the same result). Pure: numpy, pandas,
pyarrow; the matching rules are in ``compare_match``, the values in ``compare_values``, the
attribution in ``compare_attribution``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tilescope.models.lazy import lazy
from tilescope.models.profile import MemoryProfile
from tilescope.planner.model import Plan, ProfileArrays

from .compare_attribution import FIGURES, Attribution, attribute
from .compare_match import ALIGNED, SAME, StepAlignment, ValueMatch, align_steps, match_values
from .compare_values import ValueDiff, value_diffs

if TYPE_CHECKING:
    from tilescope.planner.edits import WhatIf

    from .plan_data import PlanData

__all__ = ("ALIGNED", "FIGURES", "SAME", "CompareSide", "Comparison", "PeakDelta", "StepOverlay", "compare_plans")


@dataclass(frozen=True)
class CompareSide:
    """One side of a comparison. ``plan`` is the plan compared; with ``whatif`` it must be
    ``whatif.plan`` (use ``CompareSide.edited``)."""

    profile: MemoryProfile
    arrays: ProfileArrays
    plan: Plan
    whatif: WhatIf | None = None
    label: str = ""  # how messages and reports name the side (default: the file name, "(edited)" when edited)

    def __post_init__(self):
        if self.whatif is not None and self.plan is not self.whatif.plan:
            raise ValueError("a side with a what-if compares the what-if's plan")
        if not self.label:
            name = Path(self.profile.source).name
            object.__setattr__(
                self, "label", f"{name} (edited)" if self.whatif is not None and self.whatif.edits else name
            )

    @classmethod
    def edited(cls, profile: MemoryProfile, arrays: ProfileArrays, whatif: WhatIf, label: str = "") -> CompareSide:
        return cls(profile, arrays, whatif.plan, whatif, label)

    @classmethod
    def of(cls, data: PlanData, label: str = "") -> CompareSide:
        """The side of one ``derived.plan_data.PlanData``: its plan (the what-if's when edited),
        named as its file was opened (``(edited)`` added when edited) unless ``label`` is given."""
        if not label:
            label = Path(data.opened.name).name + (" (edited)" if data.edited else "")
        return cls(data.profile, data.arrays, data.plan, data.whatif, label)

    @property
    def tilings(self) -> dict:
        """Value row → edited tiling (empty for a file's own plan)."""
        return self.whatif.tilings if self.whatif is not None else {}

    @property
    def edits(self) -> tuple:
        return tuple(self.whatif.edits) if self.whatif is not None else ()

    def precision_text(self, row: int) -> str:
        return self.profile.values.column("precision")[row].as_py()


@dataclass(frozen=True)
class PeakDelta:
    """b − a of each peak figure (bytes)."""

    standard: int
    interleaved: int
    total: int
    effective_peak_bytes: int

    def to_json(self) -> dict:
        return {
            "standard": self.standard,
            "interleaved": self.interleaved,
            "total": self.total,
            "effective_peak_bytes": self.effective_peak_bytes,
        }


@dataclass(frozen=True)
class StepOverlay:
    """Both sides' per-step usage on the aligned step axis (``StepAlignment``), for charts.

    ``a_step``/``b_step`` are each position's step (-1 where the side has none); usage columns are
    the planner's usage per region (the standard region without the exchange rows, as
    ``Plan.usage_standard``) and 0 where the side has no step; ``delta_*`` is b − a where both have
    a step and 0 elsewhere (``matched`` tells which).
    """

    a_step: np.ndarray
    b_step: np.ndarray
    matched: np.ndarray
    a_standard: np.ndarray
    a_interleaved: np.ndarray
    b_standard: np.ndarray
    b_interleaved: np.ndarray
    a_exchange_rows: int
    b_exchange_rows: int

    @property
    def n_positions(self) -> int:
        return self.a_step.size

    @property
    def a_total(self) -> np.ndarray:
        return self.a_standard + self.a_interleaved

    @property
    def b_total(self) -> np.ndarray:
        return self.b_standard + self.b_interleaved

    def delta(self, region: str) -> np.ndarray:
        """b − a per position of ``standard``, ``interleaved`` or ``total`` usage (0 where unmatched)."""
        a, b = {
            "standard": (self.a_standard, self.b_standard),
            "interleaved": (self.a_interleaved, self.b_interleaved),
            "total": (self.a_total, self.b_total),
        }[region]
        return np.where(self.matched, b - a, 0)


def _on_axis(usage: np.ndarray, steps: np.ndarray) -> np.ndarray:
    out = np.zeros(steps.size, dtype=np.int64)
    present = steps >= 0
    out[present] = usage[steps[present]]
    return out


@dataclass(frozen=True)
class Comparison:
    """A compared with B (see the module doc). Build it with ``compare_plans``."""

    a: CompareSide
    b: CompareSide
    _attributions: dict = field(default_factory=dict, repr=False, compare=False)

    @lazy
    def steps(self) -> StepAlignment:
        return align_steps(self.a.profile, self.b.profile)

    @lazy
    def values(self) -> ValueMatch:
        return match_values(self.a.profile, self.b.profile)

    @lazy
    def delta(self) -> PeakDelta:
        pa, pb = self.a.plan.peaks, self.b.plan.peaks
        return PeakDelta(
            pb.standard - pa.standard,
            pb.interleaved - pa.interleaved,
            pb.total - pa.total,
            pb.effective_peak_bytes - pa.effective_peak_bytes,
        )

    @lazy
    def changed_values(self) -> list[ValueDiff]:
        """Every matched pair that differs and every unmatched value, largest |delta_bytes| first."""
        return value_diffs(self.a, self.b, self.values)

    def attribution(self, figure: str) -> Attribution:
        """The change of one peak (``total``, ``standard`` or ``interleaved``), value by value."""
        if figure not in FIGURES:
            raise ValueError(f"figure must be one of {', '.join(FIGURES)}")
        found = self._attributions.get(figure)
        if found is None:
            found = self._attributions[figure] = attribute(self.a, self.b, self.values, figure)
        return found

    @lazy
    def overlay(self) -> StepOverlay:
        s = self.steps
        a, b = self.a.plan, self.b.plan
        return StepOverlay(
            a_step=s.a_step,
            b_step=s.b_step,
            matched=(s.a_step >= 0) & (s.b_step >= 0),
            a_standard=_on_axis(a.usage_standard, s.a_step),
            a_interleaved=_on_axis(a.usage_interleaved, s.a_step),
            b_standard=_on_axis(b.usage_standard, s.b_step),
            b_interleaved=_on_axis(b.usage_interleaved, s.b_step),
            a_exchange_rows=self.a.arrays.exchange_rows,
            b_exchange_rows=self.b.arrays.exchange_rows,
        )


def compare_plans(
    a: CompareSide, b: CompareSide, *, steps: StepAlignment | None = None, values: ValueMatch | None = None
) -> Comparison:
    """A comparison of two sides; nothing is computed until asked for.

    ``steps`` and ``values``: the step alignment and value match of an earlier comparison of the
    same two profiles, reused (they depend on the profiles alone, not on the plans: an edit of a
    side does not change them, and aligning 23k steps of two programs costs a third of a second).
    """
    comparison = Comparison(a, b)
    for name, known in (("steps", steps), ("values", values)):
        if known is not None:
            comparison.__dict__[name] = known  # what the lazy result would have computed
    return comparison
