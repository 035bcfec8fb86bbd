"""Per-tile bytes (planner.tile_bytes): the partition-to-tile mapping, per-tile shard bytes and the map
of a step, checked against figures computed here from the raw JSON (layouts read with a regular
expression, padded sizes by docs/formats.md §2) and by hand for one value."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.models.edits import TilingEdit
from tilescope.models.tiling import Axis, AxisTiling, TensorTiling
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.planner.tile_bytes import PACKED, RECORDED, TileModel, shard_bytes_per_tile, tile_strides, tiles_of
from tilescope.synth import SAMPLE_PATH

ELEMENT_BYTES = {"F16": 2, "F32": 4}
AXIS = re.compile(
    r"AxisTiling \{ axis: (?:FromEnd\((?P<end>\d+)\)|FromStart\((?P<start>\d+)\)|(?P<linear>Linear)), "
    r"partitions: (?P<p>\d+), padding_groups: \d+, block_size: (?P<b>\d+), padding_multiple: (?P<m>\d+)"
)


@pytest.fixture(scope="module")
def loaded():
    return plan_profile(load_memory_profile(SAMPLE_PATH))


def element_bytes(precision: str) -> int:
    return ELEMENT_BYTES.get(precision, 1 if precision.startswith("F8") else 0)


def padded_bytes(value: dict) -> int:
    """The tensor's bytes with every cut dimension padded to its padding multiple (§2), from the raw
    layout text; each axis of the sample cuts a different dimension, or is a lone Linear axis."""
    dims = list(value["shape"])
    for m in AXIS.finditer(value["layout"]):
        if m["linear"]:
            dims, d = [math.prod(dims)], 0
        else:
            d = int(m["start"]) if m["start"] is not None else len(dims) - int(m["end"])
        multiple = int(m["m"])
        dims[d] = -(-dims[d] // multiple) * multiple
    return math.prod(dims) * element_bytes(value["precision"])


def replicas(value: dict) -> int:
    return int(re.search(r"replicas: (\d+)", value["layout"]).group(1))


def test_every_sample_value_maps_onto_its_tiles_once(loaded):
    arrays, _ = loaded
    for row in range(arrays.n_values):
        tiling = arrays.tiling(row)
        mapping = tile_strides(tiling, arrays.device_tiles)
        assert mapping.rule == RECORDED
        assert np.array_equal(np.sort(tiles_of(mapping)), np.arange(tiling.tile_count)), int(arrays.value_ids[row])


def test_tiles_add_up_to_the_padded_tensor_times_replicas(raw, loaded):
    arrays, _ = loaded
    for value in raw["timeline"]["values"]:
        row = arrays.row_of_id[value["id"]]
        per_tile = shard_bytes_per_tile(
            arrays.shapes[row], int(arrays.element_bytes[row]), arrays.tiling(row), arrays.device_tiles
        )
        assert int(per_tile.sum()) == padded_bytes(value) * replicas(value), value["id"]
        assert int(per_tile.max()) <= value["shard_bytes"]
        assert int((per_tile > 0).sum()) <= int(re.search(r"tile_count: (\d+)", value["layout"]).group(1))


def test_value_140_by_hand(loaded):
    """Shape (16, 729, 80), F16; axes FromStart(0) 16 partitions (stride 1), FromStart(1) 8 partitions
    of 729 rows (stride 176): ⌈729 / 8⌉ = 92 rows each, the last 729 − 7·92 = 85; FromStart(2) 1
    partition of 80; 11 replicas in the stride-16 hole. Tile j0 + 176·j1 + 16·r."""
    arrays, _ = loaded
    row = arrays.row_of_id[140]
    per_tile = shard_bytes_per_tile(
        arrays.shapes[row], int(arrays.element_bytes[row]), arrays.tiling(row), arrays.device_tiles
    )
    assert per_tile[0] == 92 * 80 * 2
    assert per_tile[15 + 176 * 6 + 16 * 10] == 92 * 80 * 2
    assert per_tile[3 + 176 * 7 + 16 * 4] == 85 * 80 * 2
    assert per_tile[1408:].sum() == 0
    assert (per_tile == 85 * 80 * 2).sum() == 16 * 11 and (per_tile == 92 * 80 * 2).sum() == 16 * 7 * 11


def test_no_tile_exceeds_the_estimate_at_any_step(raw, loaded):
    arrays, plan = loaded
    model = TileModel(arrays, plan)
    exchange = raw["peak"]["exchange_rows"]
    tight = 0
    for step in raw["timeline"]["steps"]:
        at = model.at_step(step["index"])
        assert at.standard.shape == at.interleaved.shape == (raw["tile_count"],)
        assert int(at.standard.max()) <= step["usage"]["standard"] + exchange
        assert int(at.interleaved.max()) <= step["usage"]["interleaved"]
        assert at.estimate_total == step["usage"]["standard"] + exchange + step["usage"]["interleaved"]
        tight += at.worst_bytes == at.estimate_total
    print(
        f"\nworst tile equals the estimate at {tight} of {len(raw['timeline']['steps'])} steps "
        "(tile 0 holds partition 0 of every value, a full shard)"
    )


def test_no_tile_exceeds_the_estimate_after_an_edit(loaded):
    arrays, plan = loaded
    whatif = apply_edits(arrays, plan, [TilingEdit(84, axis=1, partitions=18), TilingEdit(84, replicas=27)])
    model = TileModel(arrays, whatif.plan, whatif.tilings)
    for step in range(arrays.n_steps):
        at = model.at_step(step)
        assert at.standard.max() <= at.estimate_standard and at.interleaved.max() <= at.estimate_interleaved
    row = arrays.row_of_id[84]
    # The same padded tensor, on 27 replicas instead of 54.
    assert int(model.shard_tiles(row).sum()) * 54 == int(TileModel(arrays, plan).shard_tiles(row).sum()) * 27
    assert (model.shard_tiles(row) > 0).sum() == 18 * 3 * 27


def test_worst_tile_and_its_largest_values(raw, loaded):
    arrays, plan = loaded
    step = raw["total_peak_step"]
    at = TileModel(arrays, plan).at_step(step)
    recorded = raw["timeline"]["steps"][step]
    assert at.worst_bytes == int(at.total.max()) and at.total[at.worst_tile] == at.worst_bytes
    assert sorted(int(arrays.value_ids[r]) for r in at.live_rows) == sorted(set(recorded["live"]))
    top = at.top_values(limit=200)
    scratch = recorded["scratch"]["standard"] + recorded["scratch"]["interleaved"]
    assert sum(b for _, b in top) + scratch + raw["peak"]["exchange_rows"] == at.worst_bytes
    assert [b for _, b in top] == sorted((b for _, b in top), reverse=True)
    values = {v["id"]: v for v in raw["timeline"]["values"]}
    assert all(b <= values[int(arrays.value_ids[r])]["bytes"] for r, b in top)
    # Away from tile 0 tiles hold less: the map has something to show.
    assert int(at.total.min()) < at.worst_bytes


def test_strides_that_collide_after_an_edit_are_packed(loaded):
    """Value 86: axis 0 has 54 partitions at stride 1, axis 1 27 at stride 54. With 60 partitions on
    axis 0 the recorded stride 54 would put two partitions on one tile: all digits are packed."""
    arrays, plan = loaded
    whatif = apply_edits(arrays, plan, [TilingEdit(86, axis=0, partitions=60), TilingEdit(86, axis=1, partitions=20)])
    tiling = whatif.tilings[arrays.row_of_id[86]]
    mapping = tile_strides(tiling, arrays.device_tiles)
    assert mapping.rule == PACKED and mapping.strides == (1, 60)
    assert np.array_equal(np.sort(tiles_of(mapping)), np.arange(1200))


def test_cost_does_not_grow_with_blocks():
    """10¹² one-byte elements in blocks of 1 over 1472 partitions: no block is ever enumerated."""
    axis = AxisTiling(Axis("Linear", None), 1472, 1, 1, 1, 1, "Zero", None)
    per_tile = shard_bytes_per_tile((10**6, 10**6), 1, TensorTiling(1472, 1, (axis,)), 1472)
    assert int(per_tile.sum()) == 10**12
    assert int(per_tile.max()) == -(-(10**12) // 1472)
