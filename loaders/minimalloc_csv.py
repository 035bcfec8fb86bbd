"""Reading a MiniMalloc problem CSV (google/minimalloc's format): a header naming the columns
``id,lower,upper,size`` (in any order; ``alignment`` and ``offset`` may follow — an ``offset``
column, as in MiniMalloc's solution files, is read past, not used), then one buffer per row, live
over the half-open ``[lower, upper)``. The capacity is not in the file; the caller gives it.

A row becomes a ``PlacementRequest`` live over the inclusive events ``lower .. upper - 1``, in one
range ``[0, capacity)`` with no regions (``plain``). Errors name the line and column.
"""

from __future__ import annotations

from pathlib import Path

from tilescope.models.errors import InputError, describe
from tilescope.models.placement_problem import STANDARD, PlacementProblem, PlacementRequest

from .json_input import read_bytes
from .placement_dump import MAX_ADDRESS

_REQUIRED = ("id", "lower", "upper", "size")
_OPTIONAL = ("alignment", "offset")


def _integer(text: str, line: int, column: str, minimum: int) -> int:
    value = text.strip()
    if not (value.isascii() and value.lstrip("-").isdigit()) or len(value) > 19:
        raise InputError(f"line {line}, column {column}", "an integer", describe(value))
    number = int(value)
    if not minimum <= number <= MAX_ADDRESS:
        raise InputError(
            f"line {line}, column {column}", f"an integer from {minimum} to {MAX_ADDRESS:,}", describe(number)
        )
    return number


def load_minimalloc_csv(
    source: str | Path | bytes, name: str | None = None, capacity: int | None = None
) -> PlacementProblem:
    """Read a MiniMalloc CSV from a path or its bytes (module doc); ``capacity`` in bytes is required."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, label = bytes(source), name or "<bytes>"
    else:
        label = name or str(source)
        data = read_bytes(source)
    try:
        return _parse(data, label, capacity)
    except InputError as exc:
        raise exc.in_file(label) from None


def _parse(data: bytes, label: str, capacity: int | None) -> PlacementProblem:
    if capacity is None or isinstance(capacity, bool) or not 0 < capacity <= MAX_ADDRESS:
        raise InputError(
            "capacity",
            f"a capacity in bytes from 1 to {MAX_ADDRESS:,} (a MiniMalloc CSV does not hold one)",
            describe(capacity),
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_no = data[: exc.start].count(b"\n") + 1
        raise InputError(f"line {line_no}", "UTF-8 text", f"the byte 0x{data[exc.start]:02x}") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError(
            "line 1",
            "a header naming the columns id,lower,upper,size",
            "an empty file" if not lines else "an empty line",
        )
    header = [cell.strip().lower() for cell in lines[0].split(",")]
    for column in _REQUIRED:
        if column not in header:
            raise InputError("line 1", f"a header with a column `{column}` (id,lower,upper,size)", describe(lines[0]))
    for column in header:
        if column not in _REQUIRED + _OPTIONAL:
            raise InputError(
                "line 1", "only the columns id, lower, upper, size, alignment, offset", f"a column {describe(column)}"
            )
    if len(set(header)) != len(header):
        raise InputError("line 1", "each column once", describe(lines[0]))
    at = {column: header.index(column) for column in header}
    requests: list[PlacementRequest] = []
    ids: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != len(header):
            raise InputError(f"line {number}", f"{len(header)} comma-separated cells", f"{len(cells)}")
        ident = cells[at["id"]].strip()
        if not ident:
            raise InputError(f"line {number}, column id", "an id", "an empty cell")
        if ident in seen:
            raise InputError(
                f"line {number}, column id", f"a new id (line {seen[ident]} has {describe(ident)})", describe(ident)
            )
        seen[ident] = number
        lower = _integer(cells[at["lower"]], number, "lower", 0)
        upper = _integer(cells[at["upper"]], number, "upper", 0)
        if upper <= lower:
            raise InputError(
                f"line {number}, column upper",
                f"an end after lower ({lower}): lifetimes are [lower, upper)",
                describe(upper),
            )
        size = _integer(cells[at["size"]], number, "size", 0)
        alignment = _integer(cells[at["alignment"]], number, "alignment", 1) if "alignment" in at else 1
        if alignment & (alignment - 1):
            raise InputError(f"line {number}, column alignment", "a power of two", describe(alignment))
        requests.append(
            PlacementRequest(len(requests), ((len(requests), 0),), STANDARD, lower, upper - 1, size, alignment)
        )
        ids.append(ident)
    return PlacementProblem(
        name=label,
        kind="minimalloc",
        requests=tuple(requests),
        ranges=((0, capacity),),
        plain=True,
        host_scratch_range=None,
        capacity=capacity,
        csv_ids=tuple(ids),
    )
