"""One tile's placement problem, as the compiler (osmarks/ipu-stack) dumps it when its allocator
fails a tile (``shared/spec/compiler-formats.md`` §4), or as a MiniMalloc CSV states it: groups of
buffers with fixed lifetimes and sizes, to be given base addresses.

Both loaders (``loaders.placement_dump``, ``loaders.minimalloc_csv``) build these frozen
dataclasses; the solver (``planner.solver``) reads only them. A MiniMalloc problem is *plain*: one
range ``[0, capacity)``, alignment 1, no regions, no host range and no conflicts, so none of the
compiler's region rules applies to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

STANDARD: Final = "Ipu21Standard"  # (Final: a RequestClass to the type checker)
INTERLEAVED: Final = "Ipu21Interleaved"
RequestClass = Literal["Ipu21Standard", "Ipu21Interleaved"]

PROGRAM_START = 0  # ``first == 0``: present when the program starts (an input)
PROGRAM_END = 4294967295  # ``last == 2**32 - 1``: needed after the device finishes (an output)

# The compile-time constants the compiler's tests use for dumps older than version 1 (fixture README).
DEFAULT_REGION_BOUNDARY = 524_288
DEFAULT_REGION0_ELEMENT_BYTES = 16_384
DEFAULT_REGION1_ELEMENT_BYTES = 32_768
DEFAULT_HOST_SCRATCH_RANGE = (327_680, 360_448)


@dataclass(frozen=True)
class PlacementRequest:
    """One allocation group: its members' root ids at byte offsets from the group's base.

    ``first``/``last`` are inclusive events: two requests interfere iff ``a.first <= b.last and
    b.first <= a.last``. ``bytes`` is the group's size (in region 0, or anywhere without a stride);
    with ``region1_stride`` set, the group occupies ``region1_stride * len(roots)`` bytes in region 1
    and its base is aligned to the element size of the region it is in. ``conflicts``: root ids
    whose whole groups must occupy memory elements disjoint from this group's, whatever the
    lifetimes."""

    index: int
    roots: tuple[tuple[int, int], ...]
    request_class: RequestClass
    first: int
    last: int
    bytes: int
    alignment: int
    region1_stride: int | None = None
    conflicts: tuple[int, ...] = ()


@dataclass(frozen=True)
class PlacementProblem:
    """A placement problem (module doc). ``kind`` is ``"dump"`` or ``"minimalloc"``; ``plain``
    says that no region, element or host-range rule applies (MiniMalloc). ``ranges`` are ascending,
    disjoint half-open ``[start, end)`` byte intervals. ``assigned_root_spans`` (dumps only) is the
    compiler's own placement, root → its group's ``[start, end)``: diagnostic, not a constraint.
    ``csv_ids`` (MiniMalloc) keeps each row's id as written, in request order."""

    name: str
    kind: Literal["dump", "minimalloc"]
    requests: tuple[PlacementRequest, ...]
    ranges: tuple[tuple[int, int], ...]
    plain: bool = False
    tile: int | None = None
    placed: bool | None = None
    region_boundary: int = DEFAULT_REGION_BOUNDARY
    region0_element_bytes: int = DEFAULT_REGION0_ELEMENT_BYTES
    region1_element_bytes: int = DEFAULT_REGION1_ELEMENT_BYTES
    interleaved_offset: int = 0
    host_scratch_range: tuple[int, int] | None = DEFAULT_HOST_SCRATCH_RANGE
    assigned_root_spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    capacity: int | None = None
    csv_ids: tuple[str, ...] = ()
    version: int | None = None  # the dump's ``version`` (None: the older fixture form)

    @property
    def total_capacity(self) -> int:
        """Σ range lengths: the compiler's capacity for its live-byte bound."""
        return sum(end - start for start, end in self.ranges)
