"""Formats in a search state (docs/formats.md §3): both spellings of a format read once each, their
shard sizes on a value's shape (docs/formats.md §2), and the input formats, whose two spellings
(``$.inputs`` serde, ``PipelineConfig.inputs`` Debug) must agree where both give one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from tilescope.models.errors import InputError
from tilescope.models.limits import MAX_BYTES
from tilescope.models.search_state import ComputeGraph, InputFormat
from tilescope.models.shard_rule import ShapeMismatch, shard_bytes
from tilescope.models.tiling import TensorFormat

from .json_fields import as_object, field_of, id_keys
from .layouts import format_from_debug, format_from_serde, layout_difference


class FormatCache:
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
            if size > MAX_BYTES:  # docs/formats.md §6: every figure at most 2^53
                raise InputError(path_of("tiling"), "a shard of at most 2^53 bytes", f"{size:,} bytes")
            self._shards[key] = size
        return size


def serde_path(where: str) -> Callable[[str], str]:
    """Paths inside a serde format at JSON path ``where``."""
    return lambda inner: f"{where}.layout.{inner}"


def debug_path(where: str) -> Callable[[str], str]:
    """Paths inside a Debug format, written as ``loaders.layouts`` writes them."""
    return lambda inner: f"{where} ({inner})"


def first_difference(expected: TensorFormat, found: TensorFormat) -> tuple[str, str, str]:
    """Where two formats first differ: ``(serde subpath, expected text, found text)``."""
    if expected.precision != found.precision:
        return "precision", expected.precision.text, found.precision.text
    difference = layout_difference(expected.layout, found.layout)
    if difference is None:  # not reached: the caller has seen them differ
        return "", str(expected), str(found)
    inner, want, got = difference
    return f"layout.{inner}", want, got


def read_input_formats(
    top: dict, debug_formats: list[tuple[int, Any, str]], graph: ComputeGraph, formats: FormatCache
) -> dict[int, InputFormat]:
    serde: dict[int, tuple[TensorFormat, str]] = {}
    for vid, key, value in id_keys(as_object(field_of(top, "inputs", "$"), "$.inputs"), "$.inputs"):
        serde[vid] = (formats.serde(value, f"$.inputs.{key}"), f"$.inputs.{key}")
    debug: dict[int, tuple[TensorFormat, str]] = {
        vid: (format_from_debug(item, where), where) for vid, item, where in debug_formats
    }

    out: dict[int, InputFormat] = {}
    for vid in sorted(set(serde) | set(debug)):
        if vid in serde:
            fmt, where = serde[vid]
            path_of = serde_path(where)
            if vid in debug:
                source = "inputs and context"
                if debug[vid][0] != fmt:
                    sub, want, got = first_difference(debug[vid][0], fmt)
                    raise InputError(f"{where}.{sub}" if sub else where, f"{want} as in {debug[vid][1]}", got)
            else:
                source = "inputs"
        else:
            fmt, where = debug[vid]
            path_of, source = debug_path(where), "context"
        if vid not in graph.shapes:
            raise InputError(where, "the format of a value with a shape in ComputeGraph.shapes", f"ValueId({vid})")
        shape = graph.shapes[vid]
        out[vid] = InputFormat(vid, shape, fmt, formats.shard_bytes(shape, fmt, path_of), source, where)
    return out
