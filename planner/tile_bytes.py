"""Per-tile bytes: which of the device's tiles holds which partition of each value, and how many bytes
each tile holds at a step (docs/formats.md §2; the mapping is our choice, §5).

The planner's figures are per-tile maxima ("sum of per-allocation maximum shard sizes"): every value
is counted at its largest shard on every tile. Here each tile gets what it actually holds:

- **Partitions.** A tiling's axes cut the tensor in order (``shards.shard_cuts``' rule, applied to each
  partition's own extent instead of the largest): on an axis with ``p`` partitions over ``b`` blocks of
  ``block_size`` elements, partition ``j`` holds the padded dimension's elements from
  ``j·⌈b/p⌉·block_size`` on, at most ``⌈b/p⌉·block_size`` of them, so the last partitions of an uneven
  cut are smaller (possibly empty) and the partitions together hold exactly the padded dimension.
  ``shard_padding_multiple`` is not applied per tile (1 in every sample). A shard's bytes are the
  product of its extents times the element size; what the tile *holds* is that rounded up to the
  value's granule, times ``copies`` (0 when the shard is empty), the per-tile form of ``bytes``.
- **Tiles** (``tile_strides``). Each axis with more than one partition, and the replicas when more than
  one, is a digit of a mixed-radix tile number: tile = Σ partition index × stride (+ replica × its
  stride). Axes with a recorded ``tile_stride`` keep it. The digits without one — axes whose stride is
  ``None`` in tiling order, then the replicas — take the lowest free strides: each fills the hole below
  the next recorded stride if there is one, else is packed after the recorded ones (so with dense
  recorded strides, ``None`` axes come after them and replicas outermost). Holes are not hypothetical:
  sample values 140, 161 and 166 record strides 1 and 176 (80, 640) with 11 (5, 46) replicas, which
  fill exactly the stride-16 hole; placing those replicas outermost would need tiles beyond the
  device. With this rule every value of the sample maps onto tiles 0 … tile_count − 1, each once. When
  the strides a what-if edit leaves behind do not give distinct tiles inside the device, all digits are
  packed densely instead (recorded ones in stride order, then the rest), and the mapping says so.
- **Per step.** A tile's bytes at a step are, per region, the held bytes of the values live there plus
  the step's scratch (one per-tile figure in the profile: counted on every tile) plus, in the
  standard region, the exchange rows (a whole-program reservation on every tile). Each value's held
  bytes on a tile are at most its ``bytes``, so no tile exceeds the planner's estimate (usage, plus
  the exchange rows in the standard region).

Cost: a value's per-tile bytes take O(partitions × rank + device tiles) (partitions ≤ tile count ≤
device tiles), memoised per distinct (layout, shape, element size); a step's map is O(live values ×
device tiles). Block counts never enter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import TilescopeError
from tilescope.models.tiling import TensorTiling

from .model import Plan, ProfileArrays

RECORDED = "recorded strides"
PACKED = "packed (recorded strides collide)"
REPLICAS = -1  # TileStrides.positions entry of the replica digit


@dataclass(frozen=True)
class TileStrides:
    """One stride per digit: ``positions[k]`` is an axis position (or REPLICAS), ``counts[k]`` its
    partitions (replicas); tile = Σ index_k × strides[k]."""

    positions: tuple[int, ...]
    counts: tuple[int, ...]
    strides: tuple[int, ...]
    rule: str


def _digits(tiling: TensorTiling) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
    recorded = sorted(
        (axis.tile_stride, axis.partitions, position)
        for position, axis in enumerate(tiling.axes)
        if axis.partitions > 1 and axis.tile_stride is not None
    )
    free = [
        (axis.partitions, position)
        for position, axis in enumerate(tiling.axes)
        if axis.partitions > 1 and axis.tile_stride is None
    ]
    if tiling.replicas > 1:
        free.append((tiling.replicas, REPLICAS))
    return recorded, free


def _strides_by_rule(recorded: list[tuple[int, int, int]], free: list[tuple[int, int]]) -> dict[int, int]:
    strides: dict[int, int] = {}
    free = list(free)
    extent = 1  # tiles 0 … extent − 1 are covered by the digits placed so far
    for stride, count, position in recorded:
        while free and extent < stride:  # fill the hole below this recorded stride
            c, p = free.pop(0)
            strides[p] = extent
            extent *= c
        strides[position] = stride
        extent = max(extent, stride * count)
    for c, p in free:
        strides[p] = extent
        extent *= c
    return strides


def _packed(recorded: list[tuple[int, int, int]], free: list[tuple[int, int]]) -> dict[int, int]:
    strides, extent = {}, 1
    for c, p in [(count, position) for _, count, position in recorded] + free:
        strides[p] = extent
        extent *= c
    return strides


def tile_strides(tiling: TensorTiling, device_tiles: int) -> TileStrides:
    """The partition-to-tile mapping of one tiling (module doc)."""
    recorded, free = _digits(tiling)
    digits = [(p, c) for _, c, p in recorded] + [(p, c) for c, p in free]
    for rule, strides in ((RECORDED, _strides_by_rule(recorded, free)), (PACKED, _packed(recorded, free))):
        mapping = TileStrides(
            tuple(p for p, _ in digits), tuple(c for _, c in digits), tuple(strides[p] for p, _ in digits), rule
        )
        tiles = tiles_of(mapping)
        if int(tiles.max()) < device_tiles and np.unique(tiles).size == tiles.size:
            return mapping
    raise TilescopeError(
        f"a tiling of {math.prod(mapping.counts):,} partitions × replicas needs more than the device's {device_tiles:,} tiles"
    )


def tiles_of(mapping: TileStrides) -> np.ndarray:
    """The tile of every digit combination, C order over ``mapping.positions`` (int64)."""
    tiles = np.zeros(1, dtype=np.int64)
    for count, stride in zip(mapping.counts, mapping.strides):
        tiles = (tiles[:, None] + np.arange(count, dtype=np.int64)[None, :] * stride).reshape(-1)
    return tiles


def partition_shard_bytes(
    shape: Sequence[int], element_bytes: int, tiling: TensorTiling
) -> tuple[np.ndarray, np.ndarray]:
    """Bytes of every partition's shard (module doc) and each partition's index on every axis.

    Returns ``(bytes[P], index[P, n_axes])`` for the P = Π partitions combinations, C order over the axes.
    """
    counts = [axis.partitions for axis in tiling.axes]
    n = math.prod(counts) if counts else 1
    index = np.stack(np.unravel_index(np.arange(n), counts), axis=1) if counts else np.zeros((1, 0), dtype=np.int64)
    dims = np.tile(np.asarray(list(shape) or [1], dtype=np.int64), (n, 1)) if shape else np.ones((n, 1), dtype=np.int64)
    dim: int | None
    for k, axis in enumerate(tiling.axes):
        if axis.axis.kind == "Linear":
            dims = dims.prod(axis=1, keepdims=True)
            dim = 0
        else:
            dim = axis.axis.dimension(dims.shape[1])
            if dim is None or not 0 <= dim < dims.shape[1]:
                raise TilescopeError(f"axis {k} ({axis.axis}) names no dimension of a rank-{dims.shape[1]} shape")
        size = dims[:, dim]
        padded = -(-size // axis.padding_multiple) * axis.padding_multiple
        blocks = -(-padded // axis.block_size)
        per_partition = -(-blocks // axis.partitions) * axis.block_size
        dims[:, dim] = np.clip(padded - index[:, k] * per_partition, 0, per_partition)
    return dims.prod(axis=1) * element_bytes, index.astype(np.int64)


def shard_bytes_per_tile(
    shape: Sequence[int], element_bytes: int, tiling: TensorTiling, device_tiles: int
) -> np.ndarray:
    """Shard bytes on each of the device's tiles (0 where the value has no partition)."""
    mapping = tile_strides(tiling, device_tiles)
    shard, index = partition_shard_bytes(shape, element_bytes, tiling)
    out = np.zeros(device_tiles, dtype=np.int64)
    tiles = np.zeros(shard.size, dtype=np.int64)
    replica_stride = None
    for position, _count, stride in zip(mapping.positions, mapping.counts, mapping.strides):
        if position == REPLICAS:
            replica_stride = stride
        else:
            tiles += index[:, position] * stride
    replicas = np.arange(tiling.replicas, dtype=np.int64) * (replica_stride or 0)
    if replica_stride is None:
        replicas = replicas[:1]
    out[(tiles[:, None] + replicas[None, :]).reshape(-1)] = np.repeat(shard, replicas.size)
    return out


@dataclass(frozen=True)
class TileBytes:
    """Bytes on each of the device's tiles at one step (index = tile), and the planner's estimate."""

    step: int
    standard: np.ndarray  # values + scratch + exchange rows
    interleaved: np.ndarray  # values + scratch
    estimate_standard: int  # usage_standard[step] + exchange rows: an upper bound of every tile
    estimate_interleaved: int
    live_rows: np.ndarray  # value rows live at the step, ascending
    held: np.ndarray  # [live value, tile] bytes each live value holds on each tile

    @property
    def total(self) -> np.ndarray:
        return self.standard + self.interleaved

    @property
    def estimate_total(self) -> int:
        return self.estimate_standard + self.estimate_interleaved

    @property
    def worst_tile(self) -> int:
        """The tile holding the most bytes (both regions), the lowest such tile on a tie."""
        return int(np.argmax(self.total)) if self.total.size else 0

    @property
    def worst_bytes(self) -> int:
        return int(self.total[self.worst_tile]) if self.total.size else 0

    def top_values(self, tile: int | None = None, limit: int = 10) -> list[tuple[int, int]]:
        """(value row, bytes on the tile), most bytes first (ties by row), for ``tile`` (default the
        worst); values holding nothing there are left out."""
        tile = self.worst_tile if tile is None else int(tile)
        if not self.live_rows.size:
            return []
        on_tile = self.held[:, tile]
        order = np.lexsort((self.live_rows, -on_tile))
        return [(int(self.live_rows[k]), int(on_tile[k])) for k in order[:limit] if on_tile[k] > 0]


class TileModel:
    """Per-tile bytes of one plan: the file's tilings, or a what-if's (``WhatIf.tilings``).

    Holds a memo of per-value tile vectors for its own lifetime (one per session's plan), nothing
    module-wide.
    """

    def __init__(self, arrays: ProfileArrays, plan: Plan, tilings: dict[int, TensorTiling] | None = None):
        self.arrays = arrays
        self.plan = plan
        self.tilings = dict(tilings or {})
        self._memo: dict[tuple, np.ndarray] = {}

    def tiling(self, row: int) -> TensorTiling:
        root = int(self.arrays.root_rows[row])
        found = self.tilings.get(row) or self.tilings.get(root)
        return found if found is not None else self.arrays.tiling(root)

    def shard_tiles(self, row: int) -> np.ndarray:
        """Shard bytes of value ``row`` on each tile (read-only)."""
        a = self.arrays
        edited = row in self.tilings or int(a.root_rows[row]) in self.tilings
        layout = self.tiling(row) if edited else a.layout_text[int(a.root_rows[row])]
        key = (layout, a.shapes[row], int(a.element_bytes[row]))
        found = self._memo.get(key)
        if found is None:
            try:
                found = shard_bytes_per_tile(a.shapes[row], int(a.element_bytes[row]), self.tiling(row), a.device_tiles)
            except TilescopeError as exc:
                raise TilescopeError(f"value {int(a.value_ids[row])}: {exc}") from None
            found.flags.writeable = False
            self._memo[key] = found
        return found

    def held_tiles(self, row: int) -> np.ndarray:
        """What value ``row`` occupies on each tile: its shard rounded up to its granule, × copies."""
        g = int(self.arrays.granule[row])
        return -(-self.shard_tiles(row) // g) * g * int(self.arrays.copies[row])

    def at_step(self, step: int) -> TileBytes:
        a, plan = self.arrays, self.plan
        if not 0 <= step < a.n_steps:
            raise TilescopeError(f"step {step} is not in 0..{a.n_steps - 1}")
        live = (a.interval_first <= step) & (a.interval_last >= step)
        rows = np.unique(a.interval_row[live])
        held = (
            np.stack([self.held_tiles(int(r)) for r in rows])
            if rows.size
            else np.zeros((0, a.device_tiles), dtype=np.int64)
        )
        interleaved = a.region[rows] == 1
        standard = held[~interleaved].sum(axis=0) + int(a.scratch_standard[step]) + a.exchange_rows
        intl = held[interleaved].sum(axis=0) + int(a.scratch_interleaved[step])
        return TileBytes(
            step=int(step),
            standard=standard.astype(np.int64),
            interleaved=intl.astype(np.int64),
            estimate_standard=int(plan.usage_standard[step]) + a.exchange_rows,
            estimate_interleaved=int(plan.usage_interleaved[step]),
            live_rows=rows,
            held=held,
        )
