"""Placement profile (``placement-{pid}.json``, schema 1, ``shared/spec/compiler-formats.md`` §5) →
``models.placement_profile.PlacementProfile`` (two Arrow tables).

The JSON is decoded by msgspec into typed structs (a wrong type or a missing field is located by
its JSON path, ``$.tiles[3].allocations[7].start``), then checked row by row with numpy; the first
broken rule is raised as ``InputError`` at that row's path. Choices (docs/formats.md, "Placement
profiles"):

- rows are sorted by ``(first, start, last)`` per tile here (the compiler writes them so; a file
  that does not is read, not refused);
- ``start ≤ payload_end ≤ end`` and ``file start ≤ start``, ``end ≤ file end`` are required; a
  zero-length row is allowed (a shard of no bytes);
- ``first ≤ last``; ``label`` must index ``labels``; ``kind`` one of ``models.placement_profile.KINDS``;
- logical tile indices are unique; unknown keys are ignored (the schema grows by adding keys).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_INT
from tilescope.models.placement_profile import ALLOCATIONS, KINDS, PROGRAM_END, SCHEMA_VERSION, TILES, PlacementProfile

from .json_input import read_bytes, validation_error
from .json_scan import decode_error, nesting_error, refuse_deep_nesting, refuse_duplicate_keys

_Int = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]
SNIFF_BYTES = 4096  # how much of a file ``looks_like_placement_profile`` reads


class _Allocation(msgspec.Struct):
    start: _Int
    end: _Int
    payload_end: _Int
    label: _Int
    kind: str
    first: _Int
    last: _Int
    shards: list[_Int] = []


class _Tile(msgspec.Struct):
    logical: _Int
    physical: _Int
    allocations: list[_Allocation]


class _Profile(msgspec.Struct):
    schema_version: int
    start: _Int
    end: _Int
    labels: list[str]
    tiles: list[_Tile]


class _Version(msgspec.Struct):
    schema_version: msgspec.Raw = msgspec.Raw(b"")


_DECODER = msgspec.json.Decoder(_Profile)
_VERSION = msgspec.json.Decoder(_Version)


def looks_like_placement_profile(first_bytes: bytes) -> bool:
    """Whether a file starting with ``first_bytes`` is a placement profile (a cheap sniff): an object
    naming ``schema_version`` near its start (the compiler writes it first; ``labels`` may push
    ``tiles`` far down), and no memory profile's ``timeline``. A false positive is harmless: the
    loader then says what is wrong, located."""
    head = bytes(first_bytes[:SNIFF_BYTES]).lstrip()
    return head.startswith(b"{") and b'"schema_version"' in head and b'"timeline"' not in head


def parse_placement_profile(data: bytes, source: str = "<placement profile>") -> PlacementProfile:
    """Validate and read a placement profile's bytes. Errors name ``source``."""
    data = bytes(data)
    try:
        return _parse(data, source)
    except InputError as exc:
        raise exc.in_file(source) from None


def load_placement_profile(path: str | Path) -> PlacementProfile:
    return parse_placement_profile(read_bytes(path), str(path))


def _parse(data: bytes, source: str) -> PlacementProfile:
    try:
        version = _VERSION.decode(data).schema_version
    except msgspec.ValidationError:
        raise InputError("$", "a JSON object (a placement profile)", _top_kind(data)) from None
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc, "a JSON object (a placement profile)") from None
    except RecursionError:
        raise nesting_error(data) from None
    if not bytes(version):
        raise InputError("$.schema_version", "a field `schema_version` (1)", "none")
    if bytes(version).strip() != str(SCHEMA_VERSION).encode():
        raise InputError(
            "$.schema_version",
            f"schema version {SCHEMA_VERSION}",
            " ".join(bytes(version).decode("utf-8", "replace").split())[:40],
        )
    refuse_deep_nesting(data)
    refuse_duplicate_keys(data)
    try:
        top = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise validation_error(exc, data) from None
    if top.end < top.start:
        raise InputError("$.end", f"an address at or above start ({top.start:,})", f"{top.end:,}")
    return _tables(top, source)


def _top_kind(data: bytes) -> str:
    try:
        return describe(msgspec.json.decode(data))
    except (msgspec.DecodeError, RecursionError):
        return "not an object"


KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_NUMBERS = ("start", "end", "payload_end", "label", "first", "last")


def _check_row(row: _Allocation, where: str, top: _Profile) -> None:
    """Raise the first rule ``row`` breaks, located at ``where``."""
    if row.kind not in KIND_CODE:
        raise InputError(f"{where}.kind", "one of " + ", ".join(KINDS), describe(row.kind))
    if row.label >= len(top.labels):
        raise InputError(f"{where}.label", f"an index into labels (0 to {len(top.labels) - 1})", str(row.label))
    if not row.start <= row.payload_end <= row.end:
        raise InputError(
            where, "start ≤ payload_end ≤ end", f"start {row.start:,}, payload_end {row.payload_end:,}, end {row.end:,}"
        )
    if row.start < top.start or row.end > top.end:
        raise InputError(
            where, f"an address range inside the file's [{top.start:,}, {top.end:,})", f"[{row.start:,}, {row.end:,})"
        )
    if row.first > row.last or row.last > PROGRAM_END:
        raise InputError(where, f"events first ≤ last ≤ {PROGRAM_END}", f"first {row.first}, last {row.last}")


def _tables(top: _Profile, source: str) -> PlacementProfile:
    """The two tables, every row checked at once with numpy (the first broken row is then checked
    alone, for its message), each tile's rows sorted by (first, start, last)."""
    logical = np.fromiter((t.logical for t in top.tiles), dtype=np.int64, count=len(top.tiles))
    values, first_seen = np.unique(logical, return_index=True)
    if values.size < logical.size:
        dup = int(np.flatnonzero(~np.isin(np.arange(logical.size), first_seen))[0])
        earlier = int(np.flatnonzero(logical == logical[dup])[0])
        raise InputError(
            f"$.tiles[{dup}].logical",
            f"a logical index not used before (tile {logical[dup]} is $.tiles[{earlier}])",
            str(logical[dup]),
        )
    counts = np.fromiter((len(t.allocations) for t in top.tiles), dtype=np.int64, count=len(top.tiles))
    rows = [row for tile in top.tiles for row in tile.allocations]
    n = len(rows)
    col = {name: np.fromiter((getattr(r, name) for r in rows), dtype=np.int64, count=n) for name in _NUMBERS}
    kind = np.fromiter((KIND_CODE.get(r.kind, -1) for r in rows), dtype=np.int64, count=n)
    bad = (
        (kind < 0)
        | (col["label"] >= len(top.labels))
        | (col["start"] > col["payload_end"])
        | (col["payload_end"] > col["end"])
        | (col["start"] < top.start)
        | (col["end"] > top.end)
        | (col["first"] > col["last"])
        | (col["last"] > PROGRAM_END)
    )
    position = np.repeat(np.arange(len(top.tiles)), counts)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        t = int(position[i])
        _check_row(rows[i], f"$.tiles[{t}].allocations[{i - int(counts[:t].sum())}]", top)
    order = np.lexsort((col["last"], col["start"], col["first"], position))  # grouped by tile in file order
    columns = {name: values[order] for name, values in col.items()}
    allocations = pa.Table.from_pydict(
        {
            "tile": logical[position][order],
            **columns,
            "kind": kind[order].astype(np.int8),
            "label": columns["label"].astype(np.int32),
            "shards": [rows[i].shards for i in order.tolist()],
        },
        schema=ALLOCATIONS,
    )
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if counts.size else counts
    tiles = pa.Table.from_pydict(
        {
            "logical": logical,
            "physical": np.fromiter((t.physical for t in top.tiles), dtype=np.int64, count=len(top.tiles)),
            "first_row": starts,
            "rows": counts,
        },
        schema=TILES,
    )
    return PlacementProfile(source, top.start, top.end, tuple(top.labels), tiles, allocations)
