"""Opening a planner output: one path for a file or an upload's bytes, either kind of file, for
the app (run in a worker thread, never on a session's event loop) and the CLI.

A memory profile is read through the content-hash cache (``loaders.cache``), then planned
(``planner.model.plan_profile``); a search state is parsed (``loaders.search_state``). Both come
back immutable (``OpenedProfile``, ``OpenedSearchState``), so a server process may share them
between sessions; what is derived from them is computed on first use and kept on them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ClassVar, Union

from tilescope.loaders.cache import open_planner_output
from tilescope.loaders.detect import kind_of_bytes
from tilescope.loaders.memory_profile import parse_memory_profile
from tilescope.loaders.search_state import parse_search_state
from tilescope.models.errors import InputError
from tilescope.models.profile import MemoryProfile
from tilescope.models.search_state import SearchState
from tilescope.planner.live import first_last_steps
from tilescope.planner.model import Plan, ProfileArrays, plan_profile

from .groups import GroupTable
from .lazy import lazy
from .series import StepInfo
from .value_search import LabelSearch
from .values import FileColumns, ValueText

Progress = Callable[[str, float], None]


@dataclass(frozen=True, eq=False)
class OpenedProfile:
    """A loaded memory profile with its arrays and the plan of the file's own tilings, and what is
    derived from the file alone (the same for every plan of it): each computed on first use and
    kept, so in the app every session that has the file open shares it."""

    kind: ClassVar[str] = "memory_profile"
    name: str  # the file as the user named it
    profile: MemoryProfile
    arrays: ProfileArrays
    plan: Plan

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
        return GroupTable.of(self.arrays, self.arrays.storage_groups, self.live_ranges)

    @lazy
    def steps(self) -> StepInfo:
        return StepInfo.of(self.profile.steps)

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


Opened = Union[OpenedProfile, OpenedSearchState]


def opened_profile(name: str, profile: MemoryProfile) -> OpenedProfile:
    """Plan a loaded profile."""
    arrays, plan = plan_profile(profile)
    return OpenedProfile(name, profile, arrays, plan)


def _opened(name: str, kind: str, payload: MemoryProfile | bytes) -> Opened:
    if kind == "search_state":
        return OpenedSearchState(name, parse_search_state(payload, name))
    return opened_profile(name, payload)


def open_path(path: str | Path, progress: Progress | None = None, name: str | None = None, *, use_cache: bool = True) -> Opened:
    """Open a file (``name``: how errors and the page name it; default the path).

    Raises ``InputError`` naming the file as the user named it (a ``?file=`` name, not the
    server's absolute path).
    """
    label = name or str(path)
    try:
        kind, payload = open_planner_output(path, progress=progress, use_cache=use_cache)
        return _opened(label, kind, payload)
    except InputError as exc:
        raise exc.naming(label) from None


def open_bytes(data: bytes, name: str, progress: Progress | None = None) -> Opened:
    """Open an upload's bytes (parsed in memory, never written to disk)."""
    if progress is not None:
        progress("reading", 0.0)
    try:
        kind = kind_of_bytes(data)
    except InputError as exc:
        raise exc.in_file(name) from None
    if kind == "search_state":
        return OpenedSearchState(name, parse_search_state(data, name))
    return opened_profile(name, parse_memory_profile(data, name, progress))
