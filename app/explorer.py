"""The page of one session: a ``panel_material_ui.Page`` with the file, a value search and the
theme toggle in its header; under it the summary and the timeline (always in view) beside the
side panel's tabs (``app.layout``). The URL and the keys are ``app.widgets.page_controls``.

``app/main.py`` (served by ``panel serve app``) and ``app.notebook.explore`` both build this.
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
from tilescope.app.compare_open import CompareOpener
from tilescope.app.fleet_open import requested_dataset
from tilescope.app.layout import DEFAULT_TAB, TAB_KEYS, SideTabs
from tilescope.app.load_pool import load_pool
from tilescope.app.one_message import one_message
from tilescope.app.loading import AppOptions, check_upload_size, display_name, initial_file, parse_app_args, resolve_in_root
from tilescope.app.shared import SharedProfiles, shared_profiles
from tilescope.app.state import SessionState, error_text
from tilescope.app.url_state import UrlState, parse_query
from tilescope.app.view_guard import watch_state
from tilescope.app.views.file_bar import FileBar
from tilescope.app.views.fleet import FleetView
from tilescope.app.views.glossary import glossary_html
from tilescope.app.views.search_state import SearchStateView
from tilescope.app.views.summary import SummaryView
from tilescope.app.views.timeline import TimelineView
from tilescope.app.widgets.page_controls import PageControls
from tilescope.app.widgets.value_picker import ValuePicker
from tilescope.derived.opening import Opened, OpenedProfile, open_bytes

CSS = static_text("page.css")
BUILDING = "building the rest of the page…"  # the status while a staged profile's plan is built behind its timeline
LABEL_ID = re.compile(r"#(-?\d+) ")  # a picker label starts with the value's id (derived.values.ValueText)


class ExplorerApp(pn.viewable.Viewer):
    """One session's page (see the module doc)."""

    state = param.ClassSelector(class_=SessionState)
    shared = param.ClassSelector(class_=SharedProfiles, doc="profiles this server process has loaded (app.shared)")

    def __init__(self, options: AppOptions, **params):
        params.setdefault("shared", SharedProfiles())
        super().__init__(**params)
        self.options = options
        self._doc = pn.state.curdoc  # this session's document (None outside a server)
        self._requested_file: str | None = None  # the ?file= name that is open (None: the default or an upload)
        self._restoring = False  # applying a URL: do not push it back
        self.file_bar = FileBar(state=self.state)
        self.search = ValuePicker(
            placeholder="search values: #id or name…", case_sensitive=False, search_strategy="includes",
            min_characters=1, restrict=True, width=300, css_classes=["ts-value-search"], margin=(8, 10),
        )
        self.search.param.watch(one_message(self._on_search), "value")
        self.controls = PageControls(on_key=self.on_key, on_restore=self.restore_query)
        self.body = pn.Column(pn.pane.HTML("<i>loading…</i>", margin=20), sizing_mode="stretch_both")
        self.side: SideTabs | None = None
        self.timeline: TimelineView | None = None
        self._profile_views = None  # built once, on the first memory profile
        self.compare_opener = CompareOpener(self.state, self.shared, options.data_root, self._in_session, lambda: self._doc or pn.state.curdoc)
        self.fleet: FleetView | None = None  # the fleet view, when the session opened a dataset
        self.file_bar.upload.param.watch(self._on_upload, "value")
        watch_state(self.state, self._push_query, ["selected_step", "selected_values", "selected_tile", "edits", "source"],
                    name="the address bar")
        self.page = pmui.Page(
            title="tilescope", header=[self.file_bar.header, self.search], main=[self.controls, self.file_bar.error, self.body],
            theme_toggle=True, sidebar_width=0, busy_indicator=None, stylesheets=[CSS],
        )
        self.page.param.watch(self._on_theme, "dark_theme")
        # The page shows no busy indicator (busy_indicator=None), so it need not follow ``pn.state.busy``:
        # following it sent two more messages around every action (busy, then not busy).
        with edit_readonly(self.page):
            self.page.busy = False

    # ------------------------------------------------------------------ layout

    def _profile_layout(self, tab: str | None = None):
        if self._profile_views is None:
            s = self.state
            if self.timeline is None:  # (else drawn already: a staged open showed its overview)
                self.timeline = TimelineView(state=s)
            self.side = SideTabs(s, active=tab or DEFAULT_TAB, view_args={"compare": {"opener": self.compare_opener}})
            self.side.tabs.param.watch(self._push_query, "active")
            main = pn.Column(
                SummaryView(state=s), self.timeline,
                pn.pane.HTML(glossary_html(), stylesheets=[CSS], sizing_mode="stretch_width", css_classes=["ts-glossary-pane"]),
                self.file_bar.upload_box,
                sizing_mode="stretch_width", css_classes=["ts-main-column"], scroll=True, stylesheets=[CSS],
            )
            side = pn.Column(self.side.tabs, sizing_mode="stretch_width", css_classes=["ts-side-column"], scroll=True, stylesheets=[CSS])
            self._profile_views = pn.Row(main, side, sizing_mode="stretch_both", css_classes=["ts-columns"], stylesheets=[CSS], margin=0)
            self._on_theme()
        return self._profile_views

    def _show_body(self, tab: str | None = None):
        """The search-state view or the profile views (``tab`` on show), whichever the open file
        needs; with a dataset open, its fleet view instead, or the profile opened from it under a
        way back."""
        if self.state.kind == "search_state":
            view = pn.Column(SearchStateView(state=self.state), self.file_bar.upload_box, sizing_mode="stretch_width", scroll=True,
                             css_classes=["ts-search-column"], stylesheets=[CSS])
        elif self.state.data is not None:
            view = self._profile_layout(tab)
        else:
            view = None
        if self.fleet is not None:
            objects = [self.fleet.page] if self.fleet.showing or view is None else [self.fleet.back, view]
        elif view is None:
            return
        else:
            objects = [view]
        if list(self.body.objects) != objects:
            self.body.objects = objects

    def _on_theme(self, *_):
        if self.timeline is not None:
            self.timeline.set_dark(bool(self.page.dark_theme))
        if self.side is not None and "lifetimes" in self.side.views:
            self.side.views["lifetimes"].set_dark(bool(self.page.dark_theme))

    # ------------------------------------------------------------------ keys, search, URL

    def on_key(self, key: str) -> None:
        """←/→ previous/next step, Home/End first/last, p the total peak."""
        s = self.state
        if s.data is None:
            return
        last = s.data.arrays.n_steps - 1
        target = {"ArrowLeft": s.selected_step - 1, "ArrowRight": s.selected_step + 1, "Home": 0, "End": last,
                  "p": s.data.plan.peaks.total_step}.get(key)
        if target is not None:
            s.select_step(target)

    def _on_search(self, event) -> None:
        found = LABEL_ID.match(event.new or "")
        if found is not None and self.state.data is not None:
            self.state.click_value(int(found.group(1)))

    def _set_search(self) -> None:
        if self.state.data is not None:
            self.search.set_search(self.state.data.opened.value_search)

    def url_state(self) -> UrlState:
        s = self.state
        if s.data is None:
            return UrlState(file=self._requested_file)
        tab = self.side.key if self.side is not None else None
        compare = s.compare.b_name if s.compare is not None and s.compare.mode == "file" else None
        return UrlState(self._requested_file, s.selected_step, s.focus_value, None if tab == DEFAULT_TAB else tab, tuple(s.edits),
                        compare=compare, tile=s.selected_tile)

    def _push_query(self, *_):
        if not self._restoring and self.state.data is not None:
            self.controls.query = self.url_state().query()

    def apply_url(self, wanted: UrlState) -> None:
        """Restore what a URL names (the file is opened before this): edits, step, value, tab."""
        self._restoring = True
        try:
            problems = self._apply_to_state(wanted)
            if self.side is not None:
                self.side.show(wanted.tab or DEFAULT_TAB)
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
            error = s.apply_edits(list(wanted.edits)) if wanted.edits else s.reset()
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
        return problems

    def restore_query(self, query: str) -> None:
        """The browser went back (or forward) to ``query``."""
        wanted = parse_query(query, TAB_KEYS)
        if wanted.file != self._requested_file:
            return  # another file: only a full load brings it (the browser reloads on a typed URL)
        self.apply_url(wanted)

    # ------------------------------------------------------------------ loading

    async def load_initial(self):
        """Open the URL's ``?file=`` (if any), else the served file; a refused or bad requested file
        falls back to the default and keeps its message. The rest of the URL is applied in the same
        tick as the file, before the views are drawn: the page arrives as the URL says, in one go."""
        args = pn.state.session_args if pn.state.session_args else {}
        wanted = parse_query(args, TAB_KEYS)
        problem = None
        if not wanted.file and (dataset := requested_dataset(args, self.options)) is not None:
            problem = await self._open_fleet(dataset)
            if self.fleet is not None:
                return
        if wanted.file:
            root, name = self.options.data_root, wanted.file
            # Resolving the name touches the file system (symlinks): in the load worker too, never on the loop.
            job = lambda progress: self.shared.open_path(resolve_in_root(root, name), progress, name=name, **STAGED)  # noqa: E731
            if await self._load(job, name, requested=name, wanted=wanted):
                await self._compare_with(wanted.compare)
                return
            problem = self.state.error
        path = initial_file(self.options)
        rest = None if problem else UrlState(None, wanted.step, wanted.value, wanted.tab, wanted.edits, wanted.problems, tile=wanted.tile)
        await self._load(partial(self.shared.open_path, path, name=display_name(path), **STAGED), display_name(path), wanted=rest)
        if not problem:
            await self._compare_with(wanted.compare)
        if problem:
            await self._in_session(self._doc, partial(self.state.fail, problem))

    async def _compare_with(self, name: str | None) -> bool:
        """Compare the open profile with ``name`` (a file under the data root: ``?compare=NAME``, or
        two rows of the fleet view) and bring the Compare tab forward."""
        if not name or not await self.compare_opener.open_name(name):
            return False

        def show():
            if self.side is not None:
                self.side.show("compare")
            self._push_query()

        await self._in_session(self._doc, show)
        return True

    async def _open_fleet(self, dataset) -> str | None:
        """Show the fleet view of ``dataset`` (``app.fleet_open.DatasetRequest``); the problem when it cannot be read."""
        doc = self._doc or pn.state.curdoc
        fleet = FleetView(state=self.state, shared=self.shared, data_root=self.options.data_root, load=self._load,
                          in_session=partial(self._in_session, doc), compare=self._compare_with)
        problem = await fleet.open(dataset)
        if fleet.fleet is not None:
            self.fleet = fleet
            fleet.param.watch(lambda *_: self._show_body(), "showing")
            await self._in_session(doc, self._show_body)
        return problem

    async def _load(self, job, name: str, requested: str | None = None, wanted: UrlState | None = None) -> bool:
        """Run ``job(progress) -> Opened`` (``derived.opening``) in one of the server's load workers
        (``app.load_pool``: a few threads, a time limit per load); adopt the result on this
        session's loop, shown as ``name`` and as ``wanted`` says.

        A staged open (``STAGED``) may return a cached profile whose plan is not built yet: its
        timeline is drawn from the overview at once (``_show_overview``), then the plan is built in
        a load worker (a load of its own, with the same time limit) and adopted. If that build
        fails, the page goes back to what was open before, with the error."""
        state = self.state
        state.begin_load()
        doc = self._doc or pn.state.curdoc
        pool = load_pool(self.options.load_workers, self.options.load_timeout)
        before = None
        try:
            opened: Opened = await pool.run(job, progress=state.report_progress, label=name)
            if isinstance(opened, OpenedProfile) and not opened.ready:
                before = list(self.body.objects)
                await self._in_session(doc, partial(self._show_overview, opened, name))
                opened = await pool.run(_build_rest, opened, progress=state.report_progress, label=name)
        except Exception as exc:  # bad input (InputError), a time limit, anything else: say it, keep what is open
            await self._in_session(doc, partial(self._load_failed, exc, before))
            return False
        await self._in_session(doc, partial(self._adopt, opened, name, requested, wanted))
        return True

    def _show_overview(self, opened: OpenedProfile, name: str) -> None:
        """The timeline alone, drawn from the profile's overview, while its plan is built."""
        if self.timeline is None:
            self.timeline = TimelineView(state=self.state)
            self._on_theme()
        self.timeline.show_overview(opened)
        self.state.param.update(status=f"{name}: {BUILDING}", progress=0.95)
        self.body.objects = [pn.Column(self.timeline, sizing_mode="stretch_width", css_classes=["ts-main-column"], stylesheets=[CSS])]

    def _load_failed(self, exc: BaseException, before: list | None) -> None:
        """Say why; what was open stays (the page as it was before an overview was drawn)."""
        self.state.fail(exc)
        if before is not None:
            self.body.objects = before
            self.timeline.redraw()

    def adopt(self, opened: Opened, name: str) -> None:
        """Show an already opened file (a notebook opens it synchronously: ``app.notebook``)."""
        self._adopt(opened, name)

    def _adopt(self, opened: Opened, name: str, requested: str | None = None, wanted: UrlState | None = None) -> None:
        self._requested_file = requested
        self._restoring = True
        try:
            self.state.adopt(opened, name)
            problems = self._apply_to_state(wanted) if wanted is not None else []
        finally:
            self._restoring = False
        self._set_search()
        self._show_body(wanted.tab if wanted is not None else None)
        if wanted is not None and self.side is not None:
            self.side.show(wanted.tab or DEFAULT_TAB)  # a later file: the layout was there already
        if problems:
            self.state.error = "; ".join(problems)
        self._push_query()

    @staticmethod
    async def _in_session(doc, change) -> None:
        """Run ``change`` holding the session's document lock: the views update Bokeh models
        directly, which is only allowed under the lock (after an ``await`` we no longer hold it)."""
        if doc is None or doc.session_context is None:
            change()
            return
        if getattr(doc.session_context, "destroyed", False):
            return  # the browser left (the page was closed while the file loaded)
        done = asyncio.get_running_loop().create_future()

        def run():
            try:
                with pn.io.hold(doc):  # everything the change does leaves as one message (app.one_message)
                    change()
            except BaseException as exc:  # hand it to the awaiting coroutine
                done.set_exception(exc)
            else:
                done.set_result(None)

        doc.add_next_tick_callback(run)
        await done

    async def _on_upload(self, event):
        files = event.new or {}
        if not files:
            return
        name, data = next(iter(files.items()))
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.file_bar.upload.value = {}
        try:
            check_upload_size(len(data))
        except Exception as exc:
            await self._in_session(self._doc, partial(self.state.fail, error_text(exc)))
            return
        await self._load(partial(open_bytes, data, Path(name).name), Path(name).name)

    def __panel__(self):
        return self.page


STAGED = {"staged": True, "build_behind": False}  # files opened by path: a cached one's timeline first (README "Big profiles")


def _build_rest(opened: OpenedProfile, _progress) -> OpenedProfile:
    """In a load worker: build the staged profile's arrays and plan (in this thread, so the pool
    sees its CPU use; the build reports no progress), and what adopting it draws first, so the
    session's loop does not."""
    opened.wait()
    opened.base.series, opened.steps, opened.value_search  # noqa: B018 (computed once, kept on the shared profile)
    return opened


def build_app(argv: list[str]) -> ExplorerApp:
    options = parse_app_args(argv)
    load_pool(options.load_workers, options.load_timeout)  # the process's load workers, made from the first session's --args
    return ExplorerApp(options, state=SessionState(), shared=shared_profiles(options.data_root, options.max_file_bytes))

