"""``tilescope plan FILE [--json] [--edit V:K=N | --edit V:replicas=N ...] [--edits EDITS.json] [--each]``:
recompute the memory plan of a profile, optionally with what-if tiling edits (planner.edits).

- ``--edit V:K=N`` sets the partitions of axis position K (0-based index in value V's axes list)
  to N; ``--edit V:replicas=N`` sets its replicas. ``--edits FILE`` loads a saved edit set
  (models.edits); its edits come first, then the ``--edit`` ones, applied as one set.
  ``--storage-group`` applies each edit to the value's whole storage group.
- ``--json`` prints ``plan_json`` of the edited plan plus ``"edits"``, one entry per edit in order:
  ``{"value": V, "axis": K, "count": N, "applied_to": [ids]}`` for a partition edit and
  ``{"value": V, "replicas": N, "count": N, "applied_to": [ids]}`` for a replica edit
  (``applied_to``: ids of every value whose tiling the edit set, ascending).
- ``--each`` applies the edits one at a time, in order, re-planning incrementally after each (as the
  app does: each time the set so far, validated together; ``planner.edits.extend_edits`` adds each
  edit to the last plan, so the time grows linearly with the edits), and prints one JSON line per
  edit:
  ``{"index", "edit" (as above), "standard", "interleaved", "total", "effective_peak_bytes",
  "steps": {"standard", "interleaved", "total"}, "fits_budget"}``. A value's partitions and
  replicas edits that are valid only together (``84:1=18`` then ``84:replicas=27``, the advisor's
  pairs) are one step: one line, the second's, with ``"applied_with": [{"index", "edit"}]`` naming
  the first. Any other refused edit stops the run, exit 2, with one line naming its index and edit.
- ``--write-profile OUT.json`` also writes the (edited) plan as a memory profile in the compiler's
  format (``tilescope.report.profile_json``): edited layouts in Debug text, every recorded figure
  recomputed, everything else as in FILE; ``tilescope check OUT.json`` passes on it. OUT is written
  atomically and never replaces an existing file without ``--overwrite``; OUT naming FILE or the
  edit set, however spelled, is refused even with ``--overwrite`` (inputs are never written). Not with ``--each``. The text
  form ends with ``wrote OUT``; ``--json`` adds ``"written_profile": OUT``.
- ``peak_tiles`` (``--json``): ``{"standard": T, "interleaved": T, "total": T}``, the device tile
  where each peak is reached at its peak step (docs/formats.md §7: ties go to the last tile, as the
  compiler's ``usage``), and ``"peak_tiles_source"``: ``"file"`` for a v2/v3 profile (its plan per
  tile; edited values re-estimated, docs/formats.md §8); ``"estimate"`` for a version 1 profile,
  which records no per-tile figure: tilescope's own per-tile estimate (docs/formats.md §8,
  ``derived.tile_usage``) at the plan's peak steps, with edits too, ``"peak_tiles_note"`` saying
  so.
- ``--tile T`` (``--json``): adds ``"tile_usage": {"tile": T, "standard": [...], "interleaved": [...],
  "source": "file"|"estimate"}``, tile T's usage at every step of the (edited) plan
  (``derived.tile_usage``); T must be a device tile (0 … tile_count − 1), else exit 2.
- An invalid edit set exits 2 with one line naming the value, the axis and the rule (EditError);
  a malformed ``--edit`` argument exits 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from tilescope.cli.inputs import open_profile
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import EDIT_SET_FORMAT, TilingEdit
from tilescope.models.errors import InputError, TilescopeError, describe
from tilescope.models.files import cannot_read, refuse_inputs, write_atomically
from tilescope.models.format import count_of, fmt_bytes, fmt_signed_bytes
from tilescope.models.limits import MAX_COUNT
from tilescope.planner.edits import AppliedEdit, EditError, WhatIf, apply_edits, extend_edits
from tilescope.planner.model import Plan, ProfileArrays

# ASCII digits only (re.ASCII): ``\d`` alone also matches ``٨`` or ``²``.
_EDIT_ARGUMENT = re.compile(r"^(?P<value>\d+):(?:(?P<axis>\d+)|(?P<replicas>replicas))=(?P<count>-?\d+)$", re.ASCII)
_MAX_DIGITS = 16  # more than any id or count accepted (models.limits); never converted beyond


def parse_edit_argument(text: str) -> TilingEdit:
    """``V:K=N`` (partitions of axis position K) or ``V:replicas=N``."""
    match = _EDIT_ARGUMENT.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"expected V:K=N or V:replicas=N (e.g. 84:1=18), found {describe(text)}")
    for name in ("value", "axis", "count"):
        if match[name] is not None and len(match[name].lstrip("-")) > _MAX_DIGITS:
            raise argparse.ArgumentTypeError(
                f"expected V:K=N with numbers of at most {_MAX_DIGITS} digits, found {describe(text)}"
            )
    value, count = int(match["value"]), int(match["count"])
    if not -MAX_COUNT <= count <= MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"expected a count of at most {MAX_COUNT:,}, found {count:,} in {describe(text)}"
        )
    if match["replicas"]:
        return TilingEdit(value, replicas=count)
    return TilingEdit(value, axis=int(match["axis"]), partitions=count)


def add_edit_arguments(parser) -> None:
    """The file and the edits, as every command that plans an edited profile takes them (plan, place)."""
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--edit",
        action="append",
        default=[],
        type=parse_edit_argument,
        metavar="V:K=N|V:replicas=N",
        help="set the partitions of axis position K of value V (or its replicas); repeatable",
    )
    parser.add_argument("--edits", metavar="EDITS.json", help="a saved edit set, applied before any --edit")
    parser.add_argument(
        "--storage-group", action="store_true", help="apply each edit to the value's whole storage group"
    )
    parser.epilog = EDIT_SET_FORMAT  # the edit-set file's reference (models.edits)


def add_arguments(parser) -> None:
    add_edit_arguments(parser)
    parser.add_argument("--each", action="store_true", help="apply the edits one at a time; one JSON line per edit")
    parser.add_argument(
        "--write-profile",
        metavar="OUT.json",
        help="also write the plan as a memory profile (edited layouts, figures recomputed)",
    )
    parser.add_argument("--overwrite", action="store_true", help="let --write-profile replace an existing file")
    parser.add_argument(
        "--tile", type=int, metavar="T", help="with --json: add device tile T's usage at every step (v2/v3 profiles)"
    )


def plan_json(arrays: ProfileArrays, plan: Plan, layout_errors: list) -> dict:
    """The CLI contract: per-step lists in step order, one entry per value in file order."""
    p, f = plan.peaks, plan.figures
    return {
        "usage": {"standard": plan.usage_standard.tolist(), "interleaved": plan.usage_interleaved.tolist()},
        "peak": {
            "standard": p.standard,
            "interleaved": p.interleaved,
            "total": p.total,
            "exchange_rows": p.exchange_rows,
            "maximum_standard_allocation": p.maximum_standard_allocation,
        },
        "standard_peak_step": p.standard_step,
        "interleaved_peak_step": p.interleaved_step,
        "total_peak_step": p.total_step,
        "effective_peak_bytes": p.effective_peak_bytes,
        "fits_budget": p.fits_budget,
        **_peak_tiles(plan),
        "values": [
            {"id": int(i), "shard_bytes": int(s), "aligned_bytes": int(a), "bytes": int(b), "layout_error": e}
            for i, s, a, b, e in zip(arrays.value_ids, f.shard, f.aligned, f.bytes, layout_errors)
        ],
    }


PEAK_TILES_V1 = (
    "tilescope's own per-tile estimate (docs/formats.md §8): a version 1 profile records no per-tile figures"
)


def _peak_tiles(plan: Plan) -> dict:
    tiles = plan.peak_tiles
    return {"peak_tiles": tiles, "peak_tiles_source": "file"} if tiles is not None else {"peak_tiles": None}


def estimated_peak_tiles(data, plan: Plan) -> dict:
    """A version 1 plan's ``peak_tiles`` from tilescope's estimate (``derived.tile_usage``): at each
    of the plan's peak steps, the tile the estimate loads most (ties: the last tile). Only those
    steps' tiles are summed (``at_step``), not every step's."""
    import numpy as np

    from tilescope.derived.tile_usage import at_step

    p = plan.peaks
    tiles = {}
    try:
        for region, step in (
            ("standard", p.standard_step),
            ("interleaved", p.interleaved_step),
            ("total", p.total_step),
        ):
            standard, interleaved = at_step(data, step)
            held = {"standard": standard, "interleaved": interleaved, "total": standard + interleaved}[region]
            tiles[region] = int(held.size - 1 - np.argmax(held[::-1]))
    except TilescopeError as exc:  # a layout the compiler's resolution refuses: no estimate
        return {"peak_tiles": None, "peak_tiles_source": "estimate", "peak_tiles_note": f"no per-tile estimate: {exc}"}
    return {"peak_tiles": tiles, "peak_tiles_source": "estimate", "peak_tiles_note": PEAK_TILES_V1}


def tile_usage_json(data, tile: int) -> dict:
    """``--tile T``: tile T's usage at every step (module doc), from ``derived.tile_usage``."""
    from tilescope.derived.tile_usage import source, tile_series

    if not 0 <= tile < data.arrays.device_tiles:
        raise TilescopeError(f"--tile {tile}: expected a device tile 0 … {data.arrays.device_tiles - 1}")
    standard, interleaved = tile_series(data, tile)
    return {"tile": tile, "standard": standard.tolist(), "interleaved": interleaved.tolist(), "source": source(data)}


def human_summary(arrays: ProfileArrays, plan: Plan) -> str:
    p = plan.peaks
    tiles = plan.peak_tiles or {}
    where = {k: f", tile {t}" for k, t in tiles.items()}  # v2/v3: the device tile of each peak
    # v3 leaves the exchange rows out of its peaks (docs/formats.md §7)
    rows = (
        f"exchange rows {fmt_bytes(p.exchange_rows)} not included"
        if plan.tiles is not None and arrays.version >= 3
        else f"incl. {fmt_bytes(p.exchange_rows)} exchange rows"
    )
    lines = [
        f"{count_of(arrays.n_values, 'value')}, {count_of(arrays.n_steps, 'step')}"
        + (f" (version {arrays.version}, per tile)" if plan.tiles is not None else ""),
        f"standard peak     {fmt_bytes(p.standard)} at step {p.standard_step}{where.get('standard', '')} ({rows})",
        f"interleaved peak  {fmt_bytes(p.interleaved)} at step {p.interleaved_step}{where.get('interleaved', '')}",
        f"total peak        {fmt_bytes(p.total)} at step {p.total_step}{where.get('total', '')}",
        f"effective peak    {fmt_bytes(p.effective_peak_bytes)} (incl. {fmt_bytes(arrays.support_reserve_bytes)} support reserve)",
        f"budget            {fmt_bytes(arrays.budget_bytes)}; interleaved {fmt_bytes(arrays.interleaved_budget_bytes)}",
        f"fits budget       {'yes' if p.fits_budget else 'NO'}",
    ]
    return "\n".join(lines)


def applied_edit_json(applied: AppliedEdit) -> dict:
    """One entry of ``"edits"`` (module doc)."""
    edit = applied.edit
    if edit.replicas is not None:
        return {"value": edit.value, "replicas": edit.replicas, "count": edit.count, "applied_to": applied.applied_to}
    return {"value": edit.value, "axis": edit.axis, "count": edit.count, "applied_to": applied.applied_to}


def each_line(index: int, whatif: WhatIf) -> dict:
    """The ``--each`` line after edit ``index``, the last edit of ``whatif``."""
    p = whatif.plan.peaks
    applied = whatif.last_applied
    assert applied is not None  # each_step calls it after applying an edit
    return {
        "index": index,
        "edit": applied_edit_json(applied),
        "standard": p.standard,
        "interleaved": p.interleaved,
        "total": p.total,
        "effective_peak_bytes": p.effective_peak_bytes,
        "steps": {"standard": p.standard_step, "interleaved": p.interleaved_step, "total": p.total_step},
        "fits_budget": p.fits_budget,
    }


def _partner(edits: list[TilingEdit], index: int) -> int | None:
    """The next edit's index when it is the other half of edit ``index``'s value (partitions then
    replicas, or replicas then partitions): the two an advisor pairs, valid only together."""
    edit, following = edits[index], index + 1
    if (
        following < len(edits)
        and edits[following].value == edit.value
        and (edits[following].replicas is None) != (edit.replicas is None)
    ):
        return following
    return None


def edit_source(args) -> str:
    return f"{args.edits} and --edit" if args.edits and args.edit else (str(args.edits) if args.edits else "--edit")


def each_step(arrays: ProfileArrays, whatif: WhatIf, edits: list[TilingEdit], source: str):
    """``--each``'s lines: each edit added to the set so far and re-planned. An edit refused alone
    that is valid together with the next edit of the same value (``84:1=18`` then
    ``84:replicas=27``: more partitions, then fewer replicas to stay on the device) is applied with
    it as one step: one line, for the second, whose ``"applied_with"`` lists the first. An edit
    refused otherwise is named: ``SOURCE: edit N (value 84: axis 1 partitions → 18): RULE``."""
    index = 0
    while index < len(edits):
        edit = edits[index]
        try:
            whatif = extend_edits(arrays, whatif, [edit])  # the set so far, validated together
            yield each_line(index, whatif)
            index += 1
            continue
        except EditError as exc:
            refused = exc
        partner = _partner(edits, index)
        if partner is not None:
            try:
                whatif = extend_edits(arrays, whatif, [edit, edits[partner]])
            except EditError:
                pass
            else:
                line = each_line(partner, whatif)
                line["applied_with"] = [{"index": index, "edit": applied_edit_json(whatif.applied[-2])}]
                yield line
                index = partner + 1
                continue
        alone = "" if partner is None else f", alone or with edit {partner} ({edits[partner].describe()})"
        raise TilescopeError(f"{source}: edit {index} ({edit.describe()}) cannot be applied{alone}: {refused}")


def edits_summary(whatif: WhatIf) -> str:
    before, after = whatif.diff.peaks_before, whatif.diff.peaks_after
    lines = [
        f"edit: {a.edit.describe()} (applied to values {', '.join(map(str, a.applied_to))})" for a in whatif.applied
    ]
    for name, b, a, sb, sa in (
        ("standard", before.standard, after.standard, before.standard_step, after.standard_step),
        ("interleaved", before.interleaved, after.interleaved, before.interleaved_step, after.interleaved_step),
        ("total", before.total, after.total, before.total_step, after.total_step),
    ):
        lines.append(
            f"{name} peak: {fmt_bytes(b)} at step {sb} → {fmt_bytes(a)} at step {sa} ({fmt_signed_bytes(a - b)})"
        )
    for value, b, a in whatif.diff.changed_values:
        lines.append(f"value {value}: {fmt_bytes(b)} → {fmt_bytes(a)} ({fmt_signed_bytes(a - b)})")
    return "\n".join(lines)


def edits_of(args) -> list[TilingEdit]:
    return (load_edit_set(args.edits) if args.edits else []) + list(args.edit)


def _profile_target(args) -> Path | None:
    """Where ``--write-profile`` writes, checked before any work (module doc)."""
    if not args.write_profile:
        return None
    if args.each:
        raise TilescopeError("--write-profile writes one plan: not with --each")
    out = Path(args.write_profile)
    refuse_inputs(out, [args.file, args.edits])  # the input is never written, however spelled
    if out.exists() and not args.overwrite:
        raise InputError(
            "--write-profile",
            "a path that does not exist yet (pass --overwrite to replace it)",
            "an existing file",
            file=str(out),
        )
    if not out.parent.is_dir():
        raise InputError("--write-profile", "a path in an existing folder", "no such folder", file=str(out))
    return out


def write_profile(args, out: Path, arrays: ProfileArrays, plan: Plan, whatif: WhatIf | None, tiles=None) -> Path:
    """``tiles``: the plan's per-tile usage, for a v2/v3 file (written as its version)."""
    from tilescope.report.profile_json import profile_json_bytes

    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        raise cannot_read(args.file, exc) from None
    text = profile_json_bytes(data, str(args.file), arrays, plan, whatif.tilings if whatif is not None else {}, tiles)
    return write_atomically(out, text, overwrite=args.overwrite, inputs=[args.file, args.edits])


def _per_tile(opened, whatif: WhatIf | None):
    """The plan's per-tile usage when the file records per-tile figures (v2/v3), else None."""
    if not getattr(opened.profile, "per_tile", False):
        return None
    from tilescope.derived.plan_data import PlanData
    from tilescope.derived.tile_usage import tile_usage

    return tile_usage(PlanData(opened, whatif))


def run(args) -> int:
    edits = edits_of(args)
    if args.each and not edits:
        raise TilescopeError("--each needs edits (--edits FILE or --edit V:K=N)")
    target = _profile_target(args)
    if args.tile is not None and not args.json:
        raise TilescopeError("--tile goes with --json")
    opened = open_profile(args.file, quiet=args.quiet)
    profile, arrays, plan = opened.profile, opened.arrays, opened.plan
    if args.each:
        unedited = apply_edits(arrays, plan, [], whole_storage_group=args.storage_group)
        for line in each_step(arrays, unedited, edits, edit_source(args)):
            print(json.dumps(line), flush=True)
        return 0
    whatif = apply_edits(arrays, plan, edits, whole_storage_group=args.storage_group) if edits else None
    shown = whatif.plan if whatif is not None else plan
    written = (
        write_profile(args, target, arrays, shown, whatif, _per_tile(opened, whatif)) if target is not None else None
    )
    if args.json:
        out = plan_json(arrays, shown, profile.values.column("layout_error").to_pylist())
        if whatif is not None:
            out["edits"] = [applied_edit_json(a) for a in whatif.applied]
        if out["peak_tiles"] is None or args.tile is not None:
            from tilescope.derived.plan_data import PlanData

            data = PlanData(opened, whatif)
            if out["peak_tiles"] is None:
                try:
                    out.update(
                        estimated_peak_tiles(data, shown)
                        if arrays.n_values
                        else {"peak_tiles": None, "peak_tiles_note": "no values: no tile holds any"}
                    )
                except TilescopeError as exc:  # a layout the estimate cannot resolve has no per-tile figure
                    out.update(
                        {"peak_tiles": None, "peak_tiles_note": f"tilescope's per-tile estimate has none: {exc}"}
                    )
            if args.tile is not None:
                out["tile_usage"] = tile_usage_json(data, args.tile)
        if written is not None:
            out["written_profile"] = str(written)
        print(json.dumps(out))
    else:
        print(human_summary(arrays, shown))
        if whatif is not None:
            print(edits_summary(whatif))
        if written is not None:
            print(f"wrote {written}")
    return 0
