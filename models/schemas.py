"""Arrow schemas of every table tilescope produces. Each field carries its doc (and its unit, where
it has one) in its metadata; Parquet files repeat them as plain key-value metadata
(``loaders.parquet``), so any tool can read them."""

from __future__ import annotations

import pyarrow as pa

# Bump when a table's schema or the meaning of a column changes: cached tables of an older version
# are never read again (loaders.cache) and every Parquet file says which version wrote it.
SCHEMA_VERSION = 5  # 2: repeated text columns dictionary-encoded (REPEATED_TEXT); 3: field units, all fields documented; 4: the loader refuses more (docs/formats.md §6); 5: versions 2 and 3 (value_tiles, step_tiles, coarse usage)

BYTES_PER_TILE = "bytes per tile"  # every memory figure of a profile is one tile's (docs/formats.md §1)
STEP_INDEX = "step index"  # 0-based, in program order
UNITS = f"memory figures in {BYTES_PER_TILE} (one tile's share, as docs/formats.md §1 records them); steps as 0-based {STEP_INDEX}es in program order"


def documented_field(
    name: str, type_: pa.DataType, doc: str, nullable: bool = False, unit: str | None = None
) -> pa.Field:
    """A field with its doc (never empty) and unit in its metadata."""
    if not doc:
        raise ValueError(f"field {name!r} needs a doc")
    metadata = {"doc": doc, **({"unit": unit} if unit else {})}
    return pa.field(name, type_, nullable=nullable, metadata=metadata)


_f = documented_field
B, S = BYTES_PER_TILE, STEP_INDEX


# Text columns taking a few distinct values over many rows (a layout's Debug text repeats for every
# value of that kind: on a ~90 MB profile the plain column alone is ~36 MB) are dictionary-encoded:
# each distinct text stored once, an int32 code per row. Readers see the same strings
# (``to_pylist``, ``to_numpy(zero_copy_only=False)``, Parquet and CSV output).
REPEATED_TEXT = pa.dictionary(pa.int32(), pa.string())


PROFILE = pa.schema(
    [
        _f("version", pa.int64(), "format version (1, 2 or 3: docs/formats.md §7)"),
        _f("scope", pa.string(), "which candidate this profile is for"),
        _f("model", pa.string(), "the planner's sentence describing its estimate"),
        _f("tile_count", pa.int64(), "tiles on the device"),
        _f("budget_bytes", pa.int64(), "per-tile memory budget", unit=B),
        _f("interleaved_budget_bytes", pa.int64(), "budget of the interleaved region", unit=B),
        _f("support_reserve_bytes", pa.int64(), "reserved for runtime support code", unit=B),
        _f(
            "standard_contiguous_overflow_bytes",
            pa.int64(),
            "recorded overflow of contiguous standard-region allocations",
            unit=B,
        ),
        _f("fits_budget", pa.bool_(), "the planner's verdict, as recorded"),
        _f(
            "effective_peak_bytes",
            pa.int64(),
            "recorded max over steps of usage.standard + usage.interleaved, plus support_reserve_bytes (docs/formats.md §2)",
            unit=B,
        ),
        _f("peak_standard", pa.int64(), "recorded peak.standard", unit=B),
        _f("peak_interleaved", pa.int64(), "recorded peak.interleaved", unit=B),
        _f("peak_total", pa.int64(), "recorded peak.total", unit=B),
        _f("exchange_rows", pa.int64(), "whole-program exchange-row reservation (standard region)", unit=B),
        _f("maximum_standard_allocation", pa.int64(), "recorded peak.maximum_standard_allocation", unit=B),
        _f("total_peak_step", pa.int64(), "recorded step of the total peak", unit=S),
        _f("standard_peak_step", pa.int64(), "recorded step of the standard peak", unit=S),
        _f("interleaved_peak_step", pa.int64(), "recorded step of the interleaved peak", unit=S),
        _f("gemm_output_packing", pa.string(), "planner option", True),
        _f("attention_products", pa.string(), "planner option", True),
    ]
)

VALUES = pa.schema(
    [
        _f("id", pa.int64(), "unique value id"),
        _f("origin", pa.int64(), "graph value it came from"),
        _f("root", pa.int64(), "alias root (== id for a value with storage of its own)"),
        _f("name", pa.string(), "untrusted text from the file"),
        _f("group", pa.string(), "logical group name"),
        _f("storage_group", pa.int64(), "storage group id"),
        _f("shape", pa.list_(pa.int64()), "tensor shape"),
        _f("precision", REPEATED_TEXT, "precision as written (Debug text)"),
        _f("precision_name", REPEATED_TEXT, "variant name: F16, F32, F8…"),
        _f("element_bytes", pa.int64(), "bytes per element", unit="bytes"),
        _f("layout", REPEATED_TEXT, "layout as written (Debug text)"),
        _f("order", REPEATED_TEXT, "layout order, canonical Debug text"),
        _f("memory_class", REPEATED_TEXT, "Ipu21Standard or Ipu21Interleaved"),
        _f("region", REPEATED_TEXT, "standard or interleaved"),
        _f("tile_count", pa.int64(), "tiling tile count"),
        _f("replicas", pa.int64(), "tiling replicas"),
        _f("shard_bytes", pa.int64(), "recorded bytes of the largest shard", unit=B),
        _f("aligned_bytes", pa.int64(), "recorded shard bytes rounded up to the allocation granule", unit=B),
        _f("copies", pa.int64(), "recorded number of copies of the shard each tile holds"),
        _f("bytes", pa.int64(), "recorded aligned_bytes * copies", unit=B),
        _f("layout_error", pa.string(), "the planner's message when it could not lay the value out", True),
    ]
)

AXES = pa.schema(
    [
        _f("value_id", pa.int64(), "value the axis belongs to"),
        _f("position", pa.int64(), "0-based position in the tiling's axes list"),
        _f("axis_kind", pa.string(), "FromStart, FromEnd or Linear"),
        _f("axis_index", pa.int64(), "k of FromStart(k)/FromEnd(k); null for Linear", True),
        _f("dimension", pa.int64(), "dimension of the shape the axis cuts; null for Linear", True),
        _f("partitions", pa.int64(), "how many parts the axis is cut into (docs/formats.md §2)"),
        _f("padding_groups", pa.int64(), "as written; carried, does not change the shard (docs/formats.md §5)"),
        _f(
            "block_size",
            pa.int64(),
            "elements per block: the padded size is cut into blocks, blocks into partitions (docs/formats.md §2)",
        ),
        _f(
            "padding_multiple",
            pa.int64(),
            "the axis size is padded up to a multiple of this before blocking (docs/formats.md §2)",
        ),
        _f(
            "shard_padding_multiple",
            pa.int64(),
            "the per-partition size is rounded up to a multiple of this (docs/formats.md §2)",
        ),
        _f("padding", pa.string(), "Zero, Reject, …"),
        _f("tile_stride", pa.int64(), "Some(n) → n, None → null", True),
    ]
)

STEPS = pa.schema(
    [
        _f("index", pa.int64(), "the step's position in program order", unit=S),
        _f("source", pa.int64(), "graph operation this step lowers"),
        _f("operation_kind", REPEATED_TEXT, "first word of the operation (Gemm, Copy, Convert, Repeat…)"),
        _f("operation", pa.string(), "the operation's full Debug text (untrusted)"),
        _f("execution_count", pa.int64(), "times the step runs"),
        _f("scratch_standard", pa.int64(), "temporary bytes, standard region", unit=B),
        _f("scratch_interleaved", pa.int64(), "temporary bytes, interleaved region", unit=B),
        _f("usage_standard", pa.int64(), "recorded bytes used, standard region", unit=B),
        _f("usage_interleaved", pa.int64(), "recorded bytes used, interleaved region", unit=B),
        _f("live_count", pa.int64(), "distinct values live at the step"),
        _f(
            "coarse_standard",
            pa.int64(),
            "recorded coarse_usage.standard (v2/v3: the v1 scalar rule; null in v1)",
            True,
            unit=B,
        ),
        _f("coarse_interleaved", pa.int64(), "recorded coarse_usage.interleaved (v2/v3; null in v1)", True, unit=B),
    ]
)

LIVE_INTERVALS = pa.schema(
    [
        _f("value_id", pa.int64(), "a value"),
        _f("first_step", pa.int64(), "first step of a contiguous run where it is live", unit=S),
        _f("last_step", pa.int64(), "last step of that run (inclusive)", unit=S),
    ]
)

# Per-tile figures of versions 2 and 3 (docs/formats.md §7), as runs: one row per maximal run of
# consecutive device tiles [tile_start, tile_stop) whose entries are all equal. Tiles no row covers
# hold 0 in every column (all-zero runs are not stored). A dense values × tiles array would be 10^8
# entries on a large profile; runs are a few per value and a few dozen per step.
TILE = "device tile index"
VALUE_TILES = pa.schema(
    [
        _f("value_row", pa.int32(), "row of the value in the values table (file order)"),
        _f("tile_start", pa.int32(), "first device tile of the run", unit=TILE),
        _f("tile_stop", pa.int32(), "one past the last device tile of the run", unit=TILE),
        _f("shard", pa.int64(), "recorded tile_shards on each tile of the run (payload, before copies)", unit=B),
        _f("bytes", pa.int64(), "recorded tile_bytes on each tile of the run (aligned size × copies)", unit=B),
    ]
)

STEP_TILES = pa.schema(
    [
        _f("step", pa.int32(), "step index", unit=S),
        _f("tile_start", pa.int32(), "first device tile of the run", unit=TILE),
        _f("tile_stop", pa.int32(), "one past the last device tile of the run", unit=TILE),
        _f("scratch_standard", pa.int64(), "recorded tile_scratch[t][0]", unit=B),
        _f("scratch_interleaved", pa.int64(), "recorded tile_scratch[t][1]", unit=B),
        _f("usage_standard", pa.int64(), "recorded tile_usage[t][0]", unit=B),
        _f("usage_interleaved", pa.int64(), "recorded tile_usage[t][1]", unit=B),
    ]
)

PROFILE_TABLES = {
    "profile": PROFILE,
    "values": VALUES,
    "axes": AXES,
    "steps": STEPS,
    "live_intervals": LIVE_INTERVALS,
    "value_tiles": VALUE_TILES,
    "step_tiles": STEP_TILES,
}
PER_TILE_TABLES = ("value_tiles", "step_tiles")  # versions 2 and 3 only (empty for version 1)
