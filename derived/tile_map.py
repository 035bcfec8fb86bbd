"""The tile map's data: the device's tiles on a grid, each with the bytes it holds at a step
(``planner.tile_bytes``), the worst tile against the planner's estimate, and what a tile holds, most
bytes first.

- **Which tiles.** Exactly the device's ``device_tiles`` (the profile's device), nothing else from
  the file sizes the grid. The loader accepts up to 2⁵³ tiles; per-tile bytes take
  O(live values × device tiles) memory, so above ``MAX_MAP_TILES`` no map is built and
  ``TileMapUnavailable`` says why (the rest of the app is unaffected).
- **The grid** (a presentation choice; the file gives no physical layout): tile t at column
  t mod C, row t div C, C = ⌈√(2 · tiles)⌉ (about twice as wide as tall: 55 × 27 for 1,472 tiles).
- **Regions.** ``total`` (both regions), ``standard`` (values, scratch and the exchange rows) or
  ``interleaved``; the worst tile is the one holding the most bytes of that choice (the lowest tile
  on a tie) and the estimate is the planner's figure for it at the step (an upper bound of every
  tile: ``planner.tile_bytes``).

Pure numpy: no Panel, no Bokeh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import TilescopeError
from tilescope.planner.model import REGION_CODES
from tilescope.planner.tile_bytes import TileBytes

MAX_MAP_TILES = 16_384  # ≈ 11 × an IPU's 1,472 tiles; 300 live values × 16,384 tiles × 8 B ≈ 39 MB per step
TILE_REGIONS = ("total", "standard", "interleaved")


class TileMapUnavailable(TilescopeError):
    """No tile map for this profile (too many tiles to hold one figure per tile)."""


def check_tile_count(device_tiles: int) -> None:
    """Refuse a device above ``MAX_MAP_TILES`` before any per-tile array is allocated."""
    if device_tiles > MAX_MAP_TILES:
        raise TileMapUnavailable(
            f"the device has {device_tiles:,} tiles; the tile map holds one figure per tile and is drawn for "
            f"at most {MAX_MAP_TILES:,} tiles: not drawn"
        )


def grid_columns(tiles: int) -> int:
    """Columns of the grid (module doc)."""
    return max(1, math.ceil(math.sqrt(2 * max(tiles, 1))))


@dataclass(frozen=True)
class TileHolding:
    """One line of what a tile holds: a value (``row`` ≥ 0), the step's scratch or the exchange rows."""

    kind: str  # "value" | "scratch" | "exchange_rows"
    row: int  # value row, -1 otherwise
    region: str
    bytes: int  # on this tile
    planned: int  # what the planner counts for it on every tile (the value's bytes, the scratch, the rows)


@dataclass(frozen=True)
class TileMap:
    """The device's tiles at one step, for one region choice (``TILE_REGIONS``)."""

    tiles: TileBytes
    region: str
    columns: int
    value_regions: np.ndarray  # region code of each of ``tiles.live_rows``
    scratch_standard: int  # the step's scratch: on every tile, included in the per-tile bytes
    scratch_interleaved: int
    exchange_rows: int  # on every tile, in the standard region

    @property
    def step(self) -> int:
        return self.tiles.step

    @property
    def device_tiles(self) -> int:
        return int(self.bytes.size)

    @property
    def rows(self) -> int:
        return -(-self.device_tiles // self.columns)

    @property
    def bytes(self) -> np.ndarray:
        """Bytes per tile (index = tile) of the region choice."""
        t = self.tiles
        return {"total": t.total, "standard": t.standard, "interleaved": t.interleaved}[self.region]

    @property
    def estimate(self) -> int:
        t = self.tiles
        return {"total": t.estimate_total, "standard": t.estimate_standard, "interleaved": t.estimate_interleaved}[
            self.region
        ]

    @property
    def worst_tile(self) -> int:
        return int(np.argmax(self.bytes)) if self.bytes.size else 0

    @property
    def worst_bytes(self) -> int:
        return int(self.bytes[self.worst_tile]) if self.bytes.size else 0

    def position(self, tile: int) -> tuple[int, int]:
        """(column, row) of ``tile`` on the grid."""
        return int(tile) % self.columns, int(tile) // self.columns

    def tile_at(self, column: float, row: float) -> int | None:
        """The tile drawn at grid position (column, row) (cells centred on integers), or None
        outside the device's tiles."""
        c, r = math.floor(column + 0.5), math.floor(row + 0.5)
        if not (0 <= c < self.columns and r >= 0):
            return None
        tile = r * self.columns + c
        return tile if tile < self.device_tiles else None

    def holdings(self, tile: int, value_bytes: np.ndarray, limit: int = 12) -> tuple[list[TileHolding], int]:
        """What ``tile`` holds in the region choice: its values, most bytes first (by row on ties), at
        most ``limit`` of them, then the step's scratch and the exchange rows; and how many more
        values hold bytes there. ``value_bytes``: the plan's bytes per value row (what the planner
        counts for the value on every tile). With every value listed, the lines add up to the tile's
        bytes."""
        t = self.tiles
        names = ("standard", "interleaved") if self.region == "total" else (self.region,)
        codes = np.array([REGION_CODES[r] for r in names])
        lines: list[TileHolding] = []
        more = 0
        if t.live_rows.size:
            on_tile = t.held[:, int(tile)]
            keep = np.isin(self.value_regions, codes) & (on_tile > 0)
            rows, held, regions = t.live_rows[keep], on_tile[keep], self.value_regions[keep]
            order = np.lexsort((rows, -held))
            for k in order[:limit].tolist():
                row = int(rows[k])
                region = "interleaved" if int(regions[k]) == REGION_CODES["interleaved"] else "standard"
                lines.append(TileHolding("value", row, region, int(held[k]), int(value_bytes[row])))
            more = max(int(order.size) - limit, 0)
        scratch = {"standard": self.scratch_standard, "interleaved": self.scratch_interleaved}
        for region in names:
            if scratch[region]:
                lines.append(TileHolding("scratch", -1, region, scratch[region], scratch[region]))
        if "standard" in names and self.exchange_rows:
            lines.append(TileHolding("exchange_rows", -1, "standard", self.exchange_rows, self.exchange_rows))
        return lines, more


def tile_map(
    tiles: TileBytes,
    region: str,
    value_region: np.ndarray,
    scratch_standard: int,
    scratch_interleaved: int,
    exchange_rows: int,
) -> TileMap:
    """The map of ``tiles`` (``TileModel.at_step``) for a region choice; ``value_region``: the
    region code of every value row (``ProfileArrays.region``)."""
    if region not in TILE_REGIONS:
        raise ValueError(f"region must be one of {TILE_REGIONS}, not {region!r}")
    return TileMap(
        tiles,
        region,
        grid_columns(int(tiles.total.size)),
        np.asarray(value_region)[tiles.live_rows],
        int(scratch_standard),
        int(scratch_interleaved),
        int(exchange_rows),
    )
