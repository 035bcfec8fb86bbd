"""The session's URL and what it opens: the one object between the address bar
(``app.url_state.UrlState``, kept in the browser by ``app.widgets.page_controls``) and the
session's opens.

- **The first open** (``load_initial``, run by ``app/main.py`` once the browser has the page): the
  URL's ``?dataset=`` (its fleet view), its ``?file=`` (else the served file: ``app.loading.initial_file``),
  then the rest of the URL (edits, step, value, tile, tab) applied in the same tick as the file is
  adopted, then its ``?compare=``.
- **Back and Forward** (``restore_query``): the fleet view, the open file's state, or another file
  (opened again, in a load worker) or comparison.
- **The URL written back** (``push_query``) on every change of what it carries, except while a URL
  is being applied (it would push the half-applied state).

What is opened is opened by the session's opener (``app.open_flow.SessionOpener``: in the load
workers, adopted on the loop); a comparison by the profile page's ``app.compare_open.CompareOpener``;
a dataset by ``app.views.fleet.FleetView`` (``app.fleet_open`` says which). The router decides what
to open and what the URL says; it draws nothing: the page (``app.explorer.ExplorerApp``, a
``RoutedPage``) shows what was adopted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from functools import partial
from typing import Any, Protocol

import panel as pn

from tilescope.app.fleet_open import DatasetRequest, requested_dataset
from tilescope.app.loading import AppOptions, display_name, initial_file
from tilescope.app.open_flow import SessionOpener
from tilescope.app.side_tabs import DEFAULT_TAB, TAB_KEYS
from tilescope.app.state import SessionState
from tilescope.app.url_state import UrlState, parse_query
from tilescope.app.view_guard import watch_state
from tilescope.app.views.fleet import FleetView
from tilescope.app.views.profile_page import ProfilePage
from tilescope.app.widgets.page_controls import PageControls
from tilescope.derived.opening import Opened

__all__ = ["PageRouter", "RoutedPage"]

URL_PARAMS = ["selected_step", "selected_values", "selected_tile", "edits", "source", "compare"]  # what the URL carries


class RoutedPage(Protocol):
    """What the router needs of the page: where the URL goes, the profile page (its tab, its
    comparison) and how to show what was adopted."""

    controls: PageControls

    @property
    def profile_page(self) -> ProfilePage | None: ...

    def show_opened(self) -> None:
        """A file was adopted: what the page keeps of the file before (a staged overview) is
        dropped and the header's search lists the new file's values."""

    def show_body(self, tab: str | None = None) -> None:
        """The open file's view (``tab`` in front when it is built), or the fleet view."""

    def show_tab(self, tab: str | None) -> None:
        """The profile's side tab ``tab`` (None: the default) in front."""


class PageRouter:
    """One session's URL ↔ its opens (module doc)."""

    def __init__(self, page: RoutedPage, state: SessionState, opener: SessionOpener, options: AppOptions):
        self.page, self.state, self.opener, self.options = page, state, opener, options
        self.requested_file: str | None = None  # the ?file= name that is open (None: the default or an upload)
        self.dataset_name: str | None = (
            None  # the ?dataset= name whose fleet view is open (None: none, or the server's)
        )
        self.fleet: FleetView | None = None  # the fleet view, when the session opened a dataset
        self._restoring = False  # applying a URL: do not push it back
        self._tasks: set[asyncio.Task] = set()  # opens started by Back/Forward
        watch_state(state, self.push_query, URL_PARAMS, name="the address bar")

    # ------------------------------------------------------------------ the URL from the session

    def url_state(self) -> UrlState:
        s, fleet = self.state, self.fleet
        dataset = self.dataset_name if fleet is not None else None
        if fleet is not None and fleet.showing:
            return UrlState(dataset=dataset)  # the fleet view itself
        if s.data is None:
            return UrlState(file=self.requested_file, dataset=dataset)
        page = self.page.profile_page
        tab = page.tabs.key if page is not None and page.tabs is not None else None
        return UrlState(
            self.requested_file,
            s.selected_step,
            s.focus_value,
            None if tab == DEFAULT_TAB else tab,
            tuple(s.edits),
            compare=self.compared_name(),
            tile=s.selected_tile,
            dataset=dataset,
        )

    def compared_name(self) -> str | None:
        """The data-root file the profile is compared with (``CompareOpener.compared_name``)."""
        page = self.page.profile_page
        return page.compare_opener.compared_name() if page is not None else None

    def push_query(self, *_) -> None:
        if self._restoring:
            return
        if self.state.data is not None or self.fleet is not None:
            self.page.controls.query = self.url_state().query() or "?"  # ("?": the page's bare URL, the served fleet)

    # ------------------------------------------------------------------ the session from the URL

    def adopt(
        self, opened: Opened, name: str | None = None, requested: str | None = None, wanted: UrlState | None = None
    ) -> None:
        """Show an opened file (on the session's loop), named ``name`` (default: as it opened; ``requested``:
        its ``?file=`` name), with what the URL ``wanted`` (edits, step, value, tab) applied in the same tick."""
        self.requested_file = requested
        self._restoring = True
        try:
            self.state.adopt(opened, name)
            problems = self._apply_to_state(wanted) if wanted is not None else []
        finally:
            self._restoring = False
        self.page.show_opened()
        self.page.show_body(wanted.tab if wanted is not None else None)
        if wanted is not None:
            self.page.show_tab(wanted.tab)  # a later file: the layout was there already
        if problems:
            self.state.error = "; ".join(problems)
        self.push_query()

    def apply_url(self, wanted: UrlState) -> None:
        """Restore what a URL names (the file is opened before this): edits, step, value, tab."""
        self._restoring = True
        try:
            problems = self._apply_to_state(wanted)
            self.page.show_tab(wanted.tab)
            if problems:
                self.state.error = "; ".join(problems)
        finally:
            self._restoring = False
        self.page.controls.query = self.url_state().query()

    def _apply_to_state(self, wanted: UrlState) -> list[str]:
        """The URL's edits, step, value and tile, through the calls a click makes; what was refused."""
        s = self.state
        problems = list(wanted.problems)
        if s.data is None:
            return problems
        if tuple(s.edits) != wanted.edits:

            def edits_refused(error: str) -> None:  # (later, on the loop, when the plan is made in the workers)
                s.error = f"the URL's edits were not applied: {error}"

            error = None
            if wanted.edits:
                error = s.apply_edits(list(wanted.edits), edits_refused)
            else:
                s.reset()
            if error:
                problems.append(f"the URL's edits were not applied: {error}")
        if wanted.step is not None:
            s.select_step(wanted.step)
        if wanted.value is not None:
            if wanted.value in s.data.arrays.row_of_id:
                s.select_values([wanted.value])
            else:
                problems.append(f"the URL's value={wanted.value} is not a value of this file; ignored")
        elif s.selected_values:
            s.select_values([])
        if wanted.tile is not None:
            refused = s.select_tile(wanted.tile)
            if refused:
                problems.append(f"the URL's tile={wanted.tile}: {refused}; ignored")
        elif s.selected_tile is not None:  # (an older URL without a tile: back to the step's peak tile)
            s.select_tile(None)
        return problems

    def restore_query(self, query: str) -> None:
        """The browser went back (or forward) to ``query``: the fleet view, the open file's state,
        or another file (opened again, in a load worker) or comparison."""
        wanted = parse_query(query, TAB_KEYS)
        if self.fleet is not None and not wanted.file:
            self.fleet.showing = True  # (its watcher shows it and writes its URL)
            return
        if wanted.file != self.requested_file:
            if wanted.file:
                self._in_background(self._open_wanted(wanted))
            return  # (the served default or an upload: only a full load brings it back)
        if self.fleet is not None:
            self.fleet.showing = False
        self.apply_url(wanted)
        if wanted.compare != self.compared_name():
            if wanted.compare:
                self._in_background(self.compare_with(wanted.compare, wanted.tab))
            elif self.state.compare is not None:
                self.state.stop_compare()

    def _in_background(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # (a task nobody holds may be collected before it ends)
        task.add_done_callback(self._tasks.discard)

    async def _open_wanted(self, wanted: UrlState) -> None:
        """Open ``wanted.file`` with the rest of its URL (Back or Forward to another file)."""
        name = wanted.file
        assert name is not None
        if await self.opener.open_name(name, partial(self.adopt, name=name, requested=name, wanted=wanted)):
            if self.fleet is not None:
                await self.opener.in_session(partial(setattr, self.fleet, "showing", False))
            await self.compare_with(wanted.compare, wanted.tab)

    # ------------------------------------------------------------------ the first open

    async def load_initial(self) -> None:
        """Open the URL's ``?file=`` (if any), else the served file; a refused or bad requested file
        falls back to the default and keeps its message. The rest of the URL is applied in the same
        tick as the file, before the views are drawn: the page arrives as the URL says, in one go."""
        args = pn.state.session_args if pn.state.session_args else {}
        wanted = parse_query(args, TAB_KEYS)
        problem = None
        if (dataset := requested_dataset(args, self.options)) is not None:
            problem = await self._open_fleet(dataset)
            if self.fleet is not None and not wanted.file:
                return
        if wanted.file:
            name = wanted.file
            if await self.opener.open_name(
                name, partial(self.adopt, name=name, requested=name, wanted=wanted), self._edits_ahead(wanted)
            ):
                if self.fleet is not None:  # a profile opened from the fleet view: under its way back
                    await self.opener.in_session(partial(setattr, self.fleet, "showing", False))
                await self.compare_with(wanted.compare, wanted.tab)
                return
            problem = self.state.error
            if self.fleet is not None:
                await self.opener.in_session(partial(self.state.fail, problem))
                return  # the fleet stays, with the file's problem
        path = initial_file(self.options)
        rest = (
            None
            if problem
            else UrlState(None, wanted.step, wanted.value, wanted.tab, wanted.edits, wanted.problems, tile=wanted.tile)
        )
        await self.opener.open_path(
            path, display_name(path), partial(self.adopt, name=display_name(path), wanted=rest), self._edits_ahead(rest)
        )
        if problem:
            await self.opener.in_session(partial(self.state.fail, problem))
        else:
            await self.compare_with(wanted.compare, wanted.tab)

    def _edits_ahead(self, wanted: UrlState | None):
        """What the open's worker does after the open: the plan of the URL's edits (module doc of
        ``app.state``), so that no re-plan is left for the loop and the page arrives edited."""
        if wanted is None or not wanted.edits:
            return None
        return lambda opened: self.state.make_plan(opened, wanted.edits)

    async def compare_with(self, name: str | None, tab: str | None = None) -> bool:
        """Compare the open profile with ``name`` (a file under the data root: ``?compare=NAME``, or
        two rows of the fleet view) and bring the Compare tab forward, or the URL's own ``tab``."""
        page = self.page.profile_page
        if not name or page is None or not await page.compare_opener.open_name(name):
            return False

        def show() -> None:
            self.page.show_tab(tab or "compare")
            self.push_query()

        await self.opener.in_session(show)
        return True

    async def _open_fleet(self, dataset: DatasetRequest) -> str | None:
        """Show the fleet view of ``dataset``; the problem when it cannot be read."""
        fleet = FleetView(state=self.state, opener=self.opener, adopt=self.adopt, compare=self.compare_with)
        problem = await fleet.open(dataset)
        if fleet.fleet is not None:
            self.fleet = fleet
            self.dataset_name = dataset.name if dataset.in_url else None
            fleet.param.watch(self._on_fleet_showing, "showing")
            await self.opener.in_session(self._on_fleet_showing)
        return problem

    def _on_fleet_showing(self, *_) -> None:
        """The fleet view shown, or the profile opened from it: the body and the URL follow (each a
        history entry: Back from a profile opened from the fleet shows the fleet again)."""
        self.page.show_body()
        self.push_query()
