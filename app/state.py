"""One ``SessionState`` per browser session: the loaded profile, its plan, the what-if edits and
the selection every view links to.

Views read these parameters and call the methods; nothing here imports a view. Loading is split in
two so a caller can run the slow half off the session's event loop: ``load_file``/``load_bytes``
(pure, slow: parse and plan) and ``SessionState.adopt`` (cheap: swap the loaded profile in).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import param

from tilescope.models.edits import TilingEdit, parse_edit_set
from tilescope.models.errors import InputError, TilescopeError
from tilescope.models.profile import MemoryProfile
from tilescope.planner.model import Plan, ProfileArrays, plan_profile

from .loading import load_planner_output

Progress = Callable[[str, float], None]
WHATIF_MISSING = "what-if planner not available"


@dataclass(frozen=True)
class Loaded:
    """What a load produced: a memory profile with its plan, or the raw bytes of a search state."""

    name: str
    kind: str  # "memory_profile" or "search_state"
    profile: MemoryProfile | None = None
    arrays: ProfileArrays | None = None
    plan: Plan | None = None
    search_state: bytes | None = None
    shared: object | None = None  # an app.shared entry: kept alive while a session holds this load


def load_file(path: str | Path, progress: Progress | None = None, name: str | None = None) -> Loaded:
    """Read, validate and plan a planner output. Raises TilescopeError (InputError) on bad input."""
    kind, payload = load_planner_output(path, progress, name=name)
    return _loaded(name or str(path), kind, payload)


def load_bytes(data: bytes, name: str, progress: Progress | None = None) -> Loaded:
    kind, payload = load_planner_output(data, progress, name=name)
    return _loaded(name, kind, payload)


def _loaded(name: str, kind: str, payload) -> Loaded:
    if kind == "search_state":
        return Loaded(name, kind, search_state=payload)
    arrays, plan = plan_profile(payload)
    return Loaded(name, kind, profile=payload, arrays=arrays, plan=plan)


def error_text(exc: BaseException) -> str:
    """The one-line message shown for a failed action (never a traceback)."""
    if isinstance(exc, TilescopeError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class SessionState(param.Parameterized):
    """Everything one session knows. ``plan`` is the what-if plan when edits exist, else ``base_plan``."""

    source = param.String(default="", doc="name of the open file, as the user gave it")
    kind = param.String(default="", doc='"memory_profile" or "search_state"')
    profile = param.Parameter(default=None, doc="MemoryProfile (None before the first load)")
    arrays = param.Parameter(default=None, doc="planner.model.ProfileArrays of profile")
    base_plan = param.Parameter(default=None, doc="Plan recomputed from the file's tilings")
    whatif = param.Parameter(default=None, doc="planner.edits.WhatIf for the current edits, or None")
    plan = param.Parameter(default=None, doc="current Plan: whatif.plan or base_plan")
    search_state = param.Parameter(default=None, doc="bytes of an open search state file")
    edits = param.List(default=[], item_type=TilingEdit)
    whole_storage_group = param.Boolean(default=False, doc="an edit applies to the value's whole storage group")
    selected_step = param.Integer(default=0)
    selected_values = param.List(default=[], item_type=int, doc="selected value ids")
    error = param.String(default="", doc="last error message (one line), empty when the last action worked")
    status = param.String(default="", doc="what is happening (loading progress, last action)")
    progress = param.Number(default=1.0, bounds=(0, 1), doc="fraction of the current load done")
    loading = param.Boolean(default=False)

    # ------------------------------------------------------------------ loading

    def open_path(self, path: str | Path, name: str | None = None) -> bool:
        """Load a file synchronously. On failure the current profile stays and ``error`` says why."""
        return self._open(lambda progress: load_file(path, progress, name))

    def open_bytes(self, data: bytes, name: str) -> bool:
        return self._open(lambda progress: load_bytes(data, name, progress))

    def _open(self, load: Callable[[Progress], Loaded]) -> bool:
        self.param.update(loading=True, progress=0.0, status="loading…")
        try:
            loaded = load(self.report_progress)
        except Exception as exc:  # a bad file must never take the session down
            self.fail(exc)
            return False
        self.adopt(loaded)
        return True

    def report_progress(self, stage: str, fraction: float) -> None:
        self.param.update(status=f"loading: {stage}", progress=min(max(float(fraction), 0.0), 1.0))

    def fail(self, exc: BaseException | str) -> None:
        """A load failed: keep what is open, say why."""
        message = exc if isinstance(exc, str) else error_text(exc)
        self.param.update(loading=False, progress=1.0, error=message, status="load failed; the previous file stays open")

    def adopt(self, loaded: Loaded) -> None:
        """Make a finished load current: clears edits and selection."""
        self._shared = loaded.shared  # (what a profile shared with other sessions needs to stay loaded)
        if loaded.kind == "search_state":
            self.param.update(
                source=loaded.name, kind=loaded.kind, search_state=loaded.search_state,
                profile=None, arrays=None, base_plan=None, whatif=None, plan=None, edits=[],
                selected_values=[], selected_step=0, error="", loading=False, progress=1.0,
                status=f"opened {loaded.name} (search state)",
            )
            return
        self.param.update(
            source=loaded.name, kind=loaded.kind, search_state=None,
            profile=loaded.profile, arrays=loaded.arrays, base_plan=loaded.plan, whatif=None, plan=loaded.plan,
            edits=[], selected_values=[], selected_step=loaded.plan.peaks.total_step,
            error="", loading=False, progress=1.0, status=f"opened {loaded.name}",
        )

    # ------------------------------------------------------------------ what-if edits

    def apply_edit(self, edit: TilingEdit) -> str | None:
        """Add one edit to the set. Returns the error message (also in ``error``) or None."""
        return self._set_edits([*self.edits, edit])

    def apply_edits(self, edits: Sequence[TilingEdit]) -> str | None:
        """Replace the whole edit set (validated together)."""
        return self._set_edits(list(edits))

    def undo(self) -> str | None:
        if not self.edits:
            return None
        return self._set_edits(self.edits[:-1])

    def reset(self) -> None:
        self.param.update(edits=[], whatif=None, plan=self.base_plan, error="", status="edits cleared")

    def load_edits(self, data: bytes, name: str = "<edit set>") -> str | None:
        """Replace the edit set with an uploaded edit-set file's edits."""
        try:
            edits = parse_edit_set(data, name)
        except InputError as exc:
            self.error = str(exc)
            return self.error
        return self._set_edits(edits)

    def _set_edits(self, edits: list[TilingEdit]) -> str | None:
        if self.arrays is None:
            self.error = "no memory profile is open"
            return self.error
        if not edits:
            self.reset()
            return None
        try:
            from tilescope.planner.edits import apply_edits  # written in parallel; absent → say so
        except ImportError:
            self.error = WHATIF_MISSING
            return self.error
        try:
            whatif = apply_edits(self.arrays, self.base_plan, edits, whole_storage_group=self.whole_storage_group)
        except TilescopeError as exc:
            self.error = error_text(exc)
            return self.error
        self.param.update(edits=list(edits), whatif=whatif, plan=whatif.plan, error="", status=f"{len(edits)} edit(s) applied")
        return None

    @param.depends("whole_storage_group", watch=True)
    def _reapply_for_group_toggle(self) -> None:
        """The toggle changes what every edit touches: re-derive the what-if plan."""
        if self.edits:
            self._set_edits(list(self.edits))

    # ------------------------------------------------------------------ selection

    def select_step(self, step: int) -> None:
        if self.arrays is None:
            return
        self.selected_step = int(min(max(int(step), 0), max(self.arrays.n_steps - 1, 0)))

    def select_values(self, ids: Sequence[int]) -> None:
        known = self.arrays.row_of_id if self.arrays is not None else {}
        self.selected_values = [int(i) for i in ids if int(i) in known]
