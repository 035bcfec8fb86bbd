"""planner.tiling_rules: the valid counts of a handle (a range, found in closed form) against a
brute-force enumeration with the shard rule of docs/formats.md §2 re-implemented here; a drag track's
stops bounded whatever the numbers in the file; one refusal rule for both editors.
"""

from __future__ import annotations

import math
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.models.tiling import Axis, AxisTiling, TensorTiling
from tilescope.planner import tiling_rules
from tilescope.planner.tiling_rules import (
    MAX_STOPS,
    REPLICAS,
    RULE_MAX_PARTITIONS,
    RULE_TILE_COUNT,
    count_violation,
    partition_limit,
    replica_stops,
    shard_changing_counts,
    valid_partition_counts,
    valid_replica_counts,
)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def axis(kind: str, index: int | None, partitions: int, block: int = 1, pad: int = 1) -> AxisTiling:
    return AxisTiling(Axis(kind, index), partitions, 1, block, pad, 1, "Pad", None)


def tiling_of(axes: list[AxisTiling], replicas: int = 1) -> TensorTiling:
    return TensorTiling(math.prod(a.partitions for a in axes) * replicas, replicas, tuple(axes))


def blocks_by_hand(shape: list[int], tiling: TensorTiling) -> list[int]:
    """docs/formats.md §2, applied axis by axis (independent of planner.shards)."""
    dims, out = list(shape), []
    for a in tiling.axes:
        if a.axis.kind == "Linear":
            dims, dim = [math.prod(dims)], 0
        else:
            dim = a.axis.index if a.axis.kind == "FromStart" else len(dims) - a.axis.index
        blocks = ceil_div(ceil_div(dims[dim], a.padding_multiple) * a.padding_multiple, a.block_size)
        out.append(blocks)
        dims[dim] = (
            ceil_div(ceil_div(blocks, a.partitions) * a.block_size, a.shard_padding_multiple) * a.shard_padding_multiple
        )
    return out


def valid_by_hand(shape, tiling: TensorTiling, position: int, tiles: int, most: int) -> list[int]:
    out = []
    for n in range(1, most + 1):
        edited = tiling.with_partitions(position, n)
        if edited.tile_count <= tiles and all(
            a.partitions <= b for a, b in zip(edited.axes, blocks_by_hand(shape, edited))
        ):
            out.append(n)
    return out


@st.composite
def tilings(draw):
    """Small shapes cut by up to three axes, some cutting the same dimension again or Linear."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 60), min_size=rank, max_size=rank))
    axes, current_rank = [], rank
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["FromStart", "FromEnd", "Linear"]))
        index = None if kind == "Linear" else draw(st.integers(0, current_rank - 1)) + (1 if kind == "FromEnd" else 0)
        current_rank = 1 if kind == "Linear" else current_rank  # Linear flattens what follows
        axes.append(axis(kind, index, 1, draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 3, 8]))))
    tiling = tiling_of(axes, draw(st.integers(1, 3)))
    # partitions that fit, chosen in order (each axis's blocks depend on the ones before)
    for position in range(len(axes)):
        blocks = blocks_by_hand(shape, tiling)[position]
        tiling = tiling.with_partitions(position, draw(st.integers(1, max(blocks, 1))))
    return shape, tiling, draw(st.integers(1, 400))


@settings(max_examples=300, deadline=None)
@given(tilings())
def test_valid_partition_counts_are_the_brute_force_ones(case):
    shape, tiling, tiles = case
    for position in range(len(tiling.axes)):
        most = max(blocks_by_hand(shape, tiling)[position], 1) + 5
        expected = valid_by_hand(shape, tiling, position, tiles, most)
        assert list(valid_partition_counts(shape, tiling, position, tiles)) == expected
        for n in (0, 1, most, *expected[-1:]):
            refused = count_violation(shape, tiling, position, n, tiles)
            assert (refused is None) == (n in expected), (position, n, refused)


@settings(max_examples=200, deadline=None)
@given(tilings())
def test_valid_replica_counts_keep_the_tile_count_within_the_device(case):
    shape, tiling, tiles = case
    per_replica = math.prod(a.partitions for a in tiling.axes)
    expected = [r for r in range(1, tiles + 2) if r * per_replica <= tiles]
    assert list(valid_replica_counts(tiling, tiles)) == expected
    stops = replica_stops(tiling, tiles)
    assert tiling.replicas in stops and stops == sorted(set(stops)) and stops[0] == 1
    assert tiling_rules.accepted(stops, valid_replica_counts(tiling, tiles)) == [r for r in stops if r in expected]


def test_a_later_axis_on_the_same_dimension_limits_an_earlier_one():
    # [64] cut into 8 blocks of 8 (axis 0, 2 partitions → 32 each), then again in blocks of 4 on the
    # same dimension (axis 1, 8 partitions of a 32: 8 blocks). More than 2 partitions on axis 0
    # leaves axis 1 fewer than 8 blocks, so axis 0 takes at most 2.
    shape = [64]
    tiling = tiling_of([axis("FromStart", 0, 2, block=8), axis("FromStart", 0, 8, block=4)])
    assert list(valid_partition_counts(shape, tiling, 0, 1000)) == [1, 2]
    refused = count_violation(shape, tiling, 0, 3, 1000)
    assert refused.rule == RULE_MAX_PARTITIONS and refused.axis == 0 and "axis 1" in refused.detail


def test_shard_changing_counts_are_exact_while_few_and_bounded_beyond():
    assert shard_changing_counts(46) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 23, 46]
    exact = shard_changing_counts(1_000_000)
    assert len(exact) == len({ceil_div(1_000_000, n) for n in range(1, 1_000_001)})  # every distinct shard once
    huge = 2**44
    start = time.perf_counter()
    counts = shard_changing_counts(huge)
    assert time.perf_counter() - start < 1.0
    assert len(counts) <= MAX_STOPS and counts[0] == 1 and counts[-1] == huge
    shards = [ceil_div(huge, n) for n in counts]
    assert shards == sorted(set(shards), reverse=True)  # every stop changes the shard
    # each is the smallest count giving its shard (the one before gives a bigger shard)
    assert all(ceil_div(huge, n - 1) > ceil_div(huge, n) for n in counts[1:])


def test_numbers_from_a_file_never_size_a_list():
    """2^44 blocks on an axis and a device of 2^53 tiles (the loader accepts both): every answer
    comes back at once and small."""
    shape = [2**44]
    tiling = tiling_of([axis("FromStart", 0, 3)])
    tiles = 2**53
    start = time.perf_counter()
    valid = valid_partition_counts(shape, tiling, 0, tiles)
    assert isinstance(valid, range) and len(valid) == 2**44 and 2**40 in valid and 2**44 + 1 not in valid
    assert partition_limit(shape, tiling, 0, tiles) == 2**44
    bands = tiling_rules.axis_bands(shape, tiling, tiles)
    stops = replica_stops(tiling, tiles)
    assert len(bands[0]["counts"]) <= MAX_STOPS + 1 and len(stops) <= MAX_STOPS
    assert len(valid_replica_counts(tiling, tiles)) == tiles // 3
    refusal = count_violation(shape, tiling, REPLICAS, tiles, tiles)
    assert refusal.rule == RULE_TILE_COUNT
    assert time.perf_counter() - start < 2.0
