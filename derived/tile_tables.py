"""A v2/v3 profile's per-tile tables (``loaders``' ``value_tiles`` and ``step_tiles``, runs of
device tiles) as the planner's ``TileFigures``, and its recorded per-step ``tile_usage`` runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from tilescope.models.profile import MemoryProfile
from tilescope.planner.model import ProfileArrays
from tilescope.planner.tile_figures import SOURCE_FILE, RunTable, TileFigures


def _columns(table: pa.Table, names: tuple[str, ...]) -> list[np.ndarray]:
    return [table.column(n).to_numpy().astype(np.int64, copy=False) for n in names]


def _run_table(
    owner: np.ndarray,
    start: np.ndarray,
    stop: np.ndarray,
    columns: list[np.ndarray],
    owners: int,
) -> RunTable:
    order = np.lexsort((start, owner))
    if np.any(order != np.arange(order.size)):
        owner, start, stop, columns = (
            owner[order],
            start[order],
            stop[order],
            [c[order] for c in columns],
        )
    bounds = np.searchsorted(owner, np.arange(owners + 1)).astype(np.int64)
    return RunTable(bounds, start, stop, tuple(columns))


def figures_of_profile(
    profile: MemoryProfile, arrays: ProfileArrays
) -> TileFigures | None:
    """The recorded per-tile figures (None for a v1 profile)."""
    if not getattr(profile, "per_tile", False):
        return None
    v = profile.value_tiles
    row, start, stop, shard, held = _columns(
        v, ("value_row", "tile_start", "tile_stop", "shard", "bytes")
    )
    values = _run_table(row, start, stop, [shard, held], arrays.n_values)
    step, s_start, s_stop, std, intl = _columns(
        profile.step_tiles,
        ("step", "tile_start", "tile_stop", "scratch_standard", "scratch_interleaved"),
    )
    scratch = _run_table(step, s_start, s_stop, [std, intl], arrays.n_steps)
    return TileFigures(arrays.device_tiles, values, scratch, SOURCE_FILE)


def recorded_usage(profile: MemoryProfile, arrays: ProfileArrays) -> RunTable | None:
    """The recorded per-step ``tile_usage`` as runs (columns standard, interleaved); None for v1."""
    if not getattr(profile, "per_tile", False):
        return None
    step, start, stop, std, intl = _columns(
        profile.step_tiles,
        ("step", "tile_start", "tile_stop", "usage_standard", "usage_interleaved"),
    )
    return _run_table(step, start, stop, [std, intl], arrays.n_steps)
