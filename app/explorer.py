"""The page of one session: a ``panel_material_ui.Page`` with the file, a value search and the
theme toggle in its header; under it the view of the open file's kind (``derived.opening.FileKind.view``:
a memory profile's is ``app.views.profile_page``, summary and timeline beside the side tabs). The
URL and the keys are ``app.widgets.page_controls``; the URL's state is applied here.

The page composes views; it does not load. Every open (``?file=``, the default, an upload, a row of
the fleet view) is its ``opener``'s (``app.open_flow.SessionOpener``), which calls back ``adopt``
on the session's loop. ``app/main.py`` (served by ``panel serve app``) and ``app.notebook.explore``
both build this.
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from pathlib import Path

import panel as pn
import panel_material_ui as pmui
import param
from panel.util import edit_readonly

from tilescope.app.assets import static_text
from tilescope.app.fleet_open import requested_dataset
from tilescope.app.load_pool import load_pool
from tilescope.app.loading import AppOptions, display_name, initial_file, parse_app_args
from tilescope.app.one_message import one_message
from tilescope.app.open_flow import SessionOpener, StageHooks
from tilescope.app.page_context import PageContext, kind_view
from tilescope.app.shared import SharedProfiles, shared_profiles
from tilescope.app.side_tabs import DEFAULT_TAB, TAB_KEYS
from tilescope.app.state import SessionState
from tilescope.app.url_state import UrlState, parse_query
from tilescope.app.view_guard import watch_state
from tilescope.app.views.file_bar import FileBar
from tilescope.app.views.fleet import FleetView
from tilescope.app.views.profile_page import ProfilePage
from tilescope.app.widgets.page_controls import PageControls
from tilescope.app.widgets.value_picker import ValuePicker
from tilescope.derived.opening import Opened, OpenedProfile, kind_named
from tilescope.derived.value_focus import value_focus

__all__ = ["ExplorerApp", "build_app"]

CSS = static_text("page.css")
BUILDING = "building the rest of the page…"  # the status while a staged profile's plan is built behind its timeline
LABEL_ID = re.compile(r"#(-?\d+) ")  # a picker label starts with the value's id (derived.values.ValueText)


class ExplorerApp(pn.viewable.Viewer):
    """One session's page (see the module doc): it composes the views; opening files is its
    ``opener``'s (``app.open_flow.SessionOpener``)."""

    state = param.ClassSelector(class_=SessionState)
    shared = param.ClassSelector(class_=SharedProfiles, doc="profiles this server process has loaded (app.shared)")

    def __init__(self, options: AppOptions, **params):
        params.setdefault("shared", SharedProfiles())
        super().__init__(**params)
        self.options = options
        self._doc = pn.state.curdoc  # this session's document (None outside a server)
        self._requested_file: str | None = None  # the ?file= name that is open (None: the default or an upload)
        self._dataset_name: str | None = (
            None  # the ?dataset= name whose fleet view is open (None: none, or the server's)
        )
        self._restoring = False  # applying a URL: do not push it back
        self._tasks: set[asyncio.Task] = set()  # opens started by Back/Forward
        self.opener = SessionOpener(
            self.state,
            self.shared,
            options,
            lambda: self._doc or pn.state.curdoc,
            StageHooks(self._show_overview, self._undo_overview),
        )
        self.file_bar = FileBar(state=self.state)
        self.search = ValuePicker(
            placeholder="search values: #id or name…",
            case_sensitive=False,
            search_strategy="includes",
            min_characters=1,
            restrict=True,
            width=300,
            css_classes=["ts-value-search"],
            margin=(8, 10),
        )
        self.search.param.watch(one_message(self._on_search), "value")
        self.controls = PageControls(on_key=self.on_key, on_restore=self.restore_query, on_theme=self._theme_wanted)
        self.body = pn.Column(pn.pane.HTML("<i>loading…</i>", margin=20), sizing_mode="stretch_both")
        self.context = PageContext(self.state, self.opener, self.file_bar.upload_box)
        self.kind_views: dict[str, object] = {}  # file kind → its view, built the first time one is open
        self.fleet: FleetView | None = None  # the fleet view, when the session opened a dataset
        self._before_overview: list | None = None  # the body before a staged open drew an overview
        self.file_bar.upload.param.watch(self._on_upload, "value")
        watch_state(
            self.state,
            self._push_query,
            ["selected_step", "selected_values", "selected_tile", "edits", "source", "compare"],
            name="the address bar",
        )
        self.page = pmui.Page(
            title="tilescope",
            header=[self.file_bar.header, self.search],
            main=[self.controls, self.file_bar.error, self.body],
            theme_toggle=True,
            sidebar_width=0,
            busy_indicator=None,
            stylesheets=[CSS],
        )
        self.page.param.watch(self._on_theme, "dark_theme")
        # The page shows no busy indicator (busy_indicator=None), so it need not follow ``pn.state.busy``:
        # following it sent two more messages around every action (busy, then not busy).
        with edit_readonly(self.page):
            self.page.busy = False

    # ------------------------------------------------------------------ the views of each kind

    def kind_view(self, kind: str):
        """The view of file kind ``kind`` (``derived.opening.FileKind.view``), built once."""
        view = self.kind_views.get(kind)
        if view is None:
            view = self.kind_views[kind] = kind_view(kind_named(kind).view)(self.context)
            self._on_theme()
        return view

    @property
    def profile_page(self) -> ProfilePage | None:
        page = self.kind_views.get("memory_profile")
        return page if isinstance(page, ProfilePage) else None

    @property
    def timeline(self):
        return self.profile_page.timeline if self.profile_page is not None else None

    def _kind_layout(self, tab: str | None = None):
        """What the open file's kind shows (a profile: its page with ``tab`` in front)."""
        if not self.state.kind or (self.state.kind == "memory_profile" and self.state.data is None):
            return None
        view = self.kind_view(self.state.kind)
        if isinstance(view, ProfilePage):
            if view.tabs is None:
                layout = view.layout(tab)
                assert view.tabs is not None  # (built with the layout)
                view.tabs.tabs.param.watch(self._push_query, "active")
                return layout
            return view.layout()
        return view

    def _show_body(self, tab: str | None = None):
        """The open file's view (``tab`` on show); with a dataset open, its fleet view instead, or
        the file opened from it under a way back."""
        view = self._kind_layout(tab)
        if self.fleet is not None:
            objects = [self.fleet.page] if self.fleet.showing or view is None else [self.fleet.back, view]
        elif view is None:
            return
        else:
            objects = [view]
        if list(self.body.objects) != objects:
            self.body.objects = objects

    def _show_tab(self, tab: str | None) -> None:
        page = self.profile_page
        if page is not None and page.tabs is not None:
            page.tabs.show(tab or DEFAULT_TAB)

    def _theme_wanted(self, dark: bool) -> None:
        """The browser's choice on opening the page: the theme kept from the last visit, else the
        system's ``prefers-color-scheme`` (``app/static/page_controls.js``). Set on the session's
        next tick, not inside the handling of the browser's message: set there, the page's and the
        controls' new theme sometimes never reached the browser (the server held dark, the page
        stayed light: about half of the reloads after a toggle, test_url_history_browser's theme
        test; 0 of 5 on the next tick)."""
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(partial(setattr, self.page, "dark_theme", bool(dark)))
        else:
            self.page.dark_theme = bool(dark)

    def _on_theme(self, *_):
        self.controls.dark = bool(self.page.dark_theme)  # (the browser keeps a change for the next visit)
        for view in self.kind_views.values():
            set_dark = getattr(view, "set_dark", None)
            if set_dark is not None:
                set_dark(bool(self.page.dark_theme))

    def _show_overview(self, opened: OpenedProfile, name: str) -> None:
        """A staged open: the timeline alone, drawn from the profile's overview, while its plan is built."""
        page = self.kind_view("memory_profile")
        self._before_overview = list(self.body.objects)
        self.state.param.update(status=BUILDING, progress=0.95)  # (the header names the file)
        self.body.objects = [page.overview_layout(opened)]

    def _undo_overview(self) -> None:
        """The staged open failed: the page as it was, the timeline redrawn from what is open."""
        if self._before_overview is not None:
            self.body.objects = self._before_overview
            self._before_overview = None
            self.timeline.redraw()

    # ------------------------------------------------------------------ keys, search, URL

    def on_key(self, key: str) -> None:
        """←/→ previous/next step, Home/End first/last, p the total peak."""
        s = self.state
        if s.data is None:
            return
        last = s.data.arrays.n_steps - 1
        target = {
            "ArrowLeft": s.selected_step - 1,
            "ArrowRight": s.selected_step + 1,
            "Home": 0,
            "End": last,
            "p": s.data.plan.peaks.total_step,
        }.get(key)
        if target is not None:
            s.select_step(target)

    def _on_search(self, event) -> None:
        found = LABEL_ID.match(event.new or "")
        if found is not None and self.state.data is not None:
            self.show_value(int(found.group(1)))

    def show_value(self, value_id: int) -> None:
        """A value picked in the header's search, shown on every tab: selected (the editor opens it,
        the tables mark it), the step at its peak while live (``derived.value_focus``: the timeline
        marks its live range), and the Values table's filter and page not hiding it."""
        s = self.state
        if s.data is None or value_id not in s.data.arrays.row_of_id:
            return
        s.click_value(value_id)
        where = value_focus(s.data, value_id)
        if where is not None:
            s.select_step(where.peak_step)
        page = self.profile_page
        values = page.tabs.views.get("values") if page is not None and page.tabs is not None else None
        if values is not None and values.reveal(value_id):
            self.controls.clear_filters("ts-values-table")  # (its header filters hid the value)

    def _set_search(self) -> None:
        if self.state.data is not None:
            self.search.set_search(self.state.data.opened.value_search)

    def url_state(self) -> UrlState:
        s = self.state
        dataset = self._dataset_name if self.fleet is not None else None
        if self.fleet is not None and self.fleet.showing:
            return UrlState(dataset=dataset)  # the fleet view itself
        if s.data is None:
            return UrlState(file=self._requested_file, dataset=dataset)
        tab = (
            self.profile_page.tabs.key if self.profile_page is not None and self.profile_page.tabs is not None else None
        )
        return UrlState(
            self._requested_file,
            s.selected_step,
            s.focus_value,
            None if tab == DEFAULT_TAB else tab,
            tuple(s.edits),
            compare=self._compared_name(),
            tile=s.selected_tile,
            dataset=dataset,
        )

    def _compared_name(self) -> str | None:
        """The data-root file the profile is compared with (None: not comparing, or with an upload or its what-if)."""
        compare, page = self.state.compare, self.profile_page
        if compare is None or compare.mode != "file" or page is None:
            return None
        return compare.b_name if compare.b_name == page.compare_opener.named else None

    def _push_query(self, *_):
        if self._restoring:
            return
        if self.state.data is not None or self.fleet is not None:
            self.controls.query = self.url_state().query() or "?"  # ("?": the page's bare URL, the served fleet)

    def apply_url(self, wanted: UrlState) -> None:
        """Restore what a URL names (the file is opened before this): edits, step, value, tab."""
        self._restoring = True
        try:
            problems = self._apply_to_state(wanted)
            self._show_tab(wanted.tab)
            if problems:
                self.state.error = "; ".join(problems)
        finally:
            self._restoring = False
        self.controls.query = self.url_state().query()

    def _apply_to_state(self, wanted: UrlState) -> list[str]:
        """The URL's edits, step, value and tile, through the calls a click makes; what was refused."""
        s = self.state
        problems = list(wanted.problems)
        if s.data is None:
            return problems
        if tuple(s.edits) != wanted.edits:

            def edits_refused(error: str) -> None:  # (later, on the loop, when the plan is made in the workers)
                s.error = f"the URL's edits were not applied: {error}"

            error = s.apply_edits(list(wanted.edits), edits_refused) if wanted.edits else s.reset()
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
        if wanted.file != self._requested_file:
            if wanted.file:
                self._in_background(self._open_wanted(wanted))
            return  # (the served default or an upload: only a full load brings it back)
        if self.fleet is not None:
            self.fleet.showing = False
        self.apply_url(wanted)
        if wanted.compare != self._compared_name():
            if wanted.compare:
                self._in_background(self._compare_with(wanted.compare, wanted.tab))
            elif self.state.compare is not None:
                self.state.stop_compare()

    def _in_background(self, work) -> None:
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
            await self._compare_with(wanted.compare, wanted.tab)

    # ------------------------------------------------------------------ opening

    async def load_initial(self):
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
                await self._compare_with(wanted.compare, wanted.tab)
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
            await self._compare_with(wanted.compare, wanted.tab)

    def _edits_ahead(self, wanted: UrlState | None):
        """What the open's worker does after the open: the plan of the URL's edits (module doc of
        ``app.state``), so that no re-plan is left for the loop and the page arrives edited."""
        if wanted is None or not wanted.edits:
            return None
        return lambda opened: self.state.make_plan(opened, wanted.edits)

    async def _compare_with(self, name: str | None, tab: str | None = None) -> bool:
        """Compare the open profile with ``name`` (a file under the data root: ``?compare=NAME``, or
        two rows of the fleet view) and bring the Compare tab forward, or the URL's own ``tab``."""
        page = self.profile_page
        if not name or page is None or not await page.compare_opener.open_name(name):
            return False

        def show():
            self._show_tab(tab or "compare")
            self._push_query()

        await self.opener.in_session(show)
        return True

    async def _open_fleet(self, dataset) -> str | None:
        """Show the fleet view of ``dataset`` (``app.fleet_open.DatasetRequest``); the problem when it cannot be read."""
        fleet = FleetView(state=self.state, opener=self.opener, adopt=self.adopt, compare=self._compare_with)
        problem = await fleet.open(dataset)
        if fleet.fleet is not None:
            self.fleet = fleet
            self._dataset_name = dataset.name if pn.state.session_args and "dataset" in pn.state.session_args else None
            fleet.param.watch(self._on_fleet_showing, "showing")
            await self.opener.in_session(self._on_fleet_showing)
        return problem

    def _on_fleet_showing(self, *_):
        """The fleet view shown, or the profile opened from it: the body and the URL follow (each a
        history entry: Back from a profile opened from the fleet shows the fleet again)."""
        self._show_body()
        self._push_query()

    def adopt(
        self, opened: Opened, name: str | None = None, requested: str | None = None, wanted: UrlState | None = None
    ) -> None:
        """Show an opened file (on the session's loop), named ``name`` (default: as it opened),
        with what the URL ``wanted`` (edits, step, value, tab) applied in the same tick."""
        self._requested_file = requested
        self._before_overview = None
        self._restoring = True
        try:
            self.state.adopt(opened, name)
            problems = self._apply_to_state(wanted) if wanted is not None else []
        finally:
            self._restoring = False
        self._set_search()
        self._show_body(wanted.tab if wanted is not None else None)
        if wanted is not None:
            self._show_tab(wanted.tab)  # a later file: the layout was there already
        if problems:
            self.state.error = "; ".join(problems)
        self._push_query()

    async def _on_upload(self, event):
        files = event.new or {}
        if not files:
            return
        name, data = next(iter(files.items()))
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.file_bar.upload.value = {}
        await self.opener.open_upload(data, name, partial(self.adopt, name=Path(name).name))

    def __panel__(self):
        return self.page


def build_app(argv: list[str]) -> ExplorerApp:
    options = parse_app_args(argv)
    load_pool(
        options.load_workers, options.load_timeout
    )  # the process's load workers, made from the first session's --args
    app = ExplorerApp(options, state=SessionState(), shared=shared_profiles(options.data_root, options.max_file_bytes))
    app.state.runner = app.opener.background  # every plan's file-sized work: in the load workers, never on the loop
    app.state.worker = app.opener.work
    return app
