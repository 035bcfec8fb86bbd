"""A search state's plans (docs/formats.md §3): each operation's candidate plans
(``$.alternatives``), the recipe's chosen one located among them, the rest of the recipe and the
search bookkeeping."""

from __future__ import annotations

from typing import Any

import msgspec

from tilescope.models.errors import InputError, describe
from tilescope.models.search_state import ComputeGraph, Operation, OperationPlans, Plan, Requirement, SearchBookkeeping

from .json_fields import (
    as_list,
    as_object,
    debug_text_of,
    field_of,
    id_keys,
    optional_boolean,
    optional_integer,
    variant_name,
)
from .layouts import serde_to_debug_text
from .search_formats import FormatCache, serde_path


def flatten_dispatch(dispatch: Any) -> tuple[str | None, dict[str, Any], dict[str, str]]:
    """``{"Attention": {"query_key": {"rows": 6}}}`` → ``("Attention", {"query_key_rows": 6}, paths)``.

    Nested keys are joined by '_' (a later key that flattens to an earlier name replaces it; the
    sample has none). A leaf that is a list stays a list.
    """
    if isinstance(dispatch, str):
        return dispatch, {}, {}
    kind, body, base = None, dispatch, "dispatch"
    if isinstance(dispatch, dict) and len(dispatch) == 1:
        ((kind, body),) = dispatch.items()
        base = f"dispatch.{kind}"
    flat: dict[str, Any] = {}
    paths: dict[str, str] = {}

    def walk(value: Any, name: str, path: str) -> None:
        if isinstance(value, dict) and value:
            for key, item in value.items():
                walk(item, f"{name}_{key}" if name else key, f"{path}.{key}")
        else:
            flat[name or "dispatch"] = value
            paths[name or "dispatch"] = path

    walk(body, "", base)
    return kind, flat, paths


def read_requirement(
    value: Any, path: str, role: str, position: int | None, vid: int | None, graph: ComputeGraph, formats: FormatCache
) -> Requirement:
    entry = as_object(value, path, "a requirement object (format, local_staging, materialization)")
    fmt_path = f"{path}.format"
    fmt = formats.serde(field_of(entry, "format", path), fmt_path)
    shape = None if vid is None else graph.shapes[vid]
    size = None if shape is None else formats.shard_bytes(shape, fmt, serde_path(fmt_path))
    return Requirement(
        role=role,
        position=position,
        value=vid,
        shape=shape,
        format=fmt,
        shard_bytes=size,
        local_staging=debug_text_of(entry.get("local_staging")),
        materialization=debug_text_of(entry.get("materialization")),
        json_path=fmt_path,
    )


def read_plan(
    value: Any, path: str, operation: Operation, index: int, graph: ComputeGraph, formats: FormatCache
) -> Plan:
    plan = as_object(value, path, "a plan object (operator, dispatch, requirements)")
    operator = field_of(plan, "operator", path)
    dispatch_kind, dispatch, dispatch_paths = flatten_dispatch(field_of(plan, "dispatch", path))
    rpath = f"{path}.requirements"
    requirements = as_object(field_of(plan, "requirements", path), rpath, "an object (inputs, output, output_aliasing)")
    listed = as_list(field_of(requirements, "inputs", rpath), f"{rpath}.inputs")
    if len(listed) != len(operation.inputs):
        raise InputError(
            f"{rpath}.inputs",
            f"{len(operation.inputs)} entries, one per input of operation {operation.id}",
            describe(listed),
        )
    inputs = tuple(
        read_requirement(item, f"{rpath}.inputs[{i}]", "input", i, operation.inputs[i], graph, formats)
        for i, item in enumerate(listed)
    )
    result = operation.results[0] if len(operation.results) == 1 else None
    output = read_requirement(
        field_of(requirements, "output", rpath), f"{rpath}.output", "output", None, result, graph, formats
    )
    return Plan(
        operation=operation.id,
        index=index,
        operator_kind=variant_name(operator),
        operator=serde_to_debug_text(operator),
        dispatch_kind=dispatch_kind,
        dispatch=dispatch,
        dispatch_paths=dispatch_paths,
        inputs=inputs,
        output=output,
        output_aliasing=debug_text_of(requirements.get("output_aliasing")),
        deferred_output=debug_text_of(plan.get("deferred_output")),
    )


def operation_ids(obj: dict, path: str, graph: ComputeGraph) -> list[tuple[int, str, Any]]:
    entries = id_keys(obj, path)
    ids = [op.id for op in graph.operations]
    for op_id, key, _ in entries:
        if op_id not in ids:
            raise InputError(f"{path}.{key}", f"an operation of the graph ({', '.join(map(str, ids)) or 'none'})", key)
    return entries


def read_plans(recipe: dict, top: dict, graph: ComputeGraph, formats: FormatCache) -> dict[int, OperationPlans]:
    chosen_objects = as_object(field_of(recipe, "plans", "$.recipe"), "$.recipe.plans")
    alternatives = as_object(field_of(top, "alternatives", "$"), "$.alternatives")

    # The recipe's plans are read (validated) first, so a bad one is reported at its own path.
    chosen: dict[int, tuple[str, Any]] = {}
    for op_id, key, value in operation_ids(chosen_objects, "$.recipe.plans", graph):
        read_plan(value, f"$.recipe.plans.{key}", graph.operation(op_id), 0, graph, formats)
        chosen[op_id] = (key, value)

    listed: dict[int, tuple[Plan, ...]] = {}
    for op_id, key, value in operation_ids(alternatives, "$.alternatives", graph):
        path = f"$.alternatives.{key}"
        operation = graph.operation(op_id)
        listed[op_id] = tuple(
            read_plan(item, f"{path}[{i}]", operation, i, graph, formats)
            for i, item in enumerate(as_list(value, path, "a list of candidate plans"))
        )

    out: dict[int, OperationPlans] = {}
    for operation in graph.operations:
        index = None
        if operation.id in chosen:
            key, plan = chosen[operation.id]
            if operation.id not in listed:
                raise InputError(
                    f"$.alternatives.{key}", "the candidate plans of an operation with a chosen plan", "none"
                )
            # Compare JSON values with keys sorted; msgspec keeps `true` and `1` apart, unlike `==`.
            wanted = msgspec.json.encode(plan, order="sorted")
            candidates = as_list(alternatives[key], f"$.alternatives.{key}")
            index = next(
                (i for i, c in enumerate(candidates) if msgspec.json.encode(c, order="sorted") == wanted), None
            )
            if index is None:
                raise InputError(
                    f"$.recipe.plans.{key}",
                    f"one of the {len(candidates)} plans in $.alternatives.{key}",
                    "a plan equal to none of them",
                )
        out[operation.id] = OperationPlans(operation.id, listed.get(operation.id, ()), index)
    return out


# ----------------------------------------------------------------------------- bookkeeping


def read_bookkeeping(top: dict) -> SearchBookkeeping:
    """``visited`` (its length), ``mapping`` and ``mapping_checked`` (versions 1–3; absent in 8), ``attempts``."""
    return SearchBookkeeping(
        visited=len(as_list(top.get("visited", []), "$.visited")),
        mapping=debug_text_of(top.get("mapping")),
        mapping_checked=optional_boolean(top.get("mapping_checked"), "$.mapping_checked"),
        attempts=optional_integer(top.get("attempts"), "$.attempts"),
    )
