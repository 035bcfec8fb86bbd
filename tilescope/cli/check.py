"""``tilescope check FILE``: exit 0 when every recorded figure matches and the invariants ``check``
answers for hold (docs/formats.md §6), 1 listing each mismatch and each violation."""
from __future__ import annotations

import sys

from tilescope.cli.inputs import open_profile
from tilescope.planner.check import Violation, check_plan
from tilescope.planner.model import plan_profile


def add_arguments(parser) -> None:
    parser.add_argument("file", help="a memory profile (*.memory_profile.json)")


def run(args) -> int:
    profile = open_profile(args.file)
    arrays, plan = plan_profile(profile)
    problems = check_plan(profile, arrays, plan)
    for problem in problems:
        print(problem)
    if problems:
        violations = sum(isinstance(p, Violation) for p in problems)
        print(f"{len(problems) - violations} mismatches, {violations} invariant violations", file=sys.stderr)
        return 1
    print(f"ok: {profile.n_values} values and {profile.n_steps} steps reproduce exactly")
    return 0
