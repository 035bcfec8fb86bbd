"""Per-value columns of the values table that follow the tiling: shards, unpadded shards, tile
counts and the short tiling text shown everywhere (``FromEnd(2)/46 · FromEnd(1)/4 · ×8 = 1472 tiles``)."""
from __future__ import annotations

import math

import numpy as np


def partitions_product(arrays, tilings: dict | None = None) -> np.ndarray:
    """Product of partition counts of each value's tiling (the number of distinct shards)."""
    parts = arrays.axes_columns["partitions"]
    product = np.ones(arrays.n_values, dtype=np.int64)
    has_axes = arrays.axes_count > 0
    if parts.size:
        product[has_axes] = np.multiply.reduceat(parts, arrays.axes_start[has_axes])
    for row, tiling in (tilings or {}).items():
        p = 1
        for axis in tiling.axes:
            p *= axis.partitions
        product[row] = p
    return product


def tensor_bytes(arrays) -> np.ndarray:
    """Bytes of each whole tensor: elements · element bytes."""
    # math.prod per shape: an order of magnitude faster than np.prod on short tuples (profiles hold ~10⁵ values)
    elements = np.fromiter((math.prod(s) for s in arrays.shapes), dtype=np.int64, count=len(arrays.shapes))
    return elements * arrays.element_bytes


def unpadded_shard_bytes(arrays, tilings: dict | None = None, total: np.ndarray | None = None) -> np.ndarray:
    """Bytes of one shard if the tensor split evenly with no padding: ceil(elements · bytes / shards).
    ``total`` is ``tensor_bytes(arrays)`` when the caller keeps it (it only depends on the file)."""
    total = tensor_bytes(arrays) if total is None else total
    shards = partitions_product(arrays, tilings)
    return -(-total // np.maximum(shards, 1))


def tiling_summary(tiling) -> str:
    """``FromEnd(2)/46 · FromEnd(1)/4 · ×8 = 1472 tiles``."""
    parts = [f"{axis.axis}/{axis.partitions}" for axis in tiling.axes]
    if tiling.replicas != 1:
        parts.append(f"×{tiling.replicas}")
    return " · ".join(parts) + f" = {tiling.tile_count} tiles"


def tiling_summaries(arrays, tilings: dict | None = None) -> list[str]:
    """Tiling summary per value row, computed once per distinct layout text."""
    memo: dict[str, str] = {}
    out = []
    for row, text in enumerate(arrays.layout_text):
        summary = memo.get(text)
        if summary is None:
            summary = memo[text] = tiling_summary(arrays.tiling(row))
        out.append(summary)
    for row, tiling in (tilings or {}).items():
        out[row] = tiling_summary(tiling)
    return out


def tile_counts(arrays, tilings: dict | None = None) -> np.ndarray:
    counts = arrays.tile_counts.copy()
    for row, tiling in (tilings or {}).items():
        counts[row] = tiling.tile_count
    return counts
