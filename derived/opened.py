"""What opening a file gives: immutable objects a server process may share between sessions,
with what derives from the file alone computed on first use and kept on them.

- ``OpenedProfile``: a memory profile with its arrays and the plan of the file's own tilings;
- ``OpenedSearchState``: a parsed search state.

How a file becomes one of them: ``derived.opening`` (the one entry, and the registry of kinds).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from tilescope.models.lazy import lazy
from tilescope.models.profile import MemoryProfile
from tilescope.models.search_state import SearchState
from tilescope.planner.live import first_last_steps
from tilescope.planner.model import Plan, ProfileArrays, plan_profile

from .groups import GroupTable
from .overview import UsageOverview
from .series import StepInfo
from .value_search import LabelSearch
from .values import FileColumns, ValueText

__all__ = ["Opened", "OpenedProfile", "OpenedSearchState", "build_profile", "opened_profile"]


@dataclass(frozen=True)
class _Built:
    """What opening a profile builds: its tables, arrays, plan and what the timeline first draws."""

    profile: MemoryProfile
    arrays: ProfileArrays
    plan: Plan
    steps: StepInfo | None
    overview: UsageOverview | None


def build_profile(profile: MemoryProfile) -> _Built:
    """Plan a loaded profile, and its overview."""
    arrays, plan = plan_profile(profile)
    steps = StepInfo.of(profile.steps)
    return _Built(profile, arrays, plan, steps, UsageOverview.of(arrays, plan, steps))


class OpenedProfile:
    """A loaded memory profile with its arrays and the plan of the file's own tilings, and what is
    derived from the file alone (the same for every plan of it): each computed on first use and
    kept, so in the app every session that has the file open shares it.

    Opened staged from the cache (``derived.opening.open_file(staged=...)``), it exists before its
    arrays and plan do: ``overview`` (what the timeline first draws, read from the cache entry) is
    there at once; ``wait()`` builds ``profile``, ``arrays`` and ``plan`` in the calling thread
    (the opener's: a load worker in the app), and a reader in another thread waits for that build
    (``ready`` says whether it is done). Otherwise everything is built when it is opened, as
    ``OpenedProfile(name, profile, arrays, plan)`` has it given.
    """

    kind: ClassVar[str] = "memory_profile"

    def __init__(
        self,
        name: str,
        profile: MemoryProfile | None = None,
        arrays: ProfileArrays | None = None,
        plan: Plan | None = None,
        *,
        build: Callable[[], _Built] | None = None,
        overview: UsageOverview | None = None,
    ):
        self.name = name  # the file as the user named it
        self._overview = overview
        self._build = build
        self._built: _Built | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()  # this profile's own: the second reader waits for the first's build
        if build is None:
            if profile is None or arrays is None or plan is None:
                raise TypeError("OpenedProfile needs profile, arrays and plan, or build")
            self._built = _Built(profile, arrays, plan, None, None)  # (steps and overview on first use)

    # ------------------------------------------------------------------ the build

    @property
    def ready(self) -> bool:
        """Whether the arrays and the plan exist (reading them will not wait)."""
        return self._built is not None

    def wait(self) -> OpenedProfile:
        """Build now (in this thread) unless built or being built elsewhere (then wait); raises
        what the build raised."""
        if self._built is None:
            with self._lock:
                if self._built is None and self._error is None:
                    build = self._build
                    assert build is not None  # (without a build, __init__ was given what it builds)
                    try:
                        self._built = build()
                    except BaseException as exc:  # every reader gets it, not only the first
                        self._error = exc
        if self._error is not None:
            raise self._error
        return self

    def _done(self) -> _Built:
        """What the build made (waiting for it: ``wait``)."""
        self.wait()
        assert self._built is not None  # wait() built it or raised
        return self._built

    @property
    def profile(self) -> MemoryProfile:
        return self._done().profile

    @property
    def arrays(self) -> ProfileArrays:
        return self._done().arrays

    @property
    def plan(self) -> Plan:
        return self._done().plan

    @property
    def overview(self) -> UsageOverview:
        """What the timeline first draws (``derived.overview``): from the cache when it was there,
        else from the plan."""
        if self._overview is None:
            built = self._done()
            self._overview = built.overview or UsageOverview.of(built.arrays, built.plan, self.steps)
        return self._overview

    @property
    def total_peak_step(self) -> int:
        """The step the app selects on open (the total peak's), known before the plan is."""
        return self.overview.peaks.total_step if self._overview is not None else self.plan.peaks.total_step

    # ------------------------------------------------------------------ derived from the file

    @lazy
    def base(self):
        """The derived data of the file's plan (a ``PlanData``)."""
        from .plan_data import PlanData  # (plan_data builds on this module)

        return PlanData(self)

    @lazy
    def live_ranges(self) -> tuple:
        """First and last live step of every value (-1: never live)."""
        return first_last_steps(self.arrays)

    @lazy
    def file_columns(self) -> FileColumns:
        return FileColumns.of(self.profile, self.arrays, self.live_ranges)

    @lazy
    def group_table(self) -> GroupTable:
        arrays = self.arrays
        # (no storage groups: each value its own, as ProfileArrays.storage_group_rows)
        groups = arrays.storage_groups if arrays.storage_groups is not None else arrays.value_ids
        return GroupTable.of(arrays, groups, self.live_ranges)

    @lazy
    def steps(self) -> StepInfo:
        built = self._done()
        return built.steps if built.steps is not None else StepInfo.of(built.profile.steps)

    @lazy
    def value_text(self) -> ValueText:
        return ValueText.of(self.profile, self.arrays)

    @lazy
    def value_search(self) -> LabelSearch:
        """The value picker's search over ``value_text.labels``."""
        return LabelSearch(self.value_text.labels)


@dataclass(frozen=True, eq=False)
class OpenedSearchState:
    """A parsed search state."""

    kind: ClassVar[str] = "search_state"
    name: str
    search_state: SearchState

    @lazy
    def view_data(self):
        """What the search-state view shows (``derived.search_rows.SearchData``)."""
        from .search_rows import SearchData

        return SearchData.of(self.search_state)


Opened = OpenedProfile | OpenedSearchState


def opened_profile(name: str, profile: MemoryProfile) -> OpenedProfile:
    """Plan a loaded profile."""
    return OpenedProfile(name, build=lambda: build_profile(profile)).wait()
