"""The app's first chart of a cached profile, in a real browser: navigation → the timeline's first
drawn points, and → the summary (the page built), for profiles of several sizes, in one run.

    .venv/bin/python -m benchmarks.bench_first_chart [--profile FILE ...] [--large] [--repeat 2] [--work DIR]

Profiles: the sample and the 92.5 MB synthetic one (``benchmarks.__main__.synthetic``, 200 blocks
× 24 layers), plus the 1 GB one (2,200 × 24) with ``--large``, or the files given. Each is linked
(a hard link, never written) into a data root under ``--work`` (default ``/tmp/tilescope-first-chart``)
and opened once beforehand in a process of its own (``derived.opening.open_file``: normalised,
planned, its overview written beside its cache entry: a cache of the run's own).

Each measurement is a fresh ``panel serve app`` (``tests/browser_support.AppServer``; so no
profile is already open in the server), warmed up by one session of the served default, then a
new Chromium page navigates to ``?file=NAME``. "First points": the page's Bokeh document has the
timeline's usage source (``ts-timeline-usage``) with points, checked every animation frame.
"Summary": ``[data-testid=ts-summary]`` is in the page. Printed: the median of ``--repeat`` rounds (each round measures every profile once),
and ratios of figures of this run: first points ÷ summary (what the staged open saves: before it,
the timeline came with the summary), and each profile's first points ÷ the sample's (the issue's
"the first chart does not grow with the file": 1 GB ÷ 92.5 MB).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the served app and Chromium, as the browser tests drive them

from browser_support import SAMPLE, AppServer, launch_chromium  # noqa: E402

from . import __main__ as runner  # noqa: E402

# Polled in every animation frame after navigation: the number of points the timeline's usage
# source holds once it holds any (its first picture), else false.
FIRST_POINTS = (Path(__file__).resolve().parent / "bench_first_chart.js").read_text()


def prime(path: Path, cache_dir: Path) -> None:
    """Open ``path`` once in a process of its own: the cache entry and the overview written."""
    code = "import sys; from tilescope.derived.opening import open_file; open_file(sys.argv[1])"
    subprocess.run(
        [sys.executable, "-c", code, str(path)], check=True, env=dict(os.environ, TILESCOPE_CACHE_DIR=str(cache_dir))
    )


def measure_once(playwright, root: Path, cache_dir: Path, name: str) -> tuple[float, float, int]:
    """(seconds to the first points, seconds to the summary, points) for one fresh server."""
    os.environ["TILESCOPE_CACHE_DIR"] = str(cache_dir)
    server = AppServer(["--data-root", str(root)])
    browser = launch_chromium(playwright)
    try:
        warm = browser.new_page()
        warm.goto(server.url)
        warm.wait_for_selector("[data-testid=ts-summary]", timeout=120_000)
        warm.close()
        page = browser.new_page()
        started = time.monotonic()
        page.goto(server.url + f"?file={name}", wait_until="commit")
        points = page.wait_for_function(FIRST_POINTS, polling="raf", timeout=300_000).json_value()
        first = time.monotonic() - started
        page.wait_for_selector("[data-testid=ts-summary]", timeout=300_000)
        summary = time.monotonic() - started
        page.close()
        return first, summary, int(points)
    finally:
        browser.close()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_first_chart", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--profile", action="append", type=Path, help="a memory profile to measure (repeatable)")
    parser.add_argument("--large", action="store_true", help="the 1 GB synthetic profile too")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tilescope-first-chart"))
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    files = [SAMPLE, *(args.profile or [runner.synthetic(200, 24)])]
    if args.large:
        files.append(runner.synthetic(2200, 24))
    root, cache_dir = args.work / "data", args.work / "cache"
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for path in files:
        linked = root / path.name
        if not linked.exists():
            try:
                os.link(path, linked)
            except OSError:  # another file system: a copy
                shutil.copyfile(path, linked)
        prime(linked, cache_dir)
        names.append((linked.name, linked.stat().st_size))
    results, measured = {}, {name: [] for name, _ in names}
    with sync_playwright() as playwright:
        for _ in range(
            args.repeat
        ):  # round after round, so a burst of the shared machine's load hits every profile alike
            for name, _size in names:
                measured[name].append(measure_once(playwright, root, cache_dir, name))
        for name, size in names:
            runs = measured[name]
            first, summary = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            results[name] = (size, first, summary, runs[0][2])
            print(
                f"{name} ({size / 1e6:,.1f} MB): first points {first:.2f} s ({runs[0][2]:,} points), summary {summary:.2f} s; "
                f"runs {', '.join(f'{a:.2f}/{b:.2f}' for a, b, _ in runs)}",
                flush=True,
            )
    sample_first = results[SAMPLE.name][1]
    print("\n| profile | file | → first points | → summary | first ÷ summary | first ÷ the sample's |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (size, first, summary, _points) in results.items():
        print(
            f"| {name} | {size / 1e6:,.1f} MB | {first:.2f} s | {summary:.2f} s | {first / summary:.2f}× | {first / sample_first:.2f}× |"
        )
    big = [r for n, r in results.items() if n != SAMPLE.name]
    if len(big) >= 2:
        print(
            f"\nfirst points, largest ÷ smallest of the big ones: {big[-1][1]:.2f} s ÷ {big[0][1]:.2f} s = {big[-1][1] / big[0][1]:.2f}×; "
            f"summary: {big[-1][2] / big[0][2]:.2f}×"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
