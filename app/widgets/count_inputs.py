"""The numeric inputs beside a ``TilingWidget``'s handles (one per axis, then replicas), for
keyboard and exact entry; both tiling editors use them."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import panel as pn

from tilescope.planner.tiling_rules import REPLICAS

from .tiling_widget import TilingWidget


class CountInputs:
    """Keeps one ``IntInput`` per handle in step with the counts on show, and hands each typed
    count to ``on_typed(handle, count)``.

    The inputs are a pool that only grows: showing another target reuses them (each relabelled and
    re-pointed at its handle), and new inputs are made only when a target has more handles than any
    shown before. New inputs are new Bokeh models, and sending them makes Bokeh re-walk every model
    of the page (~0.1–0.2 s on a large profile), so a step that shows another value in the editor
    must not make any. The widget slots the first inputs beside its bands and leaves the rest out.
    ``counts`` is updated before the inputs are, so an update never reads as a typed count.
    """

    def __init__(self, widget: TilingWidget, on_typed: Callable[[str, int], object]):
        self.widget = widget
        self.counts: dict[str, int] = {}
        self._on_typed = on_typed
        self._identity: Hashable = None
        self._pool: list = []  # every input made so far; the first len(counts) are on show
        self._handles: list[str] = []  # the handle each input on show stands for

    @property
    def fields(self) -> list:
        """The inputs on show: one per handle (axes, then replicas)."""
        return self._pool[: len(self._handles)]

    def show(self, counts: dict[str, int], identity: Hashable) -> dict:
        """Show ``counts`` (handle → count). Returns the widget parameters to send with the
        caller's update (``{"inputs": [...]}`` when the pool grew, else nothing)."""
        self.counts = dict(counts)
        grown = len(counts) > len(self._pool)
        while len(self._pool) < len(counts):
            self._pool.append(self._field(len(self._pool)))
        if identity != self._identity or list(counts) != self._handles:
            self._identity = identity
            self._handles = list(counts)
            for field, handle in zip(self._pool, self._handles):
                label = "replicas" if handle == REPLICAS else "partitions"
                if field.label != label:
                    field.label = label
                field.css_classes = [f"ts-count-{handle}"]
        self.snap_back()
        return {"inputs": list(self._pool)} if grown or list(self.widget.inputs) != self._pool else {}

    def snap_back(self) -> None:
        """Every input back to the count on show (after a refused count was typed)."""
        for handle, field in zip(self._handles, self._pool):
            if field.value != self.counts[handle]:
                field.value = self.counts[handle]

    def clear(self) -> dict:
        self.counts, self._identity, self._handles = {}, None, []
        return {}

    def _field(self, position: int):
        field = pn.widgets.IntInput(label="partitions", value=1, step=1, width=130)
        field.param.watch(lambda event: self._typed(position, event.new), "value")
        return field

    def _typed(self, position: int, count) -> None:
        if position >= len(self._handles):
            return
        handle = self._handles[position]
        if count is None or self.counts.get(handle) == count:
            return
        self._on_typed(handle, int(count))
