"""The per-tile part of memory profiles v2/v3 (docs/formats.md §7) → the ``value_tiles`` and
``step_tiles`` run tables, built as the loader goes (``loaders.memory_profile``): a batch of values
at a time, and a chunk of steps at a time before that chunk's text is handed back.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError
from tilescope.models.records import RegionBytes, StepRecord, ValueRecord
from tilescope.models.schemas import STEP_TILES, VALUE_TILES

from .tile_arrays import chunks_by_size, parse_tile_lists, runs_of

VERSIONS = (1, 2, 3)  # what the loader reads; 2 and 3 carry per-tile arrays
VALUE_TILE_FIELDS = ("tile_shards", "tile_bytes")
STEP_TILE_FIELDS = ("tile_usage", "tile_scratch", "coarse_usage")


def _missing(record, fields: Sequence[str]) -> str | None:
    for name in fields:
        if getattr(record, name) is msgspec.UNSET:
            return name
    return None


def _require(where: str, version: int, name: str) -> InputError:
    return InputError(
        f"{where}.{name}", f"a field `{name}` (a version {version} profile records per-tile figures)", "none"
    )


def _raw(value: msgspec.Raw | msgspec.UnsetType) -> msgspec.Raw:
    """A per-tile field known to be present (``check_steps``/``add_values`` refused its absence)."""
    assert isinstance(value, msgspec.Raw)
    return value


def _region(value: RegionBytes | msgspec.UnsetType) -> RegionBytes:
    assert isinstance(value, RegionBytes)
    return value


def _span(raws: Sequence[msgspec.Raw]) -> tuple[msgspec.Raw, msgspec.Raw]:
    """The raw texts among ``raws`` that start first and end last (keys may come in any order)."""
    address = [np.frombuffer(r, dtype=np.uint8).ctypes.data for r in raws]
    first = int(np.argmin(address))
    last = int(np.argmax([a + len(r) for a, r in zip(address, raws)]))
    return raws[first], raws[last]


class TileRuns:
    """Collects the runs of one profile's per-tile arrays (``models.schemas.VALUE_TILES``/``STEP_TILES``)."""

    def __init__(self, version: int, tiles: int):
        self.version = version
        self.tiles = tiles
        self.value_runs: list[tuple[np.ndarray, ...]] = []
        self.step_runs: list[tuple[np.ndarray, ...]] = []

    def add_values(self, first: int, values: list[ValueRecord]) -> None:
        """The per-tile arrays of values ``first``… (all of them present: else the located error)."""
        for i, v in enumerate(values):
            name = _missing(v, VALUE_TILE_FIELDS)
            if name is not None:
                raise _require(f"$.timeline.values[{first + i}]", self.version, name)
        sizes = [len(_raw(v.tile_shards)) + len(_raw(v.tile_bytes)) for v in values]
        for begin, end in chunks_by_size(sizes):
            part = values[begin:end]
            at = first + begin
            shards = parse_tile_lists(
                [_raw(v.tile_shards) for v in part],
                self.tiles,
                False,
                at,
                lambda i: f"$.timeline.values[{i}].tile_shards",
            )
            held = parse_tile_lists(
                [_raw(v.tile_bytes) for v in part],
                self.tiles,
                False,
                at,
                lambda i: f"$.timeline.values[{i}].tile_bytes",
            )
            self.value_runs.append(runs_of(np.stack((shards, held), axis=2), at))

    def check_steps(self, steps: Sequence[StepRecord]) -> None:
        """Every step has the per-tile fields (before any list is parsed: the first missing one named)."""
        for i, s in enumerate(steps):
            name = _missing(s, STEP_TILE_FIELDS)
            if name is not None:
                raise _require(f"$.timeline.steps[{i}]", self.version, name)

    def add_steps(self, steps: Sequence[StepRecord], begin: int, end: int, release) -> None:
        """Steps ``begin``…``end - 1``'s per-tile arrays; then ``release(first, last)`` is told the
        span of those steps' raw texts (their live lists included), which is not read again."""
        sizes = [len(_raw(s.tile_usage)) + len(_raw(s.tile_scratch)) for s in steps[begin:end]]
        for b, e in chunks_by_size(sizes):
            part = steps[begin + b : begin + e]
            at = begin + b
            usage = parse_tile_lists(
                [_raw(s.tile_usage) for s in part], self.tiles, True, at, lambda i: f"$.timeline.steps[{i}].tile_usage"
            )
            scratch = parse_tile_lists(
                [_raw(s.tile_scratch) for s in part],
                self.tiles,
                True,
                at,
                lambda i: f"$.timeline.steps[{i}].tile_scratch",
            )
            self.step_runs.append(runs_of(np.concatenate((scratch, usage), axis=2), at))
        if release is not None and end > begin:
            first, _ = _span([steps[begin].live, _raw(steps[begin].tile_usage), _raw(steps[begin].tile_scratch)])
            _, last = _span([steps[end - 1].live, _raw(steps[end - 1].tile_usage), _raw(steps[end - 1].tile_scratch)])
            release(first, last)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return _table(self.value_runs, VALUE_TILES), _table(self.step_runs, STEP_TILES)


def _table(runs: list[tuple[np.ndarray, ...]], schema: pa.Schema) -> pa.Table:
    if not runs:
        return schema.empty_table()
    columns = [np.concatenate([r[c] for r in runs]) for c in range(len(schema))]
    return pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema)], schema=schema)


def coarse_columns(steps: Sequence[StepRecord], tiled: bool) -> tuple[pa.Array, pa.Array]:
    """The steps' recorded ``coarse_usage`` (null in version 1)."""
    if not tiled:
        empty = pa.nulls(len(steps), type=pa.int64())
        return empty, empty
    return (
        pa.array([_region(s.coarse_usage).standard for s in steps], type=pa.int64()),
        pa.array([_region(s.coarse_usage).interleaved for s in steps], type=pa.int64()),
    )
