"""``PlanData``: everything the views, the report and the CLI show about one plan of one profile,
computed once per plan and read by all of them (none of them re-derives it).

A session holds two: the file's plan (``OpenedProfile.base``, shared by every session that has
the file open) and, after what-if edits, the edited plan. Each result is computed on first use,
so a view that is never shown costs nothing. Comparing two profiles is two ``PlanData`` side by
side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.lazy import lazy
from tilescope.planner.edits import WhatIf, current_tiling
from tilescope.planner.model import Plan
from tilescope.planner.placement import Placement, place

from .lifetimes import GanttBars, gantt_bars
from .live import LiveSet, live_set
from .opening import OpenedProfile
from .series import StepSeries
from .values import values_frame

GANTT_MEMO = 4  # lifetimes layouts kept per plan (one per "values drawn" setting recently shown)

EXACT_SECONDS = 1.0  # the exact solver behind the file plan's placement (planner.placement_exact)


@dataclass(frozen=True, eq=False)
class PlanData:
    """One plan (the file's when ``whatif`` is None) of ``opened``, and what is derived from it."""

    opened: OpenedProfile
    whatif: WhatIf | None = None

    # ------------------------------------------------------------------ what it is

    @property
    def plan(self) -> Plan:
        return self.whatif.plan if self.whatif is not None else self.opened.plan

    @property
    def base(self) -> PlanData:
        """The file's plan of the same profile (itself when unedited)."""
        return self if self.whatif is None else self.opened.base

    @property
    def arrays(self):
        return self.opened.arrays

    @property
    def profile(self):
        return self.opened.profile

    @property
    def edited(self) -> bool:
        return self.whatif is not None

    @property
    def tilings(self) -> dict:
        """Value row → edited tiling (empty for the file's plan)."""
        return self.whatif.tilings if self.whatif is not None else {}

    def tiling(self, row: int):
        """The value's tiling in this plan (its root's, edited or recorded)."""
        return current_tiling(self.arrays, row, self.tilings)

    # ------------------------------------------------------------------ derived results

    @lazy
    def series(self) -> StepSeries:
        return StepSeries.of(self.plan, self.arrays.exchange_rows)

    @lazy
    def values(self):
        """The values table (``derived.values.values_frame``): do not modify."""
        return values_frame(self.opened.file_columns, self.arrays, self.plan, self.opened.plan, self.tilings)

    def live_at(self, step: int) -> LiveSet:
        """The values live at ``step``, largest first, with the step's usage."""
        return live_set(self.arrays, self.plan, step)

    @lazy
    def group_overlap(self) -> np.ndarray:
        """Per storage group (``opened.group_table.groups`` order): the most bytes two members hold together."""
        return self.opened.group_table.largest_overlap(self.plan.figures.bytes)

    @lazy
    def placement(self) -> Placement:
        """Every allocation at an address (``planner.placement``); a what-if plan re-places only
        what its edits changed, starting from the file plan's placement. The file plan's own placement
        lets the exact solver try to lower each region's top for a moment (``EXACT_SECONDS``); edits
        never wait for it."""
        previous = None if self.whatif is None else self.base.placement
        if previous is not None:
            return place(self.arrays, self.plan, previous=previous)
        # Never wait for the search's first compilation here: without it, the packer's placement
        # is shown, and the compilation starts aside only when a region is above its bound.
        from tilescope.planner.solver import search_ready, warm_up_in_background

        ready = search_ready()
        placement = place(self.arrays, self.plan, exact_seconds=EXACT_SECONDS if ready else 0.0)
        if not ready and any(r.fragmentation > 0 for r in placement.regions.values()):
            warm_up_in_background()
        return placement

    def gantt(self, largest: int) -> GanttBars:
        """The lifetimes layout with the ``largest`` values drawn one lane each."""
        memo = self.__dict__.setdefault("_gantt", {})
        bars = memo.get(largest)
        if bars is None:
            bars = gantt_bars(self.arrays, self.plan.figures.bytes, largest)
            if len(memo) >= GANTT_MEMO:
                memo.pop(next(iter(memo)), None)
            memo[largest] = bars
        return bars
