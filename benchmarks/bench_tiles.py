"""The tiles view's figures on a long profile: one tile's series, one tile at one step, the step's
peak tile, against the whole per-tile sweep of the plan (every step × every tile) measured in the
same run.

    .venv/bin/python -m benchmarks.bench_tiles [--profile FILE ...] [--blocks 200 --layers 24]

Without ``--profile`` a synthetic version 1 profile (tilescope.synth; 200 blocks × 24 layers, about
23,200 steps and 92 MB) is written to ``benchmarks/data/`` (reused while its parameters are
unchanged): its per-tile figures are tilescope's estimate. Pass a v2/v3 file (e.g. the ~63 MB one
``benchmarks`` writes with tests/profile_generator.py) to time the file's recorded figures.

Printed per profile (seconds; best of ``--repeat`` on a freshly opened plan each time):

- ``first tile``: the first tile's series (``derived.tile_rows.tile_lines``), with everything it
  needs computed on first use (a v1 file's estimate of every value; a v2/v3 file reads its runs);
- ``another tile``: a second tile's series once the first is drawn (what a tile click costs);
- ``tile at step``: one tile's live roots at the peak step (``derived.tile_rows.tile_step``);
- ``step's peak tile``: every tile at one step (``derived.tile_rows.step_peak``);
- ``full sweep`` (the baseline): the per-step peaks over every tile (``TileUsage.step_peaks``), what
  a view would pay to hold every tile's series; and the ratios to it. The goal: a tile's series at
  most a tenth of the sweep, and under 0.1 s once the plan's figures exist.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tilescope.derived import tile_usage as tu
from tilescope.derived.opening import open_file
from tilescope.derived.tile_rows import step_peak, tile_lines, tile_step
from tilescope.synth import SAMPLE_PATH, write_synthetic_profile

DATA = Path(__file__).resolve().parent / "data"


def synthetic(blocks: int, layers: int) -> Path:
    DATA.mkdir(exist_ok=True)
    path = DATA / f"synthetic_b{blocks}_l{layers}.memory_profile.json"
    if not path.exists():
        write_synthetic_profile(path, blocks, layers, SAMPLE_PATH)
    return path


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def measure(path: Path) -> dict[str, float]:
    data = open_file(path, use_cache=False).base  # a fresh plan: nothing per tile computed yet
    n, tiles = data.arrays.n_steps, data.arrays.device_tiles
    step = int(data.plan.peaks.total_step)
    out = {
        "first tile": timed(lambda: tile_lines(data, 0)),
        "another tile": timed(lambda: tile_lines(data, tiles // 2)),
        "tile at step": timed(lambda: tile_step(data, tiles // 2, step)),
        "step's peak tile": timed(lambda: step_peak(data, step)),
        "full sweep": timed(lambda: tu.tile_usage(data).step_peaks),
    }
    out["steps"], out["tiles"], out["source"] = n, tiles, tu.source(data)  # type: ignore[assignment]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", nargs="*", type=Path, default=None)
    parser.add_argument("--blocks", type=int, default=200)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    paths = args.profile or [synthetic(args.blocks, args.layers)]
    for path in paths:
        runs = [measure(path) for _ in range(max(args.repeat, 1))]
        best = {k: min(r[k] for r in runs) if isinstance(runs[0][k], float) else runs[0][k] for k in runs[0]}
        sweep = best["full sweep"]
        print(
            f"{path.name}: {best['steps']:,} steps × {best['tiles']:,} tiles, per-tile figures from the {best['source']}"
        )
        for key in ("first tile", "another tile", "tile at step", "step's peak tile", "full sweep"):
            ratio = "" if key == "full sweep" else f"  ({best[key] / sweep:.3f} × the full sweep)"
            print(f"  {key:<17} {best[key]:8.4f} s{ratio}")


if __name__ == "__main__":
    main()
