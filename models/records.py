"""Typed records of the memory-profile file, as msgspec decodes and validates them.

A step's ``live`` list is kept as raw JSON bytes (``msgspec.Raw``): the loader turns all of them
into one numpy array without building a Python object per live entry (the lists dominate the file).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from .limits import MAX_INT

# Largest byte count or id we accept: well inside int64 and exact in float64 (models.limits).
Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]
Positive = Annotated[int, msgspec.Meta(ge=1, le=MAX_INT)]


class RegionBytes(msgspec.Struct, frozen=True):
    standard: Count
    interleaved: Count


class PeakRecord(msgspec.Struct, frozen=True):
    standard: Count
    interleaved: Count
    total: Count
    exchange_rows: Count
    maximum_standard_allocation: Count


class ValueRecord(msgspec.Struct, frozen=True):
    id: Count
    origin: Count
    root: Count
    name: str
    group: str
    storage_group: Count
    shape: list[Count]
    precision: str
    layout: str
    layout_error: str | None
    memory_class: str = msgspec.field(name="class")
    shard_bytes: Count
    aligned_bytes: Count
    copies: Positive
    bytes: Count
    # Versions 2 and 3 (docs/formats.md §7): one entry per device tile, kept as raw JSON text and
    # parsed with numpy into runs (loaders.tile_arrays). Absent (UNSET) in version 1.
    tile_shards: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    tile_bytes: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class StepRecord(msgspec.Struct, frozen=True):
    index: Count
    source: Count
    operation: str
    execution_count: Count
    live: msgspec.Raw
    scratch: RegionBytes
    usage: RegionBytes
    # Versions 2 and 3 (docs/formats.md §7); absent (UNSET) in version 1.
    tile_usage: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    tile_scratch: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    coarse_usage: RegionBytes | msgspec.UnsetType = msgspec.UNSET


class TimelineRecord(msgspec.Struct, frozen=True):
    values: list[ValueRecord]
    steps: list[StepRecord]


class MemoryProfileRecord(msgspec.Struct, frozen=True):
    version: int
    scope: str
    tile_count: Positive
    budget_bytes: Count
    interleaved_budget_bytes: Count
    support_reserve_bytes: Count
    fits_budget: bool
    effective_peak_bytes: Count
    peak: PeakRecord
    total_peak_step: Count
    standard_peak_step: Count
    interleaved_peak_step: Count
    timeline: TimelineRecord
    # Optional fields: UNSET when absent, so the loader can count the keys the file has
    # (loaders.profile_checks.check_keys); the tables read "", 0 and null for them.
    model: str | msgspec.UnsetType = msgspec.UNSET
    standard_contiguous_overflow_bytes: Count | msgspec.UnsetType = msgspec.UNSET
    gemm_output_packing: str | msgspec.UnsetType | None = msgspec.UNSET
    attention_products: str | msgspec.UnsetType | None = msgspec.UNSET
