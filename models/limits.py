"""The bounds on numbers tilescope accepts, in one place (docs/formats.md §6).

Every figure tilescope computes (a shard, a value's bytes, a step's usage, a peak) is at most
``MAX_BYTES`` = 2^53: exact in int64, in float64 (JSON readers, the browser) and in every sum the
planner forms. The loaders refuse a file whose figures could pass it, even after a what-if edit.
"""

from __future__ import annotations

# Largest byte count, id, dimension or recorded figure accepted, and the largest figure computed.
MAX_INT = 2**53
MAX_BYTES = MAX_INT
# Largest count in a tiling (partitions, replicas, block sizes, paddings) and in a what-if edit:
# far above any device, and small enough that products of a few of them stay exact.
MAX_COUNT = 2**31
INT64_MAX = 2**63 - 1
# JSON nests a few levels in every file tilescope reads; deeper text is refused where it starts.
MAX_JSON_DEPTH = 256
