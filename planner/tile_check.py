"""``check`` of what versions 2 and 3 record per tile (docs/formats.md §7), vectorised over runs and
chunks of steps (``TileUsage.tile_chunks``: the file's rows summed beside its recorded tile_usage):

- each value: ``bytes == aligned_bytes × copies``, ``bytes == max tile_bytes``,
  ``shard_bytes == max tile_shards``;
- each step and tile: the reconstruction rule (spec §1.6): ``tile_usage`` = ``tile_scratch`` + the
  live roots' largest alias ``tile_bytes``, per class;
- each step: ``usage`` = the ``tile_usage`` of its peak tile (largest total, ties: the last tile),
  ``coarse_usage`` = the v1 scalar rule (scratch + each live root's largest alias ``bytes``, in its
  class), and no tile above it (spec §1.6);

the peaks, peak steps, effective peak and ``fits_budget`` are compared by ``planner.check`` with the
plan per tile (``planner.model.per_tile_plan``). At most ``LIMIT`` mismatches of one field are
listed, then one line says how many more there are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .check import Mismatch
from .model import ProfileArrays
from .tile_arrays import last_argmax, value_maxima
from .tile_figures import recorded_usage as recorded_usage_runs
from .tile_usage import TileUsage
from .tile_whatif import file_figures

CHUNK_CELLS = 1 << 19  # step × tile cells compared at a time (a few such int64 arrays are held)

LIMIT = 1000  # mismatches listed per field; beyond it, one line counts the rest
CLASSES = ("standard", "interleaved")
RULE_COARSE_BOUND = "no tile above coarse_usage"
TILE_BYTES_WITHOUT_SHARD = "tile_bytes (0 where tile_shards is 0)"
TILE_SHARD_WITHOUT_BYTES = "tile_shards (0 where tile_bytes is 0)"
TILES_WITH_A_SHARD = "tiles with a shard (at most the layout's tile_count)"  # a count, not bytes


@dataclass(frozen=True)
class MoreMismatches:
    """How many mismatches of one field were not listed (beyond ``LIMIT``)."""

    field: str
    count: int

    def __str__(self) -> str:
        return f"… and {self.count:,} more {self.field} mismatches"


class _Listed:
    """Mismatches listed per field (at most ``LIMIT``) and how many each field had."""

    def __init__(self) -> None:
        self.items: list = []
        self.counts: dict[str, int] = {}

    def add(self, field: str, found: list[Mismatch], total: int) -> None:
        listed = self.counts.get(field, 0)
        room = max(LIMIT - listed, 0)
        self.items += found[:room]
        self.counts[field] = listed + total

    def more(self) -> list[MoreMismatches]:
        return [MoreMismatches(f, n - LIMIT) for f, n in self.counts.items() if n > LIMIT]


def value_mismatches(arrays: ProfileArrays) -> list[Mismatch]:
    t = arrays.tiles
    assert t is not None
    shard, held = value_maxima(t, arrays.n_values)
    out: list[Mismatch] = []
    ids = arrays.value_ids
    for field, recorded, recomputed in (
        ("bytes (aligned_bytes × copies)", arrays.recorded_bytes, arrays.recorded_aligned * arrays.copies),
        ("bytes (largest tile_bytes)", arrays.recorded_bytes, held),
        ("shard_bytes (largest tile_shards)", arrays.recorded_shard, shard),
    ):
        for i in np.flatnonzero(recorded != recomputed).tolist():
            out.append(Mismatch("value", int(ids[i]), field, int(recorded[i]), int(recomputed[i])))
    # Spec §1.4: both arrays are 0 exactly where the value has no shard, and it has at most one
    # shard per owner of its layout (runs hold no all-zero span, so a run with one 0 is a mismatch).
    one_zero = (t.value_shard == 0) != (t.value_bytes == 0)
    for r in np.flatnonzero(one_zero).tolist():
        no_shard = t.value_shard[r] == 0
        out.append(
            Mismatch(
                "value",
                int(ids[t.value_row[r]]),
                TILE_BYTES_WITHOUT_SHARD if no_shard else TILE_SHARD_WITHOUT_BYTES,
                int(t.value_bytes[r] if no_shard else t.value_shard[r]),
                0,
                int(t.value_start[r]),
            )
        )
    held_tiles = np.bincount(t.value_row, weights=t.value_stop - t.value_start, minlength=arrays.n_values).astype(
        np.int64
    )
    for i in np.flatnonzero(held_tiles > arrays.tile_counts).tolist():
        out.append(Mismatch("value", int(ids[i]), TILES_WITH_A_SHARD, int(held_tiles[i]), int(arrays.tile_counts[i])))
    return out


def coarse_usage(arrays: ProfileArrays) -> np.ndarray:
    """``[steps, 2]``: the v1 scalar rule over the recorded ``bytes`` (each live value counts its
    root's largest alias ``bytes``, in the root's class)."""
    largest = np.zeros(arrays.n_values, np.int64)
    np.maximum.at(largest, arrays.root_rows, arrays.recorded_bytes)
    root = arrays.root_rows[arrays.interval_row]
    cost = largest[root]
    out = np.zeros((arrays.n_steps, 2), np.int64)
    for c, scratch in ((0, arrays.scratch_standard), (1, arrays.scratch_interleaved)):
        mask = arrays.region[root] == c
        diff = np.zeros(arrays.n_steps + 1, np.int64)
        np.add.at(diff, arrays.interval_first[mask], cost[mask])
        np.add.at(diff, arrays.interval_last[mask] + 1, -cost[mask])
        out[:, c] = np.cumsum(diff[:-1]) + scratch
    return out


def step_mismatches(arrays: ProfileArrays, recorded_usage: np.ndarray) -> list:
    """Per-step and per-tile mismatches (module doc), steps in order within each field; then one
    line per field with more than ``LIMIT``."""
    t = arrays.tiles
    assert t is not None
    listed = _Listed()
    coarse = coarse_usage(arrays)
    for c, name in enumerate(CLASSES):
        bad = np.flatnonzero(t.coarse[:, c] != coarse[:, c])
        listed.add(
            f"coarse_usage.{name}",
            [
                Mismatch("step", int(s), f"coarse_usage.{name}", int(t.coarse[s, c]), int(coarse[s, c]))
                for s in bad[:LIMIT].tolist()
            ],
            bad.size,
        )
    bound = t.coarse.sum(axis=1)
    figures = file_figures(arrays)
    rebuilt = TileUsage(arrays, figures).tile_chunks(CHUNK_CELLS)  # the rows summed (§1.6)
    as_recorded = TileUsage(arrays, figures, recorded_usage_runs(arrays)).tile_chunks(CHUNK_CELLS)
    for (first, summed), (_, written) in zip(rebuilt, as_recorded):
        usage = np.stack(summed, axis=1)  # [steps, 2, tiles]
        recorded = np.stack(written, axis=1)
        rows = np.arange(recorded.shape[0])
        steps = rows + first
        recorded_total = recorded[:, 0] + recorded[:, 1]
        for c, name in enumerate(CLASSES):
            step, tile = np.nonzero(recorded[:, c] != usage[:, c])
            listed.add(
                f"tile_usage.{name}",
                [
                    Mismatch(
                        "step",
                        int(s + first),
                        f"tile_usage.{name}",
                        int(recorded[s, c, x]),
                        int(usage[s, c, x]),
                        int(x),
                    )
                    for s, x in zip(step[:LIMIT].tolist(), tile[:LIMIT].tolist())
                ],
                step.size,
            )
        peak = last_argmax(recorded_total)
        at_peak = recorded[rows, :, peak]
        for c, name in enumerate(CLASSES):
            bad = np.flatnonzero(recorded_usage[steps, c] != at_peak[:, c])
            listed.add(
                f"usage.{name}",
                [
                    Mismatch(
                        "step",
                        int(steps[s]),
                        f"usage.{name} (tile_usage of the peak tile {int(peak[s])})",
                        int(recorded_usage[steps[s], c]),
                        int(at_peak[s, c]),
                    )
                    for s in bad[:LIMIT].tolist()
                ],
                bad.size,
            )
        over_step, over_tile = np.nonzero(recorded_total > bound[steps][:, None])
        listed.add(
            RULE_COARSE_BOUND,
            [
                Mismatch(
                    "step",
                    int(s + first),
                    "tile_usage total (at most coarse_usage total)",
                    int(recorded_total[s, x]),
                    int(bound[s + first]),
                    int(x),
                )
                for s, x in zip(over_step[:LIMIT].tolist(), over_tile[:LIMIT].tolist())
            ],
            over_step.size,
        )
    return sorted(listed.items, key=lambda m: (m.key, -1 if m.tile is None else m.tile, m.field)) + listed.more()
