"""Views in the side panel's hidden tabs do not redraw until shown.

Every view redraws from watchers on the session's state. A view in a tab that is not on show
(the side panel shows one of eight) need not follow each step click or edit: its Bokeh models
would change, the changes would be sent, and the browser would apply them to a hidden tab, all
on the path of the click. ``ShownGate.watch`` is ``view_guard.watch_state`` for such a view: while
the gate is closed (``set_shown(False)``, from ``app.side_tabs.SideTabs``), a watcher that fires is
only noted; when the tab is shown again, the noted watchers run once each, in the order they were
registered (a plan's watcher before a step's, as the view declared them), with the last events
they were given. Views read the state itself, not the events, so catching up once is enough.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tilescope.app.state import SessionState
from tilescope.app.view_guard import guarded


class ShownGate:
    def __init__(self, state: SessionState, shown: bool = True):
        self.state = state
        self.shown = shown
        self._watchers: list[Callable] = []  # guarded, in registration order
        self._waiting: dict[int, tuple] = {}  # index in _watchers → the last events while closed
        self.skipped = 0  # watcher calls noted instead of run (for tests and benchmarks)

    def watch(self, fn: Callable, names: str | Sequence[str], name: str | None = None):
        """``state.param.watch(fn, names)``, guarded (``view_guard``), waiting while the gate is closed."""
        index = len(self._watchers)
        self._watchers.append(guarded(self.state, fn, name))

        def watcher(*events):
            if self.shown:
                return self._watchers[index](*events)
            self._waiting[index] = events
            self.skipped += 1
            return None

        watcher.__qualname__ = f"shown-gated {getattr(fn, '__qualname__', fn)}"
        return self.state.param.watch(watcher, names)

    def set_shown(self, shown: bool) -> None:
        """Open (and catch up) or close the gate."""
        self.shown = bool(shown)
        if self.shown and self._waiting:
            waiting, self._waiting = self._waiting, {}
            for index in sorted(waiting):
                self._watchers[index](*waiting[index])
