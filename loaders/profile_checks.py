"""Checks of a memory profile that need the whole file (docs/formats.md §6), run by
``loaders.memory_profile`` once the values and live lists are parsed:

- ``check_ids``: value ids unique, every root a value that is its own root;
- ``check_alias_layouts``: an alias has its root's layout (docs/formats.md §2);
- ``check_figure_bounds``: no figure the planner can compute, with or without what-if edits, passes
  2^53 bytes (``models.limits.MAX_BYTES``): each value at its largest cost (its largest shard,
  rounded to its allocation granule, times its copies) and every step with all its live values at
  their largest, plus its scratch and the larger of ``exchange_rows`` and ``support_reserve_bytes``;
- ``KeyTally``: no object of the file names a key twice, proved by counting colons
  (below) or, when the count cannot prove it, by ``loaders.json_scan.refuse_duplicate_keys``.
"""

from __future__ import annotations

import re

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError
from tilescope.models.limits import MAX_BYTES
from tilescope.models.records import (
    MemoryProfileRecord,
    PeakRecord,
    RegionBytes,
    StepRecord,
    TimelineRecord,
    ValueRecord,
)
from tilescope.models.shard_rule import infer_granules
from tilescope.models.tiling import Layout

from .layouts import layout_difference
from .live_lists import Intervals

_SPLIT = 26  # per-step sums of byte counts up to 2^53 are taken in two int64 halves (high and low bits)


def check_ids(ids: np.ndarray, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ids unique and every root a known root value; returns the permutation sorting ids and the
    row of each value's root."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:  # the first repeat in file order (the stable sort keeps each id's rows ascending)
        k = int(np.argmin(order[dup + 1]))
        first = int(order[dup[k] + 1])
        raise InputError(
            f"$.timeline.values[{first}].id",
            "a unique value id",
            f"{int(ids[first])}, already used by values[{int(order[dup[k]])}]",
        )
    pos = np.searchsorted(sorted_ids, roots).clip(0, max(ids.size - 1, 0))
    unknown = np.flatnonzero(sorted_ids[pos] != roots) if ids.size else np.zeros(0, int)
    if unknown.size:
        i = int(unknown[0])
        raise InputError(f"$.timeline.values[{i}].root", "the id of a value in timeline.values", str(int(roots[i])))
    # An alias's storage is its root's: the root must own its storage, not be an alias itself.
    root_rows = order[pos] if ids.size else pos
    chained = np.flatnonzero(roots[root_rows] != roots) if ids.size else pos
    if chained.size:
        i = int(chained[0])
        raise InputError(
            f"$.timeline.values[{i}].root",
            "the id of a root value (one whose own root is itself)",
            f"{int(roots[i])}, whose root is {int(roots[root_rows[i]])}",
        )
    return order, root_rows


def check_alias_layouts(
    ids: np.ndarray, roots: np.ndarray, root_rows: np.ndarray, kind: np.ndarray, kind_layouts: list[Layout]
) -> None:
    """Every alias (``root != id``) has its root's layout, compared as parsed (spacing aside):
    a what-if edit of either re-tiles the whole class with one layout (docs/formats.md §2)."""
    alias = np.flatnonzero(roots != ids)
    mine, theirs = kind[alias], kind[root_rows[alias]]
    differ = alias[mine != theirs]  # values of one kind share a layout; others are compared per pair of kinds
    if not differ.size:
        return
    pairs = kind[differ] * len(kind_layouts) + kind[root_rows[differ]]
    distinct, first = np.unique(pairs, return_index=True)
    bad = []
    for pair, _at in zip(distinct.tolist(), first.tolist()):
        difference = layout_difference(kind_layouts[pair % len(kind_layouts)], kind_layouts[pair // len(kind_layouts)])
        if difference is not None:
            bad.append((int(differ[np.flatnonzero(pairs == pair)[0]]), difference))
    if bad:
        row, (inner, want, got) = min(bad)
        root = int(root_rows[row])
        raise InputError(
            f"$.timeline.values[{row}].layout ({inner})",
            f"{want} as in the layout of its root, value {int(ids[root])} (values[{root}]): an alias shares its root's layout",
            got,
        )


# ----------------------------------------------------------------------------- figure bounds


def largest_costs(values: pa.Table, kind: np.ndarray, largest_shard: list[int], kind_region: list[str]) -> np.ndarray:
    """Each value's largest possible bytes (what any what-if edit can make it cost), refusing a
    value for which that passes 2^53: its largest shard rounded up to its allocation granule
    (``models.shard_rule.infer_granules``, fixed under edits), times its copies."""
    largest = np.array(largest_shard, dtype=np.int64)[kind] if kind.size else np.zeros(0, np.int64)
    interleaved = (np.array(kind_region, dtype=object) == "interleaved")[kind] if kind.size else np.zeros(0, bool)
    granule = infer_granules(
        values.column("shard_bytes").to_numpy(), values.column("aligned_bytes").to_numpy(), interleaved
    )
    rounded = -(-largest // granule) * granule  # at most 2^53 + 2^20
    copies = values.column("copies").to_numpy()
    over = np.flatnonzero(copies > MAX_BYTES // np.maximum(rounded, 1))
    if over.size:
        i = int(over[0])
        raise InputError(
            f"$.timeline.values[{i}].copies",
            "copies × the value's largest shard (one partition per axis, rounded to its granule) of at most 2^53 bytes",
            f"{int(copies[i]):,} × {int(rounded[i]):,} bytes",
        )
    return rounded * copies


def _per_step(intervals: Intervals, weight: np.ndarray, n_steps: int) -> np.ndarray:
    """Σ weight of the intervals covering each step (a difference array; exact in int64 while
    every sum is)."""
    diff = np.zeros(n_steps + 1, dtype=np.int64)
    np.add.at(diff, intervals.first_step, weight)
    np.add.at(diff, intervals.last_step + 1, -weight)
    return np.cumsum(diff[:-1])


def check_figure_bounds(
    worst: np.ndarray, ids: np.ndarray, intervals: Intervals, scratch: np.ndarray, reserve: int
) -> None:
    """Refuse a profile where some step, every live value at its largest cost (``worst``, by value
    row), its ``scratch`` (standard + interleaved) and ``reserve`` (the larger of exchange_rows
    and support_reserve_bytes) could pass 2^53 bytes: then no figure of any plan can."""
    n_steps = scratch.size
    high, low = worst >> _SPLIT, worst & ((1 << _SPLIT) - 1)
    # Fast: all values at once (what a step of everything would cost) is within the bound.
    everything = int(high.sum()) * (1 << _SPLIT) + int(low.sum())
    if everything + int(scratch.max(initial=0)) + reserve <= MAX_BYTES:
        return
    rows = intervals.value_row
    step_high = _per_step(intervals, high[rows], n_steps)  # each at most n × 2^27: exact
    step_low = _per_step(intervals, low[rows], n_steps)
    over = step_high > (MAX_BYTES >> _SPLIT) + 1  # certainly over; else the total fits in int64
    total = np.where(over, 0, step_high) * (1 << _SPLIT) + step_low + scratch + reserve
    over |= total > MAX_BYTES
    if not over.any():
        return
    step = int(np.flatnonzero(over)[0])
    live = np.unique(rows[(intervals.first_step <= step) & (intervals.last_step >= step)])
    running = int(scratch[step]) + reserve
    for row in live.tolist():  # file order: name the value that takes the sum past the bound
        running += int(worst[row])
        if running > MAX_BYTES:
            break
    raise InputError(
        f"$.timeline.steps[{step}].live",
        "live values that together cost at most 2^53 bytes at their largest (one partition per axis, as a what-if edit could make "
        "them), with the step's scratch and the larger of exchange_rows and support_reserve_bytes",
        f"{running:,} bytes once value {int(ids[row])} (values[{row}]) is counted",
    )


# ----------------------------------------------------------------------------- duplicate keys


def _fields(struct: type[msgspec.Struct]) -> int:
    return len(struct.__struct_fields__)


# Keys of a version 1 value and step (the v2/v3 fields are optional in the records).
VALUE_KEYS = _fields(ValueRecord) - 2
STEP_KEYS = _fields(StepRecord) - 3 + 2 * _fields(RegionBytes)  # its own, scratch's and usage's
# What versions 2 and 3 add: tile_shards, tile_bytes; tile_usage, tile_scratch, coarse_usage and its two.
TILED_VALUE_KEYS = 2
TILED_STEP_KEYS = 3 + _fields(RegionBytes)
_HEADER_STRINGS = ("scope", "model", "gemm_output_packing", "attention_products")
_ESCAPED_COLON = re.compile(rb"\\u003[aA]")


def _count_bytes(buf: np.ndarray, *values: int, chunk: int = 1 << 20) -> list[int]:
    """How many bytes of ``buf`` equal each of ``values``, a MiB at a time into one reused mask
    (a mask of the whole file would be fresh memory, page-faulted in, on every load)."""
    counts = [0] * len(values)
    mask = np.empty(min(chunk, buf.size), dtype=bool)
    for start in range(0, buf.size, chunk):
        piece = buf[start : start + chunk]
        out = mask[: piece.size]
        for k, value in enumerate(values):
            np.equal(piece, value, out=out)
            counts[k] += int(np.count_nonzero(out))
    return counts


class KeyTally:
    """Proves a decoded memory profile names no key twice in any object, by counting colons.

    In JSON that parsed, every ':' outside strings separates one key from its value, so the file's
    ':' count is (its keys) + (the ':' inside its strings). tilescope knows every object the
    decoder read (the header, peak, timeline, each value and step, scratch, usage), the keys
    each of them has (all required, or optional and seen present), and the text of every string
    in them. If the file's count equals those keys plus those strings' colons, there is no other
    key anywhere: no repeated one, no unknown field. Only the escape ``\\u003a`` writes a ':' in a
    string without one in the file; a file with one, or whose count differs, is scanned key by
    key instead (``refuse_duplicate_keys``; unknown fields are allowed, repeated keys are not).
    """

    def __init__(self, data):
        colons, backslashes = _count_bytes(np.frombuffer(data, dtype=np.uint8), ord(":"), ord("\\"))
        self.file_colons = colons
        # Most files have no backslash at all; otherwise look for the escape (any bytes-like data).
        self.escaped_colon = bool(backslashes) and _ESCAPED_COLON.search(data) is not None
        self.expected = 0

    def header(self, record: MemoryProfileRecord) -> None:
        present = [name for name in record.__struct_fields__ if getattr(record, name) is not msgspec.UNSET]
        self.expected += len(present) + _fields(PeakRecord) + _fields(TimelineRecord)
        self.expected += sum(
            getattr(record, name).count(":") for name in _HEADER_STRINGS if isinstance(getattr(record, name), str)
        )

    def add(self, keys: int, colons_in_strings: int) -> None:
        self.expected += keys + colons_in_strings

    def proves_unique(self) -> bool:
        return not self.escaped_colon and self.file_colons == self.expected
