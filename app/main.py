"""The tilescope explorer: ``panel serve app`` serves this file at ``/app``.

Panel runs this module once per browser session, so everything built here belongs to one
session (one ``SessionState``). Which file opens:

- ``?file=NAME`` in the URL: a file under the data root (``sample_data/`` or ``--args --data-root DIR``);
  absolute paths, ``..`` and names resolving outside the root are refused with a message;
- ``?dataset=NAME`` (a dataset directory under the data root) or ``--args --dataset DIR``: the
  fleet view (``app.views.fleet``) instead, whose rows open profiles here;
- else ``panel serve app --args PATH``;
- else ``sample_data/vit_finalist5.memory_profile.json``.
A file can also be uploaded in the page (up to ``app.loading.MAX_UPLOAD_BYTES``, 200 MB, sent in
chunks). Loads run in a worker thread so other sessions keep working; a bad file shows its
one-line located error and the open profile stays.
"""
from __future__ import annotations

import asyncio
import sys
from functools import partial
from pathlib import Path

import panel as pn
import param

from tilescope.app.compare_open import CompareOpener
from tilescope.app.load_pool import load_pool
from tilescope.app.loading import AppOptions, check_upload_size, display_name, initial_file, parse_app_args, resolve_in_root
from tilescope.app.shared import SharedProfiles, shared_profiles
from tilescope.app.state import SessionState, error_text
from tilescope.app.views.at_step import AtStepView
from tilescope.app.views.compare import CompareView
from tilescope.app.views.editor import EditorView
from tilescope.app.views.export import ExportView
from tilescope.app.views.file_bar import FileBar
from tilescope.app.fleet_open import requested_dataset
from tilescope.app.views.fleet import FleetView
from tilescope.app.views.lifetimes import LifetimesView
from tilescope.app.views.placement import AddressView
from tilescope.app.views.search_state import SearchStateView
from tilescope.app.views.storage_groups import StorageGroupsView
from tilescope.app.views.summary import SummaryView
from tilescope.app.views.tile_map import TileMapView
from tilescope.app.views.timeline import TimelineView
from tilescope.app.views.values_table import ValuesTableView
from tilescope.derived.opening import Opened, open_bytes



class ExplorerApp(pn.viewable.Viewer):
    """The page of one session: file bar, then the memory-profile views (or the search-state view)."""

    state = param.ClassSelector(class_=SessionState)
    shared = param.ClassSelector(class_=SharedProfiles, doc="profiles this server process has loaded (app.shared)")

    def __init__(self, options: AppOptions, **params):
        params.setdefault("shared", SharedProfiles())
        super().__init__(**params)
        self.options = options
        self._doc = pn.state.curdoc  # this session's document (None outside a server)
        self.file_bar = FileBar(state=self.state)
        self.body = pn.Column(pn.pane.HTML("<i>loading…</i>", margin=20), sizing_mode="stretch_width")
        self._profile_views = None  # built once, on the first memory profile
        self._search_view = None
        self.compare_opener = CompareOpener(self.state, self.shared, options.data_root, self._in_session, lambda: self._doc or pn.state.curdoc)
        self.fleet = None  # the fleet view, when the session opened a dataset
        self.file_bar.upload.param.watch(self._on_upload, "value")

    # ------------------------------------------------------------------ layout

    def _profile_layout(self):
        if self._profile_views is None:
            s = self.state
            at_step, lifetimes = AtStepView(state=s), LifetimesView(state=s)
            tabs = pn.Tabs(
                ("Values", ValuesTableView(state=s)),
                ("Storage groups", StorageGroupsView(state=s)),
                ("What-if editor", EditorView(state=s)),
                ("Placement", pn.Row(AddressView(state=s), TileMapView(state=s), sizing_mode="stretch_width")),
                ("Export", ExportView(state=s)),
                ("Compare", CompareView(state=s, opener=self.compare_opener)),
                dynamic=True, sizing_mode="stretch_width",
            )
            self._tabs = tabs
            self._profile_views = pn.Column(
                SummaryView(state=s),
                TimelineView(state=s),
                pn.Row(pn.Column(at_step, sizing_mode="stretch_width"), pn.Column(lifetimes, sizing_mode="stretch_width"), sizing_mode="stretch_width"),
                tabs,
                sizing_mode="stretch_width",
            )
        return self._profile_views

    def _show_body(self):
        """The search-state view or the profile views, whichever the open file needs; with a dataset
        open, its fleet view instead, or the profile opened from it under a way back."""
        if self.state.kind == "search_state":
            view = self._search_state_view()
        elif self.state.data is not None:
            view = self._profile_layout()
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

    def _search_state_view(self):
        return SearchStateView(state=self.state)

    # ------------------------------------------------------------------ loading

    async def load_initial(self):
        """Open the URL's ``?file=`` (if any), else the served file; a refused or bad requested file
        falls back to the default and keeps its message."""
        requested = pn.state.session_args.get("file") if pn.state.session_args else None
        problem = None
        if not requested and (dataset := requested_dataset(pn.state.session_args, self.options)) is not None:
            problem = await self._open_fleet(dataset)
            if self.fleet is not None:
                return
        if requested:
            name = requested[0].decode("utf-8", "replace")
            root = self.options.data_root
            # Resolving the name touches the file system (symlinks): in the load worker too, never on the loop.
            if await self._load(lambda progress: self.shared.open_path(resolve_in_root(root, name), progress, name=name), name):
                return await self._load_compare_arg()
            problem = self.state.error
        path = initial_file(self.options)
        await self._load(partial(self.shared.open_path, path, name=display_name(path)), display_name(path))
        await self._load_compare_arg()
        if problem:
            await self._in_session(self._doc, partial(self.state.fail, problem))

    async def _load_compare_arg(self):
        """``?compare=NAME``: compare the open profile with NAME (under the data root) and show the Compare tab."""
        requested = pn.state.session_args.get("compare") if pn.state.session_args else None
        if requested:
            await self._compare_with(requested[0].decode("utf-8", "replace"))

    async def _compare_with(self, name: str) -> bool:
        """Compare the open profile with ``name`` (under the data root) and show the Compare tab."""
        if await self.compare_opener.open_name(name):
            await self._in_session(self._doc, lambda: setattr(self._tabs, "active", len(self._tabs) - 1))
            return True
        return False

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

    async def _load(self, job, name: str) -> bool:
        """Run ``job(progress) -> Opened`` (``derived.opening``) in one of the server's load workers
        (``app.load_pool``: a few threads, a time limit per load); adopt the result on this
        session's loop, shown as ``name``."""
        state = self.state
        state.begin_load()
        doc = self._doc or pn.state.curdoc
        pool = load_pool(self.options.load_workers, self.options.load_timeout)
        try:
            opened: Opened = await pool.run(job, progress=state.report_progress, label=name)
        except Exception as exc:  # bad input (InputError), a time limit, anything else: say it, keep what is open
            await self._in_session(doc, partial(state.fail, exc))
            return False
        await self._in_session(doc, partial(self._adopt, opened, name))
        return True

    def _adopt(self, opened: Opened, name: str) -> None:
        self.state.adopt(opened, name)
        self._show_body()

    @staticmethod
    async def _in_session(doc, change) -> None:
        """Run ``change`` holding the session's document lock: the views update Bokeh models
        directly, which is only allowed under the lock (after an ``await`` we no longer hold it)."""
        if doc is None or doc.session_context is None:
            change()
            return
        done = asyncio.get_running_loop().create_future()

        def run():
            try:
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
        return pn.Column(self.file_bar, self.body, sizing_mode="stretch_width")


def build_app(argv: list[str]) -> ExplorerApp:
    options = parse_app_args(argv)
    load_pool(options.load_workers, options.load_timeout)  # the process's load workers, made from the first session's --args
    return ExplorerApp(options, state=SessionState(), shared=shared_profiles(options.data_root, options.max_file_bytes))


pn.extension("tabulator", "filedropper", notifications=False, sizing_mode="stretch_width")
explorer = build_app(sys.argv[1:])
pn.state.onload(explorer.load_initial)
explorer.servable(title="tilescope")
