"""A v2/v3 memory profile's per-tile rows (docs/formats.md §7) as numpy columns: each value's
``tile_shards``/``tile_bytes`` and each step's ``tile_scratch``/``tile_usage`` as runs
(``models.schemas.VALUE_TILES``/``STEP_TILES``), and the steps' ``coarse_usage``.

What is summed from them (the reconstruction rule, spec §1.6: the plan per tile, one tile's series,
one step's tiles) is ``planner.tile_usage.TileUsage``, the one per-tile sweep: the file's plan
(``planner.model.per_tile_plan``), ``check`` (``planner.tile_check``), the compare's per-tile
attribution and the views all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tilescope.models.profile import MemoryProfile


@dataclass(frozen=True)
class TileArrays:
    """A v2/v3 profile's per-tile rows as numpy columns (runs: ``[start, stop)`` per row)."""

    version: int
    tiles: int
    value_row: np.ndarray
    value_start: np.ndarray
    value_stop: np.ndarray
    value_shard: np.ndarray
    value_bytes: np.ndarray
    step: np.ndarray
    step_start: np.ndarray
    step_stop: np.ndarray
    scratch: np.ndarray  # [runs, 2] recorded tile_scratch
    usage: np.ndarray  # [runs, 2] recorded tile_usage
    coarse: np.ndarray  # [steps, 2] recorded coarse_usage


def _ints(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy().astype(np.int64, copy=False)


def tile_arrays_of(profile: MemoryProfile) -> TileArrays | None:
    """The per-tile columns of a v2/v3 profile; None for version 1."""
    if not profile.per_tile:
        return None
    v, s = profile.value_tiles, profile.step_tiles
    steps = profile.steps
    return TileArrays(
        version=profile.version,
        tiles=int(profile.profile.column("tile_count")[0].as_py()),
        value_row=_ints(v, "value_row"),
        value_start=_ints(v, "tile_start"),
        value_stop=_ints(v, "tile_stop"),
        value_shard=_ints(v, "shard"),
        value_bytes=_ints(v, "bytes"),
        step=_ints(s, "step"),
        step_start=_ints(s, "tile_start"),
        step_stop=_ints(s, "tile_stop"),
        scratch=np.stack((_ints(s, "scratch_standard"), _ints(s, "scratch_interleaved")), axis=1),
        usage=np.stack((_ints(s, "usage_standard"), _ints(s, "usage_interleaved")), axis=1),
        coarse=np.stack((_ints(steps, "coarse_standard"), _ints(steps, "coarse_interleaved")), axis=1),
    )


def value_maxima(t: TileArrays, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """Each value's largest ``tile_shards`` and ``tile_bytes`` entry (0 for a value on no tile)."""
    shard = np.zeros(n_values, np.int64)
    held = np.zeros(n_values, np.int64)
    np.maximum.at(shard, t.value_row, t.value_shard)
    np.maximum.at(held, t.value_row, t.value_bytes)
    return shard, held


def last_argmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """Index of the largest entry along ``axis``; ties: the last (the compiler's peak tile)."""
    n = a.shape[axis]
    return n - 1 - np.argmax(np.flip(a, axis=axis), axis=axis)
