"""``tilescope advise FILE [--peak standard|interleaved|total] [--json] [--limit N] [--edits EDITS.json]``:
rank tiling edits that lower a peak, each verified by re-planning (planner.advisor).

``--json`` prints one object: ``{"peak": KIND, "peak_bytes": N, "peak_step": S, "candidates": [{"edits":
[edit-set entries as in models.edits], "description", "peak_before", "peak_after", "saving",
"peak_step"}]}``, best saving first, and when there are none ``"why_none"``: why (nothing to split,
every candidate refused, or candidates that left the peak where it was: typically other steps reach
the same peak, as in every multi-block synthetic profile). The text form ends with the same reason.
With ``--edits`` the candidates are added to that edit set.
"""

from __future__ import annotations

import json

from tilescope.cli.inputs import open_profile
from tilescope.loaders.edit_sets import load_edit_set
from tilescope.models.edits import EDIT_SET_FORMAT
from tilescope.models.format import count_of, fmt_bytes, fmt_signed_bytes
from tilescope.planner.advisor import PEAK_KINDS, AdviceTally, Suggestion, advise, peak_step, peak_value, why_none
from tilescope.planner.edits import apply_edits


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--peak", choices=PEAK_KINDS, default="total", help="which peak to lower (default total)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--limit", type=int, default=20, help="at most this many candidates (default 20)")
    parser.add_argument("--edits", metavar="EDITS.json", help="advise on top of a saved edit set")
    parser.add_argument("--storage-group", action="store_true", help="edits apply to whole storage groups")
    parser.epilog = EDIT_SET_FORMAT  # the edit-set file's reference (models.edits)


def suggestion_json(s: Suggestion) -> dict:
    return {
        "edits": [e.to_json() for e in s.edits],
        "description": s.description,
        "peak_before": s.peak_before,
        "peak_after": s.peak_after,
        "saving": s.saving,
        "peak_step": s.peak_step,
    }


def run(args) -> int:
    opened = open_profile(args.file, quiet=args.quiet)
    arrays, base = opened.arrays, opened.plan
    whatif = None
    if args.edits:
        whatif = apply_edits(arrays, base, load_edit_set(args.edits), whole_storage_group=args.storage_group)
    plan = whatif.plan if whatif is not None else base
    tally = AdviceTally()
    found = advise(arrays, plan, args.peak, max(args.limit, 0), whatif=whatif, tally=tally)
    bytes_, step = peak_value(plan.peaks, args.peak), peak_step(plan.peaks, args.peak)
    reason = why_none(plan, args.peak, tally) if not found and args.limit > 0 else None
    if args.json:
        out = {
            "peak": args.peak,
            "peak_bytes": bytes_,
            "peak_step": step,
            "candidates": [suggestion_json(s) for s in found],
        }
        if reason is not None:
            out["why_none"] = reason
        print(json.dumps(out))
        return 0
    print(
        f"{args.peak} peak {fmt_bytes(bytes_)} at step {step}; {count_of(len(found), 'verified candidate')}"
        + (f": {reason}" if reason is not None else "")
    )
    for rank, s in enumerate(found, 1):
        print(
            f"{rank:3}. {s.description}; {args.peak} peak becomes {fmt_bytes(s.peak_after)} at step {s.peak_step} "
            f"({fmt_signed_bytes(s.peak_after - s.peak_before)})"
        )
    return 0
