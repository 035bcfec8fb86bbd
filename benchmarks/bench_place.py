"""Placement against planning, and re-placement after a what-if edit.

    .venv/bin/python -m benchmarks.bench_place [--blocks 200 --layers 24] [--edits 30] [--repeat 5] [--profile FILE]

Builds a synthetic profile (tilescope.synth; 200 blocks × 24 layers is 23,200 steps, ~90 MB) in a
temporary folder unless ``--profile`` names one, loads it once, then prints (best of ``--repeat``
runs for the first three, each in the same process and run):

- ``plan``: ``plan_profile`` (what ``tilescope plan`` computes once the file is loaded: the baseline);
- ``place``: ``plan_profile`` then ``place`` (what ``tilescope place`` computes), its ratio to ``plan``
  (goal ≤ 3×), and the placement alone;
- the placement with every group packed anew (``reuse_packings=False``): the synthetic profile's
  blocks are identical, so its groups are packed once; a profile without repeated blocks pays this;
- the two commands end to end (``tilescope plan FILE`` and ``tilescope place FILE``, text output,
  fresh processes, the normalised-profile cache warm), and their ratio;
- for ``--edits`` edits of different values: the re-placement after each (``place(..., previous=)``
  on the edited plan), median and worst, against the full placement and against the app's 500 ms
  interaction budget; also the re-plan + re-placement together (what one drag costs the model);
- every placement's gap to the lower bound in each region (goal ≤ 1 %).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.planner.placement import Placement, place
from tilescope.synth import write_synthetic_profile

from .bench_replan import pick_edits

BUDGET_S = 0.5  # the app's whole interaction budget


def _best(run, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return min(times), result


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def _gaps(placement: Placement) -> tuple[float, float]:
    return tuple(100 * r.fragmentation / r.lower_bound if r.lower_bound else 0.0 for r in placement.regions.values())


def _command(argv: list[str], repeat: int) -> float:
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tilescope", *argv], check=True, capture_output=True)
        elapsed = time.perf_counter() - t0
        best = elapsed if best is None else min(best, elapsed)
    return best


def bench_place(path: Path, n_edits: int, repeat: int) -> None:
    profile = load_memory_profile(path)
    arrays, plan = plan_profile(profile)
    print(
        f"profile {path.name}: {path.stat().st_size / 1e6:.1f} MB, {arrays.n_steps:,} steps, {arrays.n_values:,} values, "
        f"{arrays.interval_row.size:,} live intervals"
    )

    t_plan, _ = _best(lambda: plan_profile(profile), repeat)
    t_place, (_, placement) = _best(lambda: (lambda a_p: (a_p, place(*a_p)))(plan_profile(profile)), repeat)
    t_alone, _ = _best(lambda: place(arrays, plan), repeat)
    t_fresh, unshared = _best(lambda: place(arrays, plan, reuse_packings=False), max(1, repeat // 2))
    groups = [len(state.groups) for state in placement._state.regions]
    distinct = [len({g.key for g in state.groups}) for state in placement._state.regions]
    std, intl = _gaps(placement)
    print(
        f"{placement.n_allocations:,} allocations; groups standard {groups[0]} ({distinct[0]} distinct), "
        f"interleaved {groups[1]} ({distinct[1]} distinct)"
    )
    print(f"plan (baseline)              {_ms(t_plan)}")
    print(
        f"place (plan + placement)     {_ms(t_place)}   ratio to plan {t_place / t_plan:5.2f}x  goal ≤ 3x: "
        f"{'met' if t_place <= 3 * t_plan else 'NOT met'}"
    )
    print(f"placement alone              {_ms(t_alone)}   ratio to plan {t_alone / t_plan:5.2f}x")
    print(
        f"placement, no group reused   {_ms(t_fresh)}   ratio to plan {t_fresh / t_plan:5.2f}x "
        f"(gaps {_gaps(unshared)[0]:.3f} % / {_gaps(unshared)[1]:.3f} %)"
    )
    print(f"gap to the lower bound: standard {std:.3f} %, interleaved {intl:.3f} % (goal ≤ 1 %)")

    cmd_plan = _command(["plan", str(path)], max(1, repeat // 2))
    cmd_place = _command(["place", str(path)], max(1, repeat // 2))
    print(f"tilescope plan FILE          {_ms(cmd_plan)}   (fresh process, cache warm)")
    print(f"tilescope place FILE         {_ms(cmd_place)}   ratio {cmd_place / cmd_plan:5.2f}x")

    replace_times, drag_times, worst_gap = [], [], 0.0
    for edits in pick_edits(arrays, plan, n_edits):
        t0 = time.perf_counter()
        whatif = apply_edits(arrays, plan, edits)
        t1 = time.perf_counter()
        again = place(arrays, whatif.plan, previous=placement)
        t2 = time.perf_counter()
        replace_times.append(t2 - t1)
        drag_times.append(t2 - t0)
        worst_gap = max(worst_gap, *_gaps(again))
    if replace_times:
        median, worst = statistics.median(replace_times), max(replace_times)
        print(
            f"re-placement after an edit ({len(replace_times)} edits): median {_ms(median)}, worst {_ms(worst)}; "
            f"full placement / median {t_alone / median:5.1f}x; worst / 500 ms budget {worst / BUDGET_S:5.3f}"
        )
        print(
            f"re-plan + re-placement per edit: median {_ms(statistics.median(drag_times))}, worst {_ms(max(drag_times))}; "
            f"worst gap after the edits {worst_gap:.3f} %"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", type=Path, help="an existing profile instead of a synthetic one")
    args = parser.parse_args(argv)
    if args.profile:
        bench_place(args.profile, args.edits, args.repeat)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_place.") as folder:
        path = Path(folder) / f"synthetic_{args.blocks}x{args.layers}.memory_profile.json"
        t0 = time.perf_counter()
        write_synthetic_profile(path, args.blocks, args.layers)
        print(f"wrote {path.name} in {time.perf_counter() - t0:.1f} s")
        bench_place(path, args.edits, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
