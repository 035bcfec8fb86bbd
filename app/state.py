"""One ``SessionState`` per browser session: what is open, the what-if edits, the selection, and
the derived data of the current plan that every view reads.

It stores; it does not load and it does not derive. Opening a file is
``tilescope.derived.opening.open_file`` (run in a load worker by ``app.open_flow``), then ``adopt`` here;
everything a view shows comes from ``data`` (a ``tilescope.derived.plan_data.PlanData``), which is
replaced, never changed, once per plan: the file's plan on open, a what-if plan after each edit.
Views watch ``data`` (and the selection), as Lumen's views watch ``Pipeline.data``.

Where work sized by the file runs: in a served session, in the server's load workers (under their
time limit), never on the event loop, whatever the plan's size (docs/architecture.md, "After the
open"). ``runner`` and ``worker`` are the doors; without them (a notebook, a test) it runs here.
Every new plan is made there (``_new_plan``): ``data`` and ``edits`` change together when it is done,
a result made stale by a later change (``_plan_ticket``) is dropped, gestures meanwhile build on the
edits asked (``_wanted``), and a refusal or the time limit keeps the plan and says why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import param

from tilescope.app.plan_prep import prepare_plan
from tilescope.derived.opening import Opened, OpenedProfile, OpenedSearchState
from tilescope.derived.plan_data import PlanData
from tilescope.loaders.edit_sets import parse_edit_set
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import InputError, TilescopeError
from tilescope.planner.edits import apply_edits


def error_text(exc: BaseException) -> str:
    """The one-line message shown for a failed action (never a traceback)."""
    if isinstance(exc, TilescopeError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


Runner = Callable[[Callable[[], Any], Callable[[Any], None]], bool]
Worker = Callable[..., Awaitable[Any]]  # worker(job, label=...) -> job() run in a load worker
Refused = Callable[[str], None]
REPLANNING = "re-planning…"  # the status while a new plan is computed in the load workers


class SessionState(param.Parameterized):
    """Everything one session knows."""

    source = param.String(default="", doc="name of the open file, as the user gave it")
    kind = param.String(
        default="", doc='the open file\'s kind (derived.opening.FILE_KINDS): "memory_profile", "search_state"…'
    )
    opened = param.Parameter(default=None, doc="the open file: what its kind's opener made (derived.opening.open_file)")
    data = param.Parameter(
        default=None, doc="PlanData of the current plan (the what-if plan when edited); None for a search state"
    )
    compare = param.Parameter(
        default=None,
        doc="derived.compare_data.CompareData: the current plan beside a second side; None when not comparing",
    )
    edits = param.List(default=[], item_type=TilingEdit)
    edit_units = param.List(
        default=[],
        item_type=int,
        doc="""
        How many of ``edits`` each gesture added, in order (a "keep the tile count" drag adds a
        partition and a replica edit as one unit): undo removes the last unit, and a drag that
        changes the same handles of the same value as the last unit replaces it (coalescing).""",
    )
    whole_storage_group = param.Boolean(default=False, doc="an edit applies to the value's whole storage group")
    selected_step = param.Integer(default=0)
    selected_tile = param.Integer(
        default=None,
        allow_None=True,
        doc="""
        The device tile the per-tile views show (``select_tile``); None until one is chosen (the
        tiles view then picks the step's peak tile). Cleared when another file opens.""",
    )
    selected_values = param.List(default=[], item_type=int, doc="selected value ids")
    error = param.String(default="", doc="last error message (one line), empty when the last action worked")
    status = param.String(default="", doc="what is happening (loading progress, last action)")
    progress = param.Number(default=1.0, bounds=(0, 1), doc="fraction of the current load done")
    loading = param.Boolean(default=False)
    ready = param.Integer(
        default=0, doc="bumped when a result of ``data`` computed in the background is ready (``result``)"
    )

    def __init__(self, **params):
        super().__init__(**params)
        # Where file-sized work runs: ``runner(job, done) -> bool`` queues ``job()`` in the server's
        # load workers and calls ``done(result or exception)`` on the session's loop (the served
        # app's ``SessionOpener.background``); False when it cannot. None (a notebook, a test):
        # here, at once.
        self.runner: Runner | None = None
        self.worker: Worker | None = None  # the same workers, awaited (a download's bytes)
        self._pending: set[tuple[int, str]] = set()
        self._failed: dict[tuple[int, str], BaseException] = {}
        self._plan_ticket = 0  # bumped by every plan change asked (and every open): older results are stale
        self._wanted: tuple[list[TilingEdit], list[int]] | None = None  # edits asked, while their plan is made
        self._compare_ticket = 0
        self._made: dict[tuple, Any] = {}  # plans made ahead in a worker (make_plan): PlanData or the refusal

    # ------------------------------------------------------------------ what is open (read-only)

    @property
    def profile(self):
        return self.data.profile if self.data is not None else None

    @property
    def arrays(self):
        return self.data.arrays if self.data is not None else None

    @property
    def plan(self):
        """The current plan: the what-if plan when edits exist, else the file's."""
        return self.data.plan if self.data is not None else None

    @property
    def base_plan(self):
        return self.data.opened.plan if self.data is not None else None

    @property
    def whatif(self):
        return self.data.whatif if self.data is not None else None

    @property
    def search(self) -> OpenedSearchState | None:
        return self.opened if isinstance(self.opened, OpenedSearchState) else None

    # ------------------------------------------------------------------ opening

    def adopt(self, opened: Opened, name: str | None = None) -> None:
        """Make a finished load current (shown as ``name``, default the name it was opened under):
        clears edits and selection."""
        name = name or opened.name
        self._plan_ticket += 1  # a plan change still under way was for what was open before
        self._compare_ticket += 1
        self._wanted = None
        common: dict[str, Any] = {
            "source": name,
            "kind": opened.kind,
            "opened": opened,
            "edits": [],
            "edit_units": [],
            "selected_values": [],
            "error": "",
            "loading": False,
            "progress": 1.0,
            "compare": None,
            "selected_tile": None,
        }
        if not isinstance(opened, OpenedProfile):  # a search state, or another kind: its view reads ``opened``
            # (the status says "opened": the header names the file and its kind)
            self.param.update(**common, data=None, selected_step=0, status="opened")
            return
        self.param.update(**common, data=opened.base, selected_step=opened.total_peak_step, status="opened")

    def begin_load(self) -> None:
        self.param.update(loading=True, progress=0.0, status="loading…")

    def report_progress(self, stage: str, fraction: float) -> None:
        self.param.update(status=f"loading: {stage}", progress=min(max(float(fraction), 0.0), 1.0))

    def fail(self, exc: BaseException | str) -> None:
        """A load failed: keep what is open, say why."""
        message = exc if isinstance(exc, str) else error_text(exc)
        self.param.update(
            loading=False, progress=1.0, error=message, status="load failed; the previous file stays open"
        )

    # ------------------------------------------------------------------ file-sized work

    def _in_background(self, data) -> bool:
        """Whether work on ``data`` goes to the load workers: always in a served session, whatever
        the plan's size (a small plan's work is small, and the same door keeps it off the loop)."""
        return self.runner is not None and data is not None

    def result(self, data: PlanData, name: str) -> Any:
        """``data``'s derived result ``name`` (a lazy ``PlanData`` attribute, e.g. ``"placement"``).
        Returned at once when it is computed already, computed here when the session has no runner;
        otherwise None, and it is computed in the load workers, then ``ready`` bumped (views that
        read it watch ``ready``): no computation sized by the file runs on the session's loop. A
        failure is raised, now or at the next call, as reading the attribute raises it."""
        if name in data.__dict__ or not self._in_background(data):
            return getattr(data, name)
        key = (id(data), name)
        if key in self._failed:
            raise self._failed[key]
        if key in self._pending:
            return None

        def done(outcome: Any) -> None:
            self._pending.discard(key)
            if data is self.data or data is getattr(self.data, "base", None):  # (else a plan since left)
                if isinstance(outcome, BaseException):
                    self._failed[key] = outcome
                self.ready += 1

        self._pending.add(key)
        assert self.runner is not None
        if not self.runner(lambda: getattr(data, name), done):  # (no loop to come back to: here)
            self._pending.discard(key)
            return getattr(data, name)
        return None

    def compute(self, data: PlanData, job: Callable[[], Any], show: Callable[[Any], None]) -> bool:
        """``show(job())`` (file-sized work on ``data``; ``show`` gets the result or the exception): here
        when the session has no runner, else ``job`` in the load workers and ``show`` later on the loop,
        if ``data`` is still the current plan. True then (a view says "computing…" only then)."""
        if self._in_background(data):
            assert self.runner is not None
            if self.runner(job, lambda outcome: show(outcome) if data is self.data else None):
                return True
        try:
            outcome = job()
        except TilescopeError as exc:
            outcome = exc
        show(outcome)
        return False

    async def work(self, job: Callable[[], Any], label: str = "") -> Any:
        """``job()`` (a download's bytes: a PNG, the tables) in the load workers under their time
        limit, awaited; here without a worker. Raises what the job raised, or ``LoadTimedOut``."""
        if self.worker is None:
            return job()
        return await self.worker(job, label=label)

    @param.depends("data", watch=True)
    def _forget_background(self) -> None:
        """Results asked for an earlier plan are not this one's."""
        live = {id(self.data), id(getattr(self.data, "base", None))}
        self._pending = {k for k in self._pending if k[0] in live}
        self._failed = {k: v for k, v in self._failed.items() if k[0] in live}

    # ------------------------------------------------------------------ comparing

    def adopt_compare(self, compare) -> None:
        """Show a finished comparison (``CompareData``, computed in a worker thread); if the plan
        changed meanwhile, it is shown, then follows the plan now current (``_compare_follows_plan``)."""
        if self.data is None:
            compare = None
        status = (
            f"comparing {compare.a_label} → {compare.b_label}" if compare is not None else "no memory profile is open"
        )
        self._compare_ticket += 1
        self.param.update(compare=compare, loading=False, progress=1.0, error="", status=status)
        self._compare_follows_plan()

    def stop_compare(self) -> None:
        self._compare_ticket += 1
        self.param.update(compare=None, status="compare closed")

    @param.depends("data", watch=True)
    def _compare_follows_plan(self) -> None:
        """An edit, undo or reset makes a new current plan: compare that one. The comparison is
        computed (and what the compare views show first warmed) in a load worker; until then the
        views show the comparison of the plan before."""
        compare, data, source = self.compare, self.data, self.source
        if compare is None or data is None:
            return
        following = compare.following(data, source)  # (a pair of references: the comparison itself is lazy)
        if following is compare:
            return
        if self.runner is None:
            self.compare = following
            return
        self._compare_ticket += 1
        ticket = self._compare_ticket

        def done(outcome: Any) -> None:
            if ticket != self._compare_ticket or self.data is not data:
                return  # closed, replaced, or the plan moved on: a later follow-up is under way
            if isinstance(outcome, BaseException):
                self.param.update(compare=None, error=f"compare: {error_text(outcome)}", status="compare closed")
                return
            self.compare = outcome

        if not self.runner(following.warm, done):
            self.compare = following

    # ------------------------------------------------------------------ what-if edits

    # Each returns the refusal (also in ``error``) when the new plan was made here (no runner), else
    # None at once: the plan is then made in the load workers, and a refusal arrives later, in
    # ``error`` and through ``refused(message)`` on the loop (module doc).

    def apply_edit(self, edit: TilingEdit, refused: Refused | None = None) -> str | None:
        """One gesture's edit (a drag, a typed count)."""
        return self.apply_gesture([edit], refused)

    def apply_gesture(self, edits: Sequence[TilingEdit], refused: Refused | None = None) -> str | None:
        """The edits of one gesture, as one unit. When the last unit changed the same value's same
        handles (the same axis dragged again, say), the gesture replaces it: five drags of one axis
        leave one edit."""
        edits = list(edits)
        kept, units = self._latest()
        if units and _handles(kept[-units[-1] :]) == _handles(edits):
            kept, units = kept[: -units[-1]], units[:-1]
        # A handle dragged back to the file's own count is no edit (unless an earlier edit changed it)
        earlier = set(_handles(kept))
        edits = [e for e in edits if _handles([e])[0] in earlier or not self._files_own(e)]
        if not edits:
            return self._set_edits(kept, units, refused)
        return self._set_edits([*kept, *edits], [*units, len(edits)], refused)

    def _files_own(self, edit: TilingEdit) -> bool:
        """``edit`` sets the count the file records for its value (it changes nothing by itself)."""
        arrays = self.arrays
        row = arrays.row_of_id.get(edit.value) if arrays is not None else None
        if row is None:
            return False
        tiling = arrays.tiling(row)
        if edit.replicas is not None:
            return tiling.replicas == edit.replicas
        return (
            edit.axis is not None
            and 0 <= edit.axis < len(tiling.axes)
            and tiling.axes[edit.axis].partitions == edit.partitions
        )

    def apply_edits(self, edits: Sequence[TilingEdit], refused: Refused | None = None) -> str | None:
        """Replace the whole edit set (validated together); each edit its own unit."""
        return self._set_edits(list(edits), [1] * len(edits), refused)

    def add_edits(self, edits: Sequence[TilingEdit], refused: Refused | None = None) -> str | None:
        """Add several edits as one unit (an advisor suggestion), never coalesced."""
        kept, units = self._latest()
        return self._set_edits([*kept, *edits], [*units, len(edits)], refused)

    def undo(self) -> str | None:
        """Remove the last gesture's edits."""
        kept, units = self._latest()
        if not kept:
            return None
        last = units[-1] if units else 1
        return self._set_edits(kept[:-last], units[:-1])

    def reset(self) -> None:
        if not isinstance(self.opened, OpenedProfile):
            return
        base = self.opened.base
        self._new_plan(lambda: prepare_plan(base), [], [], "edits cleared", None)

    def load_edits(self, data: bytes, name: str = "<edit set>", refused: Refused | None = None) -> str | None:
        """Replace the edit set with an uploaded edit-set file's edits (the file is a few edits:
        parsed here; the plan they make, as every plan, in the workers)."""
        try:
            edits = parse_edit_set(data, name)
        except InputError as exc:
            self.error = str(exc)
            if refused is not None:
                refused(self.error)
            return self.error
        return self.apply_edits(edits, refused)

    def make_plan(self, opened: Opened, edits: Sequence[TilingEdit]) -> None:
        """Make ahead, in the calling thread (the open's load worker), the plan ``apply_edits(edits)``
        will ask for once ``opened`` is adopted (the URL's edits): the page then arrives with them in
        one go, not the file's plan first and the edited one a moment later."""
        if not isinstance(opened, OpenedProfile) or not edits:
            return
        edits, group = list(edits), self.whole_storage_group
        try:
            made: Any = prepare_plan(
                PlanData(opened, apply_edits(opened.arrays, opened.plan, edits, whole_storage_group=group))
            )
        except TilescopeError as exc:
            made = exc
        self._made = {(id(opened), tuple(edits), group): made}

    @property
    def replanning(self) -> bool:
        """A new plan is being made in the load workers (``data`` is still the one before)."""
        return self._wanted is not None

    def _latest(self) -> tuple[list[TilingEdit], list[int]]:
        """The edits a new gesture builds on: those asked last (while their plan is made), else the current ones."""
        if self._wanted is not None:
            return list(self._wanted[0]), list(self._wanted[1])
        return list(self.edits), list(self.edit_units)

    def _set_edits(
        self, edits: list[TilingEdit], units: list[int] | None = None, refused: Refused | None = None
    ) -> str | None:
        opened = self.opened
        if not isinstance(opened, OpenedProfile):
            self.error = "no memory profile is open"
            return self.error
        if not edits:
            self.reset()
            return None
        units = units if units is not None and sum(units) == len(edits) else [1] * len(edits)
        group = self.whole_storage_group
        made = self._made.pop((id(opened), tuple(edits), group), None)
        if made is not None:  # made ahead in the open's worker (make_plan): nothing left to compute
            return self._new_plan(
                lambda: made, list(edits), units, f"{len(edits)} edit(s) applied", refused, ahead=True
            )

        def replan() -> PlanData:
            whatif = apply_edits(opened.arrays, opened.plan, edits, whole_storage_group=group)
            return prepare_plan(PlanData(opened, whatif))

        return self._new_plan(replan, list(edits), units, f"{len(edits)} edit(s) applied", refused)

    def _new_plan(
        self,
        make: Callable[[], PlanData],
        edits: list[TilingEdit],
        units: list[int],
        status: str,
        refused: Refused | None,
        ahead: bool = False,
    ) -> str | None:
        """Make the plan ``make()`` for ``edits`` (in the load workers when the session has them,
        module doc) and make it current with them. Returns the refusal when made here."""
        self._plan_ticket += 1
        ticket, opened = self._plan_ticket, self.opened

        def done(outcome: Any) -> str | None:
            if ticket != self._plan_ticket or self.opened is not opened:
                return None  # a later change (or another file) was asked meanwhile: this one is stale
            self._wanted = None
            if isinstance(outcome, BaseException):
                message = error_text(outcome)
                self.param.update(error=message, status="the edit was refused; the plan stays as it was")
                if refused is not None:
                    refused(message)
                return message
            self.param.update(edits=edits, edit_units=units, data=outcome, error="", status=status)
            return None

        def finish(outcome: Any) -> None:  # (the runner's callback; the message is said by done)
            done(outcome)

        if self.runner is not None and not ahead:
            self._wanted = (edits, units)
            self.status = REPLANNING
            if self.runner(make, finish):
                return None
        try:
            outcome: Any = make()
        except TilescopeError as exc:
            outcome = exc
        return done(outcome)  # (a plan made ahead is its PlanData or its refusal: done says which)

    @param.depends("whole_storage_group", watch=True)
    def _reapply_for_group_toggle(self) -> None:
        """The toggle changes what every edit touches: re-derive the what-if plan."""
        kept, units = self._latest()
        if kept:
            self._set_edits(kept, units)

    # ------------------------------------------------------------------ selection

    def select_step(self, step: int) -> None:
        if self.arrays is None:
            return
        self.selected_step = int(min(max(int(step), 0), max(self.arrays.n_steps - 1, 0)))

    def select_tile(self, tile: int | None) -> str | None:
        """Show ``tile`` in the per-tile views (None: back to the step's peak tile). Returns why a
        tile is refused (not a tile of the device), else None."""
        if tile is None:
            self.selected_tile = None
            return None
        if self.arrays is None:
            return "no memory profile is open"
        tiles = int(self.arrays.device_tiles)
        if not 0 <= int(tile) < tiles:
            return f"tile {int(tile):,} is not a tile of this device (0 to {tiles - 1:,})"
        self.selected_tile = int(tile)
        return None

    def select_values(self, ids: Sequence[int]) -> None:
        """Replace the selection (the one rule of every view: a click replaces)."""
        known = self.arrays.row_of_id if self.arrays is not None else {}
        self.selected_values = list(dict.fromkeys(int(i) for i in ids if int(i) in known))

    def click_value(self, value_id: int, add: bool = False) -> None:
        """A click on a value in any view: it replaces the selection, or with Ctrl/Shift (``add``)
        toggles the value in it."""
        value_id = int(value_id)
        if not add:
            self.select_values([value_id])
        elif value_id in self.selected_values:
            self.select_values([v for v in self.selected_values if v != value_id])
        else:
            self.select_values([*self.selected_values, value_id])

    @property
    def focus_value(self) -> int | None:
        """The value the editor shows and the URL's ``value=`` names: the last one selected."""
        return self.selected_values[-1] if self.selected_values else None


def _handles(edits: Sequence[TilingEdit]) -> list[tuple[int, object]]:
    """(value, axis or "replicas") of each edit, in order: what a gesture changed."""
    return [(e.value, "replicas" if e.replicas is not None else e.axis) for e in edits]
