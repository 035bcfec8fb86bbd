"""A memory profile's values (docs/formats.md §1) → the ``values`` and ``axes`` tables, each value
checked against docs/formats.md §2 and §6 (``check_kind``).

Everything checked or derived per value depends only on its layout, precision, class, shape and
copies, so it runs once per distinct combination of those (a "kind"), at the first value having it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.limits import MAX_BYTES
from tilescope.models.records import ValueRecord
from tilescope.models.schemas import AXES, VALUES
from tilescope.models.shard_rule import largest_shard_bytes, shard_cuts
from tilescope.models.tiling import MEMORY_CLASS_REGION, Layout, Precision, TensorTiling

from .layouts import layout_from_debug_text, precision_from_text


class ValueColumns:
    """Builds the ``values`` and ``axes`` tables.

    Everything checked or derived per value depends only on its layout, precision, class, shape
    and copies, so it runs once per distinct combination of those (a "kind"), at the first value
    having it: errors still name the first bad value in file order, and a file of many values
    costs one dictionary look-up per value plus column gathers. (A new check that reads any other
    field of the value must add that field to the kind key in ``add_batch``.)
    """

    def __init__(self, device_tiles: int):
        self.device_tiles = device_tiles
        self.layouts: dict[str, Layout] = {}
        self.precisions: dict[str, Precision] = {}
        self.kind_of: dict[tuple, int] = {}
        # What each kind derives from its layout and precision, by kind code.
        self.kinds: dict[str, list] = {
            name: []
            for name in (
                "layout",
                "precision",
                "memory_class",
                "precision_name",
                "element_bytes",
                "order",
                "region",
                "tile_count",
                "replicas",
                "axes_count",
                "largest_shard",
                "text_colons",
            )
        }
        self.kind_axes: dict[str, list] = {name: [] for name in AXES.names if name != "value_id"}
        self.codes: list[np.ndarray] = []  # kind of each value, a batch per array
        self.chunks: dict[str, list[pa.Array]] = {f.name: [] for f in VALUES if f.name not in self.kinds}
        self.text_colons = (
            0  # ':' in the values' own strings (name, group, layout_error): see profile_checks.check_keys
        )

    def _layout(self, text: str, where: str) -> Layout:
        layout = self.layouts.get(text)
        if layout is None:
            layout = self.layouts[text] = layout_from_debug_text(text, where)
        return layout

    def _precision(self, text: str, where: str) -> Precision:
        precision = self.precisions.get(text)
        if precision is None:
            precision = self.precisions[text] = precision_from_text(text, where)
        return precision

    def _add_kind(self, i: int, v: ValueRecord) -> None:
        """Check value ``i`` (the first of its kind) and record what its kind derives."""
        where = f"$.timeline.values[{i}]"
        layout = self._layout(v.layout, f"{where}.layout")
        precision = self._precision(v.precision, f"{where}.precision")
        if v.memory_class not in MEMORY_CLASS_REGION:
            raise InputError(
                f"{where}.class", "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")", describe(v.memory_class)
            )
        if layout.region is None:
            raise InputError(
                f"{where}.layout (memory_class)",
                "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")",
                describe(layout.memory_class),
            )
        if layout.memory_class != v.memory_class:  # docs/formats.md §2 invariant; `class` decides the region
            raise InputError(
                f"{where}.class", f"the layout's memory class {layout.memory_class}", describe(v.memory_class)
            )
        dims = _axis_dimensions(where, v.shape, layout.tiling)
        largest = check_kind(where, v, layout.tiling, precision.element_bytes, self.device_tiles)
        kind = self.kinds
        kind["layout"].append(v.layout)  # part of the kind key, like precision and memory_class
        kind["precision"].append(v.precision)
        kind["memory_class"].append(v.memory_class)
        kind["precision_name"].append(precision.name)
        kind["element_bytes"].append(precision.element_bytes)
        kind["order"].append(str(layout.order))
        kind["region"].append(MEMORY_CLASS_REGION[v.memory_class])
        kind["tile_count"].append(layout.tiling.tile_count)
        kind["replicas"].append(layout.tiling.replicas)
        kind["axes_count"].append(len(layout.tiling.axes))
        kind["largest_shard"].append(largest)
        kind["text_colons"].append(v.layout.count(":") + v.precision.count(":") + v.memory_class.count(":"))
        ax = self.kind_axes
        for k, axis in enumerate(layout.tiling.axes):
            ax["position"].append(k)
            ax["axis_kind"].append(axis.axis.kind)
            ax["axis_index"].append(axis.axis.index)
            ax["dimension"].append(dims[k])
            ax["partitions"].append(axis.partitions)
            ax["padding_groups"].append(axis.padding_groups)
            ax["block_size"].append(axis.block_size)
            ax["padding_multiple"].append(axis.padding_multiple)
            ax["shard_padding_multiple"].append(axis.shard_padding_multiple)
            ax["padding"].append(axis.padding)
            ax["tile_stride"].append(axis.tile_stride)

    def add_batch(self, first: int, values: list[ValueRecord]) -> None:
        # One C-level pass turns the records into columns (field name → tuple of that field).
        columns = dict(zip(ValueRecord.__struct_fields__, zip(*map(msgspec.structs.astuple, values))))
        if not values:
            return
        keys = list(
            zip(
                columns["layout"],
                columns["precision"],
                columns["memory_class"],
                map(tuple, columns["shape"]),
                columns["copies"],
            )
        )
        kind_of = self.kind_of
        known = kind_of.get
        codes = [known(key, -1) for key in keys]  # (one C-level pass; new kinds below, in file order)
        if -1 in codes:
            for i, code in enumerate(codes):
                if code < 0:
                    found = kind_of.get(keys[i])
                    if found is None:  # the first value of its kind: checked, in file order
                        self._add_kind(first + i, values[i])
                        found = kind_of[keys[i]] = len(kind_of)
                    codes[i] = found
        self.codes.append(np.array(codes, dtype=np.int64))
        # (filter drops None and empty texts, which hold no ':')
        self.text_colons += sum(
            "".join(filter(None, columns[name])).count(":") for name in ("name", "group", "layout_error")
        )
        for field in VALUES:
            if field.name not in self.kinds:
                column = columns[field.name]
                exact = field.type == pa.string() and not field.nullable
                self.chunks[field.name].append(string_array(column) if exact else pa.array(column, type=field.type))

    def tables(self) -> tuple[pa.Table, pa.Table]:
        # Gathers are numpy, and no Arrow compute kernels (their first use alone costs tens of MB
        # of resident memory). Each column's batches are joined into one array, a column at a
        # time (so the copy costs one column's bytes of peak), because hundreds of small chunks
        # slow every later reader of the table.
        code = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int64)
        columns = []
        self.code = code
        for field in VALUES:
            if field.name in self.kinds:
                columns.append(pa.chunked_array([gather(self.kinds[field.name], code, field.type)], type=field.type))
            else:
                chunks = self.chunks.pop(field.name)
                joined = (
                    pa.concat_arrays(chunks) if chunks else pa.array([], type=field.type)
                )  # no values: an empty column
                columns.append(pa.chunked_array([joined], type=field.type))
                pa.default_memory_pool().release_unused()  # the batches' memory, before the next copy
        value_table = pa.Table.from_arrays(columns, schema=VALUES)

        # Each value's axes are its kind's axis rows, in tiling order.
        per_kind = np.array(self.kinds["axes_count"], dtype=np.int64)
        kind_start = np.concatenate(([0], np.cumsum(per_kind)[:-1])).astype(np.int64)
        counts = per_kind[code]
        value_start = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        rows = np.repeat(kind_start[code] - value_start, counts) + np.arange(int(counts.sum()), dtype=np.int64)
        ids = value_table.column("id").to_numpy()
        axes = [
            pa.array(np.repeat(ids, counts), type=pa.int64())
            if f.name == "value_id"
            else gather(self.kind_axes[f.name], rows, f.type)
            for f in AXES
        ]
        return value_table, pa.Table.from_arrays(axes, schema=AXES)


def string_array(texts: Sequence[str]) -> pa.Array:
    """Arrow strings (no nulls) built over one joined buffer of exactly the right size (Arrow's
    builder grows by doubling, and its allocator keeps what it freed: peak memory). ASCII text
    only, else the builder."""
    try:
        joined = "".join(texts).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: let the builder report it as it always has
        return pa.array(texts, type=pa.string())
    offsets = np.zeros(len(texts) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    if int(offsets[-1]) != len(joined):  # some character took more than one byte
        return pa.array(texts, type=pa.string())
    return pa.StringArray.from_buffers(len(texts), pa.py_buffer(offsets), pa.py_buffer(joined))


def gather(values: list, index: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``[values[i] for i in index]`` as an Arrow array, gathered by numpy (None stays null)."""
    if pa.types.is_dictionary(type_):
        codes, distinct = _dictionary_codes(values)
        return pa.DictionaryArray.from_arrays(
            pa.array(codes[index], type=type_.index_type), pa.array(distinct, type=type_.value_type)
        )
    if pa.types.is_integer(type_):
        present = np.array([v is not None for v in values], dtype=bool)
        numbers = np.array([0 if v is None else v for v in values], dtype=np.int64)
        return pa.array(numbers[index], type=type_, mask=None if present.all() else ~present[index])
    return pa.array(np.array(values, dtype=object)[index], type=type_)


def _dictionary_codes(texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Each text's position among the distinct texts (first-seen order), and those texts."""
    distinct: dict[str, int] = {}
    codes = np.fromiter((distinct.setdefault(t, len(distinct)) for t in texts), dtype=np.int32, count=len(texts))
    return codes, list(distinct)


def _axis_dimensions(where: str, shape: list[int], tiling: TensorTiling) -> list[int | None]:
    """The dimension each axis cuts (None for ``Linear``), following the shard rule of
    docs/formats.md §2: ``Linear`` flattens the tensor so far into one dimension. Every axis must name
    a dimension the shape has at that point, and no dimension may be cut twice."""
    rank, flattened, cut = len(shape), False, set()
    dims: list[int | None] = []
    for k, axis in enumerate(tiling.axes):
        here = f"{where}.layout (tiling.axes[{k}].axis)"
        if axis.axis.kind == "Linear":
            rank, flattened, cut = 1, True, {0}
            dims.append(None)
            continue
        dim = axis.axis.dimension(rank)
        if dim is None or not 0 <= dim < rank:
            what = "the one dimension left by Linear" if flattened else f"the rank-{rank} shape {shape}"
            raise InputError(here, f"an axis of {what}", str(axis.axis))
        if dim in cut:
            raise InputError(
                here, "each dimension tiled by at most one axis", f"{axis.axis}, a second cut of dimension {dim}"
            )
        cut.add(dim)
        dims.append(dim)
    return dims


def check_kind(where: str, v: ValueRecord, tiling: TensorTiling, element_bytes: int, device_tiles: int) -> int:
    """The checks of docs/formats.md §6 that depend only on a value's kind (its axes already name
    dimensions of its shape); returns its largest possible shard (``largest_shard_bytes``).

    - the whole tensor, and the tensor as its tiling pads it on one partition, are at most 2^53
      bytes: that bounds every shard any partition counts can give (what a what-if edit can make);
    - ``tile_count == prod(partitions) * replicas``, and at most the device's tiles;
    - on each axis, ``partitions <= blocks``: no partition is empty.
    """
    whole = math.prod(v.shape) * element_bytes
    if whole > MAX_BYTES:
        raise InputError(f"{where}.shape", "a tensor of at most 2^53 bytes", f"{whole:,} bytes")
    largest = largest_shard_bytes(v.shape, element_bytes, tiling)
    if largest > MAX_BYTES:
        raise InputError(
            f"{where}.layout (tiling)", "padding that keeps the tensor at most 2^53 bytes", f"{largest:,} bytes padded"
        )
    product = math.prod(a.partitions for a in tiling.axes) * tiling.replicas
    if tiling.tile_count != product:
        raise InputError(
            f"{where}.layout (tiling.tile_count)", f"partitions × replicas = {product}", str(tiling.tile_count)
        )
    if tiling.tile_count > device_tiles:
        raise InputError(
            f"{where}.layout (tiling.tile_count)",
            f"at most the device's {device_tiles:,} tiles ($.tile_count): one shard per tile",
            f"{tiling.tile_count:,} tiles",
        )
    for k, (axis, cut) in enumerate(zip(tiling.axes, shard_cuts(v.shape, tiling)[1])):
        if axis.partitions > cut.blocks:
            raise InputError(
                f"{where}.layout (tiling.axes[{k}].partitions)",
                f"at most the axis's {cut.blocks:,} blocks of {axis.block_size} (no empty partition)",
                f"{axis.partitions:,} partitions",
            )
    return largest
