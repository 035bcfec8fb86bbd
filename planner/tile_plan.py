"""The plan per tile of a memory profile v2/v3 (docs/formats.md §7), from the file's own rows.

Without edits, every per-tile figure is the file's rows put together by the reconstruction rule
(spec §1.6): on step s and device tile t,

    usage[s, t] = tile_scratch[s, t] + Σ over the values v live at s of M(root(v), t),

M(r, t) being the largest ``tile_bytes[t]`` among the values whose root is r, added in r's class.
The values' and steps' rows are runs (``models.schemas.VALUE_TILES``/``STEP_TILES``); this module
builds each root's requirement as runs, turns live intervals × runs into events at their first and
one-past-last steps, and sums them a block of steps at a time into dense ``[steps, tiles, 2]``
blocks (a difference array along the tiles, then a running sum along the steps): memory stays one
block, however long the profile. ``TilePlan`` keeps only per-step figures (the peak tile, the
largest figure of each class); ``tile_series`` reads one tile over all steps without any block.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tilescope.models.profile import MemoryProfile

BLOCK_CELLS = 1 << 20
EXACT_FLOAT = (
    1 << 53
)  # integers below it are exact in float64  # steps × tiles per block: its arrays are a few of 16 MiB


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


@dataclass(frozen=True)
class Runs:
    """Runs of one figure per tile, grouped by an owner index (sorted by owner)."""

    owner: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    amount: np.ndarray


def _spread(
    owner: np.ndarray, start: np.ndarray, stop: np.ndarray, amount: np.ndarray, rows: int, tiles: int
) -> np.ndarray:
    """Runs → a dense ``[rows, tiles]`` array (owners 0 … rows − 1)."""
    diff = np.zeros((rows, tiles + 1), np.int64)
    np.add.at(diff, (owner, start), amount)
    np.add.at(diff, (owner, stop), -amount)
    return np.cumsum(diff[:, :-1], axis=1)


def _encode(dense: np.ndarray, owners: np.ndarray) -> Runs:
    """A dense ``[rows, tiles]`` array → its runs of equal non-zero entries, row i owned by ``owners[i]``."""
    rows, tiles = dense.shape
    change = np.ones((rows, tiles), bool)
    change[:, 1:] = dense[:, 1:] != dense[:, :-1]
    row, start = np.nonzero(change)
    stop = np.empty_like(start)
    if start.size:
        stop[:-1] = np.where(row[1:] == row[:-1], start[1:], tiles)
        stop[-1] = tiles
    amount = dense[row, start]
    keep = amount != 0
    return Runs(owners[row[keep]], start[keep], stop[keep], amount[keep])


def root_requirements(t: TileArrays, root_rows: np.ndarray) -> Runs:
    """M(r, ·) of every root row r as runs: a value alone in its alias class keeps its own runs; a
    class of several has the largest entry of its members on each tile (dense per class, a chunk of
    classes at a time)."""
    members = np.bincount(root_rows, minlength=root_rows.size)
    run_root = root_rows[t.value_row]
    alone = members[run_root] == 1
    parts = [Runs(run_root[alone], t.value_start[alone], t.value_stop[alone], t.value_bytes[alone])]
    shared = np.flatnonzero(~alone)
    if shared.size:
        roots = np.unique(run_root[shared])
        chunk = max(1, BLOCK_CELLS // max(t.tiles, 1))
        for begin in range(0, roots.size, chunk):
            these = roots[begin : begin + chunk]
            pick = shared[np.isin(run_root[shared], these)]
            # Each member's runs spread into its own row, then the class's rows reduced by max.
            value_rows, local = np.unique(t.value_row[pick], return_inverse=True)
            dense = _spread(
                local, t.value_start[pick], t.value_stop[pick], t.value_bytes[pick], value_rows.size, t.tiles
            )
            class_of = np.searchsorted(these, root_rows[value_rows])
            best = np.zeros((these.size, t.tiles), np.int64)
            np.maximum.at(best, class_of, dense)
            parts.append(_encode(best, these))
    owner = np.concatenate([p.owner for p in parts])
    order = np.argsort(owner, kind="stable")
    return Runs(
        owner[order], *(np.concatenate([getattr(p, f) for p in parts])[order] for f in ("start", "stop", "amount"))
    )


@dataclass(frozen=True)
class Block:
    """Steps ``first`` … ``first + n − 1``, dense over tiles: ``[n, 2, tiles]`` each (class-major,
    so every sum and search along the tiles runs over contiguous memory)."""

    first: int
    tensors: np.ndarray  # Σ M(root, t) of the live values (reconstructed)
    scratch: np.ndarray  # recorded tile_scratch
    recorded: np.ndarray | None  # recorded tile_usage (when asked for)

    @property
    def usage(self) -> np.ndarray:
        return self.tensors + self.scratch


def _dense(
    n: int, tiles: int, row: np.ndarray, klass: np.ndarray, start: np.ndarray, stop: np.ndarray, amount: np.ndarray
) -> np.ndarray:
    """``[n, 2, tiles]`` from runs: + amount at start, − at stop, summed along the tiles."""
    size = n * 2 * (tiles + 1)
    base = (row * 2 + klass) * (tiles + 1)
    if int(np.abs(amount).sum()) < EXACT_FLOAT:
        # np.bincount sums in float64, several times faster than np.add.at: exact while the
        # amounts' absolute sum (a bound on every partial sum) stays below 2^53.
        index = np.concatenate((base + start, base + stop))
        weights = np.concatenate((amount, -amount)).astype(np.float64)
        diff = np.bincount(index, weights, minlength=size).astype(np.int64).reshape(n, 2, tiles + 1)
    else:
        diff = np.zeros((n, 2, tiles + 1), np.int64)
        flat = diff.reshape(-1)
        np.add.at(flat, base + start, amount)
        np.add.at(flat, base + stop, -amount)
    return np.cumsum(diff, axis=2)[:, :, :-1]


def _step_dense(t: TileArrays, values: np.ndarray, first: int, n: int, lo: int, hi: int) -> np.ndarray:
    rows = np.tile(t.step[lo:hi] - first, 2)
    klass = np.repeat(np.arange(2), hi - lo)
    return _dense(
        n,
        t.tiles,
        rows,
        klass,
        np.tile(t.step_start[lo:hi], 2),
        np.tile(t.step_stop[lo:hi], 2),
        np.concatenate((values[lo:hi, 0], values[lo:hi, 1])),
    )


def blocks(
    t: TileArrays,
    interval_row: np.ndarray,
    interval_first: np.ndarray,
    interval_last: np.ndarray,
    root_rows: np.ndarray,
    region: np.ndarray,
    n_steps: int,
    recorded: bool = True,
) -> Iterator[Block]:
    """Every step's per-tile figures, a block of steps at a time (module doc); ``recorded``: with
    the file's ``tile_usage`` beside them."""
    need = root_requirements(t, root_rows)
    bounds = np.searchsorted(need.owner, np.arange(root_rows.size + 1))
    root = root_rows[interval_row]
    count = bounds[root + 1] - bounds[root]  # runs of each interval's root
    run = np.repeat(bounds[root] - np.concatenate(([0], np.cumsum(count)[:-1])), count) + np.arange(int(count.sum()))
    # Two events per (interval, run): the run added at the interval's first step and taken away
    # one past its last (each spread over the run's tiles by _dense).
    step = np.concatenate((np.repeat(interval_first, count), np.repeat(interval_last + 1, count)))
    klass = np.tile(np.repeat(region[root].astype(np.int64), count), 2)
    start, stop = np.tile(need.start[run], 2), np.tile(need.stop[run], 2)
    amount = np.concatenate((need.amount[run], -need.amount[run]))
    order = np.argsort(step, kind="stable")
    step, klass, start, stop, amount = (step[order], klass[order], start[order], stop[order], amount[order])
    per_block = max(1, BLOCK_CELLS // max(t.tiles, 1))
    carry = np.zeros((2, t.tiles), np.int64)
    for first in range(0, n_steps, per_block):
        n = min(per_block, n_steps - first)
        lo, hi = np.searchsorted(step, [first, first + n])
        changes = _dense(n, t.tiles, step[lo:hi] - first, klass[lo:hi], start[lo:hi], stop[lo:hi], amount[lo:hi])
        tensors = np.cumsum(changes, axis=0)
        tensors += carry
        carry = tensors[-1].copy()
        s_lo, s_hi = np.searchsorted(t.step, [first, first + n])
        yield Block(
            first,
            tensors,
            _step_dense(t, t.scratch, first, n, s_lo, s_hi),
            _step_dense(t, t.usage, first, n, s_lo, s_hi) if recorded else None,
        )


def last_argmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """Index of the largest entry along ``axis``; ties: the last (the compiler's peak tile)."""
    n = a.shape[axis]
    return n - 1 - np.argmax(np.flip(a, axis=axis), axis=axis)


@dataclass(frozen=True)
class TilePlan:
    """Per-step figures of the plan per tile."""

    # [steps, 2]: the peak tile's usage (largest total; ties: the last tile), and that tile
    usage: np.ndarray
    usage_tile: np.ndarray
    # [steps, 2]: the largest standard and interleaved figure over tiles, and where (ties: the last)
    largest: np.ndarray
    largest_tile: np.ndarray


def tile_plan(t: TileArrays, interval_row, interval_first, interval_last, root_rows, region, n_steps: int) -> TilePlan:
    usage = np.zeros((n_steps, 2), np.int64)
    usage_tile = np.zeros(n_steps, np.int64)
    largest = np.zeros((n_steps, 2), np.int64)
    largest_tile = np.zeros((n_steps, 2), np.int64)
    for b in blocks(t, interval_row, interval_first, interval_last, root_rows, region, n_steps, recorded=False):
        u = b.usage
        rows = np.arange(u.shape[0])
        s = slice(b.first, b.first + u.shape[0])
        tile = last_argmax(u[:, 0] + u[:, 1])
        usage_tile[s] = tile
        usage[s] = u[rows, :, tile]
        for c in (0, 1):
            where = last_argmax(u[:, c])
            largest_tile[s, c] = where
            largest[s, c] = u[rows, c, where]
    return TilePlan(usage, usage_tile, largest, largest_tile)


def requirement_at_tile(t: TileArrays, root_rows: np.ndarray, tile: int) -> np.ndarray:
    """M(root(v), tile) for every value row v: what each value counts on ``tile`` while live."""
    need = root_requirements(t, root_rows)
    on = (need.start <= tile) & (need.stop > tile)
    at_tile = np.zeros(root_rows.size, np.int64)
    at_tile[need.owner[on]] = need.amount[on]
    return at_tile[root_rows]


def scratch_at(t: TileArrays, step: int, tile: int) -> np.ndarray:
    """``[2]``: the recorded tile_scratch of ``step`` on ``tile``."""
    hit = (t.step == step) & (t.step_start <= tile) & (t.step_stop > tile)
    return t.scratch[hit].sum(axis=0) if hit.any() else np.zeros(2, np.int64)


def tile_series(
    t: TileArrays, tile: int, interval_row, interval_first, interval_last, root_rows, region, n_steps: int
) -> np.ndarray:
    """``[steps, 2]``: one device tile's usage at every step (reconstructed), without dense blocks."""
    root = root_rows[interval_row]
    cost = requirement_at_tile(t, root_rows, tile)[interval_row]
    out = np.zeros((n_steps, 2), np.int64)
    for c in (0, 1):
        mask = region[root] == c
        diff = np.zeros(n_steps + 1, np.int64)
        np.add.at(diff, interval_first[mask], cost[mask])
        np.add.at(diff, interval_last[mask] + 1, -cost[mask])
        out[:, c] = np.cumsum(diff[:-1])
    covered = (t.step_start <= tile) & (t.step_stop > tile)
    out[t.step[covered]] += t.scratch[covered]
    return out
