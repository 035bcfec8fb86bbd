"""Incremental what-if re-planning against recomputing usage from the live lists, and the advisor.

    .venv/bin/python -m benchmarks.bench_replan [--blocks 200 --layers 24] [--edits 50] [--profile FILE]

Builds a synthetic profile (tilescope.synth; 200 blocks × 24 layers is ~23k steps, ~90 MB) in a
temporary folder unless ``--profile`` names one, then for ~50 edits of different values prints:

- the incremental re-plan (``planner.edits.apply_edits``: per-value figures, usage, peaks, diff),
  median and worst over the edits (the id/alias/storage-group lookups it uses are built once per
  profile and cached on the caller's ProfileArrays; that one-off time is printed too);
- the baseline measured in the same run: per-step usage recomputed from every (step, value) live
  entry with ``np.bincount`` (entries expanded once, outside the timing), plus the peaks;
- their ratio. Each edit's incremental usage is checked equal to the baseline's.

Then the advisor's time on the sample (median of 5 runs per peak kind). The goal is under 20 ms
per edit on the ~90 MB profile and under a second for the advisor on the sample.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from tilescope.loaders.memory_profile import load_memory_profile
from tilescope.planner.advisor import PEAK_KINDS, advise, candidate_edits
from tilescope.planner.edits import EditError, apply_edits
from tilescope.planner.model import Plan, ProfileArrays, peaks_of, plan_profile
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile


def live_entries(arrays: ProfileArrays) -> tuple[np.ndarray, np.ndarray]:
    """Every (step, value row) live entry, expanded from the live intervals: what the live lists hold."""
    lengths = arrays.interval_last - arrays.interval_first + 1
    rows = np.repeat(arrays.interval_row, lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    steps = np.repeat(arrays.interval_first, lengths) + offsets
    return steps, rows


def recompute_usage(arrays: ProfileArrays, steps: np.ndarray, rows: np.ndarray, standard: np.ndarray, cost: np.ndarray):
    """The baseline: Σ bytes over every live entry per step and region, then the peaks."""
    n = arrays.n_steps
    weights = cost[rows]
    std = (
        np.bincount(steps[standard], weights=weights[standard], minlength=n).astype(np.int64) + arrays.scratch_standard
    )
    intl = (
        np.bincount(steps[~standard], weights=weights[~standard], minlength=n).astype(np.int64)
        + arrays.scratch_interleaved
    )
    return std, intl, peaks_of(arrays, std, intl, cost)


def pick_edits(arrays: ProfileArrays, plan: Plan, count: int) -> list[tuple]:
    """One valid byte-changing edit set each for ``count`` live classes spread over the profile."""
    live_roots = np.unique(arrays.root_rows[np.unique(arrays.interval_row)])
    picked = []
    for root in live_roots[np.linspace(0, live_roots.size - 1, min(live_roots.size, count * 4)).astype(int)]:
        for edits in candidate_edits(arrays, int(root), arrays.tiling(int(root))):
            try:
                if apply_edits(arrays, plan, edits).diff.changed_values:
                    picked.append(edits)
                    break
            except EditError:
                continue
        if len(picked) == count:
            break
    return picked


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


def bench_replan(path: Path, n_edits: int) -> None:
    started = time.perf_counter()
    profile = load_memory_profile(path)
    arrays, plan = plan_profile(profile)
    print(
        f"profile {path.name}: {path.stat().st_size / 1e6:.1f} MB, {arrays.n_steps:,} steps, {arrays.n_values:,} values, "
        f"{arrays.interval_row.size:,} live intervals (loaded and planned in {time.perf_counter() - started:.1f} s)"
    )

    steps, rows = live_entries(arrays)
    standard = arrays.region[rows] == 0
    print(f"{steps.size:,} (step, value) live entries")

    t0 = time.perf_counter()
    arrays.row_of_id, arrays.alias_rows, arrays.storage_group_rows  # built once per profile, cached on the arrays
    lookups = time.perf_counter() - t0
    edit_sets = pick_edits(arrays, plan, n_edits)
    incremental, baseline, lifetimes = [], [], []
    for edits in edit_sets:
        t0 = time.perf_counter()
        whatif = apply_edits(arrays, plan, edits)
        t1 = time.perf_counter()
        std, intl, peaks = recompute_usage(arrays, steps, rows, standard, whatif.plan.figures.bytes)
        t2 = time.perf_counter()
        if not (
            np.array_equal(std, whatif.plan.usage_standard)
            and np.array_equal(intl, whatif.plan.usage_interleaved)
            and peaks == whatif.plan.peaks
        ):
            raise SystemExit(f"incremental re-plan differs from the recompute for {edits}")
        incremental.append(t1 - t0)
        baseline.append(t2 - t1)
        changed = [arrays.row_of_id[v] for v, _, _ in whatif.diff.changed_values]
        mask = np.isin(arrays.interval_row, changed)
        lifetimes.append(int((arrays.interval_last[mask] - arrays.interval_first[mask] + 1).sum()))

    inc, base = statistics.median(incremental), statistics.median(baseline)
    print(
        f"edits measured: {len(incremental)} (different values; median edited lifetime {statistics.median(lifetimes):,.0f} steps)"
    )
    print(
        f"incremental re-plan per edit: median {_ms(inc)}, worst {_ms(max(incremental))} "
        f"(plus once per profile, the id/alias/storage-group lookups: {_ms(lookups)})"
    )
    print(f"recompute from live lists:    median {_ms(base)}, worst {_ms(max(baseline))}")
    print(
        f"ratio recompute / incremental: {base / inc:.1f}x; goal < 20 ms per edit: {'met' if inc < 0.020 else 'NOT met'}"
    )


def bench_advisor(path: Path) -> None:
    arrays, plan = plan_profile(load_memory_profile(path))
    for peak in PEAK_KINDS:
        times, found = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            found = advise(arrays, plan, peak)
            times.append(time.perf_counter() - t0)
        best = f"best saving {found[0].saving:,} B" if found else "no candidate"
        print(
            f"advisor on {path.name}, {peak:11} peak: median {_ms(statistics.median(times))} ({len(found)} candidates, {best})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--profile", type=Path, help="an existing profile instead of a synthetic one")
    args = parser.parse_args(argv)
    if args.profile:
        bench_replan(args.profile, args.edits)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_replan.") as folder:
            path = Path(folder) / f"synthetic_{args.blocks}x{args.layers}.memory_profile.json"
            t0 = time.perf_counter()
            write_synthetic_profile(path, args.blocks, args.layers)
            print(f"wrote {path.name} in {time.perf_counter() - t0:.1f} s")
            bench_replan(path, args.edits)
    bench_advisor(SAMPLE_PATH)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
