"""tilescope's per-tile estimate of one value (planner.tile_estimate, compiler-formats.md §2):
the worked vectors of §2.7 and uneven shards worked by hand here, and every value of the sample
against the v1 scalars the compiler recorded for it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tilescope.loaders.debug_text import parse_debug
from tilescope.loaders.layouts import layout_from_debug
from tilescope.models.tiling import Axis, AxisTiling, TensorTiling, element_bytes_of
from tilescope.planner.tile_estimate import (
    Allocation,
    LayoutUnresolvable,
    TileRuns,
    estimate_value,
    infer_allocation,
    infer_offset,
    on_device,
    owner_elements,
    spread_scratch,
    value_tiles,
)

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json"


def axis(
    kind: str,
    index: int | None,
    partitions: int,
    block: int = 1,
    multiple: int = 1,
    *,
    groups: int = 1,
    shard_multiple: int = 1,
    padding: str = "Zero",
    stride: int | None = None,
) -> AxisTiling:
    return AxisTiling(Axis(kind, index), partitions, groups, block, multiple, shard_multiple, padding, stride)


def test_value_0_every_owner_holds_5120_bytes():
    # §2.7: F16 [1, 729, 588]; 729 padded to 736 = 46 blocks of 16 over 46 partitions (16 rows
    # each, the last 9 rows logically); 588 padded to 640 = 4 blocks of 160 over 4 partitions.
    tiling = TensorTiling(1472, 8, (axis("FromEnd", 2, 46, 16, 16, stride=1), axis("FromEnd", 1, 4, 160, 160)))
    runs = estimate_value([1, 729, 588], 2, tiling, Allocation(), 1472)
    assert (runs.start.tolist(), runs.stop.tolist(), runs.shard.tolist(), runs.bytes.tolist()) == (
        [0],
        [1472],
        [16 * 160 * 2],
        [5120],
    )


def test_value_89_linear_grain_4():
    # §2.7: 729 × 4304 = 3,137,616 elements = 784,404 grains of 4 = 532 × 1472 + 1,300:
    # owners 0…1299 hold 533 grains (4,264 B), owners 1300…1471 hold 532 (4,256 B).
    assert 729 * 4304 == 3_137_616 and 3_137_616 // 4 == 532 * 1472 + 1300
    tiling = TensorTiling(1472, 1, (axis("Linear", None, 1472, 4, 1),))
    runs = estimate_value([1, 729, 4304], 2, tiling, Allocation(), 1472)
    assert runs.start.tolist() == [0, 1300] and runs.stop.tolist() == [1300, 1472]
    assert runs.shard.tolist() == [533 * 4 * 2, 532 * 4 * 2] == [4264, 4256]
    assert runs.max_bytes == 4264  # the v1 scalar


def test_uneven_shards_in_padding_groups():
    # 10 elements in 2 groups of 5, 3 partitions per group: 5 blocks over 3 → 2, 2, 1 per group.
    tiling = TensorTiling(6, 1, (axis("FromStart", 0, 6, groups=2),))
    assert owner_elements([10], tiling).tolist() == [2, 2, 1, 2, 2, 1]
    # The same with shard_padding_multiple 2: every shard rounded up to 2 (12 physical elements).
    padded = TensorTiling(6, 1, (axis("FromStart", 0, 6, groups=2, shard_multiple=2),))
    assert owner_elements([10], padded).tolist() == [2] * 6
    with pytest.raises(LayoutUnresolvable):  # Reject forbids that padding
        owner_elements(
            [10], TensorTiling(6, 1, (axis("FromStart", 0, 6, groups=2, shard_multiple=2, padding="Reject"),))
        )
    # padding_multiple per group: 2 groups of 7 padded to 8, blocks of 2 → 4 blocks over 3 → 2, 1, 1.
    grouped = TensorTiling(6, 1, (axis("FromStart", 0, 6, 2, 4, groups=2),))
    assert owner_elements([14], grouped).tolist() == [4, 2, 2, 4, 2, 2]
    with pytest.raises(LayoutUnresolvable):
        owner_elements([14], TensorTiling(6, 1, (axis("FromStart", 0, 6, 2, 4, groups=2, padding="Reject"),)))


def test_owner_coordinates_replicas_fastest_unless_a_stride_is_given():
    # [3, 10]: axis 0 in 3 rows of 1, axis 1's 10 over 4 partitions → widths 3, 3, 2, 2.
    rows, columns = axis("FromStart", 0, 3), axis("FromStart", 1, 4)
    default = TensorTiling(24, 2, (rows, columns))
    # Strides: replicas 1, axis 0 → 2, axis 1 → 6: owner o's column is (o // 6) % 4.
    assert owner_elements([3, 10], default).tolist() == [3] * 12 + [2] * 12
    strided = TensorTiling(24, 2, (axis("FromStart", 0, 3, stride=4), axis("FromStart", 1, 4, stride=1)))
    assert owner_elements([3, 10], strided).tolist() == [3, 3, 2, 2] * 6
    # Strides 1 and 1 with 3 and 4 partitions are valid (3 and 4 are coprime: each pair twice);
    # with 2 and 4 partitions owner o has coordinates (o mod 2, o mod 4): half the pairs never occur.
    coprime = TensorTiling(24, 2, (axis("FromStart", 0, 3, stride=1), axis("FromStart", 1, 4, stride=1)))
    assert owner_elements([3, 10], coprime).tolist() == [3, 3, 2, 2] * 6
    colliding = TensorTiling(8, 1, (axis("FromStart", 0, 2, stride=1), axis("FromStart", 1, 4, stride=1)))
    with pytest.raises(LayoutUnresolvable):
        owner_elements([2, 8], colliding)
    untiled = TensorTiling(4, 1, (columns,))  # dimension 0 untiled: its full extent on every owner
    assert owner_elements([3, 10], untiled).tolist() == [9, 9, 6, 6]


def test_allocation_alignment_tail_copies_and_offset():
    # A GEMM left operand: F16 shards of 16,384 and 16,000 B, tail 16, standard elements.
    elements = np.array([8192, 8000])
    runs = value_tiles(elements, 2, Allocation(16_384, 16, copies=3), 8, offset=7)
    shard, allocated = runs.dense(8)
    assert shard.tolist() == [16_000, 0, 0, 0, 0, 0, 0, 16_384]  # owner 0 on tile 7, owner 1 wraps to tile 0
    assert allocated.tolist() == [16_384 * 3, 0, 0, 0, 0, 0, 0, 32_768 * 3]
    assert infer_allocation(np.array([16_384, 16_000]), np.array([32_768, 16_384]), 0) == Allocation(16_384, 8)
    assert infer_allocation(np.array([100, 7]), np.array([100, 7]), 1) == Allocation(1, 0)
    assert infer_allocation(np.array([100]), np.array([32_768]), 1) == Allocation(32_768, 0)
    assert infer_allocation(np.array([100, 7]), np.array([164, 71]), 0) == Allocation(1, 64)  # a constant prefix
    assert infer_allocation(np.array([100, 7]), np.array([164, 72]), 0) is None
    per_owner = np.array([5, 5, 3, 0, 3])
    for offset in (0, 3, 9):
        assert infer_offset(per_owner, on_device(per_owner, offset, 10)) == offset
    assert infer_offset(per_owner, np.arange(10)) is None
    assert infer_offset(np.array([4, 4]), on_device(np.array([4, 4]), 0, 2)) == 0  # rotation-invariant: the smallest


def test_scratch_spread_over_owners():
    # ⌈scratch × e / max e⌉: 1000 over elements 3, 3, 2, 0 → 1000, 1000, 667, 0.
    assert spread_scratch(1000, np.array([3, 3, 2, 0])).tolist() == [1000, 1000, 667, 0]
    assert spread_scratch(0, np.array([3])).tolist() == [0]


def test_runs_round_trip():
    shard = np.array([0, 4, 4, 0, 2, 2, 2, 0])
    runs = TileRuns.of_dense(shard, shard * 3)
    assert runs.start.tolist() == [1, 4] and runs.stop.tolist() == [3, 7]
    dense_shard, dense_bytes = runs.dense(8)
    assert dense_shard.tolist() == shard.tolist() and dense_bytes.tolist() == (shard * 3).tolist()


def _physical_elements(shape: list[int], tiling: TensorTiling) -> int:
    """A layout's total physical elements times replicas, worked out per dimension (not per owner)."""
    first = tiling.axes[0]
    if len(tiling.axes) == 1 and first.axis.kind == "Linear":
        return -(-math.prod(shape) // first.block_size) * first.block_size
    extents = list(shape)
    for a in tiling.axes:
        dim = a.axis.dimension(len(shape))
        group = extents[dim] // a.padding_groups
        padded_group = -(-group // a.padding_multiple) * a.padding_multiple
        extents[dim] = padded_group * a.padding_groups  # S = 1 in the sample: shards tile the padded extent
        assert a.shard_padding_multiple == 1
    return math.prod(extents) * tiling.replicas


def test_every_sample_value_against_its_v1_scalars():
    """Independent check: the compiler recorded each value's largest shard and allocation (v1);
    the largest per-owner figures of our estimate must equal them, and the per-owner counts must
    add up to the layout's physical elements times replicas."""
    profile = json.loads(SAMPLE.read_text())
    device = profile["tile_count"]
    differing, uneven = [], 0
    for value in profile["timeline"]["values"]:
        tiling = layout_from_debug(parse_debug(value["layout"]), "layout").tiling
        element_bytes = element_bytes_of(value["precision"].split(" ")[0])
        elements = owner_elements(value["shape"], tiling)
        assert int(elements.sum()) == _physical_elements(value["shape"], tiling), value["id"]
        uneven += int(elements.min() != elements.max())
        region = 1 if value["class"] == "Ipu21Interleaved" else 0
        allocation = infer_allocation(
            np.array([value["shard_bytes"]]), np.array([value["aligned_bytes"]]), region, value["copies"]
        )
        assert allocation is not None, value["id"]
        runs = value_tiles(elements, element_bytes, allocation, device)
        if (runs.max_shard, runs.max_bytes) != (value["shard_bytes"], value["bytes"]):
            differing.append((value["id"], runs.max_shard, value["shard_bytes"], runs.max_bytes, value["bytes"]))
    assert differing == []
    assert uneven > 0  # the sample exercises uneven shards (39 values have them)


def test_infer_offset_is_the_smallest_rotation_by_brute_force():
    """Against trying every rotation: random per-owner figures (zeros included) on random devices."""
    rng = np.random.default_rng(7)
    for _ in range(2000):
        device = int(rng.integers(1, 12))
        per_owner = rng.integers(0, 3, int(rng.integers(1, device + 1)))
        if not per_owner.any():
            continue
        recorded = on_device(per_owner, int(rng.integers(0, device)), device)
        placed = np.zeros(device, dtype=np.int64)
        placed[: per_owner.size] = per_owner
        fitting = [r for r in range(device) if np.array_equal(np.roll(placed, r), recorded)]
        assert infer_offset(per_owner, recorded) == min(fitting)


def test_recorded_allocations_of_every_row_equal_infer_allocation_per_row():
    """``tile_figures.recorded_allocations`` (all rows at once, numpy) against ``infer_allocation``
    row by row, on the sample and on pairs made to need each candidate."""
    from types import SimpleNamespace

    from tilescope.planner.tile_figures import recorded_allocations

    profile = json.loads(SAMPLE.read_text())
    pairs = [
        (v["shard_bytes"], v["aligned_bytes"], int(v["class"] == "Ipu21Interleaved"))
        for v in profile["timeline"]["values"]
    ]
    pairs += [(32_768, 49_152, 0), (16_370, 32_768, 0), (65_520, 98_304, 1), (100, 164, 0), (0, 0, 1), (7, 5, 0)]
    shard, aligned, region = (np.array(column) for column in zip(*pairs))
    arrays = SimpleNamespace(
        recorded_shard=shard,
        recorded_aligned=aligned,
        region=region,
        n_values=len(pairs),
        granule=np.full(len(pairs), 4),
        copies=np.ones(len(pairs), dtype=np.int64),
    )
    alignment, extra = recorded_allocations(arrays)  # type: ignore[arg-type]
    for k, (s, a, r) in enumerate(pairs):
        one = infer_allocation(np.array([s]), np.array([a]), r)
        assert (int(alignment[k]), int(extra[k])) == ((one.alignment, one.extra) if one else (4, 0)), pairs[k]
