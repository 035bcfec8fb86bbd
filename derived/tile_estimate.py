"""The planner's per-tile estimate of one tile at every step, from a v2/v3 memory profile's
``step_tiles`` runs (docs/formats.md §7: maximal runs of consecutive device tiles whose recorded
``tile_usage``/``tile_scratch`` are equal; a tile no run covers holds 0), for the placement-profile
view to show beside where the compiler actually placed that tile's allocations.

Pure numpy and pyarrow: no Panel, no Bokeh.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilescope.models.errors import InputError
from tilescope.models.format import fmt_bytes


@dataclass(frozen=True, eq=False)
class TileEstimate:
    """The recorded ``tile_usage[tile]`` of every step: standard and interleaved bytes."""

    tile: int
    standard: np.ndarray  # int64 per step
    interleaved: np.ndarray

    @classmethod
    def of(cls, step_tiles, n_steps: int, tile: int) -> TileEstimate:
        """From a ``step_tiles`` table (columns ``step``, ``tile_start``, ``tile_stop``,
        ``usage_standard``, ``usage_interleaved``)."""
        col = {
            name: step_tiles.column(name).to_numpy()
            for name in ("step", "tile_start", "tile_stop", "usage_standard", "usage_interleaved")
        }
        hit = (col["tile_start"] <= tile) & (tile < col["tile_stop"])
        standard = np.zeros(n_steps, dtype=np.int64)
        interleaved = np.zeros(n_steps, dtype=np.int64)
        steps = col["step"][hit].astype(np.int64)
        standard[steps] = col["usage_standard"][hit]
        interleaved[steps] = col["usage_interleaved"][hit]
        return cls(tile, standard, interleaved)

    @property
    def total(self) -> np.ndarray:
        return self.standard + self.interleaved

    @property
    def peak(self) -> tuple[int, int]:
        """(the largest total, the first step it is reached at); (0, 0) for no steps."""
        if self.total.size == 0:
            return 0, 0
        step = int(np.argmax(self.total))
        return int(self.total[step]), step

    def sentence(self, live_bound: int, placed_span: int) -> str:
        """How the estimate's peak compares with the placement's live bound and the span the
        compiler's placement used (its top minus the tile memory base)."""
        peak, step = self.peak
        diff = peak - live_bound
        how = f"{diff:,} B above" if diff > 0 else f"{-diff:,} B below" if diff < 0 else "exactly"
        return (
            f"The planner estimated at most {fmt_bytes(peak)} on tile {self.tile} (step {step:,}): {how} the placement's live "
            f"lower bound ({live_bound:,} B); the compiler's placement spans {placed_span:,} B from the tile memory base."
        )


@dataclass(frozen=True, eq=False)
class TileEstimates:
    """``estimates(tile)``: the ``TileEstimate`` of each tile of a v2/v3 profile (None for a tile
    the profile does not have: ``tile_count`` says how many it has)."""

    step_tiles: object  # the profile's ``step_tiles`` runs (a pyarrow Table)
    n_steps: int
    tile_count: int

    def __call__(self, tile: int) -> TileEstimate | None:
        return TileEstimate.of(self.step_tiles, self.n_steps, tile) if 0 <= tile < self.tile_count else None


def estimates_of(profile) -> TileEstimates:
    """The per-tile estimates of a loaded ``models.profile.MemoryProfile``; InputError naming the
    file for a v1 profile (no per-tile usage)."""
    if not profile.per_tile:
        raise InputError(
            "$.version",
            "a memory profile of version 2 or 3 (per-tile usage)",
            f"version {profile.version}",
            file=profile.source,
        )
    return TileEstimates(profile.step_tiles, profile.steps.num_rows, int(profile.header["tile_count"]))
