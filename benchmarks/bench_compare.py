"""Comparing two large profiles against planning one of them, measured in the same run.

    .venv/bin/python -m benchmarks.bench_compare [--blocks 200 --layers 24] [--edits 50] [--repeat 5]

Writes a synthetic profile A (tilescope.synth; 200 blocks × 24 layers is ~23k steps, ~88k values,
~90 MB) in a temporary folder, applies ``--edits`` byte-changing edits spread over it and writes
the edited plan as profile B (``report.profile_json``, what ``plan --write-profile`` writes), and
loads both. Then, median of ``--repeat`` runs each:

- the baseline: ``plan_profile`` of A (arrays + the full plan, what opening a profile costs after
  loading);
- the comparison A → B, everything it offers computed: step alignment, value matching, changed
  values, the three attributions, the per-step overlay and the JSON of ``tilescope compare --json``
  (a fresh ``Comparison`` each run);
- the same against the what-if in memory (B = A edited, no second file);
- a profile of a different program (``--layers`` + 1: steps aligned by LCS, values on one side).

It prints each time and its ratio to the baseline. The goal (issue #13): comparing A with the
edited B costs at most 2× planning A.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tilescope.derived.compare import FIGURES, CompareSide, compare_plans
from tilescope.derived.compare_json import comparison_json
from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.edits import apply_edits
from tilescope.planner.model import plan_profile
from tilescope.report.profile_json import profile_json_bytes
from tilescope.synth import write_synthetic_profile

from .bench_replan import pick_edits

GOAL = 2.0


def _median_time(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare_everything(a: CompareSide, b: CompareSide) -> dict:
    """What the CLI and the app ask of a comparison, all of it."""
    comparison = compare_plans(a, b)
    for figure in FIGURES:
        comparison.attribution(figure)
    comparison.overlay
    return comparison_json(comparison)


def bench(folder: Path, blocks: int, layers: int, n_edits: int, repeat: int) -> float:
    path_a = folder / f"synthetic_{blocks}x{layers}.memory_profile.json"
    path_b = folder / f"synthetic_{blocks}x{layers}_edited.memory_profile.json"
    path_c = folder / f"synthetic_{blocks}x{layers + 1}.memory_profile.json"
    t0 = time.perf_counter()
    write_synthetic_profile(path_a, blocks, layers)
    write_synthetic_profile(path_c, blocks, layers + 1)
    profile_a = load_memory_profile(path_a)
    arrays_a, plan_a = plan_profile(profile_a)
    edit_sets = pick_edits(arrays_a, plan_a, n_edits)
    whatif = apply_edits(arrays_a, plan_a, [e for edits in edit_sets for e in edits])
    path_b.write_bytes(profile_json_bytes(path_a.read_bytes(), str(path_a), arrays_a, whatif.plan, whatif.tilings))
    profile_b, profile_c = load_memory_profile(path_b), load_memory_profile(path_c)
    arrays_b, plan_b = plan_profile(profile_b)
    arrays_c, plan_c = plan_profile(profile_c)
    print(
        f"A: {path_a.name}, {path_a.stat().st_size / 1e6:.1f} MB, {arrays_a.n_steps:,} steps, {arrays_a.n_values:,} values; "
        f"B: A with {len(whatif.edits)} edits ({len(whatif.diff.changed_values)} values changed); "
        f"C: {path_c.name}, {arrays_c.n_steps:,} steps, {arrays_c.n_values:,} values (set up in {time.perf_counter() - t0:.1f} s)"
    )

    side_a = CompareSide(profile_a, arrays_a, plan_a)
    side_b = CompareSide(profile_b, arrays_b, plan_b)
    side_whatif = CompareSide.edited(profile_a, arrays_a, whatif)
    side_c = CompareSide(profile_c, arrays_c, plan_c)
    result = compare_everything(side_a, side_b)
    print(
        f"A → B: steps {result['steps']}, {len(result['values'])} values listed, standard Δ {result['delta']['standard']:+,} B, "
        f"total Δ {result['delta']['total']:+,} B"
    )
    other = compare_everything(side_a, side_c)
    print(
        f"A → C: steps {other['steps']} ({other['matched_steps']:,} matched, {len(other['unmatched_steps']['a']):,} only in A, "
        f"{len(other['unmatched_steps']['b']):,} only in C), {len(other['unmatched_values']['b']):,} values only in C"
    )

    baseline = _median_time(lambda: plan_profile(profile_a), repeat)
    rows = [
        ("compare A → B (edited file)", _median_time(lambda: compare_everything(side_a, side_b), repeat)),
        ("compare A → A edited (what-if)", _median_time(lambda: compare_everything(side_a, side_whatif), repeat)),
        ("compare A → C (other program)", _median_time(lambda: compare_everything(side_a, side_c), repeat)),
    ]
    print(f"{'plan_profile(A) (baseline)':<34}{baseline * 1000:9.1f} ms")
    for label, seconds in rows:
        print(f"{label:<34}{seconds * 1000:9.1f} ms   {seconds / baseline:5.2f}× planning A")
    ratio = rows[0][1] / baseline
    print(
        f"goal: comparing A with the edited B ≤ {GOAL:.0f}× planning A: {ratio:.2f}× — {'met' if ratio <= GOAL else 'NOT met'}"
    )
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_compare.") as folder:
        ratio = bench(Path(folder), args.blocks, args.layers, args.edits, args.repeat)
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
