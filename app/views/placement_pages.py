"""The pages of the two placement file kinds (``derived.opening.FILE_KINDS``' views for them): a
placement dump (``app.views.placement_problem``) and a placement profile
(``app.views.placement_profile``), each above the page's upload box.

A page is built once per session, the first time a file of its kind is open; it follows
``state.opened``: each newly opened file of its kind gets a view of its own, whose solve is started
in the server's load workers (``context.opener.run``) and shown under the session's document lock
(``context.opener.in_session``).

A placement profile's page also reads ``?profile=NAME`` (a memory profile of the same build, v2 or
v3, under the data root): opened in a load worker like any file, its per-tile estimate is shown
beside each tile (``derived.tile_estimate``).
"""

from __future__ import annotations

import panel as pn

from tilescope.app.assets import static_text
from tilescope.app.loading import resolve_in_root
from tilescope.app.state import error_text
from tilescope.app.view_guard import watch_state
from tilescope.app.views.placement_problem import PlacementProblemView
from tilescope.app.views.placement_profile import PlacementProfileView
from tilescope.derived.opening import OpenedProfile, Source
from tilescope.derived.placement_opened import OpenedPlacementDump, OpenedPlacementProfile
from tilescope.derived.tile_estimate import estimates_of
from tilescope.models.errors import InputError

CSS = static_text("page.css")


class _FollowingPage(pn.viewable.Viewer):
    """The view of whichever file of one kind the session has open (module doc)."""

    def __init__(self, context, opened_type: type, view_type: type):
        super().__init__()
        self.context, self._type, self._view_type = context, opened_type, view_type
        self._shown = None  # the opened file the view is of
        self.view = None
        self._dark = False
        self._body = pn.Column(sizing_mode="stretch_width")
        self._layout = pn.Column(
            self._body,
            context.upload_box,
            sizing_mode="stretch_width",
            scroll=True,
            css_classes=["ts-placement-page"],
            stylesheets=[CSS],
        )
        watch_state(context.state, self._follow, ["opened"], name=f"the {view_type.__name__}")
        self._follow()

    def _follow(self, *_):
        opened = self.context.state.opened
        if not isinstance(opened, self._type) or opened is self._shown:
            return
        self._shown = opened
        opener = self.context.opener
        self.view = self._view_type(opened=opened, run=opener.run, in_session=opener.in_session)
        self.view.set_dark(self._dark)
        self._body.objects = [self.view]
        pn.state.execute(self.view.solve)
        if isinstance(opened, OpenedPlacementProfile) and (name := _requested_profile()):
            view = self.view

            async def open_estimate() -> None:  # (a coroutine function: pn.state.execute awaits only those)
                await self._open_estimate(view, name)

            pn.state.execute(open_estimate)

    async def _open_estimate(self, view, name: str) -> None:
        """The memory profile ``name`` (under the data root) opened in a load worker; its per-tile
        estimate handed to ``view``, or why it could not be."""
        opener = self.context.opener
        root = opener.data_root

        def job(progress):
            opened = opener.shared.open(Source.of_path(resolve_in_root(root, name), name), progress)
            if not isinstance(opened, OpenedProfile):
                raise InputError(
                    "$", "a memory profile (version 2 or 3)", f"a {opened.kind.replace('_', ' ')}", file=name
                )
            return estimates_of(opened.profile)

        try:
            estimates = await opener.run(job, label=name)
        except Exception as exc:
            message = error_text(exc)
            await opener.in_session(lambda: view.estimate_failed(message))
            return
        await opener.in_session(lambda: view.set_estimates(estimates, name))

    def set_dark(self, dark: bool) -> None:
        self._dark = bool(dark)
        if self.view is not None:
            self.view.set_dark(self._dark)

    def __panel__(self):
        return self._layout


def _requested_profile() -> str | None:
    """The URL's ``profile=`` (the session's arguments), if any."""
    values = (pn.state.session_args or {}).get("profile") or []
    value = values[0] if values else None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def placement_problem_page(context) -> _FollowingPage:
    """The page of a placement dump. ``context``: ``app.page_context.PageContext``."""
    return _FollowingPage(context, OpenedPlacementDump, PlacementProblemView)


def placement_profile_page(context) -> _FollowingPage:
    """The page of a placement profile. ``context``: ``app.page_context.PageContext``."""
    return _FollowingPage(context, OpenedPlacementProfile, PlacementProfileView)
