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
  app does: each time the set so far, validated together; so a set valid only as a whole, such as
  ``84:1=18`` before ``84:replicas=27``, stops at its first edit; ``planner.edits.extend_edits``
  adds each edit to the last plan, so the time grows linearly with the edits), and prints one JSON
  line per edit:
  ``{"index", "edit" (as above), "standard", "interleaved", "total", "effective_peak_bytes",
  "steps": {"standard", "interleaved", "total"}, "fits_budget"}``.
- An invalid edit set exits 2 with one line naming the value, the axis and the rule (EditError);
  a malformed ``--edit`` argument exits 2 with one line.
"""
from __future__ import annotations

import argparse
import json
import re

from tilescope.cli.inputs import open_profile
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import TilingEdit
from tilescope.models.errors import TilescopeError, describe
from tilescope.models.limits import MAX_COUNT
from tilescope.planner.edits import AppliedEdit, WhatIf, apply_edits, extend_edits
from tilescope.planner.model import Plan, ProfileArrays, plan_profile

_EDIT_ARGUMENT = re.compile(r"^(?P<value>\d+):(?:(?P<axis>\d+)|(?P<replicas>replicas))=(?P<count>-?\d+)$")
_MAX_DIGITS = 16  # more than any id or count accepted (models.limits); never converted beyond


def parse_edit_argument(text: str) -> TilingEdit:
    """``V:K=N`` (partitions of axis position K) or ``V:replicas=N``."""
    match = _EDIT_ARGUMENT.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"expected V:K=N or V:replicas=N (e.g. 84:1=18), found {describe(text)}")
    for name in ("value", "axis", "count"):
        if match[name] is not None and len(match[name].lstrip("-")) > _MAX_DIGITS:
            raise argparse.ArgumentTypeError(f"expected V:K=N with numbers of at most {_MAX_DIGITS} digits, found {describe(text)}")
    value, count = int(match["value"]), int(match["count"])
    if not -MAX_COUNT <= count <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a count of at most {MAX_COUNT:,}, found {count:,} in {describe(text)}")
    if match["replicas"]:
        return TilingEdit(value, replicas=count)
    return TilingEdit(value, axis=int(match["axis"]), partitions=count)


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--edit", action="append", default=[], type=parse_edit_argument, metavar="V:K=N|V:replicas=N",
        help="set the partitions of axis position K of value V (or its replicas); repeatable",
    )
    parser.add_argument("--edits", metavar="EDITS.json", help="a saved edit set, applied before any --edit")
    parser.add_argument("--each", action="store_true", help="apply the edits one at a time; one JSON line per edit")
    parser.add_argument("--storage-group", action="store_true", help="apply each edit to the value's whole storage group")


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
        "values": [
            {"id": int(i), "shard_bytes": int(s), "aligned_bytes": int(a), "bytes": int(b), "layout_error": e}
            for i, s, a, b, e in zip(arrays.value_ids, f.shard, f.aligned, f.bytes, layout_errors)
        ],
    }


def human_summary(arrays: ProfileArrays, plan: Plan) -> str:
    p = plan.peaks
    kib = lambda n: f"{n:,} B ({n / 1024:,.1f} KiB)"  # noqa: E731
    lines = [
        f"{arrays.n_values:,} values, {arrays.n_steps:,} steps",
        f"standard peak     {kib(p.standard)} at step {p.standard_step} (incl. {p.exchange_rows:,} B exchange rows)",
        f"interleaved peak  {kib(p.interleaved)} at step {p.interleaved_step}",
        f"total peak        {kib(p.total)} at step {p.total_step}",
        f"effective peak    {kib(p.effective_peak_bytes)} (incl. {arrays.support_reserve_bytes:,} B support reserve)",
        f"budget            {kib(arrays.budget_bytes)}; interleaved {kib(arrays.interleaved_budget_bytes)}",
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
    return {
        "index": index,
        "edit": applied_edit_json(whatif.last_applied),
        "standard": p.standard,
        "interleaved": p.interleaved,
        "total": p.total,
        "effective_peak_bytes": p.effective_peak_bytes,
        "steps": {"standard": p.standard_step, "interleaved": p.interleaved_step, "total": p.total_step},
        "fits_budget": p.fits_budget,
    }


def _kib(n: int) -> str:
    return f"{n:,} B ({n / 1024:,.1f} KiB)"


def edits_summary(whatif: WhatIf) -> str:
    before, after = whatif.diff.peaks_before, whatif.diff.peaks_after
    lines = [f"edit: {a.edit.describe()} (applied to values {', '.join(map(str, a.applied_to))})" for a in whatif.applied]
    for name, b, a, sb, sa in (
        ("standard", before.standard, after.standard, before.standard_step, after.standard_step),
        ("interleaved", before.interleaved, after.interleaved, before.interleaved_step, after.interleaved_step),
        ("total", before.total, after.total, before.total_step, after.total_step),
    ):
        lines.append(f"{name} peak: {_kib(b)} at step {sb} → {_kib(a)} at step {sa} ({a - b:+,} B)")
    for value, b, a in whatif.diff.changed_values:
        lines.append(f"value {value}: {_kib(b)} → {_kib(a)}")
    return "\n".join(lines)


def edits_of(args) -> list[TilingEdit]:
    return (load_edit_set(args.edits) if args.edits else []) + list(args.edit)


def run(args) -> int:
    edits = edits_of(args)
    if args.each and not edits:
        raise TilescopeError("--each needs edits (--edits FILE or --edit V:K=N)")
    profile = open_profile(args.file)
    arrays, plan = plan_profile(profile)
    if args.each:
        whatif = apply_edits(arrays, plan, [], whole_storage_group=args.storage_group)
        for index, edit in enumerate(edits):
            whatif = extend_edits(arrays, whatif, [edit])  # the set so far, validated together
            print(json.dumps(each_line(index, whatif)), flush=True)
        return 0
    whatif = apply_edits(arrays, plan, edits, whole_storage_group=args.storage_group) if edits else None
    shown = whatif.plan if whatif is not None else plan
    if args.json:
        out = plan_json(arrays, shown, profile.values.column("layout_error").to_pylist())
        if whatif is not None:
            out["edits"] = [applied_edit_json(a) for a in whatif.applied]
        print(json.dumps(out))
    else:
        print(human_summary(arrays, shown))
        if whatif is not None:
            print(edits_summary(whatif))
    return 0
