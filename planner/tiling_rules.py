"""Which partition and replica counts a tiling may take, why the others are refused, and what a
drag track offers (docs/formats.md §2, "Invariants"). One set of rules for the what-if
validation of ``planner.edits``, the memory-profile editor and the search-state editor:

- each axis takes 1 to its blocks partitions (``shards.axis_blocks`` of the tiling);
- a later axis cutting the same dimension, or a ``Linear`` axis after it, must still fit its
  blocks once an earlier axis changes, and an axis whose padding is ``Reject`` must still need none;
- at least 1 replica;
- partitions × replicas at most the device's (or the search config's) tiles.

Everything here is bounded by what a widget can show, never by the numbers in a file: an axis
may have 2^44 blocks and a device 2^53 tiles. The valid counts of a handle are always one range
``1..limit`` (a larger partition count never makes a later axis fit better: every shard size is
non-increasing in it), so ``limit`` is found by bisection and the valid counts are a ``range``,
never a list; a drag track's stops are at most ``MAX_STOPS`` counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tilescope.models.tiling import TensorTiling

from .shards import axis_blocks, shard_cuts

REPLICAS = "replicas"  # the handle (and EditError.axis) of a replica count
MAX_STOPS = 4096  # counts one drag track offers at most

RULE_MIN_PARTITIONS = "partitions must be at least 1"
RULE_MAX_PARTITIONS = "partitions must not exceed the axis's blocks"
RULE_MIN_REPLICAS = "replicas must be at least 1"
RULE_TILE_COUNT = "tile count must not exceed the device's tiles"
RULE_REJECT_PADDING = "an axis with padding Reject must not need padding"


@dataclass(frozen=True)
class Violation:
    """The first rule a tiling breaks: on which handle (axis position or ``REPLICAS``), which rule,
    and the figures (``detail``)."""

    axis: int | str
    rule: str
    detail: str
    blocks: int | None = None  # the axis's blocks, for a partition rule


def tile_product(tiling: TensorTiling) -> str:
    """``9 × 3 partitions × 54 replicas = 1458``."""
    parts = " × ".join(str(a.partitions) for a in tiling.axes) or "1"
    return f"{parts} partitions × {tiling.replicas} replicas = {tiling.tile_count}"


def tiling_violation(
    shape: Sequence[int],
    tiling: TensorTiling,
    edited: Iterable[int | str],
    tile_limit: int,
    recorded: TensorTiling | None = None,
) -> Violation | None:
    """Why ``tiling`` (reached by changing the handles ``edited`` of ``recorded``) is invalid, or None.

    A partition rule broken on an axis nobody edited is blamed on the last edited axis when the
    edit shrank that axis's dimension (the edited axis is what the user must change back).
    """
    edited = list(dict.fromkeys(edited))
    recorded = recorded if recorded is not None else tiling
    for handle in edited:
        if handle == REPLICAS:
            if tiling.replicas < 1:
                return Violation(REPLICAS, RULE_MIN_REPLICAS, f"{tiling.replicas} replicas")
        elif isinstance(handle, int) and tiling.axes[handle].partitions < 1:
            return Violation(handle, RULE_MIN_PARTITIONS, f"{tiling.axes[handle].partitions} partitions")
    cuts = shard_cuts(shape, tiling)[1]
    recorded_cuts = shard_cuts(shape, recorded)[1]
    edited_axes = [a for a in edited if a != REPLICAS]
    for position, (axis, cut) in enumerate(zip(tiling.axes, cuts)):
        if axis.partitions <= cut.blocks:
            continue
        if position in edited:
            return Violation(
                position, RULE_MAX_PARTITIONS, f"{axis.partitions} partitions > {cut.blocks} blocks", cut.blocks
            )
        if cut.blocks != recorded_cuts[position].blocks and edited_axes:
            return Violation(
                edited_axes[-1],
                RULE_MAX_PARTITIONS,
                f"axis {position} would have {axis.partitions} partitions > {cut.blocks} blocks",
                cut.blocks,
            )
    for position, (axis, cut, before) in enumerate(zip(tiling.axes, cuts, recorded_cuts)):
        # A later Linear axis sees the shard of the axes before it: an edit can change its size.
        if (
            axis.padding == "Reject"
            and cut.size % axis.padding_multiple
            and not before.size % axis.padding_multiple
            and edited_axes
        ):
            return Violation(
                edited_axes[-1],
                RULE_REJECT_PADDING,
                f"axis {position} would have size {cut.size}, not a multiple of {axis.padding_multiple}",
            )
    if tiling.tile_count > tile_limit:
        return Violation(edited[-1] if edited else REPLICAS, RULE_TILE_COUNT, f"{tile_product(tiling)} > {tile_limit}")
    return None


def with_count(tiling: TensorTiling, handle: int | str, count: int) -> TensorTiling:
    """``tiling`` with one handle (axis position or ``REPLICAS``) set to ``count``."""
    return tiling.with_replicas(count) if handle == REPLICAS else tiling.with_partitions(int(handle), count)


def count_violation(
    shape: Sequence[int], tiling: TensorTiling, handle: int | str, count: int, tile_limit: int
) -> Violation | None:
    """Why setting one handle of ``tiling`` to ``count`` is refused, or None."""
    if handle != REPLICAS and not 0 <= int(handle) < len(tiling.axes):
        raise IndexError(f"no axis position {handle}")
    handle = handle if handle == REPLICAS else int(handle)
    return tiling_violation(shape, with_count(tiling, handle, count), [handle], tile_limit, recorded=tiling)


def _others(tiling: TensorTiling, position: int | None) -> int:
    """Tiles one partition of axis ``position`` stands for: replicas × the other axes' partitions."""
    return tiling.replicas * math.prod(a.partitions for i, a in enumerate(tiling.axes) if i != position)


def _fits_blocks(shape: Sequence[int], tiling: TensorTiling) -> bool:
    return all(a.partitions <= b for a, b in zip(tiling.axes, axis_blocks(shape, tiling)))


def partition_limit(shape: Sequence[int], tiling: TensorTiling, position: int, tile_limit: int) -> int:
    """The largest valid partition count of axis ``position``, the rest of ``tiling`` kept (0: none)."""
    if not 0 <= position < len(tiling.axes):
        return 0
    blocks = axis_blocks(shape, tiling)[position]
    high = min(blocks, tile_limit // max(_others(tiling, position), 1))
    if high < 1:
        return 0
    if _fits_blocks(shape, tiling.with_partitions(position, high)):
        return high
    if not _fits_blocks(shape, tiling.with_partitions(position, 1)):
        return 0
    low = 1  # valid; ``high`` is not: bisect (validity is monotone in the count, module doc)
    while high - low > 1:
        middle = (low + high) // 2
        if _fits_blocks(shape, tiling.with_partitions(position, middle)):
            low = middle
        else:
            high = middle
    return low


def valid_partition_counts(shape: Sequence[int], tiling: TensorTiling, position: int, tile_limit: int) -> range:
    """Every partition count axis ``position`` can take, the rest of ``tiling`` kept."""
    return range(1, partition_limit(shape, tiling, position, tile_limit) + 1)


def keeping_tiles(tiling: TensorTiling, position: int, count: int, tile_limit: int) -> TensorTiling:
    """Axis ``position`` set to ``count`` partitions, "keeping the tile count": when the replicas
    would take the tiling past ``tile_limit`` they drop to the largest count that fits (at least 1;
    below 1 the result still breaks the tile rule, and ``tiling_violation`` says so)."""
    edited = tiling.with_partitions(position, count)
    partitions = math.prod(a.partitions for a in edited.axes)
    fitting = tile_limit // max(partitions, 1)
    return edited if edited.replicas <= fitting else edited.with_replicas(max(fitting, 1))


def valid_partition_counts_keeping_tiles(
    shape: Sequence[int], tiling: TensorTiling, position: int, tile_limit: int
) -> range:
    """Every partition count axis ``position`` can take when the replicas may drop to fit (``keeping_tiles``)."""
    return valid_partition_counts(shape, tiling.with_replicas(1), position, tile_limit)


def valid_replica_counts(tiling: TensorTiling, tile_limit: int) -> range:
    """Every replica count ``tiling`` can take, its partitions kept."""
    partitions = math.prod(a.partitions for a in tiling.axes)
    return range(1, tile_limit // max(partitions, 1) + 1)


def _spread(low: int, high: int, most: int, keep: Iterable[int]) -> list[int]:
    """At most ``most`` counts from ``low..high`` (all of them when they fit), evenly spread on a
    log scale, always with ``low``, ``high`` and ``keep``."""
    if high - low + 1 <= most:
        return list(range(low, high + 1))
    picked = {low, high, *(k for k in keep if low <= k <= high)}
    ratio = (high / low) ** (1 / max(most - len(picked) - 1, 1))
    value = float(low)
    while len(picked) < most and value < high:
        picked.add(round(value))
        value = max(value * ratio, value + 1)
    return sorted(picked)


def shard_changing_counts(blocks: int, most: int = MAX_STOPS) -> list[int]:
    """The smallest partition count for each distinct shard size of an axis of ``blocks`` blocks.

    A count giving the same ``ceil(blocks / n)`` as a smaller count only spreads the same shards over
    more tiles, so a drag never stops on it. Ascending, from 1 to ``blocks``. There are about
    2·sqrt(blocks) of them; beyond ``most``, ``most`` of them spread on a log scale (each still a
    count that changes the shard).
    """
    if blocks < 1:
        return []
    if 2 * math.isqrt(blocks) + 2 > most:
        # n = ceil(blocks / ceil(blocks / t)) is the smallest count whose shard is that of count t.
        return sorted({-(-blocks // -(-blocks // t)) for t in _spread(1, blocks, most, ())})
    counts: list[int] = []
    n = 1
    while n <= blocks:
        counts.append(n)
        per_partition = -(-blocks // n)
        if per_partition == 1:
            break
        n = -(-blocks // (per_partition - 1))  # smallest count whose shard holds fewer blocks
    return counts


def replica_stops(tiling: TensorTiling, tile_limit: int, most: int = MAX_STOPS) -> list[int]:
    """The replica track: counts up to twice what the tiles allow (so the refused zone shows)."""
    allowed = valid_replica_counts(tiling, tile_limit)
    largest = allowed[-1] if allowed else 1
    top = max(min(2 * largest, tile_limit), tiling.replicas, 1)
    return _spread(1, top, most, (tiling.replicas, largest, largest + 1))


def accepted(stops: Sequence[int], valid: range) -> list[int]:
    """The stops a track marks as allowed."""
    return [n for n in stops if n in valid]


def axis_bands(shape: Sequence[int], tiling: TensorTiling, tile_limit: int) -> list[dict]:
    """What a tiling widget draws per axis: sizes, blocks, the track's stops, the stops the rules
    allow as they are (``valid_counts``) and those allowed once the replicas drop to keep the tile
    count (``keep_tiles_counts``, a superset)."""
    _, cuts = shard_cuts(shape, tiling)
    bands = []
    for position, (axis, cut) in enumerate(zip(tiling.axes, cuts)):
        stops = sorted(set(shard_changing_counts(cut.blocks)) | {axis.partitions})
        bands.append(
            {
                "label": str(axis.axis),
                "size": int(cut.size),
                "padded": int(cut.padded),
                "blocks": int(cut.blocks),
                "block_size": int(axis.block_size),
                "shard_padding_multiple": int(axis.shard_padding_multiple),
                "partitions": int(axis.partitions),
                "per_partition": int(cut.per_partition),
                "counts": stops,
                "valid_counts": accepted(stops, valid_partition_counts(shape, tiling, position, tile_limit)),
                "keep_tiles_counts": accepted(
                    stops, valid_partition_counts_keeping_tiles(shape, tiling, position, tile_limit)
                ),
            }
        )
    return bands
