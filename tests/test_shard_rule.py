"""models.shard_rule against the test generator's own ownership rule (tests/profile_generator.py,
written from compiler-formats.md §2.2 alone, sharing no code with tilescope): for random shapes and
tilings (uneven shards, padding multiples, FromStart/FromEnd, replicas, Linear), the shard the rule
computes is the most elements any owner holds, its blocks per axis the generator's, and the
one-partition shard the generator's shard of the same tiling with every axis cut once."""

from __future__ import annotations

import math
import random

import profile_generator as gen
import pytest

from tilescope.loaders.debug_text import parse_debug
from tilescope.loaders.layouts import layout_from_debug
from tilescope.models.shard_rule import ShapeMismatch, axis_blocks, largest_shard_bytes, shard_bytes, shard_cuts


def _tiling(t: gen.Tiling):
    """The generator's tiling as tilescope reads it (the Debug text the compiler writes)."""
    return layout_from_debug(parse_debug(t.text("Ipu21Standard")), "layout").tiling


def _random_case(rng: random.Random) -> tuple[list[int], gen.Tiling]:
    rank = rng.randint(1, 4)
    while True:
        shape = [rng.choice((1, 2, 3, 5, 6, 8, 12, 16, 24, 40, 64, 96)) for _ in range(rank)]
        dims = rng.sample(range(rank), rng.randint(1, rank))
        axes = []
        for d in dims:
            block = rng.choice((1, 2, 4, 8))
            multiple = block * rng.choice((1, 1, 2, 3))
            blocks = -(-shape[d] // multiple) * multiple // block
            if blocks < 1:
                break
            kind, index = ("FromStart", d) if rng.random() < 0.5 else ("FromEnd", rank - d)
            axes.append(gen.Axis(kind, index, rng.randint(1, blocks), block, multiple))
        else:
            replicas = rng.choice((1, 1, 2, 3))
            return shape, gen.Tiling(replicas * math.prod(a.partitions for a in axes), replicas, axes)


@pytest.mark.parametrize("seed", range(6))
def test_the_shard_is_the_largest_owners_elements(seed):
    rng = random.Random(seed)
    for _ in range(120):
        shape, tiling = _random_case(rng)
        element_bytes = rng.choice((1, 2, 4))
        expected = max(gen.owner_elements(shape, tiling)) * element_bytes
        read = _tiling(tiling)
        assert shard_bytes(shape, element_bytes, read) == expected, (shape, tiling)
        blocks = [-(-shape[_dim(a, len(shape))] // a.multiple) * a.multiple // a.block for a in tiling.axes]
        assert axis_blocks(shape, read) == blocks
        once = gen.Tiling(tiling.replicas, tiling.replicas, [_one(a) for a in tiling.axes])
        assert largest_shard_bytes(shape, element_bytes, read) == max(gen.owner_elements(shape, once)) * element_bytes


def _dim(a: gen.Axis, rank: int) -> int:
    assert a.index is not None
    return a.index if a.kind == "FromStart" else rank - a.index


def _one(a: gen.Axis) -> gen.Axis:
    return gen.Axis(a.kind, a.index, 1, a.block, a.multiple, a.padding, a.stride)


def test_linear_cuts_the_flattened_tensor():
    # 6 × 40 = 240 elements in grains of 8 on 7 owners: 30 grains, the first two owners hold 5.
    tiling = gen.Tiling(7, 1, [gen.Axis("Linear", None, 7, 8)])
    assert max(gen.owner_elements([6, 40], tiling)) == 40
    assert shard_bytes([6, 40], 2, _tiling(tiling)) == 80
    dims, cuts = shard_cuts([6, 40], _tiling(tiling))
    assert dims == [40] and cuts[0].blocks == 30


def test_an_axis_past_the_shape_is_a_shape_mismatch():
    tiling = gen.Tiling(2, 1, [gen.Axis("FromStart", 2, 2, 1)])
    with pytest.raises(ShapeMismatch, match=r"axis 0 \(FromStart\(2\)\) names no dimension of a rank-2 shape"):
        shard_bytes([4, 4], 2, _tiling(tiling))
