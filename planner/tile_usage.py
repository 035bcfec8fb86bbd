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

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .model import ProfileArrays, TilePlan
from .tile_estimate import runs_of
from .tile_figures import RunTable, TileFigures, gather_runs, ranks, replace_runs

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
    """Per-tile usage of one plan (module doc).

    Three ways to one answer: a sweep over ``figures`` (a v1 estimate); the file's own ``recorded``
    tile_usage (an unedited v2/v3 plan); or, with ``edited_from``, an unedited v2/v3 plan's usage
    plus what the edited values and steps change — only the steps where an edited value is live
    (or whose scratch changed) are summed again, the others keep the file's figures.
    """

    def __init__(self, arrays: ProfileArrays, figures: TileFigures, recorded: RunTable | None = None):
        self.arrays = arrays
        self.figures = figures
        # The file's own per-step tile_usage runs (columns standard, interleaved): what an unedited
        # v2/v3 plan shows, rather than a recomputation of it.
        self.recorded = recorded
        self.base: TileUsage | None = None
        self.changed_roots = np.zeros(0, dtype=np.int64)
        self.changed_steps = np.zeros(0, dtype=np.int64)

    @staticmethod
    def edited_from(base: TileUsage, figures: TileFigures, rows, steps) -> TileUsage:
        """``base`` (an unedited plan's usage) with the value ``rows`` and the ``steps`` whose runs
        ``figures`` replaced."""
        usage = TileUsage(base.arrays, figures)
        usage.base = base
        usage.changed_roots = np.unique(base.arrays.root_rows[np.asarray(sorted(rows), dtype=np.int64)])
        usage.changed_steps = np.asarray(sorted(steps), dtype=np.int64)
        return usage

    @property
    def source(self) -> str:
        return self.figures.source

    @property
    def affected_steps(self) -> np.ndarray | None:
        """An edited plan's steps whose per-tile figures differ from its base's (a bool per step)."""
        return self._delta[1] if self.base is not None else None

    def _requirements(self, roots) -> dict[int, tuple]:
        """Root row → (start, stop, (M,)) runs of the most any alias of the root holds per tile."""
        a, f = self.arrays, self.figures
        parts: dict[int, tuple] = {}
        for root in roots:
            rows = a.alias_rows[int(root)]
            start, stop, (_, allocated) = f.values.runs(rows[0])
            if all(_same_runs(f.values.runs(row), (start, stop, allocated)) for row in rows[1:]):
                parts[int(root)] = (start, stop, (allocated,))  # one alias, or aliases all alike
                continue
            dense = np.zeros(a.device_tiles, dtype=np.int64)
            for row in rows:
                start, stop, (_, allocated) = f.values.runs(row)
                np.maximum(dense, on_device_runs(start, stop, allocated, a.device_tiles), out=dense)
            start, stop, (column,) = runs_of(dense)
            parts[int(root)] = (start, stop, (column,))
        return parts

    @cached_property
    def requirement(self) -> RunTable:
        """Per value row, the runs of M(root(row), t): a root without aliases keeps its own runs
        (numpy, whatever the number of values); only roots with aliases are merged."""
        a, values = self.arrays, self.figures.values
        members = np.bincount(a.root_rows, minlength=a.n_values)
        by_root = RunTable(values.bounds, values.start, values.stop, (values.columns[1],))
        shared = np.flatnonzero(members > 1).tolist()
        if shared:
            by_root = replace_runs(by_root, self._requirements(shared))
        return gather_runs(by_root, a.root_rows)

    @cached_property
    def region_of_row(self) -> np.ndarray:
        """The class each row counts in: its root's (§1.6)."""
        return self.arrays.region[self.arrays.root_rows]

    def _interval_events(self, intervals: np.ndarray, table: RunTable, row_of: np.ndarray, sign: int) -> tuple:
        """(step, start, stop, signed bytes, region) of ``intervals`` (indices) taking their row's
        runs from ``table`` (row ``row_of[interval]``): + at the first step, − after the last."""
        a = self.arrays
        owner = row_of[intervals]
        counts = np.diff(table.bounds)[owner]
        index = np.repeat(table.bounds[owner], counts) + ranks(counts)
        size = table.columns[0][index] * sign
        step = np.concatenate(
            (np.repeat(a.interval_first[intervals], counts), np.repeat(a.interval_last[intervals] + 1, counts))
        )
        region = np.tile(np.repeat(self.region_of_row[a.interval_row[intervals]], counts), 2)
        return (
            step,
            np.tile(table.start[index], 2),
            np.tile(table.stop[index], 2),
            np.concatenate((size, -size)),
            region,
        )

    @cached_property
    def _delta(self) -> tuple:
        """An edited plan's change against its base: sorted events of the edited classes' new runs
        (+) and old runs (−) over their intervals, the changed steps' scratch (new − old), and the
        affected steps (a boolean per step)."""
        a, base = self.arrays, self.base
        assert base is not None
        affected_interval = np.isin(a.root_rows[a.interval_row], self.changed_roots)
        intervals = np.flatnonzero(affected_interval)
        new = self._requirements(self.changed_roots.tolist())
        roots = self.changed_roots.tolist()
        table = RunTable.of([new[r] for r in roots], 1)
        local = np.zeros(a.n_values, dtype=np.int64)
        local[self.changed_roots] = np.arange(len(roots))
        row_of_new = local[a.root_rows[a.interval_row]]
        plus = self._interval_events(intervals, table, row_of_new, 1)
        old = base._requirements(roots)  # the edited classes' runs before the edits, only theirs
        old_table = RunTable.of([old[r] for r in roots], 1)
        minus = self._interval_events(intervals, old_table, row_of_new, -1)
        columns = [np.concatenate((x, y)) for x, y in zip(plus, minus)]
        order = np.argsort(columns[0], kind="stable")
        events = tuple(c[order] for c in columns)
        steps = np.zeros(a.n_steps + 1, dtype=np.int64)
        np.add.at(steps, a.interval_first[intervals], 1)
        np.add.at(steps, a.interval_last[intervals] + 1, -1)
        affected = np.cumsum(steps[:-1]) > 0
        affected[self.changed_steps] = True
        return events, affected

    def _scratch_delta(self, c0: int, c1: int, code: int) -> np.ndarray:
        """New − old scratch per tile at steps c0 … c1 − 1 (0 where no step's scratch changed)."""
        assert self.base is not None
        device = self.arrays.device_tiles
        out = np.zeros((c1 - c0, device), dtype=np.int64)
        for step in self.changed_steps[(self.changed_steps >= c0) & (self.changed_steps < c1)].tolist():
            out[step - c0] = (
                _step_matrix(self.figures.scratch, step, step + 1, device, code)[0]
                - _step_matrix(self.base.figures.scratch, step, step + 1, device, code)[0]
            )
        return out

    def _sweep(
        self, events: tuple, c0: int, c1: int, state: list[np.ndarray], width: int | None = None
    ) -> list[np.ndarray]:
        """The running sum of ``events`` over steps c0 … c1 − 1 per class, continuing ``state``,
        over ``width`` columns (the tiles by default)."""
        step, start, stop, size, region = events
        device = self.arrays.device_tiles if width is None else width
        lo, hi = np.searchsorted(step, [c0, c1])
        out = []
        for code in (0, 1):
            diff = np.zeros((c1 - c0, device + 1), dtype=np.int64)
            pick = region[lo:hi] == code
            rows = step[lo:hi][pick] - c0
            np.add.at(diff, (rows, start[lo:hi][pick]), size[lo:hi][pick])
            np.add.at(diff, (rows, stop[lo:hi][pick]), -size[lo:hi][pick])
            live = np.cumsum(np.cumsum(diff[:, :device], axis=1), axis=0) + state[code]
            state[code] = live[-1].copy()
            out.append(live)
        return out

    def _chunks(self) -> Iterator[tuple[int, int, list[np.ndarray], np.ndarray | None]]:
        """(c0, c1, [standard, interleaved] matrices, the tile of each column or None when the
        columns are the tiles) of every chunk of steps to compute. A sweep of the figures works on
        segments of tiles (``_segments``), not tiles."""
        a = self.arrays
        n, device = a.n_steps, a.device_tiles
        chunk = max(1, CHUNK_CELLS // max(device, 1))
        state = [np.zeros(device, dtype=np.int64), np.zeros(device, dtype=np.int64)]
        if self.recorded is not None:
            for c0 in range(0, n, chunk):
                c1 = min(n, c0 + chunk)
                yield (c0, c1, [_step_matrix(self.recorded, c0, c1, device, code) for code in (0, 1)], None)
            return
        if self.base is not None:
            events, affected = self._delta
            where = np.flatnonzero(affected)
            if not where.size:
                return
            for c0 in range(int(where[0]), int(where[-1]) + 1, chunk):
                c1 = min(int(where[-1]) + 1, c0 + chunk)
                base = list(self.base._matrices(c0, c1))
                delta = self._sweep(events, c0, c1, state)
                yield (c0, c1, [base[k] + delta[k] + self._scratch_delta(c0, c1, k) for k in (0, 1)], None)
            return
        edges, events, scratch = self._segments
        width = edges.size - 1
        chunk = max(1, CHUNK_CELLS // max(width, 1))
        state = [np.zeros(width, dtype=np.int64), np.zeros(width, dtype=np.int64)]
        for c0 in range(0, n, chunk):
            c1 = min(n, c0 + chunk)
            live = self._sweep(events, c0, c1, state, width)
            yield (
                c0,
                c1,
                [live[k] + _step_matrix(scratch, c0, c1, width, k) for k in (0, 1)],
                edges[1:] - 1,  # a segment's last tile: the last maximal tile on a tie
            )

    def tile_chunks(self, cells: int = CHUNK_CELLS) -> Iterator[tuple[int, list[np.ndarray]]]:
        """(first step, [standard, interleaved] ``steps × tiles`` matrices) for every chunk of about
        ``cells`` cells, in step order, of an unedited plan: its recorded tile_usage, or the sum of
        its figures (``planner.tile_check`` compares the two)."""
        assert self.base is None, "an edited plan's usage is read through step_peaks, series and at_step"
        a = self.arrays
        n, device = a.n_steps, a.device_tiles
        chunk = max(1, cells // max(device, 1))
        state = [np.zeros(device, dtype=np.int64), np.zeros(device, dtype=np.int64)]
        for c0 in range(0, n, chunk):
            c1 = min(n, c0 + chunk)
            if self.recorded is not None:
                yield c0, [_step_matrix(self.recorded, c0, c1, device, k) for k in (0, 1)]
            else:
                live = self._sweep(self._events, c0, c1, state)
                yield c0, [live[k] + _step_matrix(self.figures.scratch, c0, c1, device, k) for k in (0, 1)]

    @cached_property
    def _segments(self) -> tuple[np.ndarray, tuple, RunTable]:
        """The tile edges where some value's or step's figure changes — between two edges every
        tile holds the same at every step — and the events and scratch runs over those segments."""
        req, scratch = self.requirement, self.figures.scratch
        device = self.arrays.device_tiles
        edges = np.unique(np.concatenate(([0, device], req.start, req.stop, scratch.start, scratch.stop)))
        step, start, stop, size, region = self._events
        events = (step, np.searchsorted(edges, start), np.searchsorted(edges, stop), size, region)
        segments = RunTable(
            scratch.bounds, np.searchsorted(edges, scratch.start), np.searchsorted(edges, scratch.stop), scratch.columns
        )
        return edges, events, segments

    def _matrices(self, c0: int, c1: int) -> list[np.ndarray]:
        """Steps c0 … c1 − 1 per tile of an unedited plan: recorded, or summed from its figures
        (what is live at c0 taken from every event before it, then swept)."""
        device = self.arrays.device_tiles
        if self.recorded is not None:
            return [_step_matrix(self.recorded, c0, c1, device, code) for code in (0, 1)]
        step, start, stop, size, region = self._events
        before = step < c0
        state = [
            on_device_runs(
                start[before & (region == k)], stop[before & (region == k)], size[before & (region == k)], device
            )
            for k in (0, 1)
        ]
        live = self._sweep(self._events, c0, c1, state)
        return [live[k] + _step_matrix(self.figures.scratch, c0, c1, device, k) for k in (0, 1)]

    @cached_property
    def _events(self) -> tuple:
        a = self.arrays
        columns = self._interval_events(np.arange(a.interval_row.size), self.requirement, a.interval_row, 1)
        order = np.argsort(columns[0], kind="stable")
        return tuple(c[order] for c in columns)

    @cached_property
    def step_peaks(self) -> StepPeaks:
        a = self.arrays
        n = a.n_steps
        if self.base is not None:
            base = self.base.step_peaks
            most = {r: base.most[r].copy() for r in REGIONS}
            tile = {r: base.tile[r].copy() for r in REGIONS}
            usage = [base.usage_standard.copy(), base.usage_interleaved.copy()]
            usage_tile = base.usage_tile.copy()
        else:
            most = {r: np.zeros(n, dtype=np.int64) for r in REGIONS}
            tile = {r: np.zeros(n, dtype=np.int64) for r in REGIONS}
            usage = [np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)]
            usage_tile = np.zeros(n, dtype=np.int64)
        for c0, c1, held, tile_of in self._chunks():
            both = held[0] + held[1]
            steps = np.arange(c1 - c0)
            width = both.shape[1]
            for name, matrix in zip(REGIONS, (held[0], held[1], both)):
                column = width - 1 - np.argmax(matrix[:, ::-1], axis=1)  # the last maximal column
                tile[name][c0:c1] = column if tile_of is None else tile_of[column]
                most[name][c0:c1] = matrix[steps, column]
                if name == "total":
                    usage[0][c0:c1] = held[0][steps, column]
                    usage[1][c0:c1] = held[1][steps, column]
            usage_tile[c0:c1] = tile["total"][c0:c1]
        return StepPeaks(most, tile, usage[0], usage[1], usage_tile)

    def _tile_delta(self, tile: int) -> list[np.ndarray]:
        """An edited plan's change on ``tile`` at every step, per class."""
        a, base = self.arrays, self.base
        assert base is not None
        (events, _) = self._delta
        step, start, stop, size, region = events
        on = (start <= tile) & (stop > tile)
        out = []
        new_scratch, old_scratch = (self.figures.scratch.at_tile(tile), base.figures.scratch.at_tile(tile))
        for code in (0, 1):
            pick = on & (region == code)
            diff = np.zeros(a.n_steps + 1, dtype=np.int64)
            np.add.at(diff, step[pick], size[pick])
            out.append(np.cumsum(diff[:-1]) + new_scratch[code] - old_scratch[code])
        return out

    def series(self, tile: int) -> tuple[np.ndarray, np.ndarray]:
        """(standard, interleaved) on ``tile`` at every step."""
        a = self.arrays
        if not 0 <= tile < a.device_tiles:
            raise IndexError(f"tile {tile} is not in 0..{a.device_tiles - 1}")
        if self.recorded is not None:
            standard, interleaved = self.recorded.at_tile(tile)
            return standard, interleaved
        if self.base is not None:
            base = self.base.series(tile)
            delta = self._tile_delta(tile)
            return base[0] + delta[0], base[1] + delta[1]
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
            standard, interleaved = self._matrices(step, step + 1)
            return standard[0], interleaved[0]
        if self.base is not None:
            base = self.base.at_step(step)
            (ev_step, start, stop, size, region), _ = self._delta
            done = ev_step <= step  # every event up to the step, summed over tiles only
            out = []
            for k in (0, 1):
                pick = done & (region == k)
                delta = on_device_runs(start[pick], stop[pick], size[pick], a.device_tiles)
                out.append(base[k] + delta + self._scratch_delta(step, step + 1, k)[0])
            return out[0], out[1]
        live = np.unique(a.interval_row[(a.interval_first <= step) & (a.interval_last >= step)])
        req = self.requirement
        out = []
        s_start, s_stop, s_columns = self.figures.scratch.runs(step)
        for code in (0, 1):
            rows = live[self.region_of_row[live] == code]
            counts = np.diff(req.bounds)[rows]
            index = np.repeat(req.bounds[rows], counts) + ranks(counts)
            total = on_device_runs(req.start[index], req.stop[index], req.columns[0][index], a.device_tiles)
            out.append(total + on_device_runs(s_start, s_stop, s_columns[code], a.device_tiles))
        return out[0], out[1]

    def peak(self, region: str) -> tuple[int, int, int]:
        """(bytes, step, tile) of the most any tile holds in ``region`` at any step: the earliest
        such step (the compiler's peak-step rule), the last such tile there."""
        sp = self.step_peaks
        if not sp.most[region].size:
            return 0, 0, 0
        step = int(np.argmax(sp.most[region]))
        return int(sp.most[region][step]), step, int(sp.tile[region][step])


def tile_plan_of(usage: TileUsage) -> TilePlan:
    """A plan's per-step figures per tile (``planner.model.plan_of_tile_plan``) from its usage."""
    sp = usage.step_peaks
    return TilePlan(
        usage=np.stack((sp.usage_standard, sp.usage_interleaved), axis=1),
        usage_tile=sp.usage_tile,
        largest=np.stack((sp.most["standard"], sp.most["interleaved"]), axis=1),
        largest_tile=np.stack((sp.tile["standard"], sp.tile["interleaved"]), axis=1),
    )


def _same_runs(runs: tuple, like: tuple) -> bool:
    """Whether a row's runs (start, stop, (shard, bytes)) hold ``like``'s (start, stop, bytes)."""
    start, stop, (_, allocated) = runs
    return all(np.array_equal(x, y) for x, y in zip((start, stop, allocated), like))


def _step_matrix(table: RunTable, c0: int, c1: int, device: int, column: int) -> np.ndarray:
    """Steps c0 … c1 − 1 of a per-step run table as a (c1 − c0) × device matrix of one column.

    A step's runs are disjoint: each is written into its cells directly (one fancy-index
    assignment over the cells the runs cover), no difference array."""
    lo, hi = int(table.bounds[c0]), int(table.bounds[c1])
    out = np.zeros((c1 - c0) * device, dtype=np.int64)
    lengths = table.stop[lo:hi] - table.start[lo:hi]
    first = (table.owner[lo:hi] - c0) * device + table.start[lo:hi]
    out[np.repeat(first, lengths) + ranks(lengths)] = np.repeat(table.columns[column][lo:hi], lengths)
    return out.reshape(c1 - c0, device)


def on_device_runs(start: np.ndarray, stop: np.ndarray, value: np.ndarray, device_tiles: int) -> np.ndarray:
    diff = np.zeros(device_tiles + 1, dtype=np.int64)
    np.add.at(diff, start, value)
    np.add.at(diff, stop, -value)
    return np.cumsum(diff[:-1])
