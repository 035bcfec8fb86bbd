"""Scale benchmarks: ``.venv/bin/python -m benchmarks [--large] [--repeat N] [--no-replan]``.

For the sample, a ~90 MB synthetic profile (200 blocks × 24 layers) and, with ``--large``, a ~1 GB
one (2200 × 24), prints:

- normalise time (load + validate + write Parquet, what ``tilescope normalise`` does) and its
  ratio to a bare stdlib ``json.load`` of the same file, measured in the same run
  (goal: ≤ 1.5×, aim < 1×), and to msgspec's generic decode of it (``msgspec.json.decode`` of
  the bytes to Python objects; target ≤ 1.0, issue #17);
- peak resident memory of the normalising process, and its ratio to the file size, both in
  absolute terms and above the process's baseline after imports and a warm-up load (goal ≤ 3×,
  aim 1.5×);
- the cached reopen time (``loaders.cache``: hash the file, memory-map the tables);
- cached open → first chart: from a fresh process asking the app's ``SharedProfiles`` to open a
  file normalised before to the timeline's first points in hand (the whole profile downsampled per
  pixel column); with ``--large``, the 1 GB profile's ÷ the 92.5 MB one's (target ≤ 2: the first
  chart must not grow with the file, issue #17);
- the per-edit re-plan time (``benchmarks.bench_replan``, the what-if planner's benchmark);
- the same load figures (not the re-plan) for a ≥ 50 MB memory profile **v3** (per-tile arrays,
  docs/formats.md §7) written by ``tests/profile_generator.py`` (``V3_BLOCKS`` layers, ~63 MB;
  ``--v3-blocks N`` to change, 0 to skip): the same goals as version 1.

Each figure comes from fresh subprocesses (best wall time of ``--repeat`` runs; peak memory is the
highest). Synthetic profiles are generated into ``benchmarks/data/`` (git-ignored) and reused while
their parameters and the generator are unchanged. The closing Markdown table is for the README.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tilescope.synth import SAMPLE_PATH, write_synthetic_profile

from .bench_load import Measurement, measure, measure_cli

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
MEDIUM = (200, 24)  # ~90 MB
LARGE = (2200, 24)  # ~1 GB
V3_BLOCKS = 320  # layers of tests/profile_generator.py's scaled program: a ~63 MB v3 profile
TARGET_MIN_BYTES = 10_000_000  # the normalise ÷ msgspec target is one of throughput: files from 10 MB


@dataclass
class Row:
    name: str
    size: int
    json_load: Measurement
    msgspec: Measurement
    normalise: Measurement
    cached: Measurement
    first_chart: Measurement
    replan_ms: float | None  # median per edit; None when the re-plan benchmark is not available
    cli: Measurement | None = (
        None  # the ``tilescope normalise`` command itself (not for the sample: it is the baseline)
    )

    @property
    def ratio(self) -> float:
        return self.normalise.wall / self.json_load.wall

    @property
    def cpu_ratio(self) -> float:
        return self.normalise.cpu / self.json_load.cpu

    @property
    def msgspec_ratio(self) -> float:
        return self.normalise.wall / self.msgspec.wall

    @property
    def msgspec_cpu_ratio(self) -> float:
        return self.normalise.cpu / self.msgspec.cpu


def _generator_fingerprint() -> str:
    digest = hashlib.blake2b(digest_size=8)
    for path in (ROOT / "tilescope" / "synth.py", SAMPLE_PATH):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def synthetic(blocks: int, layers: int) -> Path:
    """The profile for these parameters in benchmarks/data, generated unless already there."""
    DATA.mkdir(exist_ok=True)
    path = DATA / f"synthetic_b{blocks}_l{layers}.memory_profile.json"
    stamp = path.with_suffix(".params")
    params = {"blocks": blocks, "layers": layers, "generator": _generator_fingerprint()}
    if path.exists() and stamp.exists():
        recorded = json.loads(stamp.read_text())
        if recorded == {**params, "size": path.stat().st_size}:
            return path
    print(f"generating {path.name} ({blocks} blocks × {layers} layers)…", flush=True)
    started = time.perf_counter()
    write_synthetic_profile(path, blocks, layers, overwrite=True)
    stamp.write_text(json.dumps({**params, "size": path.stat().st_size}))
    print(f"  {path.stat().st_size:,} bytes in {time.perf_counter() - started:.1f} s", flush=True)
    return path


def generated_v3(blocks: int) -> Path:
    """A v3 profile of ``blocks`` layers from the test generator (an implementation of the
    compiler's per-tile estimate, tests/profile_generator.py) in benchmarks/data, reused while
    the generator is unchanged."""
    DATA.mkdir(exist_ok=True)
    generator = ROOT / "tests" / "profile_generator.py"
    path = DATA / f"generated_v3_b{blocks}.memory_profile.json"
    stamp = path.with_suffix(".params")
    params = {"blocks": blocks, "generator": hashlib.blake2b(generator.read_bytes(), digest_size=8).hexdigest()}
    if path.exists() and stamp.exists() and json.loads(stamp.read_text()) == {**params, "size": path.stat().st_size}:
        return path
    print(f"generating {path.name} (v3, {blocks} layers)…", flush=True)
    subprocess.run([sys.executable, "-m", "tests.profile_generator", str(path), str(blocks), "3"], cwd=ROOT, check=True)
    stamp.write_text(json.dumps({**params, "size": path.stat().st_size}))
    return path


def replan_per_edit_ms(path: Path, edits: int) -> float | None:
    """Median incremental re-plan time per edit from ``benchmarks.bench_replan`` (the what-if
    planner's own benchmark), run on ``path`` in a subprocess.

    Hook: if bench_replan grows a function returning the figure, call it here instead of reading
    its printed line.
    """
    if not (Path(__file__).resolve().parent / "bench_replan.py").exists():
        return None  # TODO(lead): connect when benchmarks/bench_replan.py lands
    command = [sys.executable, "-m", "benchmarks.bench_replan", "--profile", str(path), "--edits", str(edits)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    match = re.search(r"incremental re-plan per edit: median\s+([\d.]+) ms", done.stdout)
    if done.returncode != 0 or not match:
        print(f"  re-plan benchmark failed on {path.name}:\n{done.stdout}{done.stderr}", file=sys.stderr)
        return None
    return float(match.group(1))


def measure_profile(name: str, path: Path, repeat: int, replan_edits: int | None) -> Row:
    print(f"measuring {name} ({path.stat().st_size:,} bytes)…", flush=True)
    json_load = measure("json", path, repeat)
    msgspec = measure("msgspec", path, repeat)
    normalise = measure("normalise", path, repeat)
    cache_dir = Path(tempfile.mkdtemp(prefix="bench_cache."))
    try:
        measure("cache-fill", path, 1, cache_dir)
        cached = measure("cached", path, repeat, cache_dir)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    cache_dir = Path(tempfile.mkdtemp(prefix="bench_cache."))
    try:
        measure("first-chart", path, 1, cache_dir)  # fills the cache (what the app writes on a first open)
        first_chart = measure("first-chart", path, repeat, cache_dir)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    replan = replan_per_edit_ms(path, replan_edits) if replan_edits else None
    cli = measure_cli(path, repeat) if path != SAMPLE_PATH else None
    row = Row(name, path.stat().st_size, json_load, msgspec, normalise, cached, first_chart, replan, cli)
    print(
        f"  json.load {json_load.wall:.2f} s, msgspec {msgspec.wall:.2f} s, normalise {normalise.wall:.2f} s "
        f"({row.ratio:.2f}× json.load, {row.msgspec_ratio:.2f}× msgspec), peak {normalise.peak_rss / 1e6:,.0f} MB, "
        f"cached reopen {cached.wall:.3f} s, cached open → first chart {first_chart.wall:.3f} s",
        flush=True,
    )
    return row


def _seconds(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def _ms(s: float) -> str:
    return f"{s * 1000:.1f} ms"


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def markdown(rows: list[Row]) -> str:
    lines = [
        "| profile | file | json.load | msgspec decode | normalise | ÷ json.load (wall / CPU) | ÷ msgspec (wall / CPU) | peak RSS (above baseline) | ÷ file size (above baseline) | json.load peak RSS | cached reopen | cached open → first chart (→ all built) | re-plan per edit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r.normalise
        replan = f"{r.replan_ms:.2f} ms" if r.replan_ms is not None else "n/a"
        lines.append(
            f"| {r.name} | {_mb(r.size)} | {_seconds(r.json_load.wall)} | {_seconds(r.msgspec.wall)} | {_seconds(n.wall)} "
            f"| {r.ratio:.2f}× / {r.cpu_ratio:.2f}× | {r.msgspec_ratio:.2f}× / {r.msgspec_cpu_ratio:.2f}× "
            f"| {_mb(n.peak_rss)} ({_mb(n.above_baseline)}) | {n.peak_rss / r.size:.2f}× ({n.above_baseline / r.size:.2f}×) "
            f"| {_mb(r.json_load.peak_rss)} | {_seconds(r.cached.wall)} | {_ms(r.first_chart.wall)} ({_seconds(r.first_chart.ready or 0.0)}) | {replan} |"
        )
    return "\n".join(lines)


CLI_TARGET, CLI_GOAL = 2.5, 1.5  # issue #26: the command's peak RSS ÷ the file's size


def cli_markdown(rows: list[Row]) -> str:
    """The ``tilescope normalise`` command's own figures: the whole process's peak RSS, as the user
    sees it (imports included), and above the same command's peak on the sample."""
    lines = [
        "| profile | file | `tilescope normalise` CPU | peak RSS (above the sample's) | ÷ file size (above) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.cli is not None:
            c = r.cli
            lines.append(
                f"| {r.name} | {_mb(r.size)} | {_seconds(c.cpu)} | {_mb(c.peak_rss)} ({_mb(c.above_baseline)}) "
                f"| {c.peak_rss / r.size:.2f}× ({c.above_baseline / r.size:.2f}×) |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--large", action="store_true", help="also the ~1 GB profile (generated once, ~1 GB of disk)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per figure, best kept (default 3; 1 for the large profile)"
    )
    parser.add_argument("--replan-edits", type=int, default=20, help="edits for the re-plan figure (0 skips it)")
    parser.add_argument(
        "--v3-blocks",
        type=int,
        default=V3_BLOCKS,
        help=f"layers of the generated v3 profile (default {V3_BLOCKS}, ~63 MB; 0 skips it)",
    )
    args = parser.parse_args(argv)

    profiles = [("sample", SAMPLE_PATH), (f"synthetic {MEDIUM[0]}×{MEDIUM[1]}", synthetic(*MEDIUM))]
    if args.large:
        profiles.append((f"synthetic {LARGE[0]}×{LARGE[1]}", synthetic(*LARGE)))
    if args.v3_blocks:
        profiles.append((f"generated v3 ({args.v3_blocks} layers)", generated_v3(args.v3_blocks)))
    rows = []
    for name, path in profiles:
        large = path.stat().st_size > 500e6
        replan = (
            0 if name.startswith("generated v3") else args.replan_edits
        )  # (what-if edits of v2/v3: planner.tile_whatif)
        rows.append(measure_profile(name, path, 1 if large else args.repeat, replan))
    print()
    print(markdown(rows))
    print()
    print(cli_markdown(rows))
    print()
    for r in rows:
        if r.cli is not None:
            ratio = r.cli.peak_rss / r.size
            met = "goal met" if ratio <= CLI_GOAL else "target met" if ratio <= CLI_TARGET else "not met"
            print(
                f"tilescope normalise peak RSS ÷ file, {r.name}: {r.cli.peak_rss / 1e6:,.1f} MB / {r.size / 1e6:,.1f} MB = "
                f"{ratio:.2f}× (target ≤ {CLI_TARGET}, goal ≤ {CLI_GOAL}: {met}); above the sample's {r.cli.baseline_rss / 1e6:,.1f} MB: "
                f"{r.cli.above_baseline / r.size:.2f}×"
            )
    for r in rows:
        # (a 0.2 MB file measures fixed costs, not throughput: the target is for large files)
        met = (
            ("met" if r.msgspec_ratio <= 1.0 else "not met")
            if r.size >= TARGET_MIN_BYTES
            else "n/a for a file this small"
        )
        print(
            f"normalise ÷ msgspec generic decode, {r.name}: {r.normalise.wall:.3f} s / {r.msgspec.wall:.3f} s = "
            f"{r.msgspec_ratio:.2f}× (target ≤ 1.0: {met}); CPU {r.normalise.cpu:.3f} s / {r.msgspec.cpu:.3f} s = "
            f"{r.msgspec_cpu_ratio:.2f}×"
        )
    if args.large:
        medium, large = rows[1], rows[2]  # (the v3 row, when measured, comes after them)
        growth = large.first_chart.wall / medium.first_chart.wall
        met = "met" if growth <= 2.0 else "not met"
        print(
            f"cached open → first chart, {large.name} ÷ {medium.name}: {large.first_chart.wall * 1000:.1f} ms / "
            f"{medium.first_chart.wall * 1000:.1f} ms = {growth:.2f}× (files {large.size / medium.size:.1f}× apart; "
            f"target ≤ 2: {met})"
        )
        for r in (medium, large):
            if r.first_chart.ready is not None:
                print(
                    f"  {r.name}: the rest (tables mapped, arrays, plan) built behind the first chart "
                    f"{r.first_chart.ready:.2f} s after the open began"
                )
    print()
    print(
        "normalise = load, validate and write the five tables as Parquet (`tilescope normalise`); "
        "ratio = normalise ÷ json.load of the same file in this run (goals: ≤ 1.5×; peak ≤ 3× the file); "
        "msgspec = `msgspec.json.decode` of the file's bytes to Python objects (target: normalise ≤ 1.0× it). "
        "First chart = a fresh process asking the app's SharedProfiles to open the cached file (staged) until the "
        "timeline's whole-profile points are in hand (target: 1 GB ≤ 2× the 92.5 MB one). "
        "Baseline = the process after imports and a warm-up load of the sample. Times are the best of "
        f"{args.repeat} fresh processes (1 for files over 500 MB)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
