"""Loader measurements, each in a fresh subprocess so runs do not pollute each other's memory.

    .venv/bin/python -m benchmarks.bench_load worker MODE FILE [CACHE_DIR]   (used by the runner)

Modes (each prints one JSON object: wall and CPU seconds, baseline and peak RSS):

- ``json``: the baseline, a bare stdlib ``json.load`` of the file;
- ``msgspec``: a second baseline, msgspec's generic decode of the file's bytes to Python objects
  (``msgspec.json.decode``: what a fast parser does with no tables and no checks);
- ``normalise``: what ``tilescope normalise`` does: load and validate the profile, then write its
  five tables as Parquet (into a temporary folder);
- ``cache-fill``: ``load_profile_cached`` into CACHE_DIR (not timed as a goal; prepares ``cached``);
- ``cached``: ``load_profile_cached`` again: hash the file, memory-map the cached tables.
- ``first-chart``: what the app does to draw a file's timeline (``app.shared.SharedProfiles.open``
  with CACHE_DIR as the cache, staged, then the whole-profile series the timeline sends,
  downsampled per pixel column: ``first_chart_points``); run once to fill the cache, then timed
  from the cache. CPU time and ``ready`` (when the arrays and plan built behind it exist) are of
  the whole open.

``measure_cli`` times the command itself, ``python -m tilescope normalise FILE --out DIR`` in a
fresh process (a fresh cache folder, so the file is read, normalised and cached as on a first
run): its CPU time and peak RSS (``wait4``'s ``ru_maxrss``), the whole process's as the user sees
it, imports included; its baseline is the same command's peak on the small sample (imports and
fixed costs).

Before timing, every worker does the same operation once on the small sample, so one-off costs
(imports, the Debug-text parser's tables, Arrow's first allocation, ~50 MB resident) are in the
baseline, not in the figure. Baseline RSS is measured after that warm-up; peak RSS is the
process's ``ru_maxrss`` at the end.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "vit_finalist5.memory_profile.json"


def _current_rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def _normalise(path: Path) -> None:
    import pyarrow.parquet as pq

    from tilescope.loaders.memory_profile import load_memory_profile

    with tempfile.TemporaryDirectory(prefix="bench_normalise.") as out:
        for name, table in load_memory_profile(path).tables().items():
            pq.write_table(table, Path(out) / f"{name}.parquet")


def _json_load(path: Path) -> None:
    with open(path, "rb") as handle:
        json.load(handle)


def _msgspec_decode(path: Path) -> None:
    import msgspec

    with open(path, "rb") as handle:
        msgspec.json.decode(handle.read())


def first_chart_points(opened) -> dict:
    """The whole-profile points of the timeline's first render (steps kept per pixel column and
    the usage at them): the profile's ``derived.overview.UsageOverview``, which is what the
    timeline sends for the whole profile (tests/test_overview.py checks they are the same)."""
    overview = opened.overview
    return {"step": overview.step, "std": overview.standard, "intl": overview.interleaved}


def _first_chart(path: Path) -> float:
    """Open as the app does, staged; the first points in hand. Returns when the rest (arrays,
    plan) is built too, and how long after the start that was."""
    from tilescope.app.shared import SharedProfiles
    from tilescope.derived.opening import Source

    def first(opened) -> None:  # the overview, before the plan is built
        global _FIRST_CHART_AT
        first_chart_points(opened)
        _FIRST_CHART_AT = time.perf_counter()

    started = time.perf_counter()
    SharedProfiles().open(Source.of_path(path), staged=first, prepare=False)
    return time.perf_counter() - started


_FIRST_CHART_AT = 0.0  # (set by the measured run: the worker reports it, then exits)


def worker(mode: str, path: Path, cache_dir: Path | None) -> dict:
    if mode == "json":
        operation = _json_load
    elif mode == "msgspec":
        operation = _msgspec_decode
    elif mode == "normalise":
        operation = _normalise
    elif mode == "first-chart":
        from tilescope.loaders.cache import CACHE_ENV

        warm_cache = Path(tempfile.mkdtemp(prefix="bench_warm_cache."))

        def operation(p: Path) -> None:
            os.environ[CACHE_ENV] = str(cache_dir if p == path else warm_cache)
            behind["ready"] = _first_chart(p)
    elif mode in ("cache-fill", "cached"):
        from tilescope.loaders.cache import load_profile_cached

        warm_cache = Path(tempfile.mkdtemp(prefix="bench_warm_cache."))

        def operation(p: Path) -> None:
            load_profile_cached(p, cache_dir if p == path else warm_cache)
    else:
        raise SystemExit(f"unknown mode {mode}")
    behind: dict = {}
    operation(SAMPLE)  # warm-up: one-off costs go into the baseline
    if mode in ("cached", "first-chart"):
        operation(SAMPLE)  # (the second time from its cache, as the measured call will be)
    baseline = _current_rss()
    wall, cpu = time.perf_counter(), time.process_time()
    operation(path)
    ended, cpu_ended = time.perf_counter(), time.process_time()
    if mode in ("cache-fill", "cached", "first-chart"):
        shutil.rmtree(warm_cache, ignore_errors=True)
    result = {"wall": ended - wall, "cpu": cpu_ended - cpu, "baseline_rss": baseline, "peak_rss": _peak_rss()}
    if mode == "first-chart":  # the figure is the first points; the whole open is reported beside it
        result.update(wall=_FIRST_CHART_AT - wall, ready=behind["ready"])
    return result


@dataclass(frozen=True)
class Measurement:
    wall: float  # seconds, best of the repeats
    cpu: float  # CPU seconds of that run
    baseline_rss: int  # bytes resident after imports and warm-up
    peak_rss: int  # bytes, highest over the repeats
    ready: float | None = None  # first-chart: seconds until everything was built (the rest, behind the chart)

    @property
    def above_baseline(self) -> int:
        return max(self.peak_rss - self.baseline_rss, 0)


def measure(mode: str, path: Path, repeat: int = 3, cache_dir: Path | None = None) -> Measurement:
    """Run ``mode`` on ``path`` in ``repeat`` fresh subprocesses; keep the fastest run's times."""
    runs = []
    for _ in range(repeat):
        command = [sys.executable, "-m", "benchmarks.bench_load", "worker", mode, str(path)]
        if cache_dir is not None:
            command.append(str(cache_dir))
        done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
        if done.returncode != 0:
            raise RuntimeError(f"{mode} on {path.name} failed:\n{done.stderr}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["wall"])
    return Measurement(
        best["wall"], best["cpu"], best["baseline_rss"], max(r["peak_rss"] for r in runs), best.get("ready")
    )


def _run_cli_normalise(path: Path) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS in bytes of one ``tilescope normalise`` process."""
    with tempfile.TemporaryDirectory(prefix="bench_cli.") as scratch:
        env = {**os.environ, "TILESCOPE_CACHE_DIR": str(Path(scratch) / "cache")}
        command = [
            sys.executable,
            "-m",
            "tilescope",
            "normalise",
            str(path),
            "--out",
            str(Path(scratch) / "out"),
            "--quiet",
        ]
        process = subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent, env=env, stderr=subprocess.PIPE)
        stderr = process.stderr.read() if process.stderr is not None else b""
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise RuntimeError(f"tilescope normalise {path.name} failed:\n{stderr.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # (Linux reports KiB)


def measure_cli(path: Path, repeat: int = 3) -> Measurement:
    """``tilescope normalise`` as a command: the least CPU time and the highest peak RSS of
    ``repeat`` processes on ``path``; baseline = the lowest peak of as many on the sample."""
    runs = [_run_cli_normalise(path) for _ in range(repeat)]
    baseline = min(_run_cli_normalise(SAMPLE)[1] for _ in range(repeat))
    cpu = min(r[0] for r in runs)
    return Measurement(cpu, cpu, baseline, max(r[1] for r in runs))


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "worker":
        cache_dir = Path(argv[3]) if len(argv) > 3 else None
        print(json.dumps(worker(argv[1], Path(argv[2]), cache_dir)))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
