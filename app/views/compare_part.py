"""``ComparePart``: what every part of the Compare tab shares (app/views/compare.py builds them)."""

from __future__ import annotations

import panel as pn
import param

from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState


class ComparePart(pn.viewable.Viewer):
    """A part of the Compare tab: it watches the session through the tab's gate, so it waits
    while the tab is hidden (``app.shown_gate``); built alone (a test), it always follows."""

    state = param.ClassSelector(class_=SessionState)
    gate = param.ClassSelector(
        class_=ShownGate, default=None, doc="the Compare tab's gate (app.shown_gate); None: always follows"
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.gate = self.gate or ShownGate(self.state)
