"""Per-tile usage of a plan, for the views, the report and the CLI: one small API whatever the file.

- A **v2/v3** profile records its per-tile figures: they are used as they are (``source`` "file").
  After what-if edits the edited values are re-estimated by tilescope's rules (compiler-formats.md
  §2, ``planner.tile_whatif``) and every other value keeps its recorded figures; undoing every edit
  gives back the file's figures exactly.
- A **v1** profile records only each value's largest shard: its per-tile view is tilescope's own
  estimate (``planner.tile_estimate``; ``source`` "estimate", to be labelled so wherever shown),
  tile offsets taken as 0.

``tile_series(data, tile)``, ``peak_tiles(data)``, ``step_peak_tile(data, step)`` and
``tile_peaks(data)`` read one ``planner.tile_usage.TileUsage`` per plan, computed on first use and
kept on the plan (``PlanData``); the file's figures and what is inferred from them are kept on the
profile's arrays, shared by every plan of it. Bytes here are what a tile holds (tensors and
scratch); exchange rows are never included.
"""

from __future__ import annotations

import numpy as np

from tilescope.planner import tile_whatif
from tilescope.planner.tile_figures import SOURCE_ESTIMATE, TileFigures
from tilescope.planner.tile_usage import REGIONS, TileUsage
from tilescope.planner.tile_whatif import FileTiles

from .opening import OpenedProfile
from .plan_data import PlanData


def base_figures(opened: OpenedProfile) -> TileFigures:
    """The file plan's per-tile figures: recorded (v2/v3) or estimated (v1)."""
    return tile_whatif.file_figures(opened.arrays)


def file_tiles(opened: OpenedProfile) -> FileTiles | None:
    """What tilescope infers from a v2/v3 file's per-tile figures (None for v1)."""
    return tile_whatif.file_tiles(opened.arrays)


def tile_usage(data: PlanData) -> TileUsage:
    """The plan's per-tile usage: the file's, or after the plan's edits (the one a what-if plan of
    a v2/v3 profile was made from, else computed once and kept on ``data``)."""
    made = tile_whatif.usage_of_plan(data.plan)
    if made is not None:
        return made
    found = data.__dict__.get("_tile_usage")
    if found is None:
        # The file's plan per tile (v2/v3) gives the file's per-step figures, not summed again.
        found = data.__dict__["_tile_usage"] = tile_whatif.plan_usage(data.arrays, data.tilings, data.opened.plan)
    return found


def source(data: PlanData) -> str:
    """ "file" when the per-tile figures are the file's (v2/v3, edited values re-estimated),
    "estimate" when they are tilescope's estimate of a v1 file."""
    return tile_usage(data).source


def is_estimate(data: PlanData) -> bool:
    return source(data) == SOURCE_ESTIMATE


def tile_series(data: PlanData, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """(standard, interleaved) bytes on ``tile`` at every step."""
    return tile_usage(data).series(int(tile))


def at_step(data: PlanData, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(standard, interleaved) bytes on every tile at ``step``."""
    return tile_usage(data).at_step(int(step))


def peak_tiles(data: PlanData) -> dict[str, tuple[int, int]]:
    """Per region (standard, interleaved, total): (step, tile) where a tile holds the most: the
    earliest such step (the compiler's peak-step rule), the last such tile there (its rule
    for a step's ``usage``)."""
    usage = tile_usage(data)
    return {region: usage.peak(region)[1:] for region in REGIONS}


def tile_peaks(data: PlanData) -> dict[str, int]:
    """Per region: the most any tile holds at any step (tensors and scratch, no exchange rows)."""
    usage = tile_usage(data)
    return {region: usage.peak(region)[0] for region in REGIONS}


def step_peak_tile(data: PlanData, step: int, region: str = "total") -> tuple[int, int]:
    """(tile, bytes): the last tile holding the most of ``region`` at ``step``."""
    sp = tile_usage(data).step_peaks
    return int(sp.tile[region][step]), int(sp.most[region][step])


def estimate_agreement(opened: OpenedProfile) -> list[tuple[str, str]]:
    """Where tilescope's estimate does not reproduce a v2/v3 file's per-tile figures, and why:
    ("value 12", reason) or ("step 40", reason). Empty for a v1 file (nothing to compare) and for a
    file the estimate reproduces everywhere. Notes, not mismatches: the file's figures are used."""
    tiles = file_tiles(opened)
    if tiles is None:
        return []
    return [(f"{kind} {where}", reason) for kind, where, reason in tiles.agreement()]
