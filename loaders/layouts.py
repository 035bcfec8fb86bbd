"""Both spellings of a layout, precision and format → the one tiling model (``models.tiling``).

Debug spelling:  ``Layout { order: Amp(Left), tiling: TensorTiling { ... }, memory_class: ... }``
serde spelling:  ``{"order": {"Amp": "Left"}, "tiling": {...}, "memory_class": "..."}``

Errors are ``InputError`` located by the JSON path of the field that holds the text (``where``)
plus the path inside the layout.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilescope.models.errors import InputError, describe
from tilescope.models.tiling import (
    AXIS_KINDS,
    Axis,
    AxisTiling,
    Layout,
    LayoutOrder,
    Precision,
    TensorFormat,
    TensorTiling,
    element_bytes_of,
)

from .debug_text import DebugSyntaxError, Struct, Tuple, Unit, parse_debug, render

_AXIS_INT_FIELDS = ("partitions", "padding_groups", "block_size", "padding_multiple", "shard_padding_multiple")
# Largest count we accept anywhere in a tiling: far above any device, far below int64 overflow
# when partitions and replicas are multiplied together.
MAX_COUNT = 1 << 31


def _fail(where: str, inner: str, expected: str, found: str) -> InputError:
    """An error at JSON path ``where``, ``inner`` being the path inside the layout it holds."""
    path = f"{where} ({inner})" if inner else where
    return InputError(path, expected, found)


def _count(value: Any, where: str, inner: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, inner, "an integer", describe(value))
    if value < minimum or value > MAX_COUNT:
        raise _fail(where, inner, f"an integer from {minimum} to {MAX_COUNT}", describe(value))
    return value


# ----------------------------------------------------------------------------- Debug spelling


def _fields(value: Any, name: str, where: str, inner: str) -> dict:
    if not isinstance(value, Struct) or value.name != name:
        found = render(value) if isinstance(value, (Unit, Struct, Tuple)) else value
        raise _fail(where, inner, f"a {name} {{ ... }}", describe(found))
    return value.fields


def _field(fields: dict, key: str, where: str, inner: str) -> Any:
    if key not in fields:
        raise _fail(where, f"{inner}.{key}" if inner else key, f"a field `{key}`", "none")
    return fields[key]


def axis_from_debug(value: Any, where: str, inner: str) -> Axis:
    if isinstance(value, Unit) and value.name == "Linear":
        return Axis("Linear")
    if isinstance(value, Tuple) and value.name in ("FromStart", "FromEnd") and len(value.items) == 1:
        return Axis(value.name, _count(value.items[0], where, inner, minimum=0 if value.name == "FromStart" else 1))
    raise _fail(where, inner, "an axis kind FromStart(k), FromEnd(k) or Linear", describe(render(value)))


def _option_int(value: Any, where: str, inner: str) -> int | None:
    if isinstance(value, Unit) and value.name == "None":
        return None
    if isinstance(value, Tuple) and value.name == "Some" and len(value.items) == 1:
        return _count(value.items[0], where, inner)
    raise _fail(where, inner, "Some(n) or None", describe(render(value)))


def _variant_name(value: Any, where: str, inner: str) -> str:
    if isinstance(value, Unit):
        return value.name
    raise _fail(where, inner, "a unit variant", describe(render(value)))


def axis_tiling_from_debug(value: Any, where: str, inner: str) -> AxisTiling:
    f = _fields(value, "AxisTiling", where, inner)
    ints = {k: _count(_field(f, k, where, inner), where, f"{inner}.{k}") for k in _AXIS_INT_FIELDS}
    return AxisTiling(
        axis=axis_from_debug(_field(f, "axis", where, inner), where, f"{inner}.axis"),
        padding=_variant_name(_field(f, "padding", where, inner), where, f"{inner}.padding"),
        tile_stride=_option_int(_field(f, "tile_stride", where, inner), where, f"{inner}.tile_stride"),
        **ints,
    )


def tiling_from_debug(value: Any, where: str, inner: str = "tiling") -> TensorTiling:
    f = _fields(value, "TensorTiling", where, inner)
    axes = _field(f, "axes", where, inner)
    if not isinstance(axes, list):
        raise _fail(where, f"{inner}.axes", "a list of AxisTiling", describe(axes))
    return TensorTiling(
        tile_count=_count(_field(f, "tile_count", where, inner), where, f"{inner}.tile_count"),
        replicas=_count(_field(f, "replicas", where, inner), where, f"{inner}.replicas"),
        axes=tuple(axis_tiling_from_debug(a, where, f"{inner}.axes[{i}]") for i, a in enumerate(axes)),
    )


def order_from_debug(value: Any) -> LayoutOrder:
    if isinstance(value, Unit):
        return LayoutOrder(value.name)
    if isinstance(value, Tuple):
        return LayoutOrder(value.name, ", ".join(render(v) for v in value.items))
    if isinstance(value, Struct):
        return LayoutOrder(value.name, render(Struct("", value.fields)).strip())
    return LayoutOrder(render(value))


def layout_from_debug(value: Any, where: str) -> Layout:
    f = _fields(value, "Layout", where, "")
    return Layout(
        order=order_from_debug(_field(f, "order", where, "")),
        tiling=tiling_from_debug(_field(f, "tiling", where, ""), where),
        memory_class=_variant_name(_field(f, "memory_class", where, ""), where, "memory_class"),
    )


def parse_debug_at(text: Any, where: str):
    """Parse Debug text held at JSON path ``where``; a syntax error becomes a located InputError."""
    if not isinstance(text, str):
        raise InputError(where, "a string of Rust Debug text", describe(text))
    try:
        return parse_debug(text)
    except DebugSyntaxError as exc:
        raise debug_syntax_error(exc, where) from None


def debug_syntax_error(exc: DebugSyntaxError, where: str) -> InputError:
    """A Debug-text syntax error in the string at JSON path ``where``: position and excerpt."""
    return InputError(
        f"{where} (character {exc.position})",
        f"Debug text ({exc.expected})",
        f"{exc.snippet!r} with the error at offset {exc.caret} of that excerpt",
    )


def layout_from_debug_text(text: Any, where: str) -> Layout:
    return layout_from_debug(parse_debug_at(text, where), where)


def precision_from_debug(value: Any, where: str, text: str | None = None) -> Precision:
    if isinstance(value, (Unit, Struct, Tuple)):
        size = element_bytes_of(value.name)
        if size is not None:
            return Precision(value.name, size, text if text is not None else render(value))
        raise InputError(where, "a precision F16, F32 or F8…", describe(render(value)))
    raise InputError(where, "a precision F16, F32 or F8…", describe(value))


def precision_from_text(text: Any, where: str) -> Precision:
    return precision_from_debug(parse_debug_at(text, where), where, text)


def layout_difference(expected: Layout, found: Layout) -> tuple[str, str, str] | None:
    """Where two layouts first differ: ``(path inside the layout, expected text, found text)``,
    e.g. ``("tiling.axes[0].partitions", "46", "23")``; None when they are equal."""
    if expected.order != found.order:
        return "order", str(expected.order), str(found.order)
    if expected.memory_class != found.memory_class:
        return "memory_class", expected.memory_class, found.memory_class
    a, b = expected.tiling, found.tiling
    for name in ("tile_count", "replicas"):
        if getattr(a, name) != getattr(b, name):
            return f"tiling.{name}", str(getattr(a, name)), str(getattr(b, name))
    if len(a.axes) != len(b.axes):
        return "tiling.axes", f"{len(a.axes)} axes", f"{len(b.axes)}"
    for i, (x, y) in enumerate(zip(a.axes, b.axes)):
        for field in dataclasses.fields(x):
            if getattr(x, field.name) != getattr(y, field.name):
                return f"tiling.axes[{i}].{field.name}", str(getattr(x, field.name)), str(getattr(y, field.name))
    return None


# ----------------------------------------------------------------------------- serde spelling


def _obj(value: Any, where: str, inner: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(where, inner, what, describe(value))
    return value


def _key(obj: dict, key: str, where: str, inner: str) -> Any:
    if key not in obj:
        raise _fail(where, f"{inner}.{key}" if inner else key, f"a field `{key}`", "none")
    return obj[key]


def axis_from_serde(value: Any, where: str) -> Axis:
    if value == "Linear":
        return Axis("Linear")
    if isinstance(value, dict) and len(value) == 1:
        ((kind, index),) = value.items()
        if kind in ("FromStart", "FromEnd"):
            return Axis(kind, _count(index, where, "", minimum=0 if kind == "FromStart" else 1))
    raise InputError(where, f"an axis kind ({', '.join(AXIS_KINDS)})", describe(value))


def axis_tiling_from_serde(value: Any, where: str) -> AxisTiling:
    obj = _obj(value, where, "", "an AxisTiling object")
    stride = _key(obj, "tile_stride", where, "")
    padding = _key(obj, "padding", where, "")
    if not isinstance(padding, str):
        raise InputError(f"{where}.padding", "a padding name", describe(padding))
    return AxisTiling(
        axis=axis_from_serde(_key(obj, "axis", where, ""), f"{where}.axis"),
        padding=padding,
        tile_stride=None if stride is None else _count(stride, f"{where}.tile_stride", ""),
        **{k: _count(_key(obj, k, where, ""), f"{where}.{k}", "") for k in _AXIS_INT_FIELDS},
    )


def tiling_from_serde(value: Any, where: str) -> TensorTiling:
    obj = _obj(value, where, "", "a TensorTiling object")
    axes = _key(obj, "axes", where, "")
    if not isinstance(axes, list):
        raise InputError(f"{where}.axes", "a list", describe(axes))
    return TensorTiling(
        tile_count=_count(_key(obj, "tile_count", where, ""), f"{where}.tile_count", ""),
        replicas=_count(_key(obj, "replicas", where, ""), f"{where}.replicas", ""),
        axes=tuple(axis_tiling_from_serde(a, f"{where}.axes[{i}]") for i, a in enumerate(axes)),
    )


def serde_to_debug_text(value: Any) -> str:
    """Render a serde externally-tagged enum as its Debug spelling (for display and comparison)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(serde_to_debug_text(v) for v in value) + "]"
    if isinstance(value, dict):
        if len(value) == 1:
            ((name, inner),) = value.items()
            if isinstance(inner, dict):
                body = ", ".join(f"{k}: {serde_to_debug_text(v)}" for k, v in inner.items())
                return f"{name} {{ {body} }}"
            return f"{name}({serde_to_debug_text(inner)})"
        return "{ " + ", ".join(f"{k}: {serde_to_debug_text(v)}" for k, v in value.items()) + " }"
    return str(value)


def order_from_serde(value: Any) -> LayoutOrder:
    if isinstance(value, str):
        return LayoutOrder(value)
    if isinstance(value, dict) and len(value) == 1:
        ((name, inner),) = value.items()
        return LayoutOrder(name, serde_to_debug_text(inner))
    return LayoutOrder(serde_to_debug_text(value))


def layout_from_serde(value: Any, where: str) -> Layout:
    obj = _obj(value, where, "", "a Layout object")
    memory_class = _key(obj, "memory_class", where, "")
    if not isinstance(memory_class, str):
        raise InputError(f"{where}.memory_class", "a memory class name", describe(memory_class))
    return Layout(
        order=order_from_serde(_key(obj, "order", where, "")),
        tiling=tiling_from_serde(_key(obj, "tiling", where, ""), f"{where}.tiling"),
        memory_class=memory_class,
    )


def precision_from_serde(value: Any, where: str) -> Precision:
    if isinstance(value, str):
        name, text = value, value
    elif isinstance(value, dict) and len(value) == 1:
        name = next(iter(value))
        text = serde_to_debug_text(value)
    else:
        raise InputError(where, "a precision F16, F32 or F8…", describe(value))
    size = element_bytes_of(name)
    if size is None:
        raise InputError(where, "a precision F16, F32 or F8…", describe(name))
    return Precision(name, size, text)


def format_from_serde(value: Any, where: str) -> TensorFormat:
    obj = _obj(value, where, "", "a TensorFormat object")
    return TensorFormat(
        precision=precision_from_serde(_key(obj, "precision", where, ""), f"{where}.precision"),
        layout=layout_from_serde(_key(obj, "layout", where, ""), f"{where}.layout"),
    )


def format_from_debug(value: Any, where: str) -> TensorFormat:
    f = _fields(value, "TensorFormat", where, "")
    return TensorFormat(
        precision=precision_from_debug(_field(f, "precision", where, ""), where),
        layout=layout_from_debug(_field(f, "layout", where, ""), where),
    )
