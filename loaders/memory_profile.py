"""Memory profile (formats.md §1) → validated ``MemoryProfile`` of Arrow tables.

msgspec decodes and type-checks the file in one pass (errors carry a JSON path); each step's
``live`` list stays raw JSON text and is parsed by ``loaders.live_lists`` with numpy. Layout and
operation strings are parsed once per distinct text.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import msgspec
import numpy as np
import pyarrow as pa

from models.errors import InputError, describe
from models.profile import MemoryProfile
from models.records import FileProbe, MemoryProfileRecord, StepRecord, ValueRecord
from models.schemas import AXES, LIVE_INTERVALS, PROFILE, STEPS, VALUES
from models.tiling import MEMORY_CLASS_REGION, Layout, Precision

from .debug_text import DebugSyntaxError, Struct, Tuple, Unit, parse_debug_sequence
from .layouts import layout_from_debug_text, precision_from_text
from .live_lists import live_intervals, parse_live_lists

Progress = Callable[[str, float], None]
_DECODER = msgspec.json.Decoder(MemoryProfileRecord)
_PROBE = msgspec.json.Decoder(FileProbe)
_VALIDATION = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<exp>[^`]*)`(?P<bound>[^,`]*)(?:, got `(?P<got>[^`]*)`)?$")
_BYTE = re.compile(r"\(byte (\d+)\)")


def read_bytes(path: str | Path) -> bytes:
    """Read a planner output (never written to). A missing or unreadable file is an InputError."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError("$", "a readable file", exc.strerror or str(exc), file=str(path)) from None


def locate_byte(data: bytes, offset: int) -> str:
    """``byte N (line L, column C)`` for an error position in raw JSON."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"byte {offset} (line {line}, column {column})"


def decode_error(data: bytes, exc: msgspec.DecodeError) -> InputError:
    """A JSON syntax or encoding error, located by byte offset, line and column."""
    text = str(exc)
    if not data.strip():
        return InputError("$", "a JSON object", "an empty file")
    if "truncated" in text:
        return InputError(f"{locate_byte(data, len(data))}", "more JSON (the file ends early)", "end of file")
    match = _BYTE.search(text)
    if match:
        offset = int(match.group(1))
        excerpt = data[max(0, offset - 20) : offset + 20].decode("utf-8", "replace")
        return InputError(locate_byte(data, offset), "valid JSON", f"{text.split(' (byte')[0]} near {excerpt!r}")
    if "UTF-8" in text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as ude:
            return InputError(locate_byte(data, ude.start), "UTF-8 text", f"byte 0x{data[ude.start]:02x}")
    return InputError("$", "valid JSON", text)


def validation_error(exc: msgspec.ValidationError) -> InputError:
    match = _VALIDATION.match(str(exc))
    message, path = match.group("msg"), match.group("path") or "$"
    expected = _EXPECTED.match(message)
    if expected:
        if expected.group("got"):
            return InputError(path, expected.group("exp"), expected.group("got"))
        return InputError(path, f"{expected.group('exp')}{expected.group('bound')}", "a value outside that range")
    missing = re.match(r"Object missing required field `([^`]*)`", message)
    if missing:
        return InputError(f"{path}.{missing.group(1)}", f"a field `{missing.group(1)}`", "none")
    return InputError(path, "a valid memory profile", message)


def probe_kind(data: bytes) -> str:
    """Which planner output ``data`` is: "memory_profile" or "search_state" (else InputError)."""
    try:
        probe = _PROBE.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of DecodeError: test it first)
        got = _EXPECTED.match(_VALIDATION.match(str(exc)).group("msg"))
        found = f"a JSON {got.group('got')}" if got and got.group("got") else str(exc)
        raise InputError("$", "a JSON object (a memory profile or a search state)", found) from None
    except msgspec.DecodeError as exc:
        raise decode_error(data, exc) from None
    if probe.version is None:
        raise InputError("$.version", "a field `version` (1)", "none")
    if bytes(probe.version) != b"1":
        raise InputError("$.version", "version 1", bytes(probe.version).decode("utf-8", "replace")[:40])
    if probe.timeline is not None:
        return "memory_profile"
    if probe.context is not None or probe.recipe is not None:
        return "search_state"
    raise InputError("$", "a memory profile (with `timeline`) or a search state (with `context`)", "neither")


def decode_profile(data: bytes) -> MemoryProfileRecord:
    try:
        record = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        kind = probe_kind(data)  # a clearer message when it is the wrong kind or version
        if kind != "memory_profile":
            raise InputError("$", "a memory profile", "a search state") from None
        if isinstance(exc, msgspec.ValidationError):
            raise validation_error(exc) from None
        raise decode_error(data, exc) from None
    if record.version != 1:
        raise InputError("$.version", "version 1", describe(record.version))
    return record


def operation_kind(text: str, where: str) -> str:
    """First word of a step's operation: ``Gemm``, ``Copy``, ``Convert``, ``Repeat``…"""
    try:
        parts = parse_debug_sequence(text)
    except DebugSyntaxError as exc:
        raise InputError(f"{where} (character {exc.position})", f"Debug text ({exc.expected})", repr(exc.snippet)) from None
    head = parts[0]
    return head.name if isinstance(head, (Unit, Struct, Tuple)) else describe(head)


class _ValueColumns:
    """Builds the ``values`` and ``axes`` tables, parsing each distinct layout/precision once."""

    def __init__(self, device_tiles: int):
        self.device_tiles = device_tiles
        self.layouts: dict[str, Layout] = {}
        self.precisions: dict[str, Precision] = {}
        self.values: dict[str, list] = {name: [] for name in VALUES.names}
        self.axes: dict[str, list] = {name: [] for name in AXES.names}

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

    def add(self, i: int, v: ValueRecord) -> None:
        where = f"$.timeline.values[{i}]"
        layout = self._layout(v.layout, f"{where}.layout")
        precision = self._precision(v.precision, f"{where}.precision")
        if v.memory_class not in MEMORY_CLASS_REGION:
            raise InputError(f"{where}.class", "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")", describe(v.memory_class))
        if layout.region is None:
            raise InputError(f"{where}.layout (memory_class)", "a memory class (" + ", ".join(MEMORY_CLASS_REGION) + ")", describe(layout.memory_class))
        rank = len(v.shape)
        dims = []
        for k, axis in enumerate(layout.tiling.axes):
            dim = axis.axis.dimension(rank)
            if axis.axis.kind != "Linear" and not (dim is not None and 0 <= dim < rank):
                raise InputError(f"{where}.layout (tiling.axes[{k}].axis)", f"an axis of the rank-{rank} shape {v.shape}", str(axis.axis))
            dims.append(dim)
        col = self.values
        col["id"].append(v.id)
        col["origin"].append(v.origin)
        col["root"].append(v.root)
        col["name"].append(v.name)
        col["group"].append(v.group)
        col["storage_group"].append(v.storage_group)
        col["shape"].append(v.shape)
        col["precision"].append(v.precision)
        col["precision_name"].append(precision.name)
        col["element_bytes"].append(precision.element_bytes)
        col["layout"].append(v.layout)
        col["order"].append(str(layout.order))
        col["memory_class"].append(v.memory_class)
        col["region"].append(MEMORY_CLASS_REGION[v.memory_class])
        col["tile_count"].append(layout.tiling.tile_count)
        col["replicas"].append(layout.tiling.replicas)
        col["shard_bytes"].append(v.shard_bytes)
        col["aligned_bytes"].append(v.aligned_bytes)
        col["copies"].append(v.copies)
        col["bytes"].append(v.bytes)
        col["layout_error"].append(v.layout_error)
        ax = self.axes
        for k, axis in enumerate(layout.tiling.axes):
            ax["value_id"].append(v.id)
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


def _check_ids(ids: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Ids unique and every root known; returns the permutation sorting ids."""
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
    return order


def _live_rows(ids_sorted: np.ndarray, order: np.ndarray, live_ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Value-table row of each live entry; an unknown id is an error naming the step."""
    if ids_sorted.size == 0:
        if live_ids.size:
            raise InputError("$.timeline.steps[0].live", "ids of values in timeline.values", str(int(live_ids[0])))
        return live_ids
    pos = np.searchsorted(ids_sorted, live_ids).clip(0, ids_sorted.size - 1)
    unknown = np.flatnonzero(ids_sorted[pos] != live_ids)
    if unknown.size:
        entry = int(unknown[0])
        bounds = np.cumsum(counts)
        step = int(np.searchsorted(bounds, entry, side="right"))
        k = entry - (int(bounds[step - 1]) if step else 0)
        raise InputError(f"$.timeline.steps[{step}].live[{k}]", "the id of a value in timeline.values", str(int(live_ids[entry])))
    return order[pos]


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
    cols: dict[str, list] = {name: [] for name in STEPS.names if name != "live_count"}
    for i, s in enumerate(steps):
        where = f"$.timeline.steps[{i}]"
        if s.index != i:
            raise InputError(f"{where}.index", f"{i} (steps in program order)", str(s.index))
        kind = kinds.get(s.operation)
        if kind is None:
            kind = kinds[s.operation] = operation_kind(s.operation, f"{where}.operation")
        cols["index"].append(s.index)
        cols["source"].append(s.source)
        cols["operation_kind"].append(kind)
        cols["operation"].append(s.operation)
        cols["execution_count"].append(s.execution_count)
        cols["scratch_standard"].append(s.scratch.standard)
        cols["scratch_interleaved"].append(s.scratch.interleaved)
        cols["usage_standard"].append(s.usage.standard)
        cols["usage_interleaved"].append(s.usage.interleaved)
    arrays = [pa.array(cols[n], type=STEPS.field(n).type) for n in STEPS.names if n != "live_count"]
    arrays.append(pa.array(live_count, type=pa.int64()))
    return pa.Table.from_arrays(arrays, schema=STEPS)


def parse_memory_profile(data: bytes, source: str = "<memory profile>", progress: Progress | None = None) -> MemoryProfile:
    """Validate and normalise a memory profile's bytes. Errors name ``source``."""
    note = progress or (lambda stage, fraction: None)
    try:
        note("decoding JSON", 0.0)
        record = decode_profile(data)
        note("values and layouts", 0.45)
        if record.total_peak_step >= len(record.timeline.steps) and record.timeline.steps:
            raise InputError("$.total_peak_step", f"a step index below {len(record.timeline.steps)}", str(record.total_peak_step))
        columns = _ValueColumns(record.tile_count)
        for i, value in enumerate(record.timeline.values):
            columns.add(i, value)
        values = pa.Table.from_pydict(columns.values, schema=VALUES)
        axes = pa.Table.from_pydict(columns.axes, schema=AXES)
        ids = values.column("id").to_numpy()
        order = _check_ids(ids, values.column("root").to_numpy())

        note("live lists", 0.6)
        steps = record.timeline.steps
        entries = parse_live_lists([s.live for s in steps])
        rows = _live_rows(ids[order], order, entries.ids, entries.counts)
        intervals = live_intervals(rows, entries.counts, len(ids))
        live_count = _count_live(intervals, len(steps))
        del entries, rows
        live = pa.Table.from_arrays(
            [pa.array(ids[intervals.value_row]), pa.array(intervals.first_step), pa.array(intervals.last_step)],
            schema=LIVE_INTERVALS,
        )
        note("steps", 0.9)
        steps_table = _steps_table(steps, live_count)
        note("done", 1.0)
        return MemoryProfile(source, _profile_table(record), values, axes, steps_table, live)
    except InputError as exc:
        raise exc.in_file(source) from None


def _count_live(intervals, n_steps: int) -> np.ndarray:
    diff = np.zeros(n_steps + 1, dtype=np.int64)
    np.add.at(diff, intervals.first_step, 1)
    np.add.at(diff, intervals.last_step + 1, -1)
    return np.cumsum(diff[:-1])


def load_memory_profile(path: str | Path, progress: Progress | None = None) -> MemoryProfile:
    return parse_memory_profile(read_bytes(path), str(path), progress)
