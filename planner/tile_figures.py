"""Per-tile figures of a plan as runs (``RunTable``, ``TileFigures``): every value's
``tile_shards``/``tile_bytes`` and every step's ``tile_scratch``, from a v2/v3 file or from
tilescope's own estimate of a v1 file (``estimate_figures``, compiler-formats.md §2 by
``planner.tile_estimate``, tile offsets 0). Pure numpy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from tilescope.models.tiling import TensorTiling

from .model import ProfileArrays
from .tile_estimate import (
    ELEMENT_SIZES,
    Allocation,
    LayoutUnresolvable,
    TileRuns,
    allocation_candidates,
    on_device,
    owner_elements,
    runs_of,
    spread_scratch,
    value_tiles,
)

SOURCE_FILE = "file"
SOURCE_ESTIMATE = "estimate"


@dataclass(frozen=True)
class RunTable:
    """Runs of many owners (value rows, or steps) in one set of columns, sorted by owner then
    start: owner k's runs are ``bounds[k]`` … ``bounds[k + 1] − 1``."""

    bounds: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    columns: tuple[np.ndarray, ...]

    @staticmethod
    def of(parts: Sequence[tuple[np.ndarray, np.ndarray, Sequence[np.ndarray]]], width: int) -> RunTable:
        """One table of each owner's (start, stop, columns), ``width`` columns (given: there may
        be no owner to count them from)."""
        counts = np.array([p[0].size for p in parts], dtype=np.int64)
        bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

        def cat(arrays: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, dtype=np.int64)

        return RunTable(
            bounds,
            cat([p[0] for p in parts]),
            cat([p[1] for p in parts]),
            tuple(cat([p[2][k] for p in parts]) for k in range(width)),
        )

    @cached_property
    def owner(self) -> np.ndarray:
        return np.repeat(np.arange(self.bounds.size - 1, dtype=np.int64), np.diff(self.bounds))

    def runs(self, k: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        a, b = int(self.bounds[k]), int(self.bounds[k + 1])
        return self.start[a:b], self.stop[a:b], tuple(c[a:b] for c in self.columns)

    def at_tile(self, tile: int) -> tuple[np.ndarray, ...]:
        """Each owner's column values on ``tile`` (0 where it has no run there)."""
        n = self.bounds.size - 1
        out = tuple(np.zeros(n, dtype=np.int64) for _ in self.columns)
        if not self.start.size:
            return out
        span = int(max(self.stop.max(), tile + 1))
        key = self.owner * span + self.start
        query = np.arange(n, dtype=np.int64) * span + int(tile)
        index = np.searchsorted(key, query, side="right") - 1
        ok = index >= 0
        ok[ok] &= (self.owner[index[ok]] == np.flatnonzero(ok)) & (self.stop[index[ok]] > tile)
        for column, target in zip(self.columns, out):
            target[ok] = column[index[ok]]
        return out


@dataclass(frozen=True)
class TileFigures:
    """Per-tile figures of one plan: per value row its ``tile_shards``/``tile_bytes`` runs
    (columns shard, bytes), per step its ``tile_scratch`` runs (columns standard, interleaved)."""

    device_tiles: int
    values: RunTable
    scratch: RunTable
    source: str

    def value_runs(self, row: int) -> TileRuns:
        start, stop, (shard, allocated) = self.values.runs(row)
        return TileRuns(start, stop, shard, allocated)

    def with_values(self, rows: dict[int, TileRuns], scratch: dict[int, tuple] | None = None) -> TileFigures:
        """These figures with some value rows' runs (and some steps' scratch runs) replaced."""
        values = replace_runs(self.values, {r: (v.start, v.stop, (v.shard, v.bytes)) for r, v in rows.items()})
        steps = replace_runs(self.scratch, scratch or {})
        return TileFigures(self.device_tiles, values, steps, self.source)


def gather_runs(table: RunTable, owners: np.ndarray) -> RunTable:
    """A table whose owner k has ``table``'s runs of owner ``owners[k]`` (numpy)."""
    counts = np.diff(table.bounds)[owners]
    index = np.repeat(table.bounds[owners], counts) + ranks(counts)
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return RunTable(bounds, table.start[index], table.stop[index], tuple(c[index] for c in table.columns))


def ranks(counts: np.ndarray) -> np.ndarray:
    """0 … count − 1 for each count, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    return np.arange(total, dtype=np.int64) - np.repeat(ends - counts, counts)


def replace_runs(table: RunTable, new: dict[int, tuple]) -> RunTable:
    """``table`` with the runs of the owners in ``new`` replaced (numpy, whatever the number of
    owners). The kept runs stay in their order and the new ones, sorted among themselves, are
    inserted where their owner's runs go: no sort of the whole table (an edit of a long profile
    replaces a few owners' runs among millions)."""
    if not new:
        return table
    owners = table.bounds.size - 1
    replaced = np.zeros(owners, dtype=bool)
    replaced[list(new)] = True
    keep = ~replaced[table.owner]
    added = RunTable.of(list(new.values()), len(table.columns))
    added_owner = np.repeat(np.fromiter(new, dtype=np.int64, count=len(new)), np.diff(added.bounds))
    order = np.lexsort((added.start, added_owner))
    # A replaced owner keeps no run: its new runs go before the next owner's kept runs.
    at = np.searchsorted(table.owner[keep], added_owner[order])

    def merged(kept: np.ndarray, put: np.ndarray) -> np.ndarray:
        return np.insert(kept[keep], at, put[order])

    counts = np.diff(table.bounds)
    counts[replaced] = 0
    counts += np.bincount(added_owner, minlength=owners)
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    columns = tuple(merged(c, a) for c, a in zip(table.columns, added.columns))
    return RunTable(bounds, merged(table.start, added.start), merged(table.stop, added.stop), columns)


# ----------------------------------------------------------------------------- tilescope's estimate of a v1 file


def recorded_allocations(arrays: ProfileArrays) -> tuple[np.ndarray, np.ndarray]:
    """Per value row, (alignment, extra) turning its recorded largest shard into its recorded
    aligned bytes: ``tile_estimate.infer_allocation`` of every row at once (its candidates in its
    order, then a constant extra with alignment 1, else the inferred granule without one). Kept on
    ``arrays`` (derived from the file alone)."""
    found = arrays.__dict__.get("_tile_allocations")
    if found is not None:
        return found
    shard, aligned = arrays.recorded_shard, arrays.recorded_aligned
    element = np.asarray(ELEMENT_SIZES, dtype=np.int64)[arrays.region.astype(np.int64)]
    alignment = np.zeros(arrays.n_values, dtype=np.int64)
    extra = np.zeros(arrays.n_values, dtype=np.int64)
    done = shard <= 0  # nothing held: any allocation fits, the first (unaligned) is taken
    alignment[done] = 1
    for candidate in allocation_candidates(0):
        size = element if candidate.alignment > 1 else np.ones_like(element)
        hit = ~done & (-(-(shard + candidate.extra) // size) * size == aligned)
        alignment[hit], extra[hit] = size[hit], candidate.extra
        done |= hit
    constant = ~done & (aligned >= shard)
    alignment[constant], extra[constant] = 1, (aligned - shard)[constant]
    done |= constant
    alignment[~done] = arrays.granule[~done]
    found = arrays.__dict__["_tile_allocations"] = (alignment, extra)
    return found


def recorded_allocation(arrays: ProfileArrays, row: int) -> Allocation:
    """``recorded_allocations`` of one row, with its copies."""
    alignment, extra = recorded_allocations(arrays)
    return Allocation(int(alignment[row]), int(extra[row]), int(arrays.copies[row]))


def scratch_owners(arrays: ProfileArrays) -> np.ndarray:
    """The value row taken as each step's first result, whose owners hold its scratch (§2.6), or −1.

    The file does not list a step's results: the first result is taken to be the lowest-id value
    whose first live step is this one (a step's results become live at it; inputs were live
    before). At step 0 that may be a program input. −1 when no value starts there (an in-place
    result): the scratch is then counted on every tile, the v1 model's bound."""
    out = np.full(arrays.n_steps, -1, dtype=np.int64)
    if not arrays.interval_row.size:
        return out
    ids = arrays.value_ids[arrays.interval_row]
    order = np.lexsort((ids, arrays.interval_first))
    first = arrays.interval_first[order]
    keep = np.concatenate(([True], first[1:] != first[:-1]))
    out[first[keep]] = arrays.interval_row[order][keep]
    return out


class _Estimator:
    """Per-owner elements memoised by (shape, tiling): values sharing a layout are resolved once."""

    def __init__(self, arrays: ProfileArrays, tilings: dict[int, TensorTiling] | None):
        self.arrays = arrays
        self.tilings = tilings or {}
        self.memo: dict[tuple, np.ndarray] = {}

    def tiling(self, row: int) -> TensorTiling:
        root = int(self.arrays.root_rows[row])
        found = self.tilings.get(row) or self.tilings.get(root)
        return found if found is not None else self.arrays.tiling(root)

    def elements(self, row: int) -> np.ndarray:
        root = int(self.arrays.root_rows[row])
        if row not in self.tilings and root not in self.tilings:  # the recorded layout, by its text
            text_key = (self.arrays.shapes[row], self.arrays.layout_text[root])
            found = self.memo.get(text_key)
            if found is None:
                found = self.memo[text_key] = self._elements(row, self.tiling(row))
            return found
        return self._elements(row, self.tiling(row))

    def _elements(self, row: int, tiling: TensorTiling) -> np.ndarray:
        key = (self.arrays.shapes[row], tiling)
        found = self.memo.get(key)
        if found is None:
            try:
                found = self.memo[key] = owner_elements(self.arrays.shapes[row], tiling)
            except LayoutUnresolvable as exc:
                edited = row in self.tilings or int(self.arrays.root_rows[row]) in self.tilings
                if not edited or all(a.tile_stride is None for a in tiling.axes):
                    raise LayoutUnresolvable(f"value {int(self.arrays.value_ids[row])}: {exc}") from None
                # An edit changed partitions under the recorded tile strides, which no longer
                # give every shard its owners: the owners are numbered as the compiler numbers a
                # tiling without strides (replicas fastest, then the axes in order).
                found = self.memo[key] = owner_elements(self.arrays.shapes[row], without_strides(tiling))
        return found


def without_strides(tiling: TensorTiling) -> TensorTiling:
    """``tiling`` with no axis's ``tile_stride`` (the compiler's packed default)."""
    return replace(tiling, axes=tuple(replace(a, tile_stride=None) for a in tiling.axes))


def scratch_runs(arrays: ProfileArrays, step: int, row: int, elements: np.ndarray | None, offset: int = 0) -> tuple:
    """One step's ``tile_scratch`` runs: spread over ``row``'s owners, or on every tile (row −1)."""
    std, intl = (int(arrays.scratch_standard[step]), int(arrays.scratch_interleaved[step]))
    device = arrays.device_tiles
    if std == 0 and intl == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, (empty, empty)
    if row < 0 or elements is None:
        one = np.ones(1, dtype=np.int64)
        return np.zeros(1, dtype=np.int64), one * device, (one * std, one * intl)
    start, stop, columns = runs_of(
        on_device(spread_scratch(std, elements), offset, device),
        on_device(spread_scratch(intl, elements), offset, device),
    )
    return start, stop, tuple(columns)


def estimate_figures(arrays: ProfileArrays, tilings: dict[int, TensorTiling] | None = None) -> TileFigures:
    """tilescope's estimate of every value's and step's per-tile figures (tile offsets 0)."""
    estimator = _Estimator(arrays, tilings)
    memo: dict[tuple, TileRuns] = {}
    parts = []
    alignment, extra = recorded_allocations(arrays)
    for row in range(arrays.n_values):
        allocation = Allocation(int(alignment[row]), int(extra[row]), int(arrays.copies[row]))
        root = int(arrays.root_rows[row])
        layout = (
            estimator.tiling(row)
            if (row in estimator.tilings or root in estimator.tilings)
            else arrays.layout_text[root]
        )
        key = (arrays.shapes[row], layout, int(arrays.element_bytes[row]), allocation)
        runs = memo.get(key)
        if runs is None:
            runs = memo[key] = value_tiles(
                estimator.elements(row), int(arrays.element_bytes[row]), allocation, arrays.device_tiles
            )
        parts.append((runs.start, runs.stop, (runs.shard, runs.bytes)))
    owners = scratch_owners(arrays)
    # Steps of one layer kind repeat: one spread per owner layout and scratch amounts.
    spread: dict[tuple[int, int, int], tuple] = {}
    steps = []
    for s, r in enumerate(owners.tolist()):
        elements = estimator.elements(int(r)) if r >= 0 else None
        amounts = (id(elements), int(arrays.scratch_standard[s]), int(arrays.scratch_interleaved[s]))
        found = spread.get(amounts)
        if found is None:
            found = spread[amounts] = scratch_runs(arrays, s, int(r), elements)
        steps.append(found)
    return TileFigures(arrays.device_tiles, RunTable.of(parts, 2), RunTable.of(steps, 2), SOURCE_ESTIMATE)


# ----------------------------------------------------------------------------- a v2/v3 file's figures


def _run_table(
    owner: np.ndarray, start: np.ndarray, stop: np.ndarray, columns: list[np.ndarray], owners: int
) -> RunTable:
    order = np.lexsort((start, owner))
    if np.any(order != np.arange(order.size)):
        owner, start, stop, columns = (owner[order], start[order], stop[order], [c[order] for c in columns])
    bounds = np.searchsorted(owner, np.arange(owners + 1)).astype(np.int64)
    return RunTable(bounds, start, stop, tuple(columns))


def recorded_figures(arrays: ProfileArrays) -> TileFigures | None:
    """The per-tile figures a v2/v3 file records (``ProfileArrays.tiles``), None for v1."""
    t = arrays.tiles
    if t is None:
        return None
    values = _run_table(t.value_row, t.value_start, t.value_stop, [t.value_shard, t.value_bytes], arrays.n_values)
    scratch = _run_table(
        t.step, t.step_start, t.step_stop, [t.scratch[:, 0].copy(), t.scratch[:, 1].copy()], arrays.n_steps
    )
    return TileFigures(arrays.device_tiles, values, scratch, SOURCE_FILE)


def recorded_usage(arrays: ProfileArrays) -> RunTable | None:
    """The recorded per-step ``tile_usage`` runs (columns standard, interleaved); None for v1."""
    t = arrays.tiles
    if t is None:
        return None
    return _run_table(t.step, t.step_start, t.step_stop, [t.usage[:, 0].copy(), t.usage[:, 1].copy()], arrays.n_steps)
