"""One tiling model for both spellings of a layout (Rust ``Debug`` text and serde JSON).

The loaders build these records; the planner computes shard sizes from them. Variants the memory
model does not need (layout orders, padding kinds) are kept as their text, never rejected; the axis
kind is the exception, since the shard-size rule depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

AXIS_KINDS = ("FromStart", "FromEnd", "Linear")
REGIONS = ("standard", "interleaved")

# Memory classes the sample uses, and the region each one is counted in.
MEMORY_CLASS_REGION = {"Ipu21Standard": "standard", "Ipu21Interleaved": "interleaved"}


@dataclass(frozen=True, slots=True)
class Axis:
    """Which dimension an ``AxisTiling`` cuts: ``FromStart(k)``, ``FromEnd(k)`` or ``Linear``."""

    kind: str
    index: int | None = None

    def dimension(self, rank: int) -> int | None:
        """The dimension this axis names in a shape of ``rank`` (None for ``Linear``)."""
        if self.index is None:  # ``Linear`` (the one kind without an index)
            return None
        if self.kind == "FromStart":
            return self.index
        if self.kind == "FromEnd":
            return rank - self.index
        return None

    def __str__(self) -> str:
        return self.kind if self.index is None else f"{self.kind}({self.index})"


@dataclass(frozen=True, slots=True)
class AxisTiling:
    axis: Axis
    partitions: int
    padding_groups: int
    block_size: int
    padding_multiple: int
    shard_padding_multiple: int
    padding: str
    tile_stride: int | None


@dataclass(frozen=True, slots=True)
class TensorTiling:
    tile_count: int
    replicas: int
    axes: tuple[AxisTiling, ...]

    def with_partitions(self, position: int, partitions: int) -> TensorTiling:
        """This tiling with one axis re-partitioned; the tile count follows."""
        axes = list(self.axes)
        axes[position] = replace(axes[position], partitions=partitions)
        return replace(self, axes=tuple(axes), tile_count=_tile_count(axes, self.replicas))

    def with_replicas(self, replicas: int) -> TensorTiling:
        return replace(self, replicas=replicas, tile_count=_tile_count(self.axes, replicas))


def _tile_count(axes, replicas: int) -> int:
    count = replicas
    for axis in axes:
        count *= axis.partitions
    return count


@dataclass(frozen=True, slots=True)
class LayoutOrder:
    """The element order inside a shard (``RowMajor``, ``Amp(Left)``, ``BlockMajor(...)``).

    Kept as the variant name and its argument's canonical text: the memory model does not use it.
    """

    kind: str
    detail: str | None = None

    def __str__(self) -> str:
        return self.kind if self.detail is None else f"{self.kind}({self.detail})"


@dataclass(frozen=True, slots=True)
class Layout:
    order: LayoutOrder
    tiling: TensorTiling
    memory_class: str

    @property
    def region(self) -> str | None:
        return MEMORY_CLASS_REGION.get(self.memory_class)


@dataclass(frozen=True, slots=True)
class Precision:
    """An element type: ``F16``, ``F32`` or an FP8 format such as ``F8F143 { scale_exponent: -4 }``."""

    name: str
    element_bytes: int
    text: str

    def __str__(self) -> str:
        return self.text


def element_bytes_of(name: str) -> int | None:
    """Bytes per element for a precision name; None when unknown (docs/formats.md §2)."""
    if name == "F16":
        return 2
    if name == "F32":
        return 4
    if name.startswith("F8"):
        return 1
    return None


@dataclass(frozen=True, slots=True)
class TensorFormat:
    """A precision and a layout: what the search state calls a format."""

    precision: Precision
    layout: Layout
