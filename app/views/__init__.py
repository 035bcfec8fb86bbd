"""One view per file; each takes ``state=`` (an ``app.state.SessionState``); a file kind's page takes an
``app.page_context.PageContext``.

The public names below are imported on first use (``__getattr__``), so importing one module of the
package does not import the rest."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .profile_page import ProfilePage, profile_page
    from .search_state import SearchStateView, search_state_page
    from .summary import SummaryView
    from .timeline import TimelineView

_FROM = {
    "ProfilePage": "profile_page",
    "profile_page": "profile_page",
    "SearchStateView": "search_state",
    "search_state_page": "search_state",
    "SummaryView": "summary",
    "TimelineView": "timeline",
}
__all__ = ["ProfilePage", "SearchStateView", "SummaryView", "TimelineView", "profile_page", "search_state_page"]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
