"""Shard size of a tiled tensor, and the allocation granule (docs/formats.md §2): the rule lives in
``models.shard_rule`` (the loaders bound a file's figures with it too); the planner and its callers
use it under this name."""

from __future__ import annotations

from tilescope.models.shard_rule import (
    MAX_GRANULE,
    REGION_GRANULES,
    AxisCut,
    ShapeMismatch,
    aligned_bytes,
    axis_blocks,
    axis_cut,
    ceil_div,
    infer_granule,
    infer_granules,
    largest_shard_bytes,
    shard_bytes,
    shard_cuts,
)

__all__ = [
    "MAX_GRANULE",
    "REGION_GRANULES",
    "AxisCut",
    "ShapeMismatch",
    "aligned_bytes",
    "axis_blocks",
    "axis_cut",
    "ceil_div",
    "infer_granule",
    "infer_granules",
    "largest_shard_bytes",
    "shard_bytes",
    "shard_cuts",
]
