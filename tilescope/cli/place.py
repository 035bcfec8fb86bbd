"""``tilescope place FILE [--edit V:K=N ...] [--edits EDITS.json] [--storage-group] [--json]``: place every
allocation of the (optionally edited) plan in its region (planner.placement) and print the regions'
figures.

- Edits are read and applied as ``tilescope plan`` does (the same ``--edit`` / ``--edits`` parsing,
  applied as one set); an invalid set exits 2 with one line.
- ``--json`` prints one object: ``regions`` {``standard``, ``interleaved``: {``lower_bound``,
  ``placed``, ``fragmentation``, ``capacity``, ``fits``, ``verdict`` (placed | infeasible | unknown
  against the capacity), ``proof``, ``deficit_bytes``}}, ``fits`` (both regions), ``algorithm``,
  ``capacity_rule``, ``standard_contiguous_overflow_bytes`` (as recorded; not counted as capacity),
  and ``allocations``: one {``kind`` (``value`` | ``scratch`` | ``exchange_rows``), ``id`` (the value
  id, null otherwise), ``region``, ``offset``, ``bytes``, ``first_step``, ``last_step``} per
  allocation, in the placement's order (live intervals in value order, scratch by step, exchange rows);
  with edits, also ``edits`` as ``tilescope plan --json`` has them.
- Without ``--json``: a short table with exact bytes and each region's verdict, its proof, the
  capacity rule and the algorithm.
- ``--exact-seconds S`` (default 5): the exact solver may spend up to S seconds re-placing the groups
  at each region's top (``planner.placement_exact``); 0 keeps the packer's placement.
"""

from __future__ import annotations

import json

from tilescope.cli.inputs import open_profile
from tilescope.cli.plan import add_edit_arguments, applied_edit_json, edits_of
from tilescope.models.errors import TilescopeError
from tilescope.models.format import fmt_bytes, fmt_signed_bytes
from tilescope.planner.edits import apply_edits
from tilescope.planner.placement import KIND_NAMES, REGION_NAMES, Placement, place

EXACT_SECONDS = 5.0


def add_arguments(parser) -> None:
    add_edit_arguments(parser)
    parser.add_argument(
        "--exact-seconds",
        type=float,
        default=EXACT_SECONDS,
        help=f"seconds the exact solver may spend lowering each region's top (default {EXACT_SECONDS:g}; 0: the packer's placement only)",
    )


def placement_json(placement: Placement) -> dict:
    """The CLI contract (module doc)."""
    kinds = [KIND_NAMES[k] for k in placement.kind.tolist()]
    regions = [REGION_NAMES[r] for r in placement.region.tolist()]
    ids = [None if i < 0 else i for i in placement.value_id.tolist()]
    return {
        "regions": {name: figures.to_json() for name, figures in placement.regions.items()},
        "fits": placement.fits,
        "algorithm": placement.algorithm,
        "capacity_rule": placement.capacity_rule,
        "standard_contiguous_overflow_bytes": placement.standard_contiguous_overflow_bytes,
        "allocations": [
            {"kind": k, "id": i, "region": r, "offset": o, "bytes": b, "first_step": f, "last_step": l}
            for k, i, r, o, b, f, l in zip(
                kinds,
                ids,
                regions,
                placement.offset.tolist(),
                placement.bytes.tolist(),
                placement.first_step.tolist(),
                placement.last_step.tolist(),
            )
        ],
    }


def placement_text(placement: Placement) -> str:
    """The regions' figures as a table, then the allocation counts, the rule and the algorithm."""
    rows = [("region", "lower bound", "placed", "fragmentation", "capacity", "fits", "verdict")]
    for name, r in placement.regions.items():
        share = f" ({100 * r.fragmentation / r.lower_bound:.2f} %)" if r.lower_bound else ""
        rows.append(
            (
                name,
                fmt_bytes(r.lower_bound),
                fmt_bytes(r.placed),
                fmt_signed_bytes(r.fragmentation) + share,
                fmt_bytes(r.capacity),
                "yes" if r.fits else "NO",
                r.verdict,
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) if c == 0 else cell.rjust(w) for c, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]
    counts = {name: int((placement.kind == code).sum()) for code, name in enumerate(KIND_NAMES)}
    lines += [f"{name}: {r.verdict}: {r.proof}" for name, r in placement.regions.items()]
    lines += [
        f"fits: {'yes' if placement.fits else 'NO'}; {placement.n_allocations:,} allocations "
        f"({counts['value']:,} value live intervals, {counts['scratch']:,} step scratch, {counts['exchange_rows']:,} exchange rows)",
        f"capacity: {placement.capacity_rule}",
        f"standard_contiguous_overflow_bytes (as recorded, not counted): {placement.standard_contiguous_overflow_bytes:,}",
        f"algorithm: {placement.algorithm}",
    ]
    return "\n".join(lines)


def run(args) -> int:
    edits = edits_of(args)
    opened = open_profile(args.file, quiet=args.quiet)
    arrays, plan = opened.arrays, opened.plan
    whatif = apply_edits(arrays, plan, edits, whole_storage_group=args.storage_group) if edits else None
    if not args.exact_seconds >= 0:
        raise TilescopeError(f"--exact-seconds: expected a number of seconds ≥ 0, found {args.exact_seconds}")
    placement = place(arrays, whatif.plan if whatif is not None else plan, exact_seconds=args.exact_seconds)
    if args.json:
        out = placement_json(placement)
        if whatif is not None:
            out["edits"] = [applied_edit_json(a) for a in whatif.applied]
        print(json.dumps(out))
    else:
        print(placement_text(placement))
    return 0
