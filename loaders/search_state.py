"""Search state (docs/formats.md §3) → validated ``SearchState`` → Arrow tables.

The file is one JSON object. Its ``context`` holds Rust ``Debug`` text, one value per line: the
``ComputeGraph``, the ``PipelineConfig`` and a third value (``None`` in the sample, kept as text).
The rest is serde JSON. Both spellings of a format become the one tiling model (``models.tiling``)
through ``loaders.layouts``.

Choices made here (docs/formats.md leaves them open):
- Input formats are written twice: ``PipelineConfig.inputs`` (Debug) and ``$.inputs`` (serde).
  The serde spelling is the one used (``INPUT_FORMAT_SOURCE``); a value both spell must get equal
  formats, else the file is rejected at the first difference. A value only one of them spells is
  taken from that one, and the ``formats`` table's ``source`` column says which.
- The chosen plan (``$.recipe.plans.<op>``) is located among ``$.alternatives.<op>`` by comparing
  the JSON objects (key order ignored). The first equal alternative is taken; none equal is an error.
- A plan's output requirement applies to the operation's only result; with several results its
  ``value_id`` and ``shard_bytes`` are null.

Every malformed input raises ``InputError`` with a JSON path (``$.recipe.plans.0.requirements…``)
or, inside the context, ``$.context line N`` followed by the position or the Debug field path.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Callable

import msgspec
import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.search_schemas import (
    CONFIG,
    CONFIG_DERIVED,
    FORMATS,
    GRAPH_INPUTS,
    GRAPH_VALUES,
    OPERATIONS,
    RECIPE,
    SEARCH_TABLES,
    dispatch_field,
    plans_schema,
)
from tilescope.models.search_state import (
    ComputeGraph,
    GraphInput,
    InputFormat,
    Operation,
    OperationPlans,
    OptionValue,
    Plan,
    Recipe,
    Requirement,
    SearchBookkeeping,
    SearchState,
)
from tilescope.models.tiling import TensorFormat, TensorTiling
from tilescope.planner.shards import ShapeMismatch, shard_bytes, shard_cuts

from .debug_text import Map, Set, Struct, Tuple, Unit, render
from .parquet import Source, write_parquet_tables
from .layouts import format_from_debug, format_from_serde, parse_debug_at, serde_to_debug_text
from .json_input import decode_error, read_bytes

# Largest id, dimension or element count we accept: exact in float64, far inside int64.
MAX_INT = 2**53
INT64_MAX = 2**63 - 1
_MISSING: Any = object()

# The context lines, 1-based as a reader counts them.
GRAPH_LINE, CONFIG_LINE = 1, 2


# ----------------------------------------------------------------------------- JSON helpers


def _get(obj: dict, key: str, path: str, default: Any = _MISSING) -> Any:
    if key in obj:
        return obj[key]
    if default is _MISSING:
        raise InputError(f"{path}.{key}", f"a field `{key}`", "none")
    return default


def _object(value: Any, path: str, what: str = "an object") -> dict:
    if not isinstance(value, dict):
        raise InputError(path, what, describe(value))
    return value


def _array(value: Any, path: str, what: str = "a list") -> list:
    if not isinstance(value, list):
        raise InputError(path, what, describe(value))
    return value


def _integer(value: Any, path: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_INT:
        raise InputError(path, f"an integer from {minimum} to {MAX_INT}", describe(value))
    return value


def _optional_integer(value: Any, path: str) -> int | None:
    return None if value is None else _integer(value, path)


def _optional_boolean(value: Any, path: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InputError(path, "true or false", describe(value))
    return value


def _text(value: Any) -> str | None:
    """A serde value in Debug spelling (null → None): for fields the explorer only shows."""
    return None if value is None else serde_to_debug_text(value)


def _variant_name(value: Any) -> str:
    """The variant of a serde externally tagged enum: ``"RowMajor"`` or ``{"Amp": …}`` → Amp."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    return serde_to_debug_text(value)


def _id_keys(obj: dict, path: str) -> list[tuple[int, str, Any]]:
    """``(id, key, value)`` of an object keyed by ids (``"0"``), in id order."""
    out = []
    for key, value in obj.items():
        # One spelling per id: "07" or "+7" would alias "7".
        if not (key.isascii() and key.isdigit()) or key != str(int(key)) or int(key) > MAX_INT:
            raise InputError(path, "object keys that are ids (\"0\", \"1\", …)", describe(key))
        out.append((int(key), key, value))
    return sorted(out)


def _decode(data: bytes) -> dict:
    try:
        top = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc) from None
    if not isinstance(top, dict):
        raise InputError("$", "a JSON object (a search state)", describe(top))
    if "timeline" in top:
        raise InputError("$", "a search state", "a memory profile")
    version = _get(top, "version", "$")
    if version != 1 or isinstance(version, bool) or not isinstance(version, int):
        raise InputError("$.version", "version 1", describe(version))
    return top


# ----------------------------------------------------------------------------- Debug helpers


def _debug_found(value: Any) -> str:
    return describe(render(value) if isinstance(value, (Unit, Struct, Tuple, Map, Set, list)) else value)


class _Debug:
    """Reads one parsed context line. Errors are at ``$.context line N <path in the Debug value>``."""

    def __init__(self, line: int):
        self.where = f"$.context line {line}"

    def at(self, path: str) -> str:
        return f"{self.where} {path}"

    def error(self, path: str, expected: str, value: Any) -> InputError:
        return InputError(self.at(path), expected, _debug_found(value))

    def struct(self, value: Any, name: str, path: str) -> dict:
        if not isinstance(value, Struct) or value.name != name:
            raise self.error(path, f"a {name} {{ … }}", value)
        return value.fields

    def field(self, fields: dict, key: str, path: str) -> Any:
        if key not in fields:
            raise InputError(self.at(f"{path}.{key}"), f"a field `{key}`", "none")
        return fields[key]

    def items(self, value: Any, path: str) -> list:
        if not isinstance(value, list):
            raise self.error(path, "a list [ … ]", value)
        return value

    def entries(self, value: Any, path: str, what: str) -> list[tuple[Any, Any]]:
        if isinstance(value, Map):
            return value.entries
        raise self.error(path, what, value)

    def integer(self, value: Any, path: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_INT:
            raise self.error(path, f"an integer from {minimum} to {MAX_INT}", value)
        return value

    def wrapped(self, value: Any, name: str, path: str) -> int:
        """``ValueId(3)``, ``OperationId(0)`` → the integer."""
        if not isinstance(value, Tuple) or value.name != name or len(value.items) != 1:
            raise self.error(path, f"{name}(n)", value)
        return self.integer(value.items[0], path)

    def shape(self, value: Any, path: str) -> tuple[int, ...]:
        if not isinstance(value, Tuple) or value.name != "TensorShape" or len(value.items) != 1:
            raise self.error(path, "TensorShape([…])", value)
        dims = tuple(self.integer(d, f"{path}[{i}]") for i, d in enumerate(self.items(value.items[0], path)))
        if math.prod(dims) > MAX_INT:
            raise self.error(path, f"at most {MAX_INT} elements", value)
        return dims


def _variant_text(value: Any) -> str:
    """The variant name of a parsed Debug enum value (``Host``, ``FlashAttention(…)`` → FlashAttention)."""
    return value.name if isinstance(value, (Unit, Struct, Tuple)) else render(value)


# ----------------------------------------------------------------------------- the context


def _context_lines(top: dict) -> list[str]:
    text = _get(top, "context", "$")
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


def _read_graph(value: Any) -> ComputeGraph:
    d = _Debug(GRAPH_LINE)
    root = "ComputeGraph"
    fields = d.struct(value, root, root)

    shapes: dict[int, tuple[int, ...]] = {}
    for key, shape in d.entries(d.field(fields, "shapes", root), f"{root}.shapes", "a map {ValueId(n): TensorShape([…])}"):
        vid = d.wrapped(key, "ValueId", f"{root}.shapes")
        if vid in shapes:
            raise d.error(f"{root}.shapes", "each ValueId once", key)
        shapes[vid] = d.shape(shape, f"{root}.shapes[ValueId({vid})]")

    def known(vid: int, path: str) -> int:
        if vid not in shapes:
            raise InputError(d.at(path), "a value with a shape in ComputeGraph.shapes", f"ValueId({vid})")
        return vid

    def value_ids(listing: Any, path: str) -> tuple[int, ...]:
        return tuple(known(d.wrapped(v, "ValueId", f"{path}[{i}]"), f"{path}[{i}]") for i, v in enumerate(d.items(listing, path)))

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
            raise d.error(f"{path}.shape", f"the shape of ValueId({vid}) in ComputeGraph.shapes, {list(shapes[vid])}", list(shape))
        inputs.append(GraphInput(name, _variant_text(d.field(f, "kind", path)), vid, shape))

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
                kind_name=_variant_text(kind),
                kind=render(kind),
            )
        )
    outputs = value_ids(d.field(fields, "outputs", root), f"{root}.outputs")
    return ComputeGraph(tuple(inputs), tuple(operations), outputs, dict(sorted(shapes.items())))


def _plain_option(value: Any) -> OptionValue:
    """A PipelineConfig field as a plain value: None/Some(x)/unit variants/lists; else its Debug text."""
    if isinstance(value, Unit):
        return None if value.name == "None" else value.name
    if isinstance(value, Tuple) and value.name == "Some" and len(value.items) == 1:
        return _plain_option(value.items[0])
    if isinstance(value, list):
        return [_plain_option(v) for v in value]
    if isinstance(value, (bool, int, float, str)):
        return value
    return render(value)


def _typed_option(d: _Debug, name: str, value: Any, field: pa.Field) -> OptionValue:
    """Check a known option against its column type in ``models.search_schemas.CONFIG``."""
    plain = _plain_option(value)
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


def _read_config(value: Any) -> tuple[dict[str, OptionValue], dict[str, str], list[tuple[int, Any, str]]]:
    """The options, their Debug text, and the Debug input formats as ``(value id, parsed, where)``."""
    d = _Debug(CONFIG_LINE)
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
        options[name] = _typed_option(d, name, item, known[name]) if name in known else _plain_option(item)
    if options["tile_count"] == 0:
        raise d.error("PipelineConfig.tile_count", "at least one tile", 0)

    formats = []
    path = "PipelineConfig.inputs"
    for key, item in d.entries(d.field(fields, "inputs", "PipelineConfig"), path, "a map {ValueId(n): TensorFormat { … }}"):
        vid = d.wrapped(key, "ValueId", path)
        if any(vid == seen for seen, _, _ in formats):
            raise d.error(path, "each ValueId once", key)
        formats.append((vid, item, d.at(f"{path}[ValueId({vid})]")))
    return options, texts, formats


# ----------------------------------------------------------------------------- formats and shards


class _Formats:
    """Parses serde formats once per distinct JSON text and shard sizes once per distinct tiling."""

    def __init__(self) -> None:
        self._formats: dict[bytes, TensorFormat] = {}
        self._shards: dict[tuple, int] = {}

    def serde(self, value: Any, where: str) -> TensorFormat:
        key = msgspec.json.encode(value)
        fmt = self._formats.get(key)
        if fmt is None:  # only successes are cached, so a bad format is reported at its first path
            fmt = self._formats[key] = format_from_serde(value, where)
        return fmt

    def shard_bytes(self, shape: tuple[int, ...], fmt: TensorFormat, path_of: Callable[[str], str]) -> int:
        """The format's shard on ``shape``; ``path_of("tiling.axes[0]")`` locates errors in the format."""
        key = (shape, fmt.precision.element_bytes, fmt.layout.tiling)
        size = self._shards.get(key)
        if size is None:
            try:
                size = shard_bytes(shape, fmt.precision.element_bytes, fmt.layout.tiling)
            except ShapeMismatch as exc:
                axis = fmt.layout.tiling.axes[exc.position].axis
                raise InputError(
                    path_of(f"tiling.axes[{exc.position}].axis"),
                    f"an axis naming a dimension of the value's shape {list(shape)}",
                    str(axis),
                ) from None
            if size > INT64_MAX:
                raise InputError(path_of("tiling"), "a shard below 2**63 bytes", str(size))
            self._shards[key] = size
        return size


def _serde_path(where: str) -> Callable[[str], str]:
    """Paths inside a serde format at JSON path ``where``."""
    return lambda inner: f"{where}.layout.{inner}"


def _debug_path(where: str) -> Callable[[str], str]:
    """Paths inside a Debug format, written as ``loaders.layouts`` writes them."""
    return lambda inner: f"{where} ({inner})"


def _first_difference(expected: TensorFormat, found: TensorFormat) -> tuple[str, str, str]:
    """Where two formats first differ: ``(serde subpath, expected text, found text)``."""
    if expected.precision != found.precision:
        return "precision", expected.precision.text, found.precision.text
    a, b = expected.layout, found.layout
    if a.order != b.order:
        return "layout.order", str(a.order), str(b.order)
    if a.memory_class != b.memory_class:
        return "layout.memory_class", a.memory_class, b.memory_class
    ta, tb = a.tiling, b.tiling
    for name in ("tile_count", "replicas"):
        if getattr(ta, name) != getattr(tb, name):
            return f"layout.tiling.{name}", str(getattr(ta, name)), str(getattr(tb, name))
    if len(ta.axes) != len(tb.axes):
        return "layout.tiling.axes", f"{len(ta.axes)} axes", f"{len(tb.axes)}"
    for i, (x, y) in enumerate(zip(ta.axes, tb.axes)):
        for field in dataclasses.fields(x):
            if getattr(x, field.name) != getattr(y, field.name):
                return f"layout.tiling.axes[{i}].{field.name}", str(getattr(x, field.name)), str(getattr(y, field.name))
    return "", str(expected), str(found)  # not reached: the caller has seen them differ


def _input_formats(
    top: dict, debug_formats: list[tuple[int, Any, str]], graph: ComputeGraph, formats: _Formats
) -> dict[int, InputFormat]:
    serde: dict[int, tuple[TensorFormat, str]] = {}
    for vid, key, value in _id_keys(_object(_get(top, "inputs", "$"), "$.inputs"), "$.inputs"):
        serde[vid] = (formats.serde(value, f"$.inputs.{key}"), f"$.inputs.{key}")
    debug: dict[int, tuple[TensorFormat, str]] = {vid: (format_from_debug(item, where), where) for vid, item, where in debug_formats}

    out: dict[int, InputFormat] = {}
    for vid in sorted(set(serde) | set(debug)):
        if vid in serde:
            fmt, where = serde[vid]
            path_of = _serde_path(where)
            if vid in debug:
                source = "inputs and context"
                if debug[vid][0] != fmt:
                    sub, want, got = _first_difference(debug[vid][0], fmt)
                    raise InputError(f"{where}.{sub}" if sub else where, f"{want} as in {debug[vid][1]}", got)
            else:
                source = "inputs"
        else:
            fmt, where = debug[vid]
            path_of, source = _debug_path(where), "context"
        if vid not in graph.shapes:
            raise InputError(where, "the format of a value with a shape in ComputeGraph.shapes", f"ValueId({vid})")
        shape = graph.shapes[vid]
        out[vid] = InputFormat(vid, shape, fmt, formats.shard_bytes(shape, fmt, path_of), source, where)
    return out


# ----------------------------------------------------------------------------- plans


def _flatten_dispatch(dispatch: Any) -> tuple[str | None, dict[str, Any], dict[str, str]]:
    """``{"Attention": {"query_key": {"rows": 6}}}`` → ``("Attention", {"query_key_rows": 6}, paths)``.

    Nested keys are joined by '_' (a later key that flattens to an earlier name replaces it; the
    sample has none). A leaf that is a list stays a list.
    """
    if isinstance(dispatch, str):
        return dispatch, {}, {}
    kind, body, base = None, dispatch, "dispatch"
    if isinstance(dispatch, dict) and len(dispatch) == 1:
        (kind, body), = dispatch.items()
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


def _requirement(
    value: Any, path: str, role: str, position: int | None, vid: int | None, graph: ComputeGraph, formats: _Formats
) -> Requirement:
    entry = _object(value, path, "a requirement object (format, local_staging, materialization)")
    fmt_path = f"{path}.format"
    fmt = formats.serde(_get(entry, "format", path), fmt_path)
    shape = None if vid is None else graph.shapes[vid]
    size = None if shape is None else formats.shard_bytes(shape, fmt, _serde_path(fmt_path))
    return Requirement(
        role=role,
        position=position,
        value=vid,
        shape=shape,
        format=fmt,
        shard_bytes=size,
        local_staging=_text(entry.get("local_staging")),
        materialization=_text(entry.get("materialization")),
        json_path=fmt_path,
    )


def _read_plan(value: Any, path: str, operation: Operation, index: int, graph: ComputeGraph, formats: _Formats) -> Plan:
    plan = _object(value, path, "a plan object (operator, dispatch, requirements)")
    operator = _get(plan, "operator", path)
    dispatch_kind, dispatch, dispatch_paths = _flatten_dispatch(_get(plan, "dispatch", path))
    rpath = f"{path}.requirements"
    requirements = _object(_get(plan, "requirements", path), rpath, "an object (inputs, output, output_aliasing)")
    listed = _array(_get(requirements, "inputs", rpath), f"{rpath}.inputs")
    if len(listed) != len(operation.inputs):
        raise InputError(
            f"{rpath}.inputs", f"{len(operation.inputs)} entries, one per input of operation {operation.id}", describe(listed)
        )
    inputs = tuple(
        _requirement(item, f"{rpath}.inputs[{i}]", "input", i, operation.inputs[i], graph, formats)
        for i, item in enumerate(listed)
    )
    result = operation.results[0] if len(operation.results) == 1 else None
    output = _requirement(_get(requirements, "output", rpath), f"{rpath}.output", "output", None, result, graph, formats)
    return Plan(
        operation=operation.id,
        index=index,
        operator_kind=_variant_name(operator),
        operator=serde_to_debug_text(operator),
        dispatch_kind=dispatch_kind,
        dispatch=dispatch,
        dispatch_paths=dispatch_paths,
        inputs=inputs,
        output=output,
        output_aliasing=_text(requirements.get("output_aliasing")),
        deferred_output=_text(plan.get("deferred_output")),
    )


def _operation_ids(obj: dict, path: str, graph: ComputeGraph) -> list[tuple[int, str, Any]]:
    entries = _id_keys(obj, path)
    ids = [op.id for op in graph.operations]
    for op_id, key, _ in entries:
        if op_id not in ids:
            raise InputError(f"{path}.{key}", f"an operation of the graph ({', '.join(map(str, ids)) or 'none'})", key)
    return entries


def _read_plans(recipe: dict, top: dict, graph: ComputeGraph, formats: _Formats) -> dict[int, OperationPlans]:
    chosen_objects = _object(_get(recipe, "plans", "$.recipe"), "$.recipe.plans")
    alternatives = _object(_get(top, "alternatives", "$"), "$.alternatives")

    # The recipe's plans are read (validated) first, so a bad one is reported at its own path.
    chosen: dict[int, tuple[str, Any]] = {}
    for op_id, key, value in _operation_ids(chosen_objects, "$.recipe.plans", graph):
        _read_plan(value, f"$.recipe.plans.{key}", graph.operation(op_id), 0, graph, formats)
        chosen[op_id] = (key, value)

    listed: dict[int, tuple[Plan, ...]] = {}
    for op_id, key, value in _operation_ids(alternatives, "$.alternatives", graph):
        path = f"$.alternatives.{key}"
        operation = graph.operation(op_id)
        listed[op_id] = tuple(
            _read_plan(item, f"{path}[{i}]", operation, i, graph, formats)
            for i, item in enumerate(_array(value, path, "a list of candidate plans"))
        )

    out: dict[int, OperationPlans] = {}
    for operation in graph.operations:
        index = None
        if operation.id in chosen:
            key, plan = chosen[operation.id]
            if operation.id not in listed:
                raise InputError(f"$.alternatives.{key}", "the candidate plans of an operation with a chosen plan", "none")
            # Compare JSON values with keys sorted; msgspec keeps `true` and `1` apart, unlike `==`.
            wanted = msgspec.json.encode(plan, order="sorted")
            candidates = _array(alternatives[key], f"$.alternatives.{key}")
            index = next((i for i, c in enumerate(candidates) if msgspec.json.encode(c, order="sorted") == wanted), None)
            if index is None:
                raise InputError(
                    f"$.recipe.plans.{key}",
                    f"one of the {len(candidates)} plans in $.alternatives.{key}",
                    "a plan equal to none of them",
                )
        out[operation.id] = OperationPlans(operation.id, listed.get(operation.id, ()), index)
    return out


# ----------------------------------------------------------------------------- recipe and bookkeeping


def _read_recipe(recipe: dict) -> Recipe:
    path = "$.recipe"
    boundaries = _array(_get(recipe, "open_boundaries", path, []), f"{path}.open_boundaries")
    pairs = []
    for i, pair in enumerate(_array(_get(recipe, "cast_before_copies", path, []), f"{path}.cast_before_copies")):
        where = f"{path}.cast_before_copies[{i}]"
        items = _array(pair, where, "a pair [a, b]")
        if len(items) != 2:
            raise InputError(where, "a pair [a, b]", describe(items))
        pairs.append((_integer(items[0], f"{where}[0]"), _integer(items[1], f"{where}[1]")))
    return Recipe(
        open_boundaries=tuple(serde_to_debug_text(b) for b in boundaries),
        cast_before_copies=tuple(pairs),
        packing_rows=_text(recipe.get("packing_rows")),
        parallel_reductions=_optional_integer(recipe.get("parallel_reductions"), f"{path}.parallel_reductions"),
        disjoint_copy_sources=_optional_boolean(recipe.get("disjoint_copy_sources"), f"{path}.disjoint_copy_sources"),
        in_place_casts=_text(recipe.get("in_place_casts")),
    )


def _read_bookkeeping(top: dict) -> SearchBookkeeping:
    return SearchBookkeeping(
        visited=len(_array(top.get("visited", []), "$.visited")),
        mapping=_text(top.get("mapping")),
        mapping_checked=_optional_boolean(top.get("mapping_checked"), "$.mapping_checked"),
        attempts=_optional_integer(top.get("attempts"), "$.attempts"),
    )


# ----------------------------------------------------------------------------- loading


def parse_search_state(data: bytes, source: str = "<search state>") -> SearchState:
    """Validate and read a search state's bytes. Errors name ``source``."""
    try:
        top = _decode(data)
        lines = _context_lines(top)
        graph = _read_graph(parse_debug_at(lines[0], f"$.context line {GRAPH_LINE}"))
        options, texts, debug_formats = _read_config(parse_debug_at(lines[1], f"$.context line {CONFIG_LINE}"))
        for n, line in enumerate(lines[2:], start=CONFIG_LINE + 1):
            parse_debug_at(line, f"$.context line {n}")  # checked, kept as written
        formats = _Formats()
        input_formats = _input_formats(top, debug_formats, graph, formats)
        recipe = _object(_get(top, "recipe", "$"), "$.recipe")
        plans = _read_plans(recipe, top, graph, formats)
        return SearchState(
            source=source,
            version=1,
            graph=graph,
            options=options,
            option_text=texts,
            input_formats=input_formats,
            plans=plans,
            recipe=_read_recipe(recipe),
            bookkeeping=_read_bookkeeping(top),
            context_rest=tuple(lines[2:]),
        )
    except RecursionError:
        # msgspec's decoder and the recursive readers here and in loaders.layouts give up on very
        # deep nesting; no search state nests more than a few levels.
        raise InputError("$", "JSON nested a few hundred levels deep at most", "deeper nesting", file=source) from None
    except InputError as exc:
        raise exc.in_file(source) from None


def load_search_state(path: str | Path) -> SearchState:
    """Read ``*.search_state.json``. Input formats come from ``$.inputs`` (see the module doc)."""
    return parse_search_state(read_bytes(path), str(path))


# ----------------------------------------------------------------------------- tables


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
                "role": "arrives", "value_id": f.value, "operation_id": None, "alternative": None, "chosen": None,
                "input_position": None, "source": f.source, "json_path": f.json_path,
                **columns(f.format, f.shape, f.shard_bytes),
                "local_staging": None, "materialization": None,
            }
        )
    for plans in state.plans.values():
        for plan in plans.alternatives:
            for r in (*plan.inputs, plan.output):
                rows.append(
                    {
                        "role": r.role, "value_id": r.value, "operation_id": plan.operation,
                        "alternative": plan.index, "chosen": plan.index == plans.chosen,
                        "input_position": r.position, "source": "alternatives", "json_path": r.json_path,
                        **columns(r.format, r.shape, r.shard_bytes),
                        "local_staging": r.local_staging, "materialization": r.materialization,
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
    return dispatch_field(name, pa.string(), path), [_text(v) for v in values]


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
    }


def search_state_tables(state: SearchState) -> dict[str, pa.Table]:
    """The search state's Arrow tables, by name (schemas in ``models.search_schemas``)."""
    g = state.graph
    producers = {vid: op.id for op in g.operations for vid in op.results}
    input_values = {i.value for i in g.inputs}
    tables = {
        "graph_inputs": _table(
            [{"name": i.name, "kind": i.kind, "value_id": i.value, "shape": list(i.shape)} for i in g.inputs], GRAPH_INPUTS
        ),
        "operations": _table(
            [
                {
                    "id": op.id, "kind_name": op.kind_name, "kind": op.kind,
                    "inputs": list(op.inputs), "results": list(op.results),
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
                    "id": vid, "shape": list(shape), "is_graph_input": vid in input_values,
                    "is_graph_output": vid in g.outputs, "producer": producers.get(vid),
                }
                for vid, shape in g.shapes.items()
            ],
            GRAPH_VALUES,
        ),
        "config": _table([_config_row(state)], CONFIG),
        "formats": _table(_formats_rows(state), FORMATS),
        "plans": _plans_table(state),
        "recipe": _table([_recipe_row(state)], RECIPE),
    }
    assert list(tables) == list(SEARCH_TABLES)
    return tables


def write_search_state_tables(state: SearchState, out_dir: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write each table as ``out_dir/<table>.parquet`` (the directory is created; metadata of
    ``loaders.parquet`` naming ``state.source``, which is read to hash it); returns the paths."""
    return write_parquet_tables(search_state_tables(state), out_dir, Source.of_file(state.source), overwrite=overwrite)
