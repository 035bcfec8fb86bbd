"""One user action, one message to the browser.

A click changes several views; each view changes a few Bokeh models. Outside a hold, Panel writes
every change to the websocket as it happens (one PATCH-DOC per change: a step click was ~10
messages), and the browser re-lays out and redraws after each. ``one_message`` runs a handler of
a browser event with the session's document held, so everything it changes leaves as one
message, applied and drawn by the browser at once. Panel (1.9) holds nothing itself in a server
session: Bokeh events (a tap, a range change), custom components' messages (keys) and the
watchers of widget values set in the browser (a drag's release, a tab shown, a table's selection)
all reach their handlers without a hold, so each of those handlers is wrapped here (a drag's
release was 14 messages over 200 ms before).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TypeVar

import panel as pn

Handler = TypeVar("Handler", bound=Callable)


def one_message(handler: Handler) -> Handler:
    """``handler`` with the current session's document held while it runs (outside a server
    session, e.g. in a notebook or a test, it just runs). Not for coroutines: what they change
    after an ``await`` is outside the hold anyway."""
    if inspect.iscoroutinefunction(handler):
        raise TypeError(f"one_message({handler.__qualname__}): a coroutine function cannot be held")

    @functools.wraps(handler)
    def held(*args, **kwargs):
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return handler(*args, **kwargs)
        with pn.io.hold(doc):
            return handler(*args, **kwargs)

    return held  # type: ignore[return-value]
