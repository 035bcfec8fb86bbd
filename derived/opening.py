"""Opening a planner output: one path for a file or an upload's bytes, either kind of file, for
the app (run in a worker thread, never on a session's event loop) and the CLI.

A memory profile is read through the content-hash cache (``loaders.cache``), then planned
(``planner.model.plan_profile``); a search state is parsed (``loaders.search_state``). Both come
back immutable (``OpenedProfile``, ``OpenedSearchState``), so a server process may share them
between sessions; what is derived from them is computed on first use and kept on them.

A profile's first chart does not wait for the rest: the first time a content is planned, its
``derived.overview.UsageOverview`` (the timeline's whole-profile points, a few thousand rows) is
written beside its cache entry; reopening it with ``staged=True`` reads that table and returns,
the arrays and the plan built behind it (``OpenedProfile.build_behind``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ClassVar, Union

from tilescope.loaders.cache import CachedProfile, open_cached_output, open_planner_output
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
from .overview import OVERVIEW_TABLE, UsageOverview
from .series import StepInfo
from .value_search import LabelSearch
from .values import FileColumns, ValueText

Progress = Callable[[str, float], None]


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

    Opened from the cache with ``staged=True`` (``open_path``), it exists before its arrays and plan
    do: ``overview`` (what the timeline first draws, read from the cache entry) is there at once,
    and ``profile``, ``arrays``, ``plan`` are built in a thread of their own; reading one of them
    waits for that build (``ready`` says whether it is done). Otherwise everything is built when
    it is opened, as ``OpenedProfile(name, profile, arrays, plan)`` has it given.
    """

    kind: ClassVar[str] = "memory_profile"

    def __init__(self, name: str, profile: MemoryProfile | None = None, arrays: ProfileArrays | None = None,
                 plan: Plan | None = None, *, build: Callable[[], _Built] | None = None, overview: UsageOverview | None = None):
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

    # ------------------------------------------------------------------ the build behind

    @property
    def ready(self) -> bool:
        """Whether the arrays and the plan exist (reading them will not wait)."""
        return self._built is not None

    def wait(self) -> "OpenedProfile":
        """Build now (in this thread) unless built or being built elsewhere (then wait); raises
        what the build raised."""
        if self._built is None:
            with self._lock:
                if self._built is None and self._error is None:
                    try:
                        self._built = self._build()
                    except BaseException as exc:  # every reader gets it, not only the first
                        self._error = exc
        if self._error is not None:
            raise self._error
        return self

    def build_behind(self) -> "OpenedProfile":
        """Start the build in a daemon thread (readers of ``plan`` and the rest wait for it)."""
        if self._built is None:
            threading.Thread(target=self._build_quietly, name=f"build {self.name}", daemon=True).start()
        return self

    def _build_quietly(self) -> None:
        try:
            self.wait()
        except BaseException:  # kept in _error: the first reader raises it
            pass

    @property
    def profile(self) -> MemoryProfile:
        return self.wait()._built.profile

    @property
    def arrays(self) -> ProfileArrays:
        return self.wait()._built.arrays

    @property
    def plan(self) -> Plan:
        return self.wait()._built.plan

    @property
    def overview(self) -> UsageOverview:
        """What the timeline first draws (``derived.overview``): from the cache when it was there,
        else from the plan."""
        if self._overview is None:
            built = self.wait()._built
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
        return GroupTable.of(self.arrays, self.arrays.storage_groups, self.live_ranges)

    @lazy
    def steps(self) -> StepInfo:
        built = self.wait()._built
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


Opened = Union[OpenedProfile, OpenedSearchState]


def opened_profile(name: str, profile: MemoryProfile) -> OpenedProfile:
    """Plan a loaded profile."""
    return OpenedProfile(name, build=lambda: build_profile(profile)).wait()


def _from_cache(name: str, cached: CachedProfile, staged: bool, build_behind: bool = True) -> OpenedProfile:
    """A profile opened through the cache. When the entry has the overview (written the first
    time this content was planned), a staged open returns at once and builds the rest behind it
    (``build_behind``; else the first reader builds it); otherwise it is built here, and the
    overview written to the entry for the next open."""
    stored = None
    if cached.profile is None:  # a cache hit: the overview may be there
        table = cached.entry.read_table(OVERVIEW_TABLE)
        stored = UsageOverview.from_table(table) if table is not None else None

    def build() -> _Built:
        try:
            built = build_profile(cached.read())
        except InputError as exc:  # (the entry was damaged and the file changed into a bad one since)
            raise exc.naming(name) from None
        if stored is None or not stored.same_as(built.overview):  # (another planner's: replaced)
            cached.entry.write_table(OVERVIEW_TABLE, built.overview.to_table())
        return built

    opened = OpenedProfile(name, build=build, overview=stored)
    if not (staged and stored is not None):
        return opened.wait()
    return opened.build_behind() if build_behind else opened


def _opened(name: str, kind: str, payload: MemoryProfile | bytes) -> Opened:
    if kind == "search_state":
        return OpenedSearchState(name, parse_search_state(payload, name))
    return opened_profile(name, payload)


def open_path(path: str | Path, progress: Progress | None = None, name: str | None = None, *, use_cache: bool = True,
              staged: bool = False, build_behind: bool = True) -> Opened:
    """Open a file (``name``: how errors and the page name it; default the path).

    ``staged``: a profile whose cache entry has its overview comes back as soon as that is read,
    its arrays and plan built in a thread behind it (``OpenedProfile``); otherwise everything is
    built before this returns. Raises ``InputError`` naming the file as the user named it (a
    ``?file=`` name, not the server's absolute path); with ``staged``, a failure of the build
    behind (the file changed into a bad one since it was cached) is raised by the first reader of
    the plan. ``build_behind=False`` (with ``staged``): no thread is started; the first reader of
    the plan (or ``wait()``) builds it in its own thread (the app: in its load worker, which then
    keeps its time limit and shows its CPU use, ``app.load_pool``).
    """
    label = name or str(path)
    try:
        if use_cache:
            kind, payload = open_cached_output(path, progress=progress)
            if kind == "memory_profile":
                opened = _from_cache(label, payload, staged, build_behind)
                if progress is not None:
                    progress("done", 1.0)
                return opened
            return OpenedSearchState(label, parse_search_state(payload, label))
        kind, payload = open_planner_output(path, progress=progress, use_cache=False)
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
