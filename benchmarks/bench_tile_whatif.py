"""What-if edits per tile on a memory profile v3, against summing every step again.

    .venv/bin/python -m benchmarks.bench_tile_whatif [--blocks 300] [--profile FILE]

On a v3 profile written by ``tests/profile_generator.py`` (``--blocks`` layers on 1,472 tiles;
300 is ~59 MB; reused from ``benchmarks/data/`` while the generator is unchanged) or ``--profile``,
prints, for an edit of one value of each layer's kinds (a weight, a GEMM result, a bias):

- ``planner.edits.apply_edits`` with the plan per tile (``planner.tile_whatif``: the edited values
  re-estimated, the file's tile_usage plus what they change on the steps where they live), median
  over the layers' edits, after one edit has warmed the file's per-tile tables (that first edit's
  time is printed too);
- the baseline measured in the same run: ``TileUsage`` of the same edited figures summed over every
  step and tile (``step_peaks`` of a fresh sweep), each checked equal to the incremental figures;
- their ratio; and ``estimate_agreement`` over every value (what ``tilescope check`` prints as notes).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from tilescope.derived.opening import open_file
from tilescope.derived.tile_usage import estimate_agreement
from tilescope.models.edits import TilingEdit
from tilescope.planner.edits import apply_edits
from tilescope.planner.tile_usage import TileUsage
from tilescope.planner.tile_whatif import usage_of_plan

from .__main__ import generated_v3


def _edits(values: int) -> list[TilingEdit]:
    """A weight, a GEMM result and a bias of every 10th layer (ids as the generator numbers them:
    layer b's weight 2 + 5b, bias 3 + 5b, GEMM result 4 + 5b)."""
    out = []
    for b in range(0, (values - 2) // 5, 10):
        out += [
            TilingEdit(2 + 5 * b, axis=0, partitions=5),
            TilingEdit(4 + 5 * b, axis=0, partitions=1000),
            TilingEdit(3 + 5 * b, axis=0, partitions=4),
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=300)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    path = args.profile or generated_v3(args.blocks)
    started = time.perf_counter()
    opened = open_file(path, use_cache=False)
    arrays, plan = opened.arrays, opened.plan
    print(
        f"{path.name}: {path.stat().st_size / 1e6:.1f} MB, {arrays.n_values:,} values, {arrays.n_steps:,} steps, "
        f"{arrays.device_tiles:,} tiles; opened in {time.perf_counter() - started:.2f} s"
    )
    edits = _edits(arrays.n_values)
    started = time.perf_counter()
    apply_edits(arrays, plan, edits[:1])
    print(f"first edit (warms the file's per-tile tables): {1000 * (time.perf_counter() - started):.1f} ms")
    incremental, baseline = [], []
    for edit in edits:
        started = time.perf_counter()
        whatif = apply_edits(arrays, plan, [edit])
        incremental.append(time.perf_counter() - started)
        usage = usage_of_plan(whatif.plan)
        assert usage is not None
        started = time.perf_counter()
        swept = TileUsage(arrays, usage.figures).step_peaks
        baseline.append(time.perf_counter() - started)
        for region in ("standard", "interleaved", "total"):
            assert np.array_equal(swept.most[region], usage.step_peaks.most[region]), (edit, region)
    inc, base = statistics.median(incremental), statistics.median(baseline)
    print(
        f"{len(edits)} edits: apply_edits per tile median {1000 * inc:.1f} ms (worst {1000 * max(incremental):.1f} ms); "
        f"every step summed again median {1000 * base:.1f} ms; ratio {base / inc:.1f}×"
    )
    started = time.perf_counter()
    notes = estimate_agreement(opened)
    print(f"estimate_agreement: {len(notes):,} notes in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
