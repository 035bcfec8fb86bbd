"""The page of one session: a ``panel_material_ui.Page`` with the file, a value search and the
theme toggle in its header; under it the view of the open file's kind (``derived.opening.FileKind.view``:
a memory profile's is ``app.views.profile_page``, summary and timeline beside the side tabs), or
the fleet view of a dataset. The URL and the keys are ``app.widgets.page_controls``.

The page composes views; it neither loads nor reads the URL. What opens, and when, is its
``router``'s (``app.page_router.PageRouter``: the URL's file, dataset and comparison, Back and
Forward, the URL written back); every open runs in its ``opener`` (``app.open_flow.SessionOpener``),
which calls back ``router.adopt`` on the session's loop; the router then asks the page to show
what was adopted (``show_opened``, ``show_body``, ``show_tab``). ``app/main.py`` (served by
``panel serve app``) and ``app.notebook.explore`` both build this.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import panel as pn
import panel_material_ui as pmui
import param
from panel.util import edit_readonly

from tilescope.app.assets import static_text
from tilescope.app.load_pool import load_pool
from tilescope.app.loading import AppOptions, parse_app_args
from tilescope.app.one_message import one_message
from tilescope.app.open_flow import SessionOpener, StageHooks
from tilescope.app.page_context import PageContext, kind_view
from tilescope.app.page_router import PageRouter
from tilescope.app.shared import SharedProfiles, shared_profiles
from tilescope.app.side_tabs import DEFAULT_TAB
from tilescope.app.state import SessionState
from tilescope.app.views.file_bar import FileBar
from tilescope.app.views.fleet import FleetView
from tilescope.app.views.profile_page import ProfilePage
from tilescope.app.widgets.page_controls import PageControls
from tilescope.app.widgets.value_picker import ValuePicker
from tilescope.derived.opening import OpenedProfile, kind_named
from tilescope.derived.value_focus import value_focus

__all__ = ["ExplorerApp", "build_app"]

CSS = static_text("page.css")
BUILDING = "building the rest of the page…"  # the status while a staged profile's plan is built behind its timeline
LABEL_ID = re.compile(r"#(-?\d+) ")  # a picker label starts with the value's id (derived.values.ValueText)


class ExplorerApp(pn.viewable.Viewer):
    """One session's page (see the module doc): it composes the views; what opens is its
    ``router``'s (``app.page_router.PageRouter``), opening it its ``opener``'s (``app.open_flow.SessionOpener``)."""

    state = param.ClassSelector(class_=SessionState)
    shared = param.ClassSelector(class_=SharedProfiles, doc="profiles this server process has loaded (app.shared)")

    def __init__(self, options: AppOptions, **params):
        params.setdefault("shared", SharedProfiles())
        super().__init__(**params)
        self.options = options
        self._doc = pn.state.curdoc  # this session's document (None outside a server)
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
        self.router = PageRouter(self, self.state, self.opener, options)  # (it writes the URL as the state changes)
        self.controls = PageControls(
            on_key=self.on_key, on_restore=self.router.restore_query, on_theme=self._theme_wanted
        )
        self.body = pn.Column(pn.pane.HTML("<i>loading…</i>", margin=20), sizing_mode="stretch_both")
        self.context = PageContext(self.state, self.opener, self.file_bar.upload_box)
        self.kind_views: dict[str, object] = {}  # file kind → its view, built the first time one is open
        self._before_overview: list | None = None  # the body before a staged open drew an overview
        self.file_bar.upload.param.watch(self._on_upload, "value")
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
    def fleet(self) -> FleetView | None:
        """The fleet view, when the session opened a dataset (its router opened it)."""
        return self.router.fleet

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
                view.tabs.tabs.param.watch(self.router.push_query, "active")
                return layout
            return view.layout()
        return view

    # ------------------------------------------------------------------ what the router shows (RoutedPage)

    def show_opened(self) -> None:
        """A file was adopted (``PageRouter.adopt``): no staged overview to put back any more, and the
        header's search lists its values."""
        self._before_overview = None
        if self.state.data is not None:
            self.search.set_search(self.state.data.opened.value_search)

    def show_body(self, tab: str | None = None) -> None:
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

    def show_tab(self, tab: str | None) -> None:
        """The profile's side tab ``tab`` in front (None: the default tab)."""
        page = self.profile_page
        if page is not None and page.tabs is not None:
            page.tabs.show(tab or DEFAULT_TAB)

    # ------------------------------------------------------------------ theme, staged overview

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

    # ------------------------------------------------------------------ keys, search, upload

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

    async def _on_upload(self, event):
        files = event.new or {}
        if not files:
            return
        name, data = next(iter(files.items()))
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.file_bar.upload.value = {}
        await self.opener.open_upload(data, name, partial(self.router.adopt, name=Path(name).name))

    def __panel__(self):
        return self.page


def build_app(argv: list[str]) -> ExplorerApp:
    options = parse_app_args(argv)
    load_pool(options.load_workers, options.load_timeout)  # the process's load workers, from the first session's --args
    app = ExplorerApp(options, state=SessionState(), shared=shared_profiles(options.data_root, options.max_file_bytes))
    app.state.runner = app.opener.background  # every plan's file-sized work: in the load workers, never on the loop
    app.state.worker = app.opener.work
    return app
