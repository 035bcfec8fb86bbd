"""Where each view of a memory profile sits on the page, and the one list of side-panel tabs.

The page (``app.explorer.ExplorerApp``, on a ``panel_material_ui.Page``) is a header (file, value
search, theme toggle) over two columns that scroll on their own, so neither pushes the other off
screen:

- the main column: the summary, then the timeline, then the glossary and the upload box;
- the side panel: tabs, one per entry of ``SIDE_TABS``, beside the timeline.

**Adding a view** (a compare view, a tile map, a fleet view…): write it under ``app/views/`` as a
``pn.viewable.Viewer`` constructed as ``View(state=session_state)`` that watches ``state.data``
(and the selection), then add one ``SideTab(key, label, View)`` to ``SIDE_TABS``. The key is what
the URL's ``tab=`` names (``app.url_state``). A tab's view is built the first time its tab is shown
(``SideTabs``), so a view costs nothing until then, and a view that watches the state through an
``app.shown_gate.ShownGate`` (with a ``set_shown``) stops following it while its tab is hidden.
Nothing else needs to change.

Until then its tab holds a ``pn.Spacer``, the cheapest thing a tab can hold (issue #26: every model
of the first screen is built, serialised and sent per session; an empty ``pn.Column`` per hidden tab
cost ~14k Python calls each, a spacer ~8k), and the built view takes the spacer's place in the tabs
(not a column wrapped around it: one layout less per tab shown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import panel as pn

from tilescope.app.assets import static_text
from tilescope.app.one_message import one_message
from tilescope.app.state import SessionState
from tilescope.app.views.at_step import AtStepView
from tilescope.app.views.compare import CompareView
from tilescope.app.views.editor import EditorView
from tilescope.app.views.export import ExportView
from tilescope.app.views.lifetimes import LifetimesView
from tilescope.app.views.placement import PlacementTab
from tilescope.app.views.storage_groups import StorageGroupsView
from tilescope.app.views.tiles import TilesView
from tilescope.app.views.values_table import ValuesTableView


@dataclass(frozen=True)
class SideTab:
    key: str  # the URL's ``tab=`` value; never shown
    label: str  # the tab's title
    view: Callable[..., pn.viewable.Viewable]  # ``view(state=SessionState)``


SIDE_TABS: tuple[SideTab, ...] = (
    SideTab("step", "At this step", AtStepView),
    SideTab("lifetimes", "Lifetimes", LifetimesView),
    SideTab("editor", "What-if editor", EditorView),
    SideTab("values", "Values", ValuesTableView),
    SideTab("groups", "Storage groups", StorageGroupsView),
    SideTab("placement", "Placement", PlacementTab),
    SideTab("tiles", "Tiles", TilesView),
    SideTab("compare", "Compare", CompareView),  # needs the session's ``opener`` (``SideTabs(view_args=...)``)
    SideTab("export", "Export", ExportView),
)
TAB_KEYS = tuple(tab.key for tab in SIDE_TABS)
DEFAULT_TAB = "step"
TABS_CSS = static_text("side_tabs.css")  # the strip wraps: every tab in sight, one click away


class SideTabs:
    """The side panel's tabs: each view is built the first time its tab is shown, and kept."""

    def __init__(
        self,
        state: SessionState,
        tabs: tuple[SideTab, ...] = SIDE_TABS,
        active: str = DEFAULT_TAB,
        view_args: dict[str, dict] | None = None,
    ):
        self.state, self.entries = state, tabs
        self.view_args = view_args or {}  # tab key → more arguments of its view (e.g. the compare view's opener)
        self.views: dict[str, pn.viewable.Viewable] = {}
        keys = [tab.key for tab in tabs]
        self.tabs = pn.Tabs(
            *[(tab.label, pn.Spacer(sizing_mode="stretch_width")) for tab in tabs],
            sizing_mode="stretch_width",
            css_classes=["ts-side-tabs"],
            margin=0,
            stylesheets=[TABS_CSS],
            active=keys.index(active) if active in keys else 0,
        )
        self.tabs.param.watch(one_message(lambda e: self._on_active(e.new)), "active")
        self._build(self.tabs.active)

    @property
    def key(self) -> str:
        return self.entries[self.tabs.active].key

    def show(self, key: str) -> None:
        """Bring tab ``key`` forward (an unknown key is ignored)."""
        if key in TAB_KEYS:
            self.tabs.active = TAB_KEYS.index(key)

    def view(self, key: str):
        """The view of tab ``key``, built now if it was not yet."""
        self._build(TAB_KEYS.index(key))
        return self.views[key]

    def _on_active(self, index: int) -> None:
        """Build the tab's view if needed, and tell every view whether it is on show: a view with
        ``set_shown`` (``app.shown_gate``) does not follow the state while hidden, and catches up
        when shown. The hidden views are closed first, so the one shown catches up alone."""
        self._build(index)
        shown = self.entries[index].key
        for key, view in sorted(self.views.items(), key=lambda item: item[0] == shown):
            self._set_shown(view, key == shown)

    def _build(self, index: int) -> None:
        tab = self.entries[index]
        if tab.key not in self.views:
            view = self.views[tab.key] = tab.view(state=self.state, **self.view_args.get(tab.key, {}))
            self.tabs[index] = (tab.label, view)  # (in the spacer's place)
            self._set_shown(view, index == self.tabs.active)  # built for ``view(key)`` behind another tab: wait

    @staticmethod
    def _set_shown(view, shown: bool) -> None:
        set_shown = getattr(view, "set_shown", None)
        if set_shown is not None:
            set_shown(shown)
