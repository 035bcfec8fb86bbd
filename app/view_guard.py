"""One view's failure stays that view's: ``watch_state`` is how views watch the ``SessionState``.

Every view redraws from a watcher on the session's state (``data``, the selection, ``compare``).
param runs the watchers of a change one after another and stops at the first that raises: one
view's bug would leave every view after it showing the old plan, and the exception would reach
whatever made the change (an edit, a load), which then looks failed too. ``watch_state`` wraps
the watcher: an exception is logged with its traceback (the server's log) and shown as the page's
one-line error naming the view; the other views' watchers still run and the change stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from tilescope.app.state import SessionState, error_text

log = logging.getLogger("tilescope.app")


def view_name(fn: Callable) -> str:
    """The class a watcher belongs to (``SummaryView``), for the message."""
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        return type(owner).__name__
    return getattr(fn, "__qualname__", repr(fn)).split(".")[0]


def guarded(state: SessionState, fn: Callable, name: str | None = None) -> Callable:
    """``fn`` that, instead of raising, logs and sets ``state.error``."""
    label = name or view_name(fn)

    def watcher(*events):
        try:
            return fn(*events)
        except Exception as exc:  # a view's bug: say it, keep the page
            log.exception("%s failed to update", label)
            state.error = f"{label} could not be updated: {error_text(exc)} (the other views are up to date)"
            return None

    watcher.__name__ = getattr(fn, "__name__", "watcher")
    watcher.__qualname__ = f"guarded {label}"
    return watcher


def watch_state(state: SessionState, fn: Callable, names: str | Sequence[str], name: str | None = None):
    """``state.param.watch(fn, names)`` with ``fn`` guarded (module doc)."""
    return state.param.watch(guarded(state, fn, name), names)
