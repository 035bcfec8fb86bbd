"""What the what-if editor shows for one value of one plan (no Panel): its tiling with the drag
bands, the replica track and what the rules allow (``planner.tiling_rules``), its heading facts,
and its figures before → after the edits."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tilescope.models.format import step_range
from tilescope.models.tiling import TensorTiling
from tilescope.planner import tiling_rules

from .plan_data import PlanData

PEAK_KINDS = ("total", "standard", "interleaved")


@dataclass(frozen=True)
class ValueEditing:
    """One value's tiling as the editor draws it."""

    row: int
    value_id: int
    tiling: TensorTiling
    bands: list[dict]  # planner.tiling_rules.axis_bands
    replica_stops: list[int]
    valid_replicas: list[int]  # the replica stops the rules allow
    max_replicas: int
    tile_product: int  # partitions per replica
    device_tiles: int

    @property
    def counts(self) -> dict[str, int]:
        """Handle ("0", "1", … or "replicas") → the count this plan has."""
        counts = {str(k): int(band["partitions"]) for k, band in enumerate(self.bands)}
        counts[tiling_rules.REPLICAS] = int(self.tiling.replicas)
        return counts


def value_editing(data: PlanData, row: int) -> ValueEditing:
    """Raises ``planner.shards.ShapeMismatch`` when the tiling names a dimension the shape lacks."""
    arrays = data.arrays
    tiling = data.tiling(row)
    shape = arrays.shapes[int(arrays.root_rows[row])]
    tiles = int(arrays.device_tiles)
    bands = tiling_rules.axis_bands(shape, tiling, tiles)
    stops = tiling_rules.replica_stops(tiling, tiles)
    valid = tiling_rules.valid_replica_counts(tiling, tiles)
    return ValueEditing(
        row=row,
        value_id=int(arrays.value_ids[row]),
        tiling=tiling,
        bands=bands,
        replica_stops=stops,
        valid_replicas=tiling_rules.accepted(stops, valid),
        max_replicas=valid[-1] if valid else 0,
        tile_product=math.prod(a.partitions for a in tiling.axes),
        device_tiles=tiles,
    )


@dataclass(frozen=True)
class ValueFacts:
    """The editor's heading for one value (``name`` is untrusted text)."""

    value_id: int
    name: str
    shape: str
    precision: str
    region: str
    order: str
    storage_group: int
    live: str  # ``steps 43–44``, several runs comma-separated, or ``never``
    alias_of: int | None


def value_facts(data: PlanData, row: int) -> ValueFacts:
    arrays, text = data.arrays, data.opened.value_text
    value_id, root = int(arrays.value_ids[row]), int(arrays.roots[row])
    spans = [
        step_range(int(arrays.interval_first[i]), int(arrays.interval_last[i]))
        for i in arrays.intervals_of(int(arrays.root_rows[row]))
    ]
    return ValueFacts(
        value_id=value_id,
        name=text.names[row],
        shape="[" + ", ".join(str(d) for d in arrays.shapes[row]) + "]",
        precision=str(text.field("precision", row)),
        region="interleaved" if arrays.region[row] else "standard",
        order=str(text.field("order", row)),
        storage_group=int(text.field("storage_group", row)),
        live=", ".join(spans) or "never",
        alias_of=None if root == value_id else root,
    )


def figure_changes(data: PlanData, row: int) -> list[tuple[str, int, int]]:
    """(figure, before, after): the value's shard, aligned and bytes, then the three peaks."""
    before, after = data.base.plan, data.plan
    rows = [
        ("shard", int(before.figures.shard[row]), int(after.figures.shard[row])),
        ("aligned", int(before.figures.aligned[row]), int(after.figures.aligned[row])),
        ("bytes", int(before.figures.bytes[row]), int(after.figures.bytes[row])),
    ]
    rows += [(f"{kind} peak", int(getattr(before.peaks, kind)), int(getattr(after.peaks, kind))) for kind in PEAK_KINDS]
    return rows
