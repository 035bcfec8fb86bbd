"""The compiler's per-tile estimate of one value (compiler-formats.md §2), tilescope's own
implementation: how many elements each logical owner of a layout holds, which device tile each
owner is, what it allocates there, and how a step's scratch is spread over tiles.

- **Owners** (§2.2). A tiling whose only axis is ``Linear`` is *linear ownership*: the flattened
  tensor's ⌈N / grain⌉ grains go ⌊grains / T⌋ to each of the T owners, the first grains mod T
  owners one more. Otherwise *axis ownership*: each tiled dimension of extent E is cut in
  ``padding_groups`` G groups, each group padded up to ``padding_multiple`` M (``Reject``: must need
  no padding), cut into blocks of ``block_size`` B; the p = P / G partitions of a group take
  ⌊blocks / p⌋ blocks each and the first blocks mod p of them one more (uneven shards); a shard's
  width is its blocks × B rounded up to ``shard_padding_multiple`` S. Owner o sits at coordinate
  ⌊o / s_k⌋ mod P_k on axis k, with s_k the axis's ``tile_stride`` or, without one, R × the
  partitions of the axes before it (replicas are the fastest digit). Untiled dimensions count whole.
- **Tiles** (§2.3). Owner o is device tile (o + offset) mod D. The offset (the compiler's
  ``tile_offset``) is not in the file: v1 files are taken with 0; for v2/v3 ``infer_offset`` finds
  the rotation that reproduces the recorded ``tile_shards`` (docs/formats.md §5).
- **Allocated bytes** (§2.4). ``size = ⌈(shard + extra) / alignment⌉ × alignment`` per owner with
  a shard, times ``copies``; ``alignment`` is 1, or the memory element of the value's class
  (16,384 standard, 32,768 interleaved) for GEMM left operands and results, and ``extra`` the AMP
  tail (8 × multiply-precision bytes) of a left operand. The file does not mark those values:
  ``infer_allocation`` reads them back from the recorded figures.
- **Scratch** (§2.6). A step's scratch goes to the owners of its first result:
  ⌈scratch × elements(o) / max elements⌉ on tile t(o), 0 elsewhere.

Everything per value is a dense numpy array of the layout's owners (at most the device's tiles),
returned as ``TileRuns``: maximal runs of consecutive device tiles holding the same figures, tiles
holding nothing left out. Pure numpy; nothing here reads a file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import TilescopeError
from tilescope.models.tiling import AxisTiling, TensorTiling

# Memory element sizes, by region code (0 standard, 1 interleaved): §0 TILE_MEMORY_ELEMENT_SIZE,
# IPU21_INTERLEAVED_ELEMENT_SIZE.
ELEMENT_SIZES = (16_384, 32_768)
# AMP tails the compiler can add: 8 × the multiply precision's bytes (FP8, F16, F32).
AMP_TAILS = (8, 16, 32)


class LayoutUnresolvable(TilescopeError):
    """A layout the compiler's resolution refuses (§2.2): no per-owner figures exist for it."""


# ----------------------------------------------------------------------------- owners


def linear_grain(tiling: TensorTiling) -> int | None:
    """The grain of linear ownership: the block size of a tiling whose only axis is ``Linear``."""
    if len(tiling.axes) == 1 and tiling.axes[0].axis.kind == "Linear":
        return tiling.axes[0].block_size
    return None


def axis_widths(extent: int, axis: AxisTiling) -> np.ndarray:
    """Physical width of each of the axis's ``partitions`` coordinates on a dimension of ``extent``."""
    groups, partitions, block = axis.padding_groups, axis.partitions, axis.block_size
    multiple, shard_multiple = axis.padding_multiple, axis.shard_padding_multiple
    if min(groups, partitions, block, multiple, shard_multiple) < 1:
        raise LayoutUnresolvable(
            f"axis {axis.axis}: partitions, padding groups, block size and padding multiples must be at least 1"
        )
    if partitions % groups or extent % groups:
        raise LayoutUnresolvable(
            f"axis {axis.axis}: {groups} padding groups must divide {partitions} partitions and extent {extent}"
        )
    group_extent = extent // groups
    if group_extent % multiple:
        if axis.padding == "Reject":
            raise LayoutUnresolvable(
                f"axis {axis.axis}: group extent {group_extent} is not a multiple of {multiple} (padding Reject)"
            )
        group_extent = -(-group_extent // multiple) * multiple
    if group_extent % block:
        raise LayoutUnresolvable(
            f"axis {axis.axis}: padded group extent {group_extent} is not a multiple of block size {block}"
        )
    per_group = partitions // groups
    short, long = divmod(group_extent // block, per_group)
    in_group = np.arange(partitions, dtype=np.int64) % per_group
    allocated = (short + (in_group < long)) * block
    if shard_multiple > 1:
        if axis.padding == "Reject" and np.any(allocated % shard_multiple):
            raise LayoutUnresolvable(
                f"axis {axis.axis}: a shard of {int(allocated.max())} is not a multiple of {shard_multiple} (padding Reject)"
            )
        allocated = -(-allocated // shard_multiple) * shard_multiple
    return allocated


def axis_strides(tiling: TensorTiling) -> list[int]:
    """Each axis's owner stride: its ``tile_stride``, else replicas × the partitions before it."""
    packed, out = tiling.replicas, []
    for axis in tiling.axes:
        stride = axis.tile_stride if axis.tile_stride is not None else packed
        if stride < 1:
            raise LayoutUnresolvable(f"axis {axis.axis}: tile stride {stride}")
        out.append(stride)
        packed *= axis.partitions
    return out


def owner_elements(shape: Sequence[int], tiling: TensorTiling) -> np.ndarray:
    """Physical elements on each of the layout's ``tile_count`` owners (int64, index = owner)."""
    owners = tiling.tile_count
    if owners < 1 or tiling.replicas < 1:
        raise LayoutUnresolvable("a tiling needs at least one tile and one replica")
    grain = linear_grain(tiling)
    if grain is not None:
        total = math.prod(shape)
        if not shape or grain < 1:
            raise LayoutUnresolvable("linear ownership of an empty shape or a grain below 1")
        if tiling.axes[0].padding == "Reject" and total % grain:
            raise LayoutUnresolvable(f"{total} elements are not a multiple of grain {grain} (padding Reject)")
        grains = -(-total // grain)
        if grains < owners:
            raise LayoutUnresolvable(f"{grains} grains for {owners} owners")
        base, extra = divmod(grains, owners)
        return (base + (np.arange(owners, dtype=np.int64) < extra)) * grain
    rank = len(shape)
    dims: list[int] = []
    used = tiling.replicas
    for axis in tiling.axes:
        dim = axis.axis.dimension(rank)
        if dim is None or not 0 <= dim < rank:
            raise LayoutUnresolvable(f"axis {axis.axis} names no dimension of a rank-{rank} shape")
        if dim in dims:
            raise LayoutUnresolvable(f"dimension {dim} is tiled twice")
        dims.append(dim)
        used *= axis.partitions
    if used != owners:
        raise LayoutUnresolvable(f"tile count {owners} is not replicas × partitions = {used}")
    untiled = math.prod(int(shape[d]) for d in range(rank) if d not in dims)
    owner = np.arange(owners, dtype=np.int64)
    elements = np.full(owners, untiled, dtype=np.int64)
    coordinate = np.zeros(owners, dtype=np.int64)
    for axis, dim, stride in zip(tiling.axes, dims, axis_strides(tiling)):
        index = (owner // stride) % axis.partitions
        elements *= axis_widths(int(shape[dim]), axis)[index]
        coordinate = coordinate * axis.partitions + index
    # Every coordinate tuple must be owned by exactly R owners (§2.2): replicas hold equal shards.
    if owners // tiling.replicas > 0 and np.any(
        np.bincount(coordinate, minlength=owners // tiling.replicas) != tiling.replicas
    ):
        raise LayoutUnresolvable("the tile strides do not give every shard exactly `replicas` owners")
    return elements


# ----------------------------------------------------------------------------- tiles and bytes


@dataclass(frozen=True)
class Allocation:
    """How a value's shard becomes an allocation (§2.4): rounded up to ``alignment`` after adding
    ``extra`` (the AMP tail, and any prefix), times ``copies``."""

    alignment: int = 1
    extra: int = 0
    copies: int = 1

    def sizes(self, shard: np.ndarray) -> np.ndarray:
        """Per-copy allocated bytes of each shard (0 where the shard is 0)."""
        a = self.alignment
        size = -(-(shard + self.extra) // a) * a
        return np.where(shard > 0, size, 0)

    def describe(self) -> str:
        parts = [f"alignment {self.alignment:,}"]
        if self.extra:
            parts.append(f"tail {self.extra:,} B")
        if self.copies != 1:
            parts.append(f"{self.copies} copies")
        return ", ".join(parts)


@dataclass(frozen=True)
class TileRuns:
    """Per-tile figures as runs: tiles ``start[i]`` … ``stop[i] − 1`` each hold ``shard[i]`` payload
    bytes and ``bytes[i]`` allocated bytes; tiles in no run hold nothing. Ascending, disjoint,
    adjacent runs differ."""

    start: np.ndarray
    stop: np.ndarray
    shard: np.ndarray
    bytes: np.ndarray

    @staticmethod
    def of_dense(shard: np.ndarray, allocated: np.ndarray) -> TileRuns:
        start, stop, (s, b) = runs_of(shard, allocated)
        return TileRuns(start, stop, s, b)

    def dense(self, device_tiles: int) -> tuple[np.ndarray, np.ndarray]:
        """(shard, bytes) per device tile."""
        return dense_of(self.start, self.stop, device_tiles, self.shard), dense_of(
            self.start, self.stop, device_tiles, self.bytes
        )

    @property
    def max_shard(self) -> int:
        return int(self.shard.max()) if self.shard.size else 0

    @property
    def max_bytes(self) -> int:
        return int(self.bytes.max()) if self.bytes.size else 0

    def __len__(self) -> int:
        return int(self.start.size)


def runs_of(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Maximal runs of equal rows over the columns (equal length), all-zero rows left out:
    ``(start, stop, [column value of each run])``."""
    n = columns[0].size
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, [empty.copy() for _ in columns]
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for column in columns:
        change[1:] |= column[1:] != column[:-1]
    start = np.flatnonzero(change)
    stop = np.append(start[1:], n)
    held = np.zeros(start.size, dtype=bool)
    for column in columns:
        held |= column[start] != 0
    start, stop = start[held], stop[held]
    return (start.astype(np.int64), stop.astype(np.int64), [c[start].astype(np.int64) for c in columns])


def dense_of(start: np.ndarray, stop: np.ndarray, length: int, value: np.ndarray) -> np.ndarray:
    """The dense array of ``length`` that runs [start, stop) of ``value`` describe (0 elsewhere)."""
    diff = np.zeros(length + 1, dtype=np.int64)
    np.add.at(diff, start, value)
    np.add.at(diff, stop, -value)
    return np.cumsum(diff[:-1])


def owner_tiles(owners: int, offset: int, device_tiles: int) -> np.ndarray:
    """Device tile of each owner (§2.3): (owner + offset) mod device tiles."""
    if owners > device_tiles:
        raise LayoutUnresolvable(f"the layout's {owners:,} tiles exceed the device's {device_tiles:,}")
    return (np.arange(owners, dtype=np.int64) + int(offset)) % device_tiles


def on_device(per_owner: np.ndarray, offset: int, device_tiles: int) -> np.ndarray:
    """A per-owner array placed on the device's tiles (0 on tiles no owner maps to)."""
    out = np.zeros(device_tiles, dtype=np.int64)
    out[owner_tiles(per_owner.size, offset, device_tiles)] = per_owner
    return out


def value_tiles(
    elements: np.ndarray, element_bytes: int, allocation: Allocation, device_tiles: int, offset: int = 0
) -> TileRuns:
    """One value's ``tile_shards`` and ``tile_bytes`` (§2.4) as runs, from its owners' elements."""
    shard = elements * int(element_bytes)
    allocated = allocation.sizes(shard) * allocation.copies
    return TileRuns.of_dense(on_device(shard, offset, device_tiles), on_device(allocated, offset, device_tiles))


def estimate_value(
    shape: Sequence[int],
    element_bytes: int,
    tiling: TensorTiling,
    allocation: Allocation,
    device_tiles: int,
    offset: int = 0,
) -> TileRuns:
    """``value_tiles`` of a value given its shape and tiling."""
    return value_tiles(owner_elements(shape, tiling), element_bytes, allocation, device_tiles, offset)


def spread_scratch(scratch: int, elements: np.ndarray) -> np.ndarray:
    """One class's scratch over the owners of a step's first result (§2.6): ⌈scratch × e / max e⌉."""
    largest = int(elements.max()) if elements.size else 0
    if scratch == 0 or largest == 0:
        return np.zeros(elements.size, dtype=np.int64)
    return -(-(int(scratch) * elements) // largest)


# ----------------------------------------------------------------------------- reading back what the file does not say


def allocation_candidates(region: int) -> list[Allocation]:
    """The allocations §2.4 allows a value of ``region``, most likely first: unaligned, aligned to
    the memory element, aligned with an AMP tail."""
    element = ELEMENT_SIZES[region]
    return [Allocation(1, 0), Allocation(element, 0), *(Allocation(element, tail) for tail in AMP_TAILS)]


def infer_allocation(shards: np.ndarray, sizes: np.ndarray, region: int, copies: int = 1) -> Allocation | None:
    """The allocation that turns each recorded shard into its recorded per-copy size, or None.

    Candidates in ``allocation_candidates`` order; when none fits, an unaligned one adding the same
    bytes to every shard (a prefix the file does not name). Pairs with a zero shard are ignored.
    """
    held = shards > 0
    shards, sizes = shards[held], sizes[held]
    for candidate in allocation_candidates(region):
        if np.array_equal(candidate.sizes(shards), sizes):
            return Allocation(candidate.alignment, candidate.extra, copies)
    extra = np.unique(sizes - shards)
    if extra.size == 1 and int(extra[0]) >= 0:
        return Allocation(1, int(extra[0]), copies)
    return None


def infer_offset(estimate: np.ndarray, recorded: np.ndarray) -> int | None:
    """The rotation r with ``recorded[(o + r) mod D] == estimate[o]`` for every owner o and 0 on the
    other tiles, the smallest one; None when no rotation reproduces ``recorded``.

    ``estimate`` is per owner (length ≤ D), ``recorded`` per device tile (length D).
    """
    device_tiles = recorded.size
    owners = estimate.size
    if owners > device_tiles or owners == 0:
        return None
    if int(np.count_nonzero(recorded)) != int(np.count_nonzero(estimate)):
        return None
    placed = np.zeros(device_tiles, dtype=np.int64)
    placed[:owners] = estimate
    # A rotation carries each place where the per-tile figures change (circularly) to such a place
    # of ``recorded``: one change k of ``placed`` gives every candidate, one per change of
    # ``recorded`` (a few runs), each verified whole.
    change = np.flatnonzero(placed != np.roll(placed, 1))
    if not change.size:  # the same figure on every tile: every rotation fits
        return 0 if np.array_equal(placed, recorded) else None
    k = int(change[0])
    candidates = np.sort((np.flatnonzero(recorded != np.roll(recorded, 1)) - k) % device_tiles)
    for r in candidates.tolist():
        if np.array_equal(np.roll(placed, r), recorded):
            return int(r)
    return None
