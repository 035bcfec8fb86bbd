"""Shard size of a tiled tensor, and the allocation granule (docs/formats.md §2).

The rule both the loaders (to bound what a file's figures can become, docs/formats.md §6) and the
planner (to compute them) apply; ``planner.shards`` is the planner's name for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .tiling import AxisTiling, TensorTiling

# Allocation granules seen in the sample for matrix-multiply operand/result buffers, per region.
# Open in docs/formats.md: the file does not state g. We infer it per value (see ``infer_granule``).
REGION_GRANULES = {"standard": 16384, "interleaved": 32768}
# The largest granule ``infer_granule`` returns (every granule it returns divides it).
MAX_GRANULE = 1 << 20


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True, slots=True)
class AxisCut:
    """What one ``AxisTiling`` does to its dimension."""

    dimension: int | None  # index into the (possibly flattened) dims; None never happens after flattening
    size: int  # the dimension's size before the cut
    padded: int
    blocks: int
    per_partition: int  # the dimension's size in one shard


def axis_cut(size: int, axis: AxisTiling, partitions: int | None = None) -> AxisCut:
    partitions = axis.partitions if partitions is None else partitions
    padded = ceil_div(size, axis.padding_multiple) * axis.padding_multiple
    blocks = ceil_div(padded, axis.block_size)
    per_partition = ceil_div(blocks, partitions) * axis.block_size
    per_partition = ceil_div(per_partition, axis.shard_padding_multiple) * axis.shard_padding_multiple
    return AxisCut(None, size, padded, blocks, per_partition)


class ShapeMismatch(ValueError):
    """An axis names a dimension the shape does not have."""

    def __init__(self, position: int, axis: str, rank: int):
        self.position = position
        super().__init__(f"axis {position} ({axis}) names no dimension of a rank-{rank} shape")


def shard_cuts(
    shape: Sequence[int], tiling: TensorTiling, *, one_partition: bool = False
) -> tuple[list[int], list[AxisCut]]:
    """Apply each axis in order; returns the shard's dims and what each axis did.

    ``Linear`` first flattens the whole (current) tensor into one dimension. With
    ``one_partition`` every axis is cut into one partition: the largest shard any partition counts
    of this tiling can give (a shard only shrinks as partitions grow), what a what-if edit can
    make of the value at most.
    """
    dims = list(shape)
    cuts: list[AxisCut] = []
    dim: int | None
    for position, axis in enumerate(tiling.axes):
        if axis.axis.kind == "Linear":
            dims = [math.prod(dims)]
            dim = 0
        else:
            dim = axis.axis.dimension(len(dims))
            if dim is None or not 0 <= dim < len(dims):
                raise ShapeMismatch(position, str(axis.axis), len(dims))
        cut = axis_cut(dims[dim], axis, 1 if one_partition else None)
        cuts.append(AxisCut(dim, cut.size, cut.padded, cut.blocks, cut.per_partition))
        dims[dim] = cut.per_partition
    return dims, cuts


def shard_bytes(shape: Sequence[int], element_bytes: int, tiling: TensorTiling) -> int:
    dims, _ = shard_cuts(shape, tiling)
    return math.prod(dims) * element_bytes


def largest_shard_bytes(shape: Sequence[int], element_bytes: int, tiling: TensorTiling) -> int:
    """The shard of ``tiling`` with one partition on every axis: an upper bound of
    ``shard_bytes`` over every partition count (and replica count) the tiling could be edited to."""
    dims, _ = shard_cuts(shape, tiling, one_partition=True)
    return math.prod(dims) * element_bytes


def axis_blocks(shape: Sequence[int], tiling: TensorTiling) -> list[int]:
    """Blocks on each axis: the most partitions that axis can take."""
    return [cut.blocks for cut in shard_cuts(shape, tiling)[1]]


def aligned_bytes(shard: int, granule: int) -> int:
    return ceil_div(shard, granule) * granule


def infer_granules(shard: np.ndarray, aligned: np.ndarray, interleaved: np.ndarray) -> np.ndarray:
    """``infer_granule`` of every value at once: the two usual answers with numpy, the rare value
    neither explains one at a time."""
    region_granule = np.where(interleaved.astype(bool), REGION_GRANULES["interleaved"], REGION_GRANULES["standard"])
    granule = np.where(aligned == shard, 1, 0).astype(np.int64)
    by_region = (granule == 0) & (-(-shard // region_granule) * region_granule == aligned)
    granule[by_region] = region_granule[by_region]
    for row in np.flatnonzero(granule == 0).tolist():
        region = "interleaved" if interleaved[row] else "standard"
        granule[row] = infer_granule(int(shard[row]), int(aligned[row]), region)
    return granule


def infer_granule(shard: int, aligned: int, region: str | None) -> int:
    """The allocation granule of one value, inferred from its recorded figures.

    Open in docs/formats.md; our choice: 1 when ``aligned == shard``, else the region's granule
    (16384 standard, 32768 interleaved). When neither reproduces the recorded ``aligned_bytes`` we
    fall back to the largest power of two (≤ 1 MiB) that does, and the consistency check still
    compares the result; if none does, 1, and the check reports the difference.
    """
    if aligned == shard:
        return 1
    g = REGION_GRANULES.get(region or "", 0)
    if g and aligned_bytes(shard, g) == aligned:
        return g
    for power in range(MAX_GRANULE.bit_length() - 1, 0, -1):
        g = 1 << power
        if aligned % g == 0 and aligned_bytes(shard, g) == aligned:
            return g
    return 1
