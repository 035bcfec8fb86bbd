"""The drag widget of the what-if editor: one band per tiled axis, plus one for replicas.

Each band draws the axis (padded length, the padding, every partition boundary, one shard
highlighted) and a track with a handle (``.ts-handle[data-axis=K]`` or ``[data-axis=replicas]``).
Dragging the handle moves it over the track's *stops*, the counts that change the shard (or, for
replicas, every count): it only redraws locally. Releasing it sets ``committed`` once, which the
editor turns into a re-plan. The widget never decides what is valid: stops outside ``valid_counts``
are drawn as a refused zone, and a refused commit comes back as ``message`` (shown at the handle)
with ``revision`` bumped, which snaps the handle back to the model's count.

Text that may come from a file (labels) is only ever set through ``textContent``.
"""

from __future__ import annotations

import param
from panel.custom import Children, JSComponent

from tilescope.app.assets import STATIC, static_text


class TilingWidget(JSComponent):
    """Bands and drag handles for one value's tiling (see the module doc for the protocol)."""

    axes = param.List(
        default=[],
        doc="""
        One dict per tiled axis, in tiling order: label (axis kind, e.g. "FromEnd(2)"), size, padded,
        blocks, block_size, shard_padding_multiple, partitions, per_partition, counts (the track's
        stops), valid_counts (the counts the planner accepts).""",
    )
    replicas = param.Integer(default=1)
    replica_counts = param.List(default=[], doc="stops of the replica track")
    valid_replica_counts = param.List(default=[], doc="replica counts the planner accepts")
    max_replicas = param.Integer(default=1, doc="the most replicas the device allows with these partitions")
    tile_product = param.Integer(default=1, doc="product of the partition counts (tiles per replica)")
    device_tiles = param.Integer(default=1)
    show_replicas = param.Boolean(default=True)
    disabled = param.Boolean(default=False, doc="no drag while nothing can be edited")
    message = param.String(default="", doc="why the last commit was refused (shown at its handle)")
    message_axis = param.String(default="", doc='the handle the message belongs to: "0", "1", … or "replicas"')
    revision = param.Integer(default=0, doc="bumped after every handled commit: the handles redraw from the model")
    committed = param.Dict(
        default={}, doc='set by the browser on release: {"axis": "0"|"replicas", "count": n, "nonce": …}'
    )
    inputs = Children(default=[], doc="one numeric input per band (axes, then replicas), drawn beside its handle")

    _esm = STATIC / "tiling_widget.js"
    _stylesheets = [static_text("tiling_widget.css")]
    _render_policy = "manual"  # the ESM re-slots the inputs itself (model.on("inputs")), no full re-render
    # A release is one event, not a stream of keystrokes: handled at once, not after Panel's 50 ms debounce.
    _priority_changes = ["committed"]


def committed_count(committed: dict | None) -> tuple[str, int] | None:
    """``(handle, count)`` of a widget's ``committed`` value, or None when it does not hold one."""
    if committed is None:
        return None
    try:
        return str(committed["axis"]), int(committed["count"])
    except (KeyError, TypeError, ValueError):
        return None
