"""``tilescope plan FILE [--json]``: recompute the memory plan of a profile."""
from __future__ import annotations

import json

from loaders.memory_profile import load_memory_profile
from planner.model import Plan, ProfileArrays, plan_profile


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


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


def run(args) -> int:
    profile = load_memory_profile(args.file)
    arrays, plan = plan_profile(profile)
    if args.json:
        print(json.dumps(plan_json(arrays, plan, profile.values.column("layout_error").to_pylist())))
    else:
        print(human_summary(arrays, plan))
    return 0
