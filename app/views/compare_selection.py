"""The value selected in the compare views, linked both ways to the session's selection.

A compared value is an *entry* of the comparison's value match (a matched pair, or a value on
one side only: ``derived.compare_match.ValueMatch``). The session selects values by A's ids
(``state.selected_values``: A is the current plan's profile, or the file of a what-if), so:

- selecting an entry in a compare view selects its A value in every view of the page (nothing,
  for a value found only in B);
- selecting a value anywhere else selects its entry here.
"""

from __future__ import annotations

import param

from tilescope.app.shown_gate import ShownGate
from tilescope.app.state import SessionState


class CompareSelection(param.Parameterized):
    entry = param.Integer(default=-1, doc="the selected entry of state.compare's value match (-1: none)")

    def __init__(self, state: SessionState, gate: ShownGate | None = None, **params):
        """``gate``: the Compare tab's (``app.shown_gate``); None: always follows the session."""
        super().__init__(**params)
        self.state = state
        self._syncing = False
        self._compare = state.compare
        gate = gate or ShownGate(state)
        gate.watch(self._from_state, "selected_values")
        gate.watch(self._on_compare, "compare")
        self._from_state()

    def select(self, entry: int) -> None:
        """Select ``entry`` here and its A value (if any) in the session."""
        compare = self.state.compare
        if compare is None:
            return
        entry = int(entry)
        a_id = compare.a_id_of(entry) if entry >= 0 else None
        self._syncing = True
        try:
            self.entry = entry
            self.state.select_values([] if a_id is None else [a_id])
        finally:
            self._syncing = False

    def _from_state(self, *_):
        if self._syncing:
            return
        compare, ids = self.state.compare, self.state.selected_values
        if compare is None:
            self.entry = -1
        elif ids:
            self.entry = compare.entry_of_a_id(ids[0])
        elif self.entry >= 0 and compare.a_id_of(self.entry) is not None:
            self.entry = -1  # the session's selection was cleared (a B-only entry stays: it has no A value)

    def _on_compare(self, *_):
        # against the comparison last seen here, not the event's old value: behind a closed gate
        # several changes arrive as the last one
        old, new = self._compare, self.state.compare
        self._compare = new
        same_pair = (
            old is not None and new is not None and old.a.opened is new.a.opened and old.b.opened is new.b.opened
        )
        if not same_pair:  # another pair of profiles: entries mean other values
            self.entry = -1
            self._from_state()
