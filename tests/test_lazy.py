"""models.lazy: computed once per owner on first use, kept on that owner alone, and one owner's long
computation never holds up another owner's (functools.cached_property in Python 3.11 takes one
lock per class: the second session would wait for the first's large profile)."""

from __future__ import annotations

import threading

from tilescope.models.lazy import lazy


class Owner:
    def __init__(self, name: str, gate: threading.Event | None = None):
        self.name, self.gate, self.calls = name, gate, 0

    @lazy
    def table(self) -> str:
        """The owner's table."""
        self.calls += 1
        if self.gate is not None:
            assert self.gate.wait(30), "the slow computation was never let go"
        return f"table of {self.name}"


def test_computed_once_per_owner_and_kept_on_it():
    a, b = Owner("a"), Owner("b")
    assert (a.table, a.table, b.table) == ("table of a", "table of a", "table of b")
    assert (a.calls, b.calls) == (1, 1)
    assert a.__dict__["table"] == "table of a" and "table" not in Owner.__dict__["table"].__dict__
    assert Owner.table.__doc__ == "The owner's table."  # the class attribute is the descriptor


def test_a_slow_owner_does_not_hold_up_another():
    gate = threading.Event()
    slow, quick = Owner("slow", gate), Owner("quick")
    seen: dict[str, str] = {}
    started = threading.Thread(target=lambda: seen.setdefault("slow", slow.table))
    started.start()
    try:
        # the slow computation is under way (it waits on the gate) while the quick one finishes
        done = threading.Thread(target=lambda: seen.setdefault("quick", quick.table))
        done.start()
        done.join(30)
        assert not done.is_alive() and seen == {"quick": "table of quick"}
        assert started.is_alive()
    finally:
        gate.set()
        started.join(30)
    assert seen["slow"] == "table of slow" and slow.calls == 1
