"""Per-value data: the values table (the file's columns beside a plan's figures), the columns that
follow the tiling (shards, unpadded shards, tile counts) and the short tiling text shown
everywhere (``FromEnd(2)/46 · FromEnd(1)/4 · ×8 = 1472 tiles``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from tilescope.models.format import shorten


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


# ----------------------------------------------------------------------------- the values table


# Columns of ``values_frame``, in the table's order.
FRAME_COLUMNS = (
    "id",
    "name",
    "group",
    "storage_group",
    "root",
    "alias_of",
    "region",
    "shape",
    "precision",
    "tiling",
    "tiles",
    "shard",
    "unpadded_shard",
    "shard_padding",
    "aligned",
    "padding_waste",
    "bytes",
    "bytes_before",
    "change",
    "first_step",
    "last_step",
)
# The columns a plan (what-if edits) changes; the others come from the file.
PLAN_COLUMNS = (
    "tiling",
    "tiles",
    "shard",
    "unpadded_shard",
    "shard_padding",
    "aligned",
    "padding_waste",
    "bytes",
    "bytes_before",
    "change",
)


def text_column(column: pa.ChunkedArray) -> pd.Series:
    """An Arrow text column as a pandas text column, converted in C++ (``to_pylist`` makes a
    Python object per cell: ~0.3 s per dictionary-encoded column of 10⁵ values)."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column.to_pandas()


@dataclass(frozen=True)
class FileColumns:
    """The values table's columns read from the file, and the recorded tilings' columns: built once
    per profile (text columns of ~10⁵ values take a while), then shared by every plan's frame."""

    frame: (
        pd.DataFrame
    )  # id, name, group, storage_group, root, alias_of, region, shape, precision, first_step, last_step
    tiling: list[str]
    tiles: np.ndarray
    unpadded: np.ndarray
    tensor_bytes: np.ndarray

    @staticmethod
    def of(profile, arrays, live_ranges: tuple[np.ndarray, np.ndarray]) -> FileColumns:
        v = profile.values
        first, last = live_ranges
        ids, roots = arrays.value_ids, arrays.roots
        frame = pd.DataFrame(
            {
                "id": ids,
                "name": text_column(v.column("name")),
                "group": text_column(v.column("group")),
                "storage_group": v.column("storage_group").to_numpy(),
                "root": roots,
                "alias_of": np.where(roots != ids, roots.astype(str), ""),
                "region": text_column(v.column("region")),
                "shape": ["[" + ", ".join(map(str, s)) + "]" for s in arrays.shapes],
                "precision": text_column(v.column("precision_name")),
                "first_step": first,
                "last_step": last,
            }
        )
        total = tensor_bytes(arrays)
        return FileColumns(
            frame, tiling_summaries(arrays), tile_counts(arrays), unpadded_shard_bytes(arrays, total=total), total
        )


def values_frame(file: FileColumns, arrays, plan, base_plan, tilings: dict) -> pd.DataFrame:
    """One row per value (the values table's order) with ``plan``'s figures beside the file's.
    Shares the file's columns (pandas copy-on-write): callers must not modify it."""
    figures, base = plan.figures, base_plan.figures
    tiling, tiles, unpadded = file.tiling, file.tiles, file.unpadded
    if tilings:  # only the edited rows differ from the file's tilings
        tiling = list(tiling)
        for row, edited in tilings.items():
            tiling[row] = tiling_summary(edited)
        tiles = tile_counts(arrays, tilings)
        unpadded = unpadded_shard_bytes(arrays, tilings, total=file.tensor_bytes)
    frame = file.frame.copy(deep=False)
    frame["tiling"] = tiling
    frame["tiles"] = tiles
    frame["shard"] = figures.shard
    frame["unpadded_shard"] = unpadded
    frame["shard_padding"] = figures.shard - unpadded
    frame["aligned"] = figures.aligned
    frame["padding_waste"] = figures.aligned - figures.shard
    frame["bytes"] = figures.bytes
    frame["bytes_before"] = base.bytes
    frame["change"] = figures.bytes - base.bytes
    return frame[list(FRAME_COLUMNS)]


@dataclass(frozen=True)
class ValueText:
    """Text columns of the profile the editor shows (names are untrusted): the names as Python
    strings (every picker label needs one), the other columns read a row at a time (only the shown
    value's: converting ~10⁵ rows of each would cost most of the editor's start-up)."""

    names: list[str]
    labels: list[str]  # the value picker's label per row: ``#id name``
    columns: pa.Table  # precision, order, storage_group

    @staticmethod
    def of(profile, arrays) -> ValueText:
        v = profile.values
        names = v.column("name").to_pylist()
        labels = [f"#{int(i)} {shorten(name, 120)}" for i, name in zip(arrays.value_ids.tolist(), names)]
        return ValueText(names, labels, v.select(["precision", "order", "storage_group"]))

    def field(self, name: str, row: int):
        return self.columns.column(name)[row].as_py()
