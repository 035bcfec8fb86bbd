"""Arrow schemas of the search-state tables (docs/formats.md §3). Field docs are in each field's metadata.

Every table has a fixed schema except ``plans``: its dispatch columns come from the file (the
dispatch object flattened, nested keys joined by '_'), so ``plans_schema`` builds it from the fixed
part and the dispatch fields ``dispatch_field`` makes.
"""

from __future__ import annotations

import pyarrow as pa

from .schemas import BYTES_PER_TILE, documented_field


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = False) -> pa.Field:
    """``schemas.documented_field``; a ``*_bytes`` field is in bytes per tile."""
    return documented_field(name, type_, doc, nullable, BYTES_PER_TILE if name.endswith("_bytes") else None)


SHAPE = pa.list_(pa.int64())

GRAPH_INPUTS = pa.schema(
    [
        _f("name", pa.string(), "input name (untrusted text from the file)"),
        _f("kind", pa.string(), "GraphInput.kind variant, e.g. Host"),
        _f("value_id", pa.int64(), "graph value the input provides"),
        _f("shape", SHAPE, "tensor shape"),
    ]
)

OPERATIONS = pa.schema(
    [
        _f("id", pa.int64(), "operation id"),
        _f("kind_name", pa.string(), "variant name of the operation kind, e.g. FlashAttention"),
        _f("kind", pa.string(), "the operation kind's full Debug text (untrusted)"),
        _f("inputs", pa.list_(pa.int64()), "value ids of the operation's inputs, in order"),
        _f("results", pa.list_(pa.int64()), "value ids of the operation's results, in order"),
        _f("alternatives", pa.int64(), "number of candidate plans in $.alternatives"),
        _f("chosen_alternative", pa.int64(), "index of the recipe's plan among the alternatives", True),
    ]
)

GRAPH_VALUES = pa.schema(
    [
        _f("id", pa.int64(), "value id"),
        _f("shape", SHAPE, "tensor shape (ComputeGraph.shapes)"),
        _f("is_graph_input", pa.bool_(), "provided by a graph input"),
        _f("is_graph_output", pa.bool_(), "listed in ComputeGraph.outputs"),
        _f("producer", pa.int64(), "operation whose results include the value; null for inputs", True),
    ]
)

# PipelineConfig options with a known meaning. Integer/bool/string fields are null when the file
# does not have them; unit variants are their names; Option<T> is T or null.
CONFIG = pa.schema(
    [
        _f("source", pa.string(), "the file's name"),
        _f("tile_count", pa.int64(), "tiles the plan may use (PipelineConfig.tile_count)"),
        _f("tile_memory_budget_bytes", pa.int64(), "per-tile memory budget"),
        _f("standard_memory_reservation_bytes", pa.int64(), "bytes reserved per tile in the standard region", True),
        _f("exchange_table_budget_bytes", pa.int64(), "budget for exchange tables", True),
        _f("exchange_transfer_limit_per_tile", pa.int64(), "exchange transfer limit per tile", True),
        _f("exchange_table_cost_per_byte", pa.int64(), "planner cost weight", True),
        _f("exchange_stream_words", pa.int64(), "Option: null for None", True),
        _f("optimization_steps", pa.int64(), "planner option", True),
        _f("operator_candidate_limit", pa.int64(), "most candidate plans kept per operator", True),
        _f("max_parallel_reductions", pa.int64(), "planner option", True),
        _f("capacity_baseline", pa.bool_(), "planner option", True),
        _f("shape_aware_active_tile_counts", pa.bool_(), "planner option", True),
        _f("profiling", pa.bool_(), "planner option", True),
        _f("diagnostic_checkpoints", pa.bool_(), "planner option", True),
        _f("exchange_diagnostics", pa.bool_(), "planner option", True),
        _f("gemm_output_packing", pa.string(), "planner option (variant name)", True),
        _f("conversion_streaming", pa.string(), "planner option (variant name)", True),
        _f("attention_strategy", pa.string(), "planner option (variant name)", True),
        _f("attention_products", pa.string(), "planner option (variant name)", True),
        _f("attention_fp8_scales", pa.list_(pa.int64()), "Option<i64> per scale; null entries are None", True),
        _f("load_search_state", pa.string(), "Option<path>: null for None", True),
        _f("save_search_state", pa.string(), "Option<path>: null for None", True),
        _f("memory_profile_directory", pa.string(), "Option<path>: null for None", True),
        _f("input_count", pa.int64(), "entries of PipelineConfig.inputs"),
        _f("automatic_inputs", pa.string(), "Debug text as written", True),
        _f("operator_candidates", pa.string(), "Debug text as written", True),
        _f("gemm_precisions", pa.string(), "Debug text as written", True),
        _f("gemm_plan_constraints", pa.string(), "Debug text as written", True),
        _f("context_rest", pa.list_(pa.string()), "context lines after the PipelineConfig, Debug text as written"),
        _f(
            "other_options",
            pa.map_(pa.string(), pa.string()),
            "PipelineConfig fields this schema does not name, as Debug text",
        ),
    ]
)

# Fields of CONFIG that are not PipelineConfig fields of the same name.
CONFIG_DERIVED = ("source", "input_count", "context_rest", "other_options")

AXIS_TILING = pa.struct(
    [
        _f("axis_kind", pa.string(), "FromStart, FromEnd or Linear"),
        _f("axis_index", pa.int64(), "k of FromStart(k)/FromEnd(k); null for Linear", True),
        _f("dimension", pa.int64(), "dimension of the shape the axis cuts; null for Linear", True),
        _f("partitions", pa.int64(), "partitions of the axis"),
        _f("padding_groups", pa.int64(), "as written"),
        _f("block_size", pa.int64(), "elements per block"),
        _f("padding_multiple", pa.int64(), "the axis is padded to a multiple of this"),
        _f("shard_padding_multiple", pa.int64(), "a shard's extent is rounded up to a multiple of this"),
        _f("padding", pa.string(), "Zero, Reject, …"),
        _f("tile_stride", pa.int64(), "Some(n) → n, None → null", True),
        _f("blocks", pa.int64(), "blocks on the axis: the most partitions it can take (docs/formats.md §2)"),
        _f("shard_extent", pa.int64(), "the axis's extent in one shard (docs/formats.md §2)"),
    ]
)

FORMATS = pa.schema(
    [
        _f("role", pa.string(), "arrives (an input format), input (a plan's requirement) or output"),
        _f("value_id", pa.int64(), "the value the format applies to; null for an output of several results", True),
        _f("operation_id", pa.int64(), "the plan's operation; null for role arrives", True),
        _f("alternative", pa.int64(), "the plan's index in $.alternatives.<op>; null for role arrives", True),
        _f("chosen", pa.bool_(), "the plan is the recipe's; null for role arrives", True),
        _f("input_position", pa.int64(), "index in requirements.inputs; null unless role is input", True),
        _f(
            "source",
            pa.string(),
            "which spellings hold it: 'inputs and context', 'inputs', 'context' or 'alternatives'",
        ),
        _f("json_path", pa.string(), "where the format is written"),
        _f("shape", SHAPE, "the value's shape", True),
        _f("precision", pa.string(), "precision in Debug spelling"),
        _f("precision_name", pa.string(), "F16, F32, F8…"),
        _f("element_bytes", pa.int64(), "bytes per element"),
        _f("order", pa.string(), "layout order in Debug spelling"),
        _f("memory_class", pa.string(), "Ipu21Standard, Ipu21Interleaved, …"),
        _f("region", pa.string(), "standard or interleaved; null for another memory class", True),
        _f("tile_count", pa.int64(), "tiling tile count"),
        _f("replicas", pa.int64(), "tiling replicas"),
        _f("axes", pa.list_(AXIS_TILING), "the tiling's AxisTiling entries, in order"),
        _f("shard_bytes", pa.int64(), "bytes of the largest shard, per tile (docs/formats.md §2)", True),
        _f("local_staging", pa.string(), "requirement's local_staging; null for role arrives", True),
        _f("materialization", pa.string(), "requirement's materialization; null for role arrives", True),
    ]
)

PLANS_FIXED = pa.schema(
    [
        _f("operation_id", pa.int64(), "operation the plan is for"),
        _f("alternative", pa.int64(), "index in $.alternatives.<op>"),
        _f("chosen", pa.bool_(), "this alternative is the recipe's plan"),
        _f("operator_kind", pa.string(), "variant name of the operator, e.g. FlashAttention"),
        _f("operator", pa.string(), "the operator in Debug spelling"),
        _f("dispatch_kind", pa.string(), "variant name of the dispatch, e.g. Attention", True),
        _f("output_aliasing", pa.string(), "requirements.output_aliasing", True),
        _f("deferred_output", pa.string(), "Debug spelling; null when null", True),
    ]
)


def dispatch_field(name: str, type_: pa.DataType, path: str) -> pa.Field:
    """A flattened dispatch parameter column; ``path`` is where it sits inside the dispatch."""
    return _f(name, type_, f"dispatch parameter {path}", True)


def plans_schema(dispatch_fields: list[pa.Field]) -> pa.Schema:
    return pa.schema(list(PLANS_FIXED) + list(dispatch_fields))


SETTINGS = pa.list_(pa.struct([pa.field("name", pa.string()), pa.field("value", pa.string())]))

RECIPE = pa.schema(
    [
        _f("plan_count", pa.int64(), "operations with a plan in $.recipe.plans"),
        _f(
            "open_boundaries",
            pa.list_(pa.string()),
            "entries in Debug spelling (element type not pinned by the sample)",
        ),
        _f("cast_before_copies", pa.list_(pa.list_(pa.int64(), 2)), "pairs, as written"),
        _f("packing_rows", pa.string(), "Debug spelling; null when null (type not pinned by the sample)", True),
        _f("parallel_reductions", pa.int64(), "as written", True),
        _f("disjoint_copy_sources", pa.bool_(), "as written", True),
        _f("in_place_casts", pa.string(), "Debug spelling; null when null (type not pinned by the sample)", True),
        _f("visited", pa.int64(), "search bookkeeping: entries of $.visited"),
        _f("mapping", pa.string(), "search bookkeeping: $.mapping in Debug spelling; null when null", True),
        _f("mapping_checked", pa.bool_(), "search bookkeeping", True),
        _f("attempts", pa.int64(), "search bookkeeping", True),
        _f("version", pa.int64(), "the file's version (1, 3 or 8)"),
        _f(
            "settings",
            SETTINGS,
            "every recipe setting besides plans and open boundaries, Debug spelling, file order "
            "(version 8: $.recipe.options)",
        ),
        _f(
            "tile_mapping",
            pa.list_(pa.int64()),
            "version 8: $.recipe.options.tile_mapping (device tile of each tile); null in other versions",
            True,
        ),
    ]
)

# One row per entry of $.visited: a recipe the search already tried (no cost, verdict or reason recorded).
VISITED = pa.schema(
    [
        _f("index", pa.int64(), "position in $.visited"),
        _f(
            "plans",
            pa.list_(pa.struct([pa.field("operation_id", pa.int64()), pa.field("alternative", pa.int64())])),
            "each operation's plan: its index among $.alternatives.<op>, null when equal to none of them",
        ),
        _f("open_boundaries", pa.list_(pa.string()), "entries in Debug spelling"),
        _f("settings", SETTINGS, "every setting besides plans and open boundaries, Debug spelling, file order"),
    ]
)

# Table name → schema (``plans`` is built per file by ``plans_schema``).
SEARCH_TABLES: dict[str, pa.Schema | None] = {
    "graph_inputs": GRAPH_INPUTS,
    "operations": OPERATIONS,
    "graph_values": GRAPH_VALUES,
    "config": CONFIG,
    "formats": FORMATS,
    "plans": None,
    "recipe": RECIPE,
    "visited": VISITED,
}
