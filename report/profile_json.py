"""A plan written as a memory profile in the compiler's own format (docs/formats.md §1): what
``tilescope plan FILE --edit … --write-profile OUT.json`` writes.

The input file's JSON is read field by field without decoding what is not rewritten (msgspec
``Raw``: each field's bytes as they are in the input), so everything the plan does not change is
written exactly as the input spells it: names, shapes, operations, live lists, unknown fields.
Rewritten, from the plan given:

- per value: ``shard_bytes``, ``aligned_bytes``, ``bytes`` (every value, recomputed), and the
  ``layout`` of every edited value (its alias class included) with the edited tiling's
  ``tile_count``, ``replicas`` and per-axis ``partitions``, in Debug text rendered by
  ``loaders.debug_text.render`` (the input's spelling: the sample's layouts render to their exact
  text); the rendered layout is parsed back and must give the edited tiling;
- per step: ``usage`` {standard, interleaved};
- the header: ``peak`` {standard, interleaved, total, maximum_standard_allocation} (``exchange_rows``
  is the file's reservation, kept), the three ``*_peak_step``, ``effective_peak_bytes``,
  ``fits_budget``.

The output is compact JSON (no whitespace between the fields it joins). Re-planning it gives the
plan it was written from; its allocation granules are inferred again from the written figures
(docs/formats.md §5), so a value whose new shard happens to be a whole number of granules is read
back with granule 1 — the same figures, but a further edit of that value would then round
differently.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tilescope.loaders.debug_text import DebugSyntaxError, Struct, parse_debug, render
from tilescope.loaders.layouts import layout_from_debug
from tilescope.models.errors import InputError
from tilescope.models.tiling import TensorTiling
from tilescope.planner.model import Plan, ProfileArrays
from tilescope.planner.tile_figures import SOURCE_FILE
from tilescope.planner.tile_usage import TileUsage

from .profile_tiles_json import rewrite_per_tile

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RECORDS = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_INT = msgspec.json.Decoder(int)


def _raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(value))


def layout_with_tiling(text: str, tiling: TensorTiling) -> str:
    """The layout Debug text with the tiling's counts replaced; the rest as parsed and rendered."""
    try:
        layout = parse_debug(text)
    except DebugSyntaxError as exc:  # the loader parsed it already; only a changed file gets here
        raise InputError("layout", "Debug text", str(exc)) from None
    tiling_struct = layout.fields["tiling"] if isinstance(layout, Struct) else None
    if not isinstance(tiling_struct, Struct):  # the loader read a tiling from it: only a changed file gets here
        raise InputError("layout", "a layout struct with a tiling struct", text[:120])
    axes = tiling_struct.fields["axes"]
    if len(axes) != len(tiling.axes):
        raise ValueError(f"the edited tiling has {len(tiling.axes)} axes, the layout {len(axes)}")
    tiling_struct.fields["tile_count"] = tiling.tile_count
    tiling_struct.fields["replicas"] = tiling.replicas
    for axis_struct, axis in zip(axes, tiling.axes):
        assert isinstance(axis_struct, Struct)
        axis_struct.fields["partitions"] = axis.partitions
    rendered = render(layout)
    if layout_from_debug(parse_debug(rendered), "layout").tiling != tiling:  # the text must say what the plan used
        raise ValueError(f"rendered layout does not give the edited tiling: {rendered}")
    return rendered


def _mismatch(source: str, path: str, expected: str, found: str) -> InputError:
    return InputError(path, f"{expected} (the file changed since it was loaded?)", found, file=source)


def _rewrite_values(
    raw_values: bytes, source: str, arrays: ProfileArrays, plan: Plan, tilings: dict[int, TensorTiling]
) -> list:
    values = _RECORDS.decode(raw_values)
    if len(values) != arrays.n_values:
        raise _mismatch(source, "$.timeline.values", f"{arrays.n_values} values", str(len(values)))
    figures = plan.figures
    shard, aligned, cost = figures.shard.tolist(), figures.aligned.tolist(), figures.bytes.tolist()
    ids = arrays.value_ids.tolist()
    layouts: dict[tuple[str, TensorTiling], str] = {}
    for row, value in enumerate(values):
        if _INT.decode(value["id"]) != ids[row]:
            raise _mismatch(source, f"$.timeline.values[{row}].id", f"id {ids[row]}", value["id"].decode())
        value["shard_bytes"] = _raw(shard[row])
        value["aligned_bytes"] = _raw(aligned[row])
        value["bytes"] = _raw(cost[row])
        tiling = tilings.get(row)
        if tiling is not None:
            text = msgspec.json.decode(value["layout"], type=str)
            key = (text, tiling)
            if key not in layouts:
                layouts[key] = layout_with_tiling(text, tiling)
            value["layout"] = _raw(layouts[key])
    return values


def _rewrite_steps(raw_steps: bytes, source: str, plan: Plan) -> list:
    steps = _RECORDS.decode(raw_steps)
    if len(steps) != plan.usage_standard.size:
        raise _mismatch(source, "$.timeline.steps", f"{plan.usage_standard.size} steps", str(len(steps)))
    for step, standard, interleaved in zip(steps, plan.usage_standard.tolist(), plan.usage_interleaved.tolist()):
        usage = _FIELDS.decode(step["usage"])
        usage["standard"], usage["interleaved"] = _raw(standard), _raw(interleaved)
        step["usage"] = _raw(usage)
    return steps


def profile_json_bytes(
    data: bytes,
    source: str,
    arrays: ProfileArrays,
    plan: Plan,
    tilings: dict[int, TensorTiling] | None = None,
    tiles: TileUsage | None = None,
) -> bytes:
    """The memory profile ``data`` (the bytes of the file ``source`` that ``arrays`` was loaded
    from) with ``plan``'s figures and the ``tilings`` (value row → edited tiling: a ``WhatIf``'s).
    A v2/v3 file is written as its version, from ``tiles``, the plan's per-tile usage
    (``derived.tile_usage.tile_usage``; ``report.profile_tiles_json``)."""
    try:
        # (Raw fields as read; the rewritten ones below are lists and dicts, encoded with the rest)
        top: dict[str, Any] = _FIELDS.decode(data)
        timeline: dict[str, Any] = _FIELDS.decode(top["timeline"])
        values = _rewrite_values(timeline["values"], source, arrays, plan, tilings or {})
        steps = _rewrite_steps(timeline["steps"], source, plan)
        peak = _FIELDS.decode(top["peak"])
    except (msgspec.DecodeError, KeyError) as exc:  # the loader accepted this file: it changed since
        raise _mismatch(source, "$", "the memory profile that was loaded", str(exc)) from None
    p = plan.peaks
    peak.update(
        standard=_raw(p.standard),
        interleaved=_raw(p.interleaved),
        total=_raw(p.total),
        maximum_standard_allocation=_raw(p.maximum_standard_allocation),
    )
    top.update(
        fits_budget=_raw(p.fits_budget),
        effective_peak_bytes=_raw(p.effective_peak_bytes),
        peak=_raw(peak),
        total_peak_step=_raw(p.total_step),
        standard_peak_step=_raw(p.standard_step),
        interleaved_peak_step=_raw(p.interleaved_step),
    )
    if tiles is not None and tiles.source == SOURCE_FILE:  # a v2/v3 file: written as its version
        rewrite_per_tile(top, values, steps, arrays, tiles, set((tilings or {}).keys()))
    timeline["values"], timeline["steps"] = values, steps  # encoded once, with the whole file
    top["timeline"] = timeline
    return msgspec.json.encode(top)
