"""A search state's ``context`` (docs/formats.md §3): Rust ``Debug`` text, one value per line, the
``ComputeGraph`` then the ``PipelineConfig`` (its options typed by ``models.search_schemas.CONFIG``)
and whatever follows (kept as written)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_INT
from tilescope.models.search_schemas import CONFIG, CONFIG_DERIVED
from tilescope.models.search_state import ComputeGraph, GraphInput, Operation, OptionValue

from .debug_reader import DebugReader, variant_text
from .debug_text import Map, Set, Tuple, Unit, render
from .json_fields import field_of

# The context lines, 1-based as a reader counts them.
GRAPH_LINE, CONFIG_LINE = 1, 2


def context_lines(top: dict) -> list[str]:
    text = field_of(top, "context", "$")
    if not isinstance(text, str):
        raise InputError("$.context", "a string of Rust Debug text", describe(text))
    # `{:?}` escapes newlines inside strings, so each raw newline ends one value.
    lines = text.split("\n")
    if lines[-1].strip() == "":
        lines.pop()
    if len(lines) < 2:
        raise InputError(
            "$.context", "lines of Debug text: a ComputeGraph, a PipelineConfig, …", f"{len(lines)} line(s)"
        )
    return lines


def read_graph(value: Any) -> ComputeGraph:
    d = DebugReader(GRAPH_LINE)
    root = "ComputeGraph"
    fields = d.struct(value, root, root)

    shapes: dict[int, tuple[int, ...]] = {}
    for key, shape in d.entries(
        d.field(fields, "shapes", root), f"{root}.shapes", "a map {ValueId(n): TensorShape([…])}"
    ):
        vid = d.wrapped(key, "ValueId", f"{root}.shapes")
        if vid in shapes:
            raise d.error(f"{root}.shapes", "each ValueId once", key)
        shapes[vid] = d.shape(shape, f"{root}.shapes[ValueId({vid})]")

    def known(vid: int, path: str) -> int:
        if vid not in shapes:
            raise InputError(d.at(path), "a value with a shape in ComputeGraph.shapes", f"ValueId({vid})")
        return vid

    def value_ids(listing: Any, path: str) -> tuple[int, ...]:
        return tuple(
            known(d.wrapped(v, "ValueId", f"{path}[{i}]"), f"{path}[{i}]") for i, v in enumerate(d.items(listing, path))
        )

    if "values" in fields:  # a set of ValueIds; `{}` parses as an empty map
        listed = fields["values"]
        members = listed.items if isinstance(listed, Set) else [] if listed == Map([]) else None
        if members is None:
            raise d.error(f"{root}.values", "a set {ValueId(n), …}", listed)
        for member in members:
            known(d.wrapped(member, "ValueId", f"{root}.values"), f"{root}.values")

    inputs = []
    for i, item in enumerate(d.items(d.field(fields, "inputs", root), f"{root}.inputs")):
        path = f"{root}.inputs[{i}]"
        f = d.struct(item, "GraphInput", path)
        name = d.field(f, "name", path)
        if not isinstance(name, str):
            raise d.error(f"{path}.name", "a string", name)
        vid = known(d.wrapped(d.field(f, "value", path), "ValueId", f"{path}.value"), f"{path}.value")
        shape = d.shape(d.field(f, "shape", path), f"{path}.shape")
        if shape != shapes[vid]:
            raise d.error(
                f"{path}.shape", f"the shape of ValueId({vid}) in ComputeGraph.shapes, {list(shapes[vid])}", list(shape)
            )
        inputs.append(GraphInput(name, variant_text(d.field(f, "kind", path)), vid, shape))

    operations: list[Operation] = []
    for i, item in enumerate(d.items(d.field(fields, "operations", root), f"{root}.operations")):
        path = f"{root}.operations[{i}]"
        f = d.struct(item, "Operation", path)
        op_id = d.wrapped(d.field(f, "id", path), "OperationId", f"{path}.id")
        if any(op.id == op_id for op in operations):
            raise d.error(f"{path}.id", "an operation id used once", f"OperationId({op_id})")
        kind = d.field(f, "kind", path)
        operations.append(
            Operation(
                id=op_id,
                inputs=value_ids(d.field(f, "inputs", path), f"{path}.inputs"),
                results=value_ids(d.field(f, "results", path), f"{path}.results"),
                kind_name=variant_text(kind),
                kind=render(kind),
            )
        )
    outputs = value_ids(d.field(fields, "outputs", root), f"{root}.outputs")
    return ComputeGraph(tuple(inputs), tuple(operations), outputs, dict(sorted(shapes.items())))


def plain_option(value: Any) -> OptionValue:
    """A PipelineConfig field as a plain value: None/Some(x)/unit variants/lists; else its Debug text."""
    if isinstance(value, Unit):
        return None if value.name == "None" else value.name
    if isinstance(value, Tuple) and value.name == "Some" and len(value.items) == 1:
        return plain_option(value.items[0])
    if isinstance(value, list):
        return [plain_option(v) for v in value]
    if isinstance(value, (bool, int, float, str)):
        return value
    return render(value)


def typed_option(d: DebugReader, name: str, value: Any, field: pa.Field) -> OptionValue:
    """Check a known option against its column type in ``models.search_schemas.CONFIG``."""
    plain = plain_option(value)
    path = f"PipelineConfig.{name}"
    if plain is None:
        if not field.nullable:
            raise d.error(path, "a value", value)
        return None
    if pa.types.is_integer(field.type):
        if isinstance(plain, bool) or not isinstance(plain, int) or not 0 <= plain <= MAX_INT:
            raise d.error(path, f"an integer from 0 to {MAX_INT}", value)
    elif pa.types.is_boolean(field.type):
        if not isinstance(plain, bool):
            raise d.error(path, "true or false", value)
    elif pa.types.is_list(field.type):
        if not isinstance(plain, list) or not all(
            v is None or (isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_INT) for v in plain
        ):
            raise d.error(path, "a list of integers, Some(n) or None", value)
    elif not isinstance(plain, str):
        plain = render(value)  # a structured option shown as written
    return plain


def read_config(value: Any) -> tuple[dict[str, OptionValue], dict[str, str], list[tuple[int, Any, str]]]:
    """The options, their Debug text, and the Debug input formats as ``(value id, parsed, where)``."""
    d = DebugReader(CONFIG_LINE)
    fields = d.struct(value, "PipelineConfig", "PipelineConfig")
    options: dict[str, OptionValue] = {}
    texts: dict[str, str] = {}
    known = {f.name: f for f in CONFIG if f.name not in CONFIG_DERIVED}
    for name in ("tile_count", "tile_memory_budget_bytes"):
        d.field(fields, name, "PipelineConfig")
    for name, item in fields.items():
        if name == "inputs":
            continue
        texts[name] = render(item)
        options[name] = typed_option(d, name, item, known[name]) if name in known else plain_option(item)
    if options["tile_count"] == 0:
        raise d.error("PipelineConfig.tile_count", "at least one tile", 0)

    formats: list[tuple[int, Any, str]] = []
    path = "PipelineConfig.inputs"
    for key, item in d.entries(
        d.field(fields, "inputs", "PipelineConfig"), path, "a map {ValueId(n): TensorFormat { … }}"
    ):
        vid = d.wrapped(key, "ValueId", path)
        if any(vid == seen for seen, _, _ in formats):
            raise d.error(path, "each ValueId once", key)
        formats.append((vid, item, d.at(f"{path}[ValueId({vid})]")))
    return options, texts, formats
