"""The tile map's data: the device's tiles on a grid, each with the bytes it holds at a step, the
worst tile against the planner's estimate, and what a tile holds, most bytes first.

- **Which figures.** The plan's per-tile figures, the same the Tiles tab shows
  (``derived.tile_usage``, one ``planner.tile_usage.TileUsage`` per plan): a v2/v3 file's own
  (edited values re-estimated by compiler-formats.md §2), tilescope's §2 estimate for a v1 file
  (``source`` "estimate", labelled so). A tile's bytes are what it holds: its live roots (per
  root the alias holding the most there) and its own scratch at the step; the exchange rows are
  not per-tile figures and are left out.
- **Which tiles.** Exactly the device's ``device_tiles``. Per-tile figures take O(device tiles)
  per step, so above ``MAX_MAP_TILES`` no map is built and ``TileMapUnavailable`` says why (the
  rest of the app is unaffected).
- **The grid** (a presentation choice; the file gives no physical layout): tile t at column
  t mod C, row t div C, C = ⌈√(2 · tiles)⌉ (about twice as wide as tall: 55 × 27 for 1,472 tiles).
- **Regions.** ``total`` (both regions), ``standard`` or ``interleaved``; the worst tile is the
  last tile holding the most bytes of that choice (the compiler's rule for a step's ``usage``, the
  Tiles tab's peak tile), and the estimate is the planner's sum-of-maxima usage at the step (every
  value at its largest shard on every tile, with the step's scratch: the old bound).

Pure numpy: no Panel, no Bokeh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import TilescopeError
from tilescope.planner.model import REGION_CODES

from .plan_data import PlanData
from .tile_rows import tile_columns, tile_holders
from .tile_usage import at_step, source

MAX_MAP_TILES = 16_384  # ≈ 11 × an IPU's 1,472 tiles
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
    """One line of what a tile holds: a value (``row`` ≥ 0) or the tile's scratch at the step."""

    kind: str  # "value" | "scratch"
    row: int  # value row, -1 for scratch
    region: str
    bytes: int  # on this tile
    planned: int  # what the planner's estimate counts for it on every tile (the value's bytes; the scratch)


@dataclass(frozen=True)
class TileMap:
    """The device's tiles at one step, for one region choice (``TILE_REGIONS``)."""

    data: PlanData
    step: int
    region: str
    source: str  # "file" | "estimate" (derived.tile_usage)
    columns: int
    standard: np.ndarray  # bytes per tile (index = tile)
    interleaved: np.ndarray
    estimate_standard: int  # the planner's usage at the step
    estimate_interleaved: int

    @property
    def device_tiles(self) -> int:
        return int(self.standard.size)

    @property
    def rows(self) -> int:
        return -(-self.device_tiles // self.columns)

    @property
    def bytes(self) -> np.ndarray:
        """Bytes per tile (index = tile) of the region choice."""
        if self.region == "standard":
            return self.standard
        if self.region == "interleaved":
            return self.interleaved
        return self.standard + self.interleaved

    @property
    def estimate(self) -> int:
        return {
            "total": self.estimate_standard + self.estimate_interleaved,
            "standard": self.estimate_standard,
            "interleaved": self.estimate_interleaved,
        }[self.region]

    @property
    def worst_tile(self) -> int:
        """The last tile holding the most (module doc)."""
        b = self.bytes
        return int(b.size - 1 - np.argmax(b[::-1])) if b.size else 0

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

    def holdings(self, tile: int, limit: int = 12) -> tuple[list[TileHolding], int]:
        """What ``tile`` holds in the region choice: its live roots (the alias holding the most
        there, as the Tiles tab lists them), most bytes first (by row on ties), at most ``limit``
        of them, then the tile's scratch at the step; and how many more values hold bytes there.
        With every value listed, the lines add up to the tile's bytes."""
        data, names = self.data, ("standard", "interleaved") if self.region == "total" else (self.region,)
        codes = [REGION_CODES[r] for r in names]
        rows, held = tile_holders(data, int(tile), self.step)
        a = data.arrays
        regions = a.region[a.root_rows[rows]] if rows.size else np.zeros(0, dtype=np.int64)
        keep = np.isin(regions, codes)
        rows, held, regions = rows[keep], held[keep], regions[keep]
        order = np.lexsort((rows, -held))
        planned = data.plan.figures.bytes
        lines = [
            TileHolding(
                "value",
                int(rows[k]),
                "interleaved" if int(regions[k]) == REGION_CODES["interleaved"] else "standard",
                int(held[k]),
                int(planned[int(rows[k])]),
            )
            for k in order[:limit].tolist()
        ]
        columns = tile_columns(data, int(tile))
        scratch = {
            "standard": (int(columns.scratch_standard[self.step]), int(self.data.arrays.scratch_standard[self.step])),
            "interleaved": (
                int(columns.scratch_interleaved[self.step]),
                int(self.data.arrays.scratch_interleaved[self.step]),
            ),
        }
        for region in names:
            on_tile, planned_scratch = scratch[region]
            if on_tile:
                lines.append(TileHolding("scratch", -1, region, on_tile, planned_scratch))
        return lines, max(int(order.size) - limit, 0)


def tile_map(data: PlanData, step: int, region: str = "total") -> TileMap:
    """The map of ``data``'s per-tile figures at ``step`` for a region choice. Raises
    ``TileMapUnavailable`` for a device above ``MAX_MAP_TILES`` (before anything per tile is
    computed), ``TilescopeError`` when the figures cannot be made."""
    if region not in TILE_REGIONS:
        raise ValueError(f"region must be one of {TILE_REGIONS}, not {region!r}")
    check_tile_count(int(data.arrays.device_tiles))
    standard, interleaved = at_step(data, int(step))
    series = data.series
    return TileMap(
        data,
        int(step),
        region,
        source(data),
        grid_columns(int(np.asarray(standard).size)),
        np.asarray(standard, dtype=np.int64),
        np.asarray(interleaved, dtype=np.int64),
        int(series.standard[step]),
        int(series.interleaved[step]),
    )
