"""Arrow schemas of every table tilescope produces. Field docs are stored in the schema metadata."""
from __future__ import annotations

import pyarrow as pa


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


# Text columns taking a few distinct values over many rows (a layout's Debug text repeats for every
# value of that kind: on a ~90 MB profile the plain column alone is ~36 MB) are dictionary-encoded:
# each distinct text stored once, an int32 code per row. Readers see the same strings
# (``to_pylist``, ``to_numpy(zero_copy_only=False)``, Parquet and CSV output).
REPEATED_TEXT = pa.dictionary(pa.int32(), pa.string())


PROFILE = pa.schema(
    [
        _f("version", pa.int64(), "format version (1)"),
        _f("scope", pa.string(), "which candidate this profile is for"),
        _f("model", pa.string(), "the planner's sentence describing its estimate"),
        _f("tile_count", pa.int64(), "tiles on the device"),
        _f("budget_bytes", pa.int64(), "per-tile memory budget"),
        _f("interleaved_budget_bytes", pa.int64(), "budget of the interleaved region"),
        _f("support_reserve_bytes", pa.int64(), "reserved for runtime support code"),
        _f("standard_contiguous_overflow_bytes", pa.int64(), "as recorded"),
        _f("fits_budget", pa.bool_(), "the planner's verdict, as recorded"),
        _f("effective_peak_bytes", pa.int64(), "recorded"),
        _f("peak_standard", pa.int64(), "recorded peak.standard"),
        _f("peak_interleaved", pa.int64(), "recorded peak.interleaved"),
        _f("peak_total", pa.int64(), "recorded peak.total"),
        _f("exchange_rows", pa.int64(), "whole-program exchange-row reservation (standard region)"),
        _f("maximum_standard_allocation", pa.int64(), "recorded peak.maximum_standard_allocation"),
        _f("total_peak_step", pa.int64(), "recorded"),
        _f("standard_peak_step", pa.int64(), "recorded"),
        _f("interleaved_peak_step", pa.int64(), "recorded"),
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
        _f("element_bytes", pa.int64(), "bytes per element"),
        _f("layout", REPEATED_TEXT, "layout as written (Debug text)"),
        _f("order", REPEATED_TEXT, "layout order, canonical Debug text"),
        _f("memory_class", REPEATED_TEXT, "Ipu21Standard or Ipu21Interleaved"),
        _f("region", REPEATED_TEXT, "standard or interleaved"),
        _f("tile_count", pa.int64(), "tiling tile count"),
        _f("replicas", pa.int64(), "tiling replicas"),
        _f("shard_bytes", pa.int64(), "recorded bytes of the largest shard"),
        _f("aligned_bytes", pa.int64(), "recorded shard bytes rounded up to the allocation granule"),
        _f("copies", pa.int64(), "recorded"),
        _f("bytes", pa.int64(), "recorded aligned_bytes * copies"),
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
        _f("partitions", pa.int64(), ""),
        _f("padding_groups", pa.int64(), ""),
        _f("block_size", pa.int64(), ""),
        _f("padding_multiple", pa.int64(), ""),
        _f("shard_padding_multiple", pa.int64(), ""),
        _f("padding", pa.string(), "Zero, Reject, …"),
        _f("tile_stride", pa.int64(), "Some(n) → n, None → null", True),
    ]
)

STEPS = pa.schema(
    [
        _f("index", pa.int64(), "program order"),
        _f("source", pa.int64(), "graph operation this step lowers"),
        _f("operation_kind", REPEATED_TEXT, "first word of the operation (Gemm, Copy, Convert, Repeat…)"),
        _f("operation", pa.string(), "the operation's full Debug text (untrusted)"),
        _f("execution_count", pa.int64(), "times the step runs"),
        _f("scratch_standard", pa.int64(), "temporary bytes, standard region"),
        _f("scratch_interleaved", pa.int64(), "temporary bytes, interleaved region"),
        _f("usage_standard", pa.int64(), "recorded bytes used, standard region"),
        _f("usage_interleaved", pa.int64(), "recorded bytes used, interleaved region"),
        _f("live_count", pa.int64(), "distinct values live at the step"),
    ]
)

LIVE_INTERVALS = pa.schema(
    [
        _f("value_id", pa.int64(), "a value"),
        _f("first_step", pa.int64(), "first step of a contiguous run where it is live"),
        _f("last_step", pa.int64(), "last step of that run (inclusive)"),
    ]
)

PROFILE_TABLES = {
    "profile": PROFILE,
    "values": VALUES,
    "axes": AXES,
    "steps": STEPS,
    "live_intervals": LIVE_INTERVALS,
}
