"""Memory profile (docs/formats.md §1) → validated ``MemoryProfile`` of Arrow tables.

msgspec decodes and type-checks the file (errors carry a JSON path). Three things keep a large file
cheap: each value stays raw JSON until it is decoded in a batch of about a thousand and turned into
Arrow columns (so the values' Python objects never all exist at once), each step's ``live`` list
stays raw JSON text, parsed by ``loaders.live_lists`` with numpy straight into live intervals, and
the file's text is handed back to the system a batch at a time as it is parsed
(``InputBuffer.release``), so it does not stay resident beside the tables built from it. Checks
and everything derived from a layout run once per distinct kind of value.
Any decoding error is reported by decoding the whole file strictly, so messages are the same
whichever way the file was read. Values are checked by ``loaders.profile_values``, the file as a
whole (ids, aliases, figure bounds, repeated keys) by ``loaders.profile_checks``: docs/formats.md §6
says what is refused and why.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa

from tilescope.models.errors import InputError, describe
from tilescope.models.profile import MemoryProfile
from tilescope.models.records import MemoryProfileRecord, StepRecord, ValueRecord
from tilescope.models.schemas import LIVE_INTERVALS, PROFILE, STEP_TILES, STEPS, VALUE_TILES

from .debug_text import DebugSyntaxError, Struct, Tuple, Unit, parse_debug_sequence
from .detect import kind_of_bytes
from .json_input import InputBuffer, validation_error
from .json_scan import decode_error, nesting_error, refuse_deep_nesting, refuse_duplicate_keys
from .layouts import debug_syntax_error
from .live_lists import live_lists
from .profile_checks import (
    STEP_KEYS,
    TILED_STEP_KEYS,
    TILED_VALUE_KEYS,
    VALUE_KEYS,
    KeyTally,
    check_alias_layouts,
    check_figure_bounds,
    check_ids,
    largest_costs,
)
from .profile_tiles import VERSIONS, TileRuns, coarse_columns
from .profile_values import ValueColumns, gather

Progress = Callable[[str, float], None]


class _LazyTimeline(msgspec.Struct, frozen=True):
    values: list[msgspec.Raw]  # each value's JSON text, decoded a batch at a time (peak memory)
    steps: list[StepRecord]


class LazyProfileRecord(MemoryProfileRecord, frozen=True):
    """The file decoded and type-checked except its values, kept as raw JSON (see ``value_batches``)."""

    # The same key decoded lazily: msgspec lets a subclass redefine a field's type, which mypy
    # cannot tell from an incompatible override (no reader of the base type reads ``timeline``).
    timeline: _LazyTimeline  # type: ignore[assignment]


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
    if record.version not in VERSIONS:
        raise InputError("$.version", "version 1, 2 or 3", describe(record.version))
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


def _given(value, default):
    """An optional field's value, ``default`` when the file does not have it."""
    return default if value is msgspec.UNSET else value


def _profile_table(r: MemoryProfileRecord) -> pa.Table:
    row = {
        "version": r.version,
        "scope": r.scope,
        "model": _given(r.model, ""),
        "tile_count": r.tile_count,
        "budget_bytes": r.budget_bytes,
        "interleaved_budget_bytes": r.interleaved_budget_bytes,
        "support_reserve_bytes": r.support_reserve_bytes,
        "standard_contiguous_overflow_bytes": _given(r.standard_contiguous_overflow_bytes, 0),
        "fits_budget": r.fits_budget,
        "effective_peak_bytes": r.effective_peak_bytes,
        "peak_standard": r.peak.standard,
        "peak_interleaved": r.peak.interleaved,
        "peak_total": r.peak.total,
        "exchange_rows": r.peak.exchange_rows,
        "maximum_standard_allocation": r.peak.maximum_standard_allocation,
        "total_peak_step": r.total_peak_step,
        "standard_peak_step": r.standard_peak_step,
        "interleaved_peak_step": r.interleaved_peak_step,
        "gemm_output_packing": _given(r.gemm_output_packing, None),
        "attention_products": _given(r.attention_products, None),
    }
    return pa.Table.from_pylist([row], schema=PROFILE)


def _steps_table(steps: list[StepRecord], live_count: np.ndarray, tally: KeyTally, tiled: bool) -> pa.Table:
    kinds: dict[str, str] = {}
    operation_kinds = []
    for i, s in enumerate(steps):
        if s.index != i:
            raise InputError(f"$.timeline.steps[{i}].index", f"{i} (steps in program order)", str(s.index))
        kind = kinds.get(s.operation)
        if kind is None:
            kind = kinds[s.operation] = operation_kind(s.operation, f"$.timeline.steps[{i}].operation")
        operation_kinds.append(kind)
    tally.add((STEP_KEYS + (TILED_STEP_KEYS if tiled else 0)) * len(steps), sum(s.operation.count(":") for s in steps))
    columns: dict[str, list] = {
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
        gather(columns[n], np.arange(len(steps)), STEPS.field(n).type)
        if pa.types.is_dictionary(STEPS.field(n).type)
        else pa.array(columns[n], type=STEPS.field(n).type)
        for n in STEPS.names
        if n not in ("live_count", "coarse_standard", "coarse_interleaved")
    ]
    arrays.append(pa.array(live_count, type=pa.int64()))
    arrays.extend(coarse_columns(steps, tiled))
    return pa.Table.from_arrays(arrays, schema=STEPS)


def parse_memory_profile(
    data: bytes, source: str = "<memory profile>", progress: Progress | None = None
) -> MemoryProfile:
    """Validate and normalise a memory profile's bytes. Errors name ``source``.

    ``progress(stage, fraction)`` is told each stage and the fraction of the whole load done
    (values and live lists report as they go; decoding is one call and reports at its ends).
    """
    return _parse_input(InputBuffer(data), source, progress)


def load_memory_profile(
    path: str | Path, progress: Progress | None = None, buffer: InputBuffer | None = None
) -> MemoryProfile:
    """``parse_memory_profile`` of a file, whose text is released as it is parsed (peak memory);
    ``buffer``: the file's bytes when they were read already (to recognise its kind)."""
    return _parse_input(buffer if buffer is not None else InputBuffer.read(path), str(path), progress)


def _parse_input(data: InputBuffer, source: str, progress: Progress | None) -> MemoryProfile:
    note = progress or (lambda stage, fraction: None)
    try:
        with _no_gc():
            return dataclasses.replace(_parse(data, note), source=source)
    except InputError as exc:
        raise exc.in_file(source) from None
    except RecursionError:  # msgspec decodes nested JSON recursively: say where the nesting starts
        raise nesting_error(data.whole()).in_file(source) from None


def _parse(data: InputBuffer, note: Progress) -> MemoryProfile:
    note("decoding JSON", 0.0)
    record = decode_profile(data)
    try:
        return _read(record, data, note)
    except InputError:
        # A key given twice can be why a check failed (the decoder kept the last): say so first.
        whole = data.whole()
        refuse_deep_nesting(whole)
        refuse_duplicate_keys(whole)
        raise


def _read(record: LazyProfileRecord, data: InputBuffer, note: Progress) -> MemoryProfile:
    """The tables of a decoded profile, every check of docs/formats.md §6 applied."""
    tally = KeyTally(data.data)  # before any of the text is released
    tally.header(record)
    note("values and layouts", 0.35)
    columns = ValueColumns(record.tile_count)
    tiled = record.version >= 2
    tiles = TileRuns(record.version, record.tile_count) if tiled else None
    n_values = len(record.timeline.values)
    deferred: InputError | None = None
    for first, batch in value_batches(record, data):
        # Checks run as the batches come, but a failed one is raised only after every value has
        # type-checked: type errors anywhere come first, as when the file was decoded whole.
        if deferred is None:
            try:
                columns.add_batch(first, batch)
                if tiles is not None:
                    tiles.add_values(first, batch)
            except InputError as exc:
                deferred = exc
        note("values and layouts", 0.35 + 0.15 * (first + len(batch)) / n_values)
    n_steps = len(record.timeline.steps)
    if not n_steps:  # docs/formats.md §6: the *_peak_step fields must name a step
        raise InputError("$.timeline.steps", "at least one step (the *_peak_step fields name one)", "an empty list")
    for name in ("total_peak_step", "standard_peak_step", "interleaved_peak_step"):
        if getattr(record, name) >= n_steps:
            raise InputError(f"$.{name}", f"a step index below {n_steps}", str(getattr(record, name)))
    if deferred is not None:
        raise deferred
    values, axes = columns.tables()
    kinds = columns.kinds
    kind = columns.code
    per_kind = np.bincount(kind, minlength=len(kinds["text_colons"]))  # values of each kind
    tally.add(
        (VALUE_KEYS + (TILED_VALUE_KEYS if tiled else 0)) * n_values,
        columns.text_colons + int(np.dot(per_kind, kinds["text_colons"])),
    )
    ids = values.column("id").to_numpy()
    roots = values.column("root").to_numpy()
    order, root_rows = check_ids(ids, roots)
    check_alias_layouts(ids, roots, root_rows, kind, [columns.layouts[text] for text in kinds["layout"]])
    worst = largest_costs(values, kind, kinds["largest_shard"], kinds["region"])

    note("live lists", 0.5)
    steps = record.timeline.steps
    raws = [s.live for s in steps]
    if tiles is not None:
        tiles.check_steps(steps)

    def parsed(begin: int, end: int) -> None:
        if tiles is not None:  # the chunk's per-tile arrays, before its text is handed back
            tiles.add_steps(steps, begin, end, data.release)
        else:
            data.release(raws[begin], raws[end - 1])
        note("live lists", 0.5 + 0.45 * end / len(raws))

    lists = live_lists(raws, ids[order], order, parsed)
    intervals = lists.intervals
    note("steps", 0.95)
    steps_table = _steps_table(steps, lists.live_count, tally, tiled)
    if not tally.proves_unique():  # unknown fields (or a \u003a escape): scan what the count cannot prove
        whole = data.whole()
        refuse_deep_nesting(whole)  # (with only known fields the file nests 5 deep)
        refuse_duplicate_keys(whole)
    scratch = steps_table.column("scratch_standard").to_numpy() + steps_table.column("scratch_interleaved").to_numpy()
    check_figure_bounds(worst, ids, intervals, scratch, max(record.peak.exchange_rows, record.support_reserve_bytes))
    live = pa.Table.from_arrays(
        [pa.array(ids[intervals.value_row]), pa.array(intervals.first_step), pa.array(intervals.last_step)],
        schema=LIVE_INTERVALS,
    )
    note("done", 1.0)
    value_tiles, step_tiles = (
        tiles.tables() if tiles is not None else (VALUE_TILES.empty_table(), STEP_TILES.empty_table())
    )
    return MemoryProfile(
        "", _profile_table(record), values, axes, steps_table, live, value_tiles=value_tiles, step_tiles=step_tiles
    )
