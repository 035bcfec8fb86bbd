"""The page of a memory profile (``derived.opening.FILE_KINDS``' view for it): the main column
(summary, timeline, glossary, the upload box) beside the side panel's tabs (``app.side_tabs``).

Built once per session, the first time a profile is open; every later profile is drawn by the
same views, which follow ``state.data``. The timeline exists first: a staged open draws the
cached overview in it (``show_overview``) before the rest of the page.
"""

from __future__ import annotations

import panel as pn

from tilescope.app.assets import static_text
from tilescope.app.compare_open import CompareOpener
from tilescope.app.page_context import PageContext
from tilescope.app.side_tabs import DEFAULT_TAB, SideTabs
from tilescope.app.views.glossary import glossary_html
from tilescope.app.views.summary import SummaryView
from tilescope.app.views.timeline import TimelineView
from tilescope.derived.opening import OpenedProfile

__all__ = ["ProfilePage", "profile_page"]

CSS = static_text("page.css")


class ProfilePage(pn.viewable.Viewer):
    """Summary and timeline beside the side tabs (module doc)."""

    def __init__(self, context: PageContext):
        super().__init__()
        self.context = context
        self.compare_opener = CompareOpener(context.opener)
        self.timeline = TimelineView(state=context.state)
        self.tabs: SideTabs | None = None  # built with the rest, on the first profile adopted
        self._dark = False
        self._layout: pn.Row | None = None

    def layout(self, tab: str | None = None) -> pn.Row:
        """The whole page (built on first use, ``tab`` in front)."""
        if self._layout is None:
            state = self.context.state
            self.tabs = SideTabs(
                state,
                active=tab or DEFAULT_TAB,
                view_args={"compare": {"opener": self.compare_opener}, "tiles": {"opener": self.context.opener}},
            )
            main = pn.Column(
                SummaryView(state=state),
                self.timeline,
                pn.pane.HTML(
                    glossary_html(), stylesheets=[CSS], sizing_mode="stretch_width", css_classes=["ts-glossary-pane"]
                ),
                self.context.upload_box,
                sizing_mode="stretch_width",
                css_classes=["ts-main-column"],
                scroll=True,
                stylesheets=[CSS],
            )
            side = pn.Column(
                self.tabs.tabs,
                sizing_mode="stretch_width",
                css_classes=["ts-side-column"],
                scroll=True,
                stylesheets=[CSS],
            )
            self._layout = pn.Row(
                main, side, sizing_mode="stretch_both", css_classes=["ts-columns"], stylesheets=[CSS], margin=0
            )
            self.set_dark(self._dark)
        return self._layout

    def overview_layout(self, opened: OpenedProfile) -> pn.Column:
        """The timeline alone, drawn from a cached profile's overview while its plan is built."""
        self.timeline.show_overview(opened)
        return pn.Column(self.timeline, sizing_mode="stretch_width", css_classes=["ts-main-column"], stylesheets=[CSS])

    def set_dark(self, dark: bool) -> None:
        self._dark = dark
        self.timeline.set_dark(dark)
        if self.tabs is not None and "lifetimes" in self.tabs.views:
            self.tabs.views["lifetimes"].set_dark(dark)

    def __panel__(self):
        return self.layout()


def profile_page(context: PageContext) -> ProfilePage:
    return ProfilePage(context)
