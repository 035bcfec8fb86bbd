"""A read search state (``models.search_state.SearchState``) → its Arrow tables, by name (schemas
in ``models.search_schemas``), and those tables out to Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from tilescope.models.limits import INT64_MAX
from tilescope.models.search_schemas import (
    CONFIG,
    CONFIG_DERIVED,
    FORMATS,
    GRAPH_INPUTS,
    GRAPH_VALUES,
    OPERATIONS,
    RECIPE,
    SEARCH_TABLES,
    VISITED,
    dispatch_field,
    plans_schema,
)
from tilescope.models.search_state import SearchState
from tilescope.models.shard_rule import shard_cuts
from tilescope.models.tiling import TensorFormat, TensorTiling

from .json_fields import debug_text_of
from .parquet import Source, write_parquet_tables


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


class _FormatColumns:
    """The ``formats`` table's columns of one format on one shape, computed once per distinct pair."""

    def __init__(self) -> None:
        self._cache: dict[tuple, dict] = {}

    def __call__(self, fmt: TensorFormat, shape: tuple[int, ...] | None, size: int | None) -> dict:
        key = (fmt, shape)
        columns = self._cache.get(key)
        if columns is None:
            layout = fmt.layout
            columns = self._cache[key] = {
                "shape": list(shape) if shape is not None else None,
                "precision": fmt.precision.text,
                "precision_name": fmt.precision.name,
                "element_bytes": fmt.precision.element_bytes,
                "order": str(layout.order),
                "memory_class": layout.memory_class,
                "region": layout.region,
                "tile_count": layout.tiling.tile_count,
                "replicas": layout.tiling.replicas,
                "axes": _axes(shape, layout.tiling),
                "shard_bytes": size,
            }
        return columns


def _axes(shape: tuple[int, ...] | None, tiling: TensorTiling) -> list[dict]:
    # The loader has already applied every tiling to its shape, so shard_cuts cannot fail here.
    cuts = shard_cuts(shape, tiling)[1] if shape is not None else [None] * len(tiling.axes)
    rank = len(shape) if shape is not None else None
    return [
        {
            "axis_kind": a.axis.kind,
            "axis_index": a.axis.index,
            "dimension": a.axis.dimension(rank) if rank is not None else None,
            "partitions": a.partitions,
            "padding_groups": a.padding_groups,
            "block_size": a.block_size,
            "padding_multiple": a.padding_multiple,
            "shard_padding_multiple": a.shard_padding_multiple,
            "padding": a.padding,
            "tile_stride": a.tile_stride,
            "blocks": cut.blocks if cut else None,
            "shard_extent": cut.per_partition if cut else None,
        }
        for a, cut in zip(tiling.axes, cuts)
    ]


def _formats_rows(state: SearchState) -> list[dict]:
    columns = _FormatColumns()
    rows = []
    for f in state.input_formats.values():
        rows.append(
            {
                "role": "arrives",
                "value_id": f.value,
                "operation_id": None,
                "alternative": None,
                "chosen": None,
                "input_position": None,
                "source": f.source,
                "json_path": f.json_path,
                **columns(f.format, f.shape, f.shard_bytes),
                "local_staging": None,
                "materialization": None,
            }
        )
    for plans in state.plans.values():
        for plan in plans.alternatives:
            for r in (*plan.inputs, plan.output):
                rows.append(
                    {
                        "role": r.role,
                        "value_id": r.value,
                        "operation_id": plan.operation,
                        "alternative": plan.index,
                        "chosen": plan.index == plans.chosen,
                        "input_position": r.position,
                        "source": "alternatives",
                        "json_path": r.json_path,
                        **columns(r.format, r.shape, r.shard_bytes),
                        "local_staging": r.local_staging,
                        "materialization": r.materialization,
                    }
                )
    return rows


def _dispatch_column(name: str, values: list[Any], path: str) -> tuple[pa.Field, list[Any]]:
    """Type a flattened dispatch parameter from all its values; mixed or odd values become Debug text."""
    present = [v for v in values if v is not None]

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and -INT64_MAX - 1 <= v <= INT64_MAX

    if present and all(isinstance(v, bool) for v in present):
        return dispatch_field(name, pa.bool_(), path), values
    if present and all(is_int(v) for v in present):
        return dispatch_field(name, pa.int64(), path), values
    if present and all(is_int(v) or isinstance(v, float) for v in present):
        return dispatch_field(name, pa.float64(), path), [None if v is None else float(v) for v in values]
    if present and all(isinstance(v, list) and all(i is None or is_int(i) for i in v) for v in present):
        return dispatch_field(name, pa.list_(pa.int64()), path), values
    if present and all(isinstance(v, str) for v in present):
        return dispatch_field(name, pa.string(), path), values
    return dispatch_field(name, pa.string(), path), [debug_text_of(v) for v in values]


def _plans_table(state: SearchState) -> pa.Table:
    plans = [plan for ops in state.plans.values() for plan in ops.alternatives]
    fixed = {
        "operation_id": [p.operation for p in plans],
        "alternative": [p.index for p in plans],
        "chosen": [p.index == state.plans[p.operation].chosen for p in plans],
        "operator_kind": [p.operator_kind for p in plans],
        "operator": [p.operator for p in plans],
        "dispatch_kind": [p.dispatch_kind for p in plans],
        "output_aliasing": [p.output_aliasing for p in plans],
        "deferred_output": [p.deferred_output for p in plans],
    }
    names: dict[str, str] = {}  # dispatch key → column name, in first-seen order
    for p in plans:
        for key in p.dispatch:
            if key not in names:
                names[key] = f"dispatch_{key}" if key in fixed else key
    fields, columns = [], dict(fixed)
    for key, column in names.items():
        path = next(p.dispatch_paths[key] for p in plans if key in p.dispatch)
        field, values = _dispatch_column(column, [p.dispatch.get(key) for p in plans], path)
        fields.append(field)
        columns[column] = values
    schema = plans_schema(fields)
    return pa.Table.from_pydict(columns, schema=schema)


def _config_row(state: SearchState) -> dict:
    row: dict[str, Any] = {name: state.options.get(name) for name in CONFIG.names if name not in CONFIG_DERIVED}
    row["source"] = state.source
    row["input_count"] = sum(1 for f in state.input_formats.values() if f.source != "inputs")
    row["context_rest"] = list(state.context_rest)
    named = set(CONFIG.names) - set(CONFIG_DERIVED)
    row["other_options"] = [(k, v) for k, v in state.option_text.items() if k not in named]
    return row


def _recipe_row(state: SearchState) -> dict:
    r, b = state.recipe, state.bookkeeping
    return {
        "plan_count": sum(1 for p in state.plans.values() if p.chosen is not None),
        "open_boundaries": list(r.open_boundaries),
        "cast_before_copies": [list(p) for p in r.cast_before_copies],
        "packing_rows": r.packing_rows,
        "parallel_reductions": r.parallel_reductions,
        "disjoint_copy_sources": r.disjoint_copy_sources,
        "in_place_casts": r.in_place_casts,
        "visited": b.visited,
        "mapping": b.mapping,
        "mapping_checked": b.mapping_checked,
        "attempts": b.attempts,
        "version": state.version,
        "settings": [{"name": k, "value": v} for k, v in r.settings],
        "tile_mapping": list(r.options.tile_mapping) if r.options is not None else None,
    }


def _visited_rows(state: SearchState) -> list[dict]:
    return [
        {
            "index": i,
            "plans": [{"operation_id": op, "alternative": p.alternative} for op, p in sorted(recipe.plans.items())],
            "open_boundaries": list(recipe.open_boundaries),
            "settings": [{"name": k, "value": v} for k, v in recipe.settings],
        }
        for i, recipe in enumerate(state.visited)
    ]


def search_state_tables(state: SearchState) -> dict[str, pa.Table]:
    """The search state's Arrow tables, by name (schemas in ``models.search_schemas``)."""
    g = state.graph
    producers = {vid: op.id for op in g.operations for vid in op.results}
    input_values = {i.value for i in g.inputs}
    tables = {
        "graph_inputs": _table(
            [{"name": i.name, "kind": i.kind, "value_id": i.value, "shape": list(i.shape)} for i in g.inputs],
            GRAPH_INPUTS,
        ),
        "operations": _table(
            [
                {
                    "id": op.id,
                    "kind_name": op.kind_name,
                    "kind": op.kind,
                    "inputs": list(op.inputs),
                    "results": list(op.results),
                    "alternatives": len(state.plans[op.id].alternatives),
                    "chosen_alternative": state.plans[op.id].chosen,
                }
                for op in g.operations
            ],
            OPERATIONS,
        ),
        "graph_values": _table(
            [
                {
                    "id": vid,
                    "shape": list(shape),
                    "is_graph_input": vid in input_values,
                    "is_graph_output": vid in g.outputs,
                    "producer": producers.get(vid),
                }
                for vid, shape in g.shapes.items()
            ],
            GRAPH_VALUES,
        ),
        "config": _table([_config_row(state)], CONFIG),
        "formats": _table(_formats_rows(state), FORMATS),
        "plans": _plans_table(state),
        "recipe": _table([_recipe_row(state)], RECIPE),
        "visited": _table(_visited_rows(state), VISITED),
    }
    assert list(tables) == list(SEARCH_TABLES)
    return tables


def write_search_state_tables(state: SearchState, out_dir: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write each table as ``out_dir/<table>.parquet`` (the directory is created; metadata of
    ``loaders.parquet`` naming ``state.source``, which is read to hash it); returns the paths."""
    return write_parquet_tables(search_state_tables(state), out_dir, Source.of_file(state.source), overwrite=overwrite)
