"""``tilescope check FILE``: exit 0 when every recorded figure matches, 1 listing each mismatch."""
from __future__ import annotations

import sys

from tilescope.cli.inputs import open_profile
from tilescope.planner.check import check_plan
from tilescope.planner.model import plan_profile


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")


def run(args) -> int:
    profile = open_profile(args.file)
    arrays, plan = plan_profile(profile)
    mismatches = check_plan(profile, arrays, plan)
    for m in mismatches:
        print(m)
    if mismatches:
        print(f"{len(mismatches)} mismatches", file=sys.stderr)
        return 1
    print(f"ok: {profile.n_values} values and {profile.n_steps} steps reproduce exactly")
    return 0
