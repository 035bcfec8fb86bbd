"""``tilescope check FILE [--json]``: exit 0 when every recorded figure matches and the invariants
``check`` answers for hold (docs/formats.md §6), 1 listing each mismatch and each violation.

``--json`` prints one object: ``{"ok": BOOL, "values": N, "steps": N, "mismatches": [{"scope":
"value"|"step"|"profile", "key": ID or INDEX or null, "field", "recorded", "recomputed"}],
"violations": [{"scope": "value"|"step", "key": ID or INDEX, "rule", "detail"}]}`` (values first,
then steps, then profile-wide figures; the exit code is the same as without it).

A v2/v3 profile is checked by its version's rules (``planner.tile_check``, docs/formats.md §7): a
per-tile mismatch adds ``"tile": T`` (the text line says ``step S tile T``), and a field with more
than 1,000 mismatches lists the first 1,000 and counts the rest in ``"more_mismatches": {FIELD: N}``.

Notes (v2/v3, never a mismatch, never in the exit code): where tilescope's own per-tile estimate
(docs/formats.md §8) does not reproduce the file's per-tile figures by itself, and why — most often
a tile offset the file does not record (``derived.tile_usage.estimate_agreement``). ``--json`` adds
``"notes": [{"where": "value 12", "note": …}]`` (the first ``NOTES_LISTED``, the rest counted in
``"more_notes"``); the text form prints ``note: …`` lines after the verdict, the first
``NOTES_PRINTED`` of them.
"""

from __future__ import annotations

import json
import sys

from tilescope.cli.inputs import open_profile
from tilescope.models.format import count_of, fmt_bytes
from tilescope.planner.check import Mismatch, Violation, check_plan
from tilescope.planner.tile_check import TILES_WITH_A_SHARD, MoreMismatches

# Mismatch fields that are not byte figures (everything else is: shard/aligned bytes, usage, peaks)
_NOT_BYTES = {
    "standard_peak_step",
    "interleaved_peak_step",
    "total_peak_step",
    "fits_budget",
    "layout memory_class",
    TILES_WITH_A_SHARD,
}


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def mismatch_json(m: Mismatch) -> dict:
    out = {"scope": m.scope, "key": m.key, "field": m.field, "recorded": m.recorded, "recomputed": m.recomputed}
    if m.tile is not None:  # a per-tile figure (versions 2 and 3)
        out["tile"] = m.tile
    return out


def violation_json(v: Violation) -> dict:
    return {"scope": v.scope, "key": v.key, "rule": v.rule, "detail": v.detail}


def mismatch_text(m: Mismatch) -> str:
    if m.field in _NOT_BYTES or not isinstance(m.recorded, int | float) or not isinstance(m.recomputed, int | float):
        return str(m)
    return f"{m.where}: {m.field} recorded {fmt_bytes(m.recorded)}, recomputed {fmt_bytes(m.recomputed)}"


NOTES_LISTED = 1_000
NOTES_PRINTED = 20


def run(args) -> int:
    from tilescope.derived.tile_usage import estimate_agreement

    opened = open_profile(args.file, quiet=args.quiet)
    profile, arrays, plan = opened.profile, opened.arrays, opened.plan
    problems = check_plan(profile, arrays, plan)
    notes = estimate_agreement(opened)
    mismatches = [p for p in problems if isinstance(p, Mismatch)]
    violations = [p for p in problems if isinstance(p, Violation)]
    more = [p for p in problems if isinstance(p, MoreMismatches)]
    if args.json:
        out = {
            "ok": not problems,
            "values": profile.n_values,
            "steps": profile.n_steps,
            "mismatches": [mismatch_json(m) for m in mismatches],
            "violations": [violation_json(v) for v in violations],
        }
        if more:  # fields with more mismatches than listed (planner.tile_check.LIMIT)
            out["more_mismatches"] = {m.field: m.count for m in more}
        if notes:
            out["notes"] = [{"where": where, "note": note} for where, note in notes[:NOTES_LISTED]]
            if len(notes) > NOTES_LISTED:
                out["more_notes"] = len(notes) - NOTES_LISTED
        print(json.dumps(out))
        return 1 if problems else 0
    for problem in problems:
        print(mismatch_text(problem) if isinstance(problem, Mismatch) else str(problem))
    if problems:
        if not args.quiet:
            print(
                f"{count_of(len(mismatches) + sum(m.count for m in more), 'mismatch', 'mismatches')}, "
                f"{count_of(len(violations), 'invariant violation')}",
                file=sys.stderr,
            )
    elif not args.quiet:
        print(f"ok: {count_of(profile.n_values, 'value')} and {count_of(profile.n_steps, 'step')} reproduce exactly")
    print_notes(notes)
    return 1 if problems else 0


def print_notes(notes: list[tuple[str, str]]) -> None:
    """The per-tile estimate's notes (module doc): never mismatches."""
    for where, note in notes[:NOTES_PRINTED]:
        print(f"note: {where}: {note}")
    if len(notes) > NOTES_PRINTED:
        print(f"note: {count_of(len(notes) - NOTES_PRINTED, 'more note')} (--json lists {NOTES_LISTED:,})")
