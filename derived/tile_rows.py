"""One tile at one step, as the compiler's own viewer lists it (docs/compiler-formats.md §7): for
each root live at the step, the alias holding the most bytes on that tile (``tile_bytes``; the
first such alias in file order on a tie), with

- payload = ``tile_shards`` × copies (the elements' bytes),
- padding = total − payload (alignment and the access tail, × copies),
- total = ``tile_bytes``;

rows holding nothing on the tile are left out. With the tile's scratch at the step, the totals add
up to the tile's usage there (the reconstruction rule of §1.6).

The figures are the plan's per-tile figures (``derived.tile_usage``): a v2/v3 file's own (edited
values re-estimated), or tilescope's estimate of a v1 file (``source`` "estimate", labelled so
wherever shown). One tile's figures of every value are read once per (plan, tile) and kept, so
moving through the steps only picks the live rows. Pure numpy/pandas: no Panel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tilescope.planner.tile_usage import TileUsage

from .plan_data import PlanData
from .tile_usage import at_step, tile_series, tile_usage

TILE_COLUMNS = ("id", "root", "name", "region", "copies", "payload", "padding", "total")
REGION_NAMES = np.array(["standard", "interleaved"])


@dataclass(frozen=True)
class TileColumns:
    """Every value row's figures on one tile (one plan)."""

    tile: int
    shard: np.ndarray  # tile_shards[t] per value row
    held: np.ndarray  # tile_bytes[t] per value row
    scratch_standard: np.ndarray  # per step
    scratch_interleaved: np.ndarray


@dataclass(frozen=True)
class TileStep:
    """One tile at one step."""

    tile: int
    step: int
    source: str  # "file" | "estimate"
    rows: pd.DataFrame  # TILE_COLUMNS, most bytes first (ties: value id)
    scratch_standard: int
    scratch_interleaved: int

    @property
    def standard(self) -> int:
        return int(self.rows.loc[self.rows["region"] == "standard", "total"].sum()) + self.scratch_standard

    @property
    def interleaved(self) -> int:
        return int(self.rows.loc[self.rows["region"] == "interleaved", "total"].sum()) + self.scratch_interleaved


def tile_columns(data: PlanData, tile: int) -> TileColumns:
    """``tile``'s figures of every value and step of the plan, computed once per (plan, tile)."""
    kept = data.__dict__.setdefault("_tile_columns", {})
    found = kept.get(int(tile))
    if found is None:
        usage: TileUsage = tile_usage(data)
        figures = usage.figures
        if not 0 <= int(tile) < figures.device_tiles:
            raise IndexError(f"tile {tile} is not in 0..{figures.device_tiles - 1}")
        shard, held = figures.values.at_tile(int(tile))
        standard, interleaved = figures.scratch.at_tile(int(tile))
        if len(kept) > 32:  # a few tiles per plan are looked at; never one array set per tile clicked
            kept.clear()
        found = kept[int(tile)] = TileColumns(int(tile), shard, held, standard, interleaved)
    return found


def live_roots(data: PlanData, step: int) -> np.ndarray:
    """Root rows live at ``step`` (ascending)."""
    a = data.arrays
    live = a.interval_row[(a.interval_first <= step) & (a.interval_last >= step)]
    return np.unique(a.root_rows[live])


def tile_holders(data: PlanData, tile: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(value rows, bytes on ``tile``): per root live at ``step`` the alias holding the most on the
    tile (the first such alias in file order), rows holding nothing left out; in root order."""
    a = data.arrays
    columns = tile_columns(data, tile)
    chosen, held = [], []
    for root in live_roots(data, step).tolist():
        rows = a.alias_rows[int(root)]
        sizes = columns.held[rows]
        k = int(np.argmax(sizes))  # the first alias holding the most
        if sizes[k] > 0:
            chosen.append(rows[k])
            held.append(int(sizes[k]))
    return np.asarray(chosen, dtype=np.int64), np.asarray(held, dtype=np.int64)


def tile_step(data: PlanData, tile: int, step: int) -> TileStep:
    """What ``tile`` holds at ``step`` (module doc)."""
    a = data.arrays
    columns = tile_columns(data, tile)
    picked, total = tile_holders(data, tile, step)
    payload = columns.shard[picked] * a.copies[picked] if picked.size else np.zeros(0, dtype=np.int64)
    names = data.opened.profile.values.column("name")
    frame = pd.DataFrame(
        {
            "id": a.value_ids[picked],
            "root": a.roots[picked],
            "name": [str(names[int(r)].as_py()) for r in picked.tolist()],
            "region": REGION_NAMES[a.region[a.root_rows[picked]]] if picked.size else np.zeros(0, dtype=object),
            "copies": a.copies[picked],
            "payload": payload,
            "padding": total - payload,
            "total": total,
        },
        columns=list(TILE_COLUMNS),
    )
    frame = frame.sort_values(["total", "id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return TileStep(
        tile=int(tile),
        step=int(step),
        source=tile_usage(data).source,
        rows=frame,
        scratch_standard=int(columns.scratch_standard[step]),
        scratch_interleaved=int(columns.scratch_interleaved[step]),
    )


@dataclass(frozen=True)
class TileLines:
    """One tile's usage at every step beside the device-wide old bound (module doc of the view)."""

    tile: int
    source: str
    standard: np.ndarray  # on the tile, per step
    interleaved: np.ndarray
    coarse: (
        np.ndarray
    )  # the old bound, the same on every tile: v1's usage, v2/v3's coarse_usage (standard + interleaved)

    @property
    def total(self) -> np.ndarray:
        return self.standard + self.interleaved


def tile_lines(data: PlanData, tile: int) -> TileLines:
    """``tile``'s standard and interleaved at every step (``derived.tile_usage.tile_series``: the
    file's recorded runs read at one tile, or one pass over the live intervals), and the plan's
    sum-of-maxima usage, the old bound: for an unedited v2/v3 plan equal to its ``coarse_usage``,
    for v1 its ``usage`` (the plan's ``series``, which follows edits)."""

    standard, interleaved = tile_series(data, int(tile))
    series = data.series
    return TileLines(
        int(tile),
        tile_usage(data).source,
        np.asarray(standard),
        np.asarray(interleaved),
        np.asarray(series.standard) + np.asarray(series.interleaved),
    )


def step_peak(data: PlanData, step: int) -> tuple[int, int]:
    """(tile, bytes): the tile holding the most (standard + interleaved) at ``step``, the **last**
    such tile on a tie (the compiler's rule for a step's ``usage``), from that step's tiles alone
    (``derived.tile_usage.at_step``), without sweeping every step."""

    standard, interleaved = at_step(data, int(step))
    total = np.asarray(standard) + np.asarray(interleaved)
    if not total.size:
        return 0, 0
    tile = int(total.size - 1 - np.argmax(total[::-1]))
    return tile, int(total[tile])


def tiles_ready(data: PlanData) -> bool:
    """Whether the plan's per-tile figures exist (``prepare_tiles`` ran): a tile's series and table
    are then a few milliseconds; before, the first one pays for every value's figures (a v1 file's
    estimate of 23,200 steps: seconds), which the app does in a load worker."""
    return bool(data.__dict__.get("_tiles_prepared"))


def prepare_tiles(data: PlanData, progress=None) -> None:
    """Compute the file-sized part of what any tile's series, any step's tiles and any table of the
    plan need (the per-value figures and their index, kept on ``data``): one step's tiles, not a
    tile's whole series, which the Placement tab's map does not draw (on the 92.5 MB profile that
    series cost the map ~15 ms per edit; a series afterwards is ~10-15 ms, on the loop)."""
    at_step(data, 0)
    data.__dict__["_tiles_prepared"] = True
