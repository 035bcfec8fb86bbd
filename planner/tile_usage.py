"""Per-tile usage of a whole plan: every value's per-tile bytes and every step's per-tile scratch
(``planner.tile_figures.TileFigures``, as runs), summed over what is live at each step
(compiler-formats.md §1.6):

``tile_usage[s][t] = tile_scratch[s][t] + Σ over live values v of M(root(v), t)``, M the largest
``tile_bytes[t]`` among the root's aliases, in the root's class.

``TileUsage`` computes, once, per step: the most each region (and both) holds on any tile and on
which tile, and the compiler's ``usage`` (the tile with the largest total, the last such tile on a
tie, §1.5); and on demand one tile's series over the steps, or every tile at one step. The steps
are swept in chunks of a (steps × tiles) matrix built from a two-dimensional difference array:
each live interval adds its root's runs where it starts and takes them off after it ends, so the
work is O(steps × tiles + intervals × runs), the memory one chunk (``CHUNK_CELLS``), never the
whole matrix. An unedited v2/v3 plan reads the file's own ``tile_usage`` runs instead
(``recorded``). Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .model import ProfileArrays
from .tile_estimate import runs_of
from .tile_figures import RunTable, TileFigures

CHUNK_CELLS = 1 << 21  # step × tile cells of one sweep chunk (16 MiB per int64 matrix)
REGIONS = ("standard", "interleaved", "total")


# ----------------------------------------------------------------------------- usage


@dataclass(frozen=True)
class StepPeaks:
    """Per step: the most any tile holds (``most[region]``) and the tile holding it
    (``tile[region]``), regions standard, interleaved, total; and the compiler's ``usage``: the
    standard/interleaved of the tile with the largest total. On a tie, always the **last** such
    tile: the compiler's rule for ``usage`` (§1.5), kept for every region so that the total's
    peak tile is the tile whose figures the file records as ``usage``."""

    most: dict[str, np.ndarray]
    tile: dict[str, np.ndarray]
    usage_standard: np.ndarray
    usage_interleaved: np.ndarray
    usage_tile: np.ndarray


class TileUsage:
    """Per-tile usage of one plan (module doc)."""

    def __init__(
        self,
        arrays: ProfileArrays,
        figures: TileFigures,
        recorded: RunTable | None = None,
    ):
        self.arrays = arrays
        self.figures = figures
        # The file's own per-step tile_usage runs (columns standard, interleaved): what an unedited
        # v2/v3 plan shows, rather than a recomputation of it.
        self.recorded = recorded
        self._state: list[np.ndarray] = []

    @property
    def source(self) -> str:
        return self.figures.source

    @cached_property
    def requirement(self) -> RunTable:
        """Per value row, the runs of M(root(row), t): the most any alias of its root holds on t."""
        a, f = self.arrays, self.figures
        parts: dict[int, tuple] = {}
        for root, rows in a.alias_rows.items():
            if len(rows) == 1:
                start, stop, (_, allocated) = f.values.runs(rows[0])
                parts[root] = (start, stop, (allocated,))
                continue
            dense = np.zeros(a.device_tiles, dtype=np.int64)
            for row in rows:
                start, stop, (_, allocated) = f.values.runs(row)
                np.maximum(
                    dense,
                    on_device_runs(start, stop, allocated, a.device_tiles),
                    out=dense,
                )
            start, stop, (column,) = runs_of(dense)
            parts[root] = (start, stop, (column,))
        return RunTable.of([parts[int(a.root_rows[row])] for row in range(a.n_values)])

    @cached_property
    def region_of_row(self) -> np.ndarray:
        """The class each row counts in: its root's (§1.6)."""
        return self.arrays.region[self.arrays.root_rows]

    def _events(
        self,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(step, tile start, tile stop, signed bytes, region) of every interval's runs starting
        and ending, sorted by step."""
        a, req = self.arrays, self.requirement
        counts = np.diff(req.bounds)[a.interval_row]
        index = np.repeat(req.bounds[a.interval_row], counts) + _ranks(counts)
        first = np.repeat(a.interval_first, counts)
        after = np.repeat(a.interval_last + 1, counts)
        region = np.repeat(self.region_of_row[a.interval_row], counts)
        size = req.columns[0][index]
        step = np.concatenate((first, after))
        order = np.argsort(step, kind="stable")
        start, stop = np.tile(req.start[index], 2), np.tile(req.stop[index], 2)
        return (
            step[order],
            start[order],
            stop[order],
            np.concatenate((size, -size))[order],
            np.tile(region, 2)[order],
        )

    def _chunk(self, c0: int, c1: int) -> list[np.ndarray]:
        """(standard, interleaved) per tile at steps c0 … c1 − 1, a (c1 − c0) × tiles matrix each,
        from the recorded usage or by adding the live intervals' runs to ``_state``."""
        device = self.arrays.device_tiles
        if self.recorded is not None:
            return [
                _step_matrix(self.recorded, c0, c1, device, code) for code in (0, 1)
            ]
        step, start, stop, size, region = self._event_columns
        lo, hi = np.searchsorted(step, [c0, c1])
        held = []
        for code in (0, 1):
            diff = np.zeros((c1 - c0, device + 1), dtype=np.int64)
            pick = region[lo:hi] == code
            rows = step[lo:hi][pick] - c0
            np.add.at(diff, (rows, start[lo:hi][pick]), size[lo:hi][pick])
            np.add.at(diff, (rows, stop[lo:hi][pick]), -size[lo:hi][pick])
            live = (
                np.cumsum(np.cumsum(diff[:, :device], axis=1), axis=0)
                + self._state[code]
            )
            self._state[code] = live[-1].copy()
            held.append(live + _step_matrix(self.figures.scratch, c0, c1, device, code))
        return held

    @cached_property
    def _event_columns(self):
        return self._events()

    @cached_property
    def step_peaks(self) -> StepPeaks:
        a = self.arrays
        n, device = a.n_steps, a.device_tiles
        chunk = max(1, CHUNK_CELLS // max(device, 1))
        most = {r: np.zeros(n, dtype=np.int64) for r in REGIONS}
        tile = {r: np.zeros(n, dtype=np.int64) for r in REGIONS}
        usage = [np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)]
        usage_tile = np.zeros(n, dtype=np.int64)
        self._state = [
            np.zeros(device, dtype=np.int64),
            np.zeros(device, dtype=np.int64),
        ]
        for c0 in range(0, n, chunk):
            c1 = min(n, c0 + chunk)
            held = self._chunk(c0, c1)
            both = held[0] + held[1]
            steps = np.arange(c1 - c0)
            for name, matrix in zip(REGIONS, (held[0], held[1], both)):
                tile[name][c0:c1] = device - 1 - np.argmax(matrix[:, ::-1], axis=1)
                most[name][c0:c1] = matrix[steps, tile[name][c0:c1]]
            last = tile["total"][c0:c1]
            usage_tile[c0:c1] = last
            usage[0][c0:c1] = held[0][steps, last]
            usage[1][c0:c1] = held[1][steps, last]
        return StepPeaks(most, tile, usage[0], usage[1], usage_tile)

    def series(self, tile: int) -> tuple[np.ndarray, np.ndarray]:
        """(standard, interleaved) on ``tile`` at every step."""
        a = self.arrays
        if not 0 <= tile < a.device_tiles:
            raise IndexError(f"tile {tile} is not in 0..{a.device_tiles - 1}")
        if self.recorded is not None:
            standard, interleaved = self.recorded.at_tile(tile)
            return standard, interleaved
        (held,) = self.requirement.at_tile(tile)
        size = held[a.interval_row]
        region = self.region_of_row[a.interval_row]
        out = []
        scratch = self.figures.scratch.at_tile(tile)
        for code in (0, 1):
            pick = region == code
            diff = np.zeros(a.n_steps + 1, dtype=np.int64)
            np.add.at(diff, a.interval_first[pick], size[pick])
            np.add.at(diff, a.interval_last[pick] + 1, -size[pick])
            out.append(np.cumsum(diff[:-1]) + scratch[code])
        return out[0], out[1]

    def at_step(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        """(standard, interleaved) on every tile at ``step``."""
        a = self.arrays
        if not 0 <= step < a.n_steps:
            raise IndexError(f"step {step} is not in 0..{a.n_steps - 1}")
        if self.recorded is not None:
            start, stop, (standard, interleaved) = self.recorded.runs(step)
            return on_device_runs(
                start, stop, standard, a.device_tiles
            ), on_device_runs(start, stop, interleaved, a.device_tiles)
        live = np.unique(
            a.interval_row[(a.interval_first <= step) & (a.interval_last >= step)]
        )
        req = self.requirement
        out = []
        s_start, s_stop, s_columns = self.figures.scratch.runs(step)
        for code in (0, 1):
            rows = live[self.region_of_row[live] == code]
            counts = np.diff(req.bounds)[rows]
            index = np.repeat(req.bounds[rows], counts) + _ranks(counts)
            total = on_device_runs(
                req.start[index], req.stop[index], req.columns[0][index], a.device_tiles
            )
            out.append(
                total + on_device_runs(s_start, s_stop, s_columns[code], a.device_tiles)
            )
        return out[0], out[1]

    def peak(self, region: str) -> tuple[int, int, int]:
        """(bytes, step, tile) of the most any tile holds in ``region`` at any step: the earliest
        such step (the compiler's peak-step rule), the last such tile there."""
        sp = self.step_peaks
        if not sp.most[region].size:
            return 0, 0, 0
        step = int(np.argmax(sp.most[region]))
        return int(sp.most[region][step]), step, int(sp.tile[region][step])


def _step_matrix(
    table: RunTable, c0: int, c1: int, device: int, column: int
) -> np.ndarray:
    """Steps c0 … c1 − 1 of a per-step run table as a (c1 − c0) × device matrix of one column."""
    lo, hi = int(table.bounds[c0]), int(table.bounds[c1])
    diff = np.zeros((c1 - c0, device + 1), dtype=np.int64)
    rows = table.owner[lo:hi] - c0
    np.add.at(diff, (rows, table.start[lo:hi]), table.columns[column][lo:hi])
    np.add.at(diff, (rows, table.stop[lo:hi]), -table.columns[column][lo:hi])
    return np.cumsum(diff[:, :device], axis=1)


def on_device_runs(
    start: np.ndarray, stop: np.ndarray, value: np.ndarray, device_tiles: int
) -> np.ndarray:
    diff = np.zeros(device_tiles + 1, dtype=np.int64)
    np.add.at(diff, start, value)
    np.add.at(diff, stop, -value)
    return np.cumsum(diff[:-1])


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0 … count − 1 for each count, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(total, dtype=np.int64) - np.repeat(ends - counts, counts)
