"""How one session opens files and runs anything sized by a file: in the server's load workers
(``app.load_pool``), never on the session's event loop; the result adopted on the loop under the
session's document lock.

``SessionOpener`` is the session's one way to open a file — the URL's ``?file=``, the served
default, an upload, a row of the fleet view, the second side of a comparison — and to run other
file-sized work (a comparison, a dataset's rows): ``run``; ``background`` is the served session's
``SessionState.runner`` (every new plan after an edit, undo or reset, a plan's placement, the
comparison following an edit, the advisor's ranking) and ``work`` its ``SessionState.worker`` (a
download's bytes: the report PNG, the tables). All of them go through the one load pool, with its
time limit, whatever the file's size. A load:

1. On the loop: ``state.begin_load()``; the job queued in the load pool.
2. In a load worker: ``app.shared.SharedProfiles.open`` → ``derived.opening.open_file(source,
   staged=…, prepare=True)``: the kind recognised, opened by its opener, and what its view reads
   first computed (``FileKind.prepare``). A staged open of a cached profile hands its overview to
   the loop (``show_overview``), lets it draw (at most ``OVERVIEW_WAIT_S``: the build would take the
   CPU and the GIL from the drawing), then builds the plan in the same worker.
3. On the loop: ``adopt(opened)`` (default ``state.adopt``) — or, on failure, ``state.fail``
   and the page as it was before any overview was drawn (``undo_overview``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import panel as pn

from tilescope.app.load_pool import LoadPool, load_pool
from tilescope.app.loading import AppOptions, check_upload_size, resolve_in_root
from tilescope.app.plan_prep import prepare_plan
from tilescope.app.shared import SharedProfiles
from tilescope.app.state import SessionState
from tilescope.derived.opening import Opened, OpenedProfile, Source

__all__ = ["OpenJob", "SessionOpener", "StageHooks"]

Progress = Callable[[str, float], None]
OpenJob = Callable[..., Opened]  # job(staged, progress) in a load worker
Then = Callable[[Opened], None]  # then(opened) in the same worker, after the open
OVERVIEW_WAIT_S = 5.0  # a staged open waits this long at most for the loop to draw the overview before building


@dataclass
class StageHooks:
    """What the page does around a staged open (on the loop): draw a cached profile's overview
    while its plan is built; put the page back if that build then fails."""

    show_overview: Callable[[OpenedProfile, str], None]
    undo_overview: Callable[[], None]


class SessionOpener:
    """One session's opens (module doc). ``doc()``: the session's Bokeh document (None outside a
    server: changes are then made directly)."""

    def __init__(
        self,
        state: SessionState,
        shared: SharedProfiles,
        options: AppOptions,
        doc: Callable[[], Any],
        stage: StageHooks | None = None,
    ):
        self.state, self.shared, self.options = state, shared, options
        self._doc, self.stage = doc, stage
        self._tasks: set[asyncio.Task] = set()

    @property
    def data_root(self) -> Path:
        return Path(self.options.data_root)

    @property
    def pool(self) -> LoadPool:
        return load_pool(self.options.load_workers, self.options.load_timeout)

    # ------------------------------------------------------------------ the two hops

    async def run(self, job: Callable[..., Any], *args: Any, label: str = "") -> Any:
        """``job(*args, progress)`` in a load worker (its time limit, its progress shown by the
        session); its result or its exception."""
        return await self.pool.run(job, *args, progress=self.state.report_progress, label=label)

    async def work(self, job: Callable[[], Any], label: str = "") -> Any:
        """``SessionState.worker``: ``job()`` in a load worker under its time limit (a download's
        bytes), without the load's progress in the session's status; its result or its exception."""
        return await self.pool.run(lambda _progress: job(), label=label)

    async def in_session(self, change: Callable[[], None]) -> None:
        """Run ``change`` on the loop holding the session's document lock: the views update Bokeh
        models directly, which is only allowed under the lock (after an ``await`` we no longer
        hold it). Everything the change does leaves as one message (``pn.io.hold``)."""
        doc = self._doc()
        if doc is None or doc.session_context is None:
            change()
            return
        if getattr(doc.session_context, "destroyed", False):
            return  # the browser left (the page was closed while the file loaded)
        done = asyncio.get_running_loop().create_future()

        def run() -> None:
            try:
                with pn.io.hold(doc):
                    change()
            except BaseException as exc:  # hand it to the awaiting coroutine
                done.set_exception(exc)
            else:
                done.set_result(None)

        doc.add_next_tick_callback(run)
        await done

    def background(self, job: Callable[[], Any], done: Callable[[Any], None]) -> bool:
        """``SessionState.runner``: ``job()`` in a load worker, then ``done(result or exception)``
        on the loop under the document lock. False (nothing queued) outside a running loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False

        async def run() -> None:
            try:
                outcome = await self.pool.run(lambda _progress: job(), label="computing")
            except Exception as exc:  # a refusal, a time limit: the view that asked says it
                outcome = exc
            await self.in_session(lambda: done(outcome))

        task = loop.create_task(run())
        self._tasks.add(task)  # (a task nobody holds may be collected before it ends)
        task.add_done_callback(self._tasks.discard)
        return True

    # ------------------------------------------------------------------ opening

    async def open_name(
        self, name: str, adopt: Callable[[Opened], None] | None = None, then: Then | None = None
    ) -> bool:
        """A file under the data root (``?file=NAME``). The name is resolved in the worker too:
        resolving touches the file system (symlinks), never on the loop."""
        root = self.data_root
        return await self.open(
            lambda staged, progress: self.shared.open(
                Source.of_path(resolve_in_root(root, name), name), progress, staged=staged
            ),
            name,
            adopt,
            then,
        )

    async def open_path(
        self, path: Path, name: str, adopt: Callable[[Opened], None] | None = None, then: Then | None = None
    ) -> bool:
        return await self.open(
            lambda staged, progress: self.shared.open(Source.of_path(path, name), progress, staged=staged),
            name,
            adopt,
            then,
        )

    async def open_upload(self, data: bytes, name: str, adopt: Callable[[Opened], None] | None = None) -> bool:
        name = Path(name).name
        try:
            check_upload_size(len(data))
        except Exception as exc:  # over the limit: said, nothing read
            await self.in_session(partial(self.state.fail, exc))
            return False
        return await self.open(
            lambda staged, progress: self.shared.open(Source.of_bytes(data, name), progress), name, adopt
        )

    async def open(
        self, job: OpenJob, name: str, adopt: Callable[[Opened], None] | None = None, then: Then | None = None
    ) -> bool:
        """Run ``job(staged, progress)`` in a load worker and adopt its result (module doc);
        ``then(opened)`` in the same worker before (the URL's edits made ahead: ``SessionState.make_plan``).
        Whether it opened; on failure the session says why and keeps what was open."""
        state = self.state
        state.begin_load()
        loop = asyncio.get_running_loop()
        drawn: list[asyncio.Task] = []  # the overview's drawing, when a staged open had one

        def staged(opened: OpenedProfile, progress: Progress) -> None:  # (in the worker)
            """Hand the overview to the loop, and let it draw before the build goes on: the build
            would take the CPU (and the GIL) from the drawing and delay the first chart."""
            stage = self.stage
            if stage is None:
                return
            shown = threading.Event()

            async def draw() -> None:
                try:
                    await self.in_session(lambda: stage.show_overview(opened, name))
                finally:
                    shown.set()

            progress("drawing the overview", 0.95)  # (before the post: the page's own status then stays)
            loop.call_soon_threadsafe(lambda: drawn.append(loop.create_task(draw())))
            shown.wait(OVERVIEW_WAIT_S)

        def open_and_prepare(progress: Progress) -> Opened:
            opened = job(partial(staged, progress=progress), progress)
            if isinstance(opened, OpenedProfile):  # what the side tabs read of the file plan: here, not on the loop
                prepare_plan(opened.base)
            if then is not None:
                then(opened)
            return opened

        try:
            opened = await self.pool.run(open_and_prepare, progress=state.report_progress, label=name)
        except Exception as exc:  # bad input (InputError), a time limit, anything else: say it, keep what is open
            await asyncio.gather(*drawn, return_exceptions=True)
            await self.in_session(partial(self._failed, exc, bool(drawn)))
            return False
        await asyncio.gather(*drawn, return_exceptions=True)
        await self.in_session(lambda: (adopt or state.adopt)(opened))
        return True

    def _failed(self, exc: BaseException, drew_overview: bool) -> None:
        self.state.fail(exc)
        if drew_overview and self.stage is not None:
            self.stage.undo_overview()
