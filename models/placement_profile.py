"""A placement profile (``placement-{pid}.json``, schema 1; ``shared/spec/compiler-formats.md`` §5):
where the compiler placed every allocation of every tile, as ``loaders.placement_profile`` reads it.

Two Arrow tables: ``tiles`` (one row per tile, in the file's order) and ``allocations`` (one row per
allocation, grouped by tile in that order, each tile's rows sorted by ``(first, start, last)``).
Labels stay a list of strings that rows name by index (``label``); kinds are codes into ``KINDS``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .schemas import documented_field as _f

SCHEMA_VERSION = 1
KINDS = ("parameter", "activation", "scratch", "support", "padding")  # ``kind`` codes, in this order
TENSOR_KINDS = ("parameter", "activation", "scratch")  # rows that hold a tensor's alias group
PROGRAM_END = 4294967295  # ``last`` of a row needed after the device finishes (2**32 - 1)

TILES = pa.schema(
    [
        _f("logical", pa.int64(), "the tile's logical index"),
        _f("physical", pa.int64(), "the C600 physical tile number of the logical tile"),
        _f("first_row", pa.int64(), "index of the tile's first row in the allocations table"),
        _f("rows", pa.int64(), "how many allocations the tile has"),
    ]
)
ALLOCATIONS = pa.schema(
    [
        _f("tile", pa.int64(), "logical index of the tile the allocation is on"),
        _f("start", pa.int64(), "first byte address of the allocation", unit="byte address"),
        _f(
            "end",
            pa.int64(),
            "one past the last byte address (start + the group's allocation bytes)",
            unit="byte address",
        ),
        _f(
            "payload_end",
            pa.int64(),
            "start + the largest member's shard storage (support rows: end of the used part)",
            unit="byte address",
        ),
        _f("label", pa.int32(), "index into the profile's labels"),
        _f("kind", pa.int8(), "index into KINDS: parameter, activation, scratch, support, padding"),
        _f("first", pa.int64(), "first event the allocation is live at (inclusive)", unit="event"),
        _f(
            "last",
            pa.int64(),
            "last event the allocation is live at (inclusive; 4294967295: after the program)",
            unit="event",
        ),
        _f("shards", pa.list_(pa.int64()), "shard ids of the alias group (empty for support and padding)"),
    ]
)


@dataclass(frozen=True, eq=False)
class PlacementProfile:
    """A validated placement profile (module doc)."""

    source: str
    start: int  # TILE_MEMORY_BASE
    end: int  # TILE_MEMORY_BASE + TILE_MEMORY_SIZE
    labels: tuple[str, ...]
    tiles: pa.Table  # TILES
    allocations: pa.Table  # ALLOCATIONS

    @property
    def tile_count(self) -> int:
        return self.tiles.num_rows

    def tile_rows(self, position: int) -> pa.Table:
        """The allocations of the tile at ``position`` (its row in ``tiles``)."""
        first = int(self.tiles.column("first_row")[position].as_py())
        rows = int(self.tiles.column("rows")[position].as_py())
        return self.allocations.slice(first, rows)

    def position_of(self, logical: int) -> int | None:
        """The row in ``tiles`` of logical tile ``logical`` (None: no such tile)."""
        hits = np.flatnonzero(self.tiles.column("logical").to_numpy() == logical)
        return int(hits[0]) if hits.size else None
