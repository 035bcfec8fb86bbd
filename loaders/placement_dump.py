"""Reading a placement constraint dump of osmarks/ipu-stack (``compiler-formats.md`` §4): version 1,
or the older form of the compiler's test fixtures (no ``version``, ``placed``, region constants,
``host_scratch_range`` or ``assigned_root_spans``: the compiler's compile-time constants are used,
as its tests do). Every bad field is a located ``InputError`` (JSON path, what was expected, what
was found); the file is never written to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tilescope.models.errors import InputError, describe, json_path
from tilescope.models.placement_problem import (
    DEFAULT_HOST_SCRATCH_RANGE,
    DEFAULT_REGION0_ELEMENT_BYTES,
    DEFAULT_REGION1_ELEMENT_BYTES,
    DEFAULT_REGION_BOUNDARY,
    INTERLEAVED,
    STANDARD,
    PlacementProblem,
    PlacementRequest,
)

from .json_fields import as_integer, as_list, as_object, field_of
from .json_input import read_bytes
from .json_scan import decode_error

_CLASSES = (STANDARD, INTERLEAVED)
MAX_ADDRESS = 1 << 40  # far above any tile's memory; keeps every sum of sizes exact in int64


def looks_like_placement_dump(first_bytes: bytes) -> bool:
    """A cheap sniff of a file's first bytes: a JSON object whose first kilobytes name the dump's
    own keys (``ranges`` and ``requests``, or ``interleaved_offset``) and no profile's keys."""
    head = bytes(first_bytes[:65536]).lstrip()
    if not head.startswith(b"{"):
        return False

    def has(key: bytes) -> bool:
        return (b'"' + key + b'"') in head

    if has(b"timeline") or has(b"peak"):
        return False
    return has(b"interleaved_offset") or (has(b"ranges") and has(b"requests"))


def _interval(value: Any, path: str, what: str) -> tuple[int, int]:
    pair = as_list(value, path, f"{what} as [start, end]")
    if len(pair) != 2:
        raise InputError(path, f"{what} as [start, end]", describe(pair))
    start = as_integer(pair[0], f"{path}[0]")
    end = as_integer(pair[1], f"{path}[1]")
    if end <= start or end > MAX_ADDRESS:
        raise InputError(path, f"{what} with start < end ≤ {MAX_ADDRESS:,}", f"[{start}, {end}]")
    return start, end


def _power_of_two(value: Any, path: str) -> int:
    number = as_integer(value, path, minimum=1)
    if number & (number - 1) or number > MAX_ADDRESS:
        raise InputError(path, "a power of two", describe(value))
    return number


def _request(raw: Any, index: int) -> PlacementRequest:
    path = json_path("requests", index)
    obj = as_object(raw, path)
    kind = field_of(obj, "class", path)
    if kind not in _CLASSES:
        raise InputError(f"{path}.class", " or ".join(_CLASSES), describe(kind))
    lifetime = as_object(field_of(obj, "lifetime", path), f"{path}.lifetime")
    first = as_integer(field_of(lifetime, "first", f"{path}.lifetime"), f"{path}.lifetime.first")
    last = as_integer(field_of(lifetime, "last", f"{path}.lifetime"), f"{path}.lifetime.last")
    if last < first:
        raise InputError(f"{path}.lifetime.last", f"an event at or after first ({first})", describe(last))
    size = as_integer(field_of(obj, "bytes", path), f"{path}.bytes")
    if size > MAX_ADDRESS:
        raise InputError(f"{path}.bytes", f"at most {MAX_ADDRESS:,} bytes", describe(size))
    alignment = _power_of_two(field_of(obj, "alignment", path), f"{path}.alignment")
    stride_raw = field_of(obj, "region1_stride", path, None)
    stride = None if stride_raw is None else as_integer(stride_raw, f"{path}.region1_stride", minimum=1)
    if stride is not None and stride > MAX_ADDRESS:
        raise InputError(f"{path}.region1_stride", f"at most {MAX_ADDRESS:,}", describe(stride))
    roots = []
    for j, item in enumerate(as_list(field_of(obj, "assignments", path), f"{path}.assignments")):
        where = f"{path}.assignments[{j}]"
        pair = as_list(item, where, "[root id, byte offset]")
        if len(pair) != 2:
            raise InputError(where, "[root id, byte offset]", describe(pair))
        roots.append((as_integer(pair[0], f"{where}[0]"), as_integer(pair[1], f"{where}[1]")))
    if not roots:
        raise InputError(f"{path}.assignments", "at least one [root id, byte offset]", "an empty list")
    conflicts = tuple(
        as_integer(c, f"{path}.conflicts[{j}]")
        for j, c in enumerate(as_list(field_of(obj, "conflicts", path, []), f"{path}.conflicts"))
    )
    return PlacementRequest(index, tuple(roots), kind, first, last, size, alignment, stride, conflicts)


def _parse(doc: Any, name: str) -> PlacementProblem:
    obj = as_object(doc, "$", "a placement dump (a JSON object)")
    version = field_of(obj, "version", "$", None)
    if version is not None and (isinstance(version, bool) or version != 1):
        raise InputError("$.version", "1 (the only placement dump version tilescope reads)", describe(version))
    tile = field_of(obj, "tile", "$", None)
    tile = None if tile is None else as_integer(tile, "$.tile")
    placed = field_of(obj, "placed", "$", None)
    if placed is not None and not isinstance(placed, bool):
        raise InputError("$.placed", "true or false", describe(placed))
    ranges: list[tuple[int, int]] = []
    for i, item in enumerate(as_list(field_of(obj, "ranges", "$"), "$.ranges")):
        start, end = _interval(item, json_path("ranges", i), "a range")
        if ranges and start < ranges[-1][1]:
            raise InputError(
                json_path("ranges", i), f"ranges ascending and disjoint (start ≥ {ranges[-1][1]})", describe(start)
            )
        ranges.append((start, end))
    boundary = as_integer(field_of(obj, "region_boundary", "$", DEFAULT_REGION_BOUNDARY), "$.region_boundary")
    element0 = _power_of_two(
        field_of(obj, "region0_element_bytes", "$", DEFAULT_REGION0_ELEMENT_BYTES), "$.region0_element_bytes"
    )
    element1 = _power_of_two(
        field_of(obj, "region1_element_bytes", "$", DEFAULT_REGION1_ELEMENT_BYTES), "$.region1_element_bytes"
    )
    if boundary % element0 or boundary % element1 or boundary > MAX_ADDRESS:
        raise InputError(
            "$.region_boundary", f"a multiple of both element sizes ({element0}, {element1})", describe(boundary)
        )
    offset = as_integer(field_of(obj, "interleaved_offset", "$", 0), "$.interleaved_offset")
    if offset >= element1:
        raise InputError("$.interleaved_offset", f"less than the region-1 element ({element1})", describe(offset))
    host_raw = field_of(obj, "host_scratch_range", "$", list(DEFAULT_HOST_SCRATCH_RANGE))
    host = None if host_raw is None else _interval(host_raw, "$.host_scratch_range", "the host scratch range")
    requests = tuple(_request(raw, i) for i, raw in enumerate(as_list(field_of(obj, "requests", "$"), "$.requests")))
    owner: dict[int, int] = {}
    for request in requests:
        for j, (root, _offset) in enumerate(request.roots):
            if root in owner:
                raise InputError(
                    json_path("requests", request.index, "assignments", j, 0),
                    f"a root id owned by one request only (root {root} is already in requests[{owner[root]}])",
                    describe(root),
                )
            owner[root] = request.index
    spans: dict[int, tuple[int, int]] = {}
    raw_spans = as_object(field_of(obj, "assigned_root_spans", "$", {}), "$.assigned_root_spans")
    for key, value in raw_spans.items():
        where = f"$.assigned_root_spans.{key}"
        if not (isinstance(key, str) and key.isdigit()):
            raise InputError(where, "a root id (decimal digits) as the key", describe(key))
        spans[int(key)] = _interval(value, where, "a group span")
    return PlacementProblem(
        name=name,
        kind="dump",
        requests=requests,
        ranges=tuple(ranges),
        plain=False,
        tile=tile,
        placed=placed,
        region_boundary=boundary,
        region0_element_bytes=element0,
        region1_element_bytes=element1,
        interleaved_offset=offset,
        host_scratch_range=host,
        assigned_root_spans=spans,
        version=version,
    )


def load_placement_dump(source: str | Path | bytes, name: str | None = None) -> PlacementProblem:
    """Read a dump from a path or its bytes; ``name`` names it in errors and results (default: the
    path, or ``"<bytes>"``)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), name or "<bytes>"
    else:
        label = name or str(source)
        data = read_bytes(source)
    try:
        doc = msgspec.json.decode(data)
        return _parse(doc, label)
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc, "a placement dump (a JSON object)").in_file(label) from None
    except InputError as exc:
        raise exc.in_file(label) from None
