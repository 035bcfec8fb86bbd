"""Memory profile (docs/formats.md §1) → validated ``MemoryProfile`` of Arrow tables.

msgspec decodes and type-checks the file (errors carry a JSON path). Three things keep a large file
cheap: each value stays raw JSON until it is decoded in a batch of about a thousand and turned into
Arrow columns (so the values' Python objects never all exist at once), each step's ``live`` list
stays raw JSON text, parsed by ``loaders.live_lists`` with numpy straight into live intervals, and
the file's text is handed back to the system a batch at a time as it is parsed
(``InputBuffer.release``), so it does not stay resident beside the tables built from it. Checks
and everything derived from a layout run once per distinct kind of value.
Any decoding error is reported by decoding the whole file strictly, so messages are the same
whichever way the file was read.
"""
from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Sequence

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.json_text import decode_error
from tilescope.models.profile import MemoryProfile
from tilescope.models.records import MAX_INT, MemoryProfileRecord, StepRecord, ValueRecord
from tilescope.models.schemas import AXES, LIVE_INTERVALS, PROFILE, STEPS, VALUES
from tilescope.models.tiling import MEMORY_CLASS_REGION, Layout, Precision, TensorTiling

from .debug_text import DebugSyntaxError, Struct, Tuple, Unit, parse_debug_sequence
from .detect import kind_of_bytes
from .json_input import InputBuffer, validation_error
from .layouts import debug_syntax_error, layout_from_debug_text, precision_from_text
from .live_lists import live_lists

Progress = Callable[[str, float], None]


class _LazyTimeline(msgspec.Struct, frozen=True):
    values: list[msgspec.Raw]  # each value's JSON text, decoded a batch at a time (peak memory)
    steps: list[StepRecord]


class LazyProfileRecord(MemoryProfileRecord, frozen=True):
    """The file decoded and type-checked except its values, kept as raw JSON (see ``value_batches``)."""

    timeline: _LazyTimeline


_DECODER = msgspec.json.Decoder(MemoryProfileRecord)
_LAZY_DECODER = msgspec.json.Decoder(LazyProfileRecord)
_VALUE_BATCH = msgspec.json.Decoder(list[ValueRecord])
_BATCH_SIZE = 1024  # values per batch: small enough that a batch's objects are a small part of peak memory


def _raise_decode_error(data: bytes):
    """Raise the error of the first problem in ``data`` (all the file's bytes), found by decoding
    it whole and strictly."""
    try:
        _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        kind = kind_of_bytes(data)  # a clearer message when it is the wrong kind or version
        if kind != "memory_profile":
            raise InputError("$", "a memory profile", "a search state") from None
        if isinstance(exc, msgspec.ValidationError):
            raise validation_error(exc, data) from None
        raise decode_error(data, exc) from None
    raise InputError("$", "a valid memory profile", "a file the strict decoder accepts but the loader did not")


def decode_profile(data: InputBuffer) -> LazyProfileRecord:
    """Decode and type-check everything but the values, which stay raw JSON: ``value_batches``
    decodes them a batch at a time, so their Python objects never all exist at once. Errors are
    those of the strict decoder (same message and place)."""
    try:
        record = _LAZY_DECODER.decode(data.data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        _raise_decode_error(data.whole())
    if record.version != 1:
        raise InputError("$.version", "version 1", describe(record.version))
    return record


def value_batches(record: LazyProfileRecord, data: InputBuffer):
    """``(index of the first, records)`` for each batch of the file's values, in file order; a
    value that does not type-check raises the strict decoder's error for the whole file. Once the
    caller has taken a batch, its text is released."""
    raws = record.timeline.values
    for first in range(0, len(raws), _BATCH_SIZE):
        batch = raws[first : first + _BATCH_SIZE]
        text = b"[" + b",".join(batch) + b"]"
        try:
            records = _VALUE_BATCH.decode(text)
        except msgspec.DecodeError:  # (ValidationError is one) e.g. a type error, bad UTF-8 in a string
            _raise_decode_error(data.whole())
        del text
        yield first, records
        data.release(batch[0], batch[-1])


@contextmanager
def _no_gc():
    """Loading makes millions of acyclic objects; the cyclic collector would only rescan them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def operation_kind(text: str, where: str) -> str:
    """First word of a step's operation: ``Gemm``, ``Copy``, ``Convert``, ``Repeat``…"""
    try:
        parts = parse_debug_sequence(text)
    except DebugSyntaxError as exc:
        raise debug_syntax_error(exc, where) from None
    head = parts[0]
    return head.name if isinstance(head, (Unit, Struct, Tuple)) else describe(head)


class _ValueColumns:
    """Builds the ``values`` and ``axes`` tables.

    Everything checked or derived per value depends only on its layout, precision, class, shape
    and copies, so it runs once per distinct combination of those (a "kind"), at the first value
    having it: errors still name the first bad value in file order, and a file of many values
    costs one dictionary look-up per value plus column gathers. (A new check that reads any other
    field of the value must add that field to the kind key in ``add_batch``.)
    """

    def __init__(self):
        self.layouts: dict[str, Layout] = {}
        self.precisions: dict[str, Precision] = {}
        self.kind_of: dict[tuple, int] = {}
        # What each kind derives from its layout and precision, by kind code.
        self.kinds: dict[str, list] = {
            name: []
            for name in ("layout", "precision", "memory_class", "precision_name", "element_bytes", "order", "region", "tile_count",
                         "replicas", "axes_count")
        }
        self.kind_axes: dict[str, list] = {name: [] for name in AXES.names if name != "value_id"}
        self.codes: list[np.ndarray] = []  # kind of each value, a batch per array
        self.chunks: dict[str, list[pa.Array]] = {f.name: [] for f in VALUES if f.name not in self.kinds}

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
            raise InputError(f"{where}.class", "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")", describe(v.memory_class))
        if layout.region is None:
            raise InputError(f"{where}.layout (memory_class)", "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")", describe(layout.memory_class))
        if layout.memory_class != v.memory_class:  # docs/formats.md §2 invariant; `class` decides the region
            raise InputError(f"{where}.class", f"the layout's memory class {layout.memory_class}", describe(v.memory_class))
        dims = _axis_dimensions(where, v.shape, layout.tiling)
        _check_tile_count(where, layout.tiling)
        _check_size(where, v, layout.tiling, precision.element_bytes)
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
        keys = zip(columns["layout"], columns["precision"], columns["memory_class"], map(tuple, columns["shape"]), columns["copies"])
        kind_of, codes = self.kind_of, []
        for i, key in enumerate(keys, first):
            code = kind_of.get(key)
            if code is None:
                self._add_kind(i, values[i - first])
                code = kind_of[key] = len(kind_of)
            codes.append(code)
        self.codes.append(np.array(codes, dtype=np.int64))
        for field in VALUES:
            if field.name not in self.kinds:
                column = columns[field.name]
                exact = field.type == pa.string() and not field.nullable
                self.chunks[field.name].append(_string_array(column) if exact else pa.array(column, type=field.type))

    def tables(self) -> tuple[pa.Table, pa.Table]:
        # Gathers are numpy, and no Arrow compute kernels (their first use alone costs tens of MB
        # of resident memory). Each column's batches are joined into one array, a column at a
        # time (so the copy costs one column's bytes of peak), because hundreds of small chunks
        # slow every later reader of the table.
        code = np.concatenate(self.codes) if self.codes else np.zeros(0, np.int64)
        columns = []
        for field in VALUES:
            if field.name in self.kinds:
                columns.append(pa.chunked_array([_gather(self.kinds[field.name], code, field.type)], type=field.type))
            else:
                columns.append(pa.chunked_array([pa.concat_arrays(self.chunks.pop(field.name))], type=field.type))
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
            pa.array(np.repeat(ids, counts), type=pa.int64()) if f.name == "value_id" else _gather(self.kind_axes[f.name], rows, f.type)
            for f in AXES
        ]
        return value_table, pa.Table.from_arrays(axes, schema=AXES)


def _string_array(texts: Sequence[str]) -> pa.Array:
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


def _gather(values: list, index: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``[values[i] for i in index]`` as an Arrow array, gathered by numpy (None stays null)."""
    if pa.types.is_dictionary(type_):
        codes, distinct = _dictionary_codes(values)
        return pa.DictionaryArray.from_arrays(pa.array(codes[index], type=type_.index_type), pa.array(distinct, type=type_.value_type))
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
    rank, flattened, cut, dims = len(shape), False, set(), []
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
            raise InputError(here, "each dimension tiled by at most one axis", f"{axis.axis}, a second cut of dimension {dim}")
        cut.add(dim)
        dims.append(dim)
    return dims


def _check_tile_count(where: str, tiling: TensorTiling) -> None:
    """docs/formats.md §2 invariant: ``tile_count == prod(partitions) * replicas`` (edits keep it so)."""
    product = math.prod(a.partitions for a in tiling.axes) * tiling.replicas
    if tiling.tile_count != product:
        raise InputError(f"{where}.layout (tiling.tile_count)", f"partitions × replicas = {product}", str(tiling.tile_count))


def _round_up(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


def _check_size(where: str, v: ValueRecord, tiling: TensorTiling, element_bytes: int) -> None:
    """Keep every figure the planner derives from this value inside int64: the tensor padded by
    its tiling on one partition bounds each shard, and times ``copies`` bounds what it costs."""
    whole = math.prod(v.shape) * element_bytes
    dims = list(v.shape)
    for axis in tiling.axes:
        if axis.axis.kind == "Linear":
            dims, dim = [math.prod(dims)], 0
        else:
            dim = axis.axis.dimension(len(dims))
        padded = _round_up(_round_up(dims[dim], axis.padding_multiple), axis.block_size)
        dims[dim] = _round_up(padded, axis.shard_padding_multiple)
    padded_bytes = math.prod(dims) * element_bytes
    if whole > MAX_INT:
        raise InputError(f"{where}.shape", "a tensor of at most 2^53 bytes", f"{whole} bytes")
    if padded_bytes > MAX_INT:
        raise InputError(f"{where}.layout (tiling)", "padding that keeps the tensor at most 2^53 bytes", f"{padded_bytes} bytes padded")
    if padded_bytes * v.copies > MAX_INT:
        raise InputError(f"{where}.copies", "copies × padded bytes of at most 2^53 bytes", f"{v.copies} × {padded_bytes}")


def _check_ids(ids: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Ids unique and every root a known root value; returns the permutation sorting ids."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:
        first = int(order[dup[0] + 1])
        raise InputError(f"$.timeline.values[{first}].id", "a unique value id", f"{int(ids[first])}, already used by values[{int(order[dup[0]])}]")
    pos = np.searchsorted(sorted_ids, roots).clip(0, max(ids.size - 1, 0))
    unknown = np.flatnonzero(sorted_ids[pos] != roots) if ids.size else np.zeros(0, int)
    if unknown.size:
        i = int(unknown[0])
        raise InputError(f"$.timeline.values[{i}].root", "the id of a value in timeline.values", str(int(roots[i])))
    # An alias's storage is its root's: the root must own its storage, not be an alias itself.
    root_rows = order[pos] if ids.size else pos
    chained = np.flatnonzero(roots[root_rows] != roots) if ids.size else pos
    if chained.size:
        i = int(chained[0])
        raise InputError(
            f"$.timeline.values[{i}].root",
            "the id of a root value (one whose own root is itself)",
            f"{int(roots[i])}, whose root is {int(roots[root_rows[i]])}",
        )
    return order


def _profile_table(r: MemoryProfileRecord) -> pa.Table:
    row = {
        "version": r.version, "scope": r.scope, "model": r.model, "tile_count": r.tile_count,
        "budget_bytes": r.budget_bytes, "interleaved_budget_bytes": r.interleaved_budget_bytes,
        "support_reserve_bytes": r.support_reserve_bytes,
        "standard_contiguous_overflow_bytes": r.standard_contiguous_overflow_bytes,
        "fits_budget": r.fits_budget, "effective_peak_bytes": r.effective_peak_bytes,
        "peak_standard": r.peak.standard, "peak_interleaved": r.peak.interleaved, "peak_total": r.peak.total,
        "exchange_rows": r.peak.exchange_rows, "maximum_standard_allocation": r.peak.maximum_standard_allocation,
        "total_peak_step": r.total_peak_step, "standard_peak_step": r.standard_peak_step,
        "interleaved_peak_step": r.interleaved_peak_step,
        "gemm_output_packing": r.gemm_output_packing, "attention_products": r.attention_products,
    }
    return pa.Table.from_pylist([row], schema=PROFILE)


def _steps_table(steps: list[StepRecord], live_count: np.ndarray) -> pa.Table:
    kinds: dict[str, str] = {}
    operation_kinds = []
    for i, s in enumerate(steps):
        if s.index != i:
            raise InputError(f"$.timeline.steps[{i}].index", f"{i} (steps in program order)", str(s.index))
        kind = kinds.get(s.operation)
        if kind is None:
            kind = kinds[s.operation] = operation_kind(s.operation, f"$.timeline.steps[{i}].operation")
        operation_kinds.append(kind)
    columns = {
        "index": [s.index for s in steps],
        "source": [s.source for s in steps],
        "operation_kind": operation_kinds,
        "operation": [s.operation for s in steps],
        "execution_count": [s.execution_count for s in steps],
        "scratch_standard": [s.scratch.standard for s in steps],
        "scratch_interleaved": [s.scratch.interleaved for s in steps],
        "usage_standard": [s.usage.standard for s in steps],
        "usage_interleaved": [s.usage.interleaved for s in steps],
    }
    arrays = [
        _gather(columns[n], np.arange(len(steps)), STEPS.field(n).type) if pa.types.is_dictionary(STEPS.field(n).type)
        else pa.array(columns[n], type=STEPS.field(n).type)
        for n in STEPS.names if n != "live_count"
    ]
    arrays.append(pa.array(live_count, type=pa.int64()))
    return pa.Table.from_arrays(arrays, schema=STEPS)


def parse_memory_profile(data: bytes, source: str = "<memory profile>", progress: Progress | None = None) -> MemoryProfile:
    """Validate and normalise a memory profile's bytes. Errors name ``source``.

    ``progress(stage, fraction)`` is told each stage and the fraction of the whole load done
    (values and live lists report as they go; decoding is one call and reports at its ends).
    """
    return _parse_input(InputBuffer(data), source, progress)


def load_memory_profile(path: str | Path, progress: Progress | None = None) -> MemoryProfile:
    """``parse_memory_profile`` of a file, whose text is released as it is parsed (peak memory)."""
    return _parse_input(InputBuffer.read(path), str(path), progress)


def _parse_input(data: InputBuffer, source: str, progress: Progress | None) -> MemoryProfile:
    note = progress or (lambda stage, fraction: None)
    try:
        with _no_gc():
            return _parse(data, source, note)
    except InputError as exc:
        raise exc.in_file(source) from None
    except RecursionError:  # msgspec decodes nested JSON recursively
        raise InputError("$", "JSON nested within Python's recursion limit", "deeper nesting", file=source) from None


def _parse(data: InputBuffer, source: str, note: Progress) -> MemoryProfile:
    note("decoding JSON", 0.0)
    record = decode_profile(data)
    note("values and layouts", 0.35)
    columns = _ValueColumns()
    n_values = len(record.timeline.values)
    deferred: InputError | None = None
    for first, batch in value_batches(record, data):
        # Checks run as the batches come, but a failed one is raised only after every value has
        # type-checked: type errors anywhere come first, as when the file was decoded whole.
        if deferred is None:
            try:
                columns.add_batch(first, batch)
            except InputError as exc:
                deferred = exc
        note("values and layouts", 0.35 + 0.15 * (first + len(batch)) / n_values)
    n_steps = len(record.timeline.steps)
    for name in ("total_peak_step", "standard_peak_step", "interleaved_peak_step"):
        if n_steps and getattr(record, name) >= n_steps:
            raise InputError(f"$.{name}", f"a step index below {n_steps}", str(getattr(record, name)))
    if deferred is not None:
        raise deferred
    values, axes = columns.tables()
    del columns
    ids = values.column("id").to_numpy()
    order = _check_ids(ids, values.column("root").to_numpy())

    note("live lists", 0.5)
    steps = record.timeline.steps
    raws = [s.live for s in steps]

    def parsed(begin: int, end: int) -> None:
        data.release(raws[begin], raws[end - 1])
        note("live lists", 0.5 + 0.45 * end / len(raws))

    lists = live_lists(raws, ids[order], order, parsed)
    intervals = lists.intervals
    live = pa.Table.from_arrays(
        [pa.array(ids[intervals.value_row]), pa.array(intervals.first_step), pa.array(intervals.last_step)],
        schema=LIVE_INTERVALS,
    )
    note("steps", 0.95)
    steps_table = _steps_table(steps, lists.live_count)
    note("done", 1.0)
    return MemoryProfile(source, _profile_table(record), values, axes, steps_table, live)

