"""The tilescope explorer: a Panel app (``panel serve app``; ``tilescope.explore`` in a notebook).

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .explorer import ExplorerApp, build_app
    from .notebook import explore
    from .open_flow import SessionOpener
    from .page_context import PageContext
    from .page_router import PageRouter
    from .side_tabs import SIDE_TABS, SideTab
    from .state import SessionState

_FROM = {
    "ExplorerApp": "explorer",
    "build_app": "explorer",
    "SIDE_TABS": "side_tabs",
    "SideTab": "side_tabs",
    "explore": "notebook",
    "SessionOpener": "open_flow",
    "PageContext": "page_context",
    "PageRouter": "page_router",
    "SessionState": "state",
}
__all__ = [
    "SIDE_TABS",
    "ExplorerApp",
    "PageContext",
    "PageRouter",
    "SessionOpener",
    "SessionState",
    "SideTab",
    "build_app",
    "explore",
]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
