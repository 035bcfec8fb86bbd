"""The numeric inputs beside a ``TilingWidget``'s handles (one per axis, then replicas), for
keyboard and exact entry; both tiling editors use them."""
from __future__ import annotations

from typing import Callable, Hashable

import panel as pn

from tilescope.planner.tiling_rules import REPLICAS

from .tiling_widget import TilingWidget


class CountInputs:
    """Keeps one ``IntInput`` per handle in step with the counts on show, and hands each typed
    count to ``on_typed(handle, count)``.

    The inputs are rebuilt only when the handles change (another target whose identity or number
    of axes differs); otherwise their values are updated in place: new inputs are new Bokeh models,
    and sending them makes Bokeh re-walk every model of the page (~0.1 s on a large profile).
    ``counts`` is updated before the inputs are, so an update never reads as a typed count.
    """

    def __init__(self, widget: TilingWidget, on_typed: Callable[[str, int], None]):
        self.widget = widget
        self.counts: dict[str, int] = {}
        self._on_typed = on_typed
        self._identity: Hashable = None

    @property
    def fields(self) -> list:
        return list(self.widget.inputs)

    def show(self, counts: dict[str, int], identity: Hashable) -> dict:
        """Show ``counts`` (handle → count). Returns the widget parameters to send with the
        caller's update (``{"inputs": [...]}`` when new inputs were made, else nothing)."""
        self.counts = dict(counts)
        fields = self.fields
        if identity != self._identity or len(fields) != len(counts):
            self._identity = identity
            return {"inputs": [self._field(handle, count) for handle, count in counts.items()]}
        self.snap_back()
        return {}

    def snap_back(self) -> None:
        """Every input back to the count on show (after a refused count was typed)."""
        for handle, field in zip(self.counts, self.fields):
            if field.value != self.counts[handle]:
                field.value = self.counts[handle]

    def clear(self) -> dict:
        self.counts, self._identity = {}, None
        return {"inputs": []}

    def _field(self, handle: str, count: int):
        field = pn.widgets.IntInput(
            label="replicas" if handle == REPLICAS else "partitions", value=count, step=1, width=130,
            css_classes=[f"ts-count-{handle}"],
        )
        field.param.watch(lambda event: self._typed(handle, event.new), "value")
        return field

    def _typed(self, handle: str, count) -> None:
        if count is None or self.counts.get(handle) == count:
            return
        self._on_typed(handle, int(count))
