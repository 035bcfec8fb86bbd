"""A large fleet: ``tilescope fleet --sql`` over a dataset of thousands of small profiles.

    .venv/bin/python -m benchmarks.bench_fleet_query [--profiles 5000] [--folders 10] [--workers 2] [--keep DIR]

``--keep DIR`` writes the fleet and its dataset under DIR and keeps them; a later run with the same
DIR and sizes reuses them and only times the queries (a batch of 5,000 takes minutes; the queries
are best timed on an idle machine).

Writes ``--profiles`` small profiles (a synthetic profile cut to its first 16 self-contained values
and 16 steps, each file's scope its own, so every file is its own content; ~17 KB each) in
``--folders`` nightly folders, batches them (``tilescope batch --workers N``, timed), then times,
in a fresh process each as a person runs them (interpreter start-up included, and measured alone
as ``python -c pass`` for reference):

- the top 10 profiles by total peak (``ORDER BY total_peak DESC LIMIT 10``);
- one folder's rows (``WHERE folder = …``), and the values of one folder's profiles (the
  partition column filters the per-profile tables without a join);

with the CPU seconds each command used (user + system, which the load of the machine changes
less than the wall time), and the same queries in this process (``fleet.query.run_query``: the dataset opened and checked,
the DuckDB views made, the query run), which is what the dataset's layout decides; and prints the
number of files the dataset holds. Goal: each query under 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tilescope.synth import write_synthetic_profile

QUERIES = {
    "top 10 by total peak": "SELECT path, total_peak FROM profiles ORDER BY total_peak DESC, path LIMIT 10",
    "one folder's rows": "SELECT path, total_peak, fits_budget FROM profiles WHERE folder = '{folder}' ORDER BY path",
    "one folder's values": "SELECT count(*) AS n, sum(recomputed_bytes) AS b FROM values WHERE folder = '{folder}'",
}


def small_profile(root: Path) -> dict:
    """A synthetic profile cut to 16 values whose alias roots and origins are kept, and 16 steps."""
    source = root / "source.part"
    write_synthetic_profile(source, 1, 1)
    raw = json.loads(source.read_text())
    source.unlink()
    values, ids = [], set()
    for v in raw["timeline"]["values"]:
        if all(v[k] in ids or v[k] == v["id"] for k in ("root", "origin")):
            values.append(v)
            ids.add(v["id"])
        if len(values) == 16:
            break
    steps = raw["timeline"]["steps"][:16]
    for s in steps:
        s["live"] = [i for i in s["live"] if i in ids]
    raw["timeline"] = {"values": values, "steps": steps}
    for key in ("total_peak_step", "standard_peak_step", "interleaved_peak_step"):
        raw[key] = 0  # recorded figures are only checked (check_mismatches), never trusted
    return raw


def make_fleet(root: Path, n: int, folders: int) -> None:
    raw = small_profile(root)
    for k in range(n):
        raw["scope"] = f"model{k}"
        folder = root / f"2024-05-{k % folders + 1:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"model{k}-{os.getpid()}-{k:04d}.json").write_text(json.dumps(raw))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    seconds, _, result = timed_cpu(*args)
    return seconds, result


def timed_cpu(*args: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (user + system: what the command costs whatever the load) of a fresh
    process."""
    before = children_cpu()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    return time.perf_counter() - started, children_cpu() - before, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=5000)
    parser.add_argument("--folders", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the fleet and dataset here and keep them; reuse them if there")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            tmp = args.keep.resolve()
            tmp.mkdir(parents=True, exist_ok=True)
        else:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_fleet_query_")))
        root, dataset = tmp / "nightly", tmp / "fleet-data"
        done = tmp / f"batched-{args.profiles}-{args.folders}"
        if done.exists():
            print(f"reusing the fleet and dataset in {tmp} (batched earlier; {done.read_text().strip()})")
        else:
            build(root, dataset, args)
            done.write_text(f"{args.profiles} profiles, {args.folders} folders\n")
        time_queries(dataset, args)


def build(root: Path, dataset: Path, args: argparse.Namespace) -> None:
    """Write the fleet and batch it (timed)."""
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(dataset, ignore_errors=True)
    root.mkdir(parents=True)
    started = time.perf_counter()
    make_fleet(root, args.profiles, args.folders)
    print(
        f"{args.profiles} profiles in {args.folders} folders written in {time.perf_counter() - started:.1f} s; "
        f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}"
    )
    seconds, result = timed(
        "-m",
        "tilescope",
        "batch",
        str(root),
        "--out",
        str(dataset),
        "--workers",
        str(args.workers),
        "--quiet",
        "--json",
    )
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["processed"] == args.profiles, result.stderr[-2000:]
    print(f"batch --workers {args.workers}: {seconds:.1f} s, {args.profiles / seconds:.1f} profiles/s")


def time_queries(dataset: Path, args: argparse.Namespace) -> None:
    """The dataset's file count, then each query as a fresh command and in this process."""
    files = sorted(p for p in dataset.rglob("*") if p.is_file())
    parquet = [p for p in files if p.suffix == ".parquet"]
    print(
        f"dataset: {len(files)} files ({len(parquet)} Parquet; layout 1 would have had "
        f"{args.profiles * 7} Parquet files), {sum(p.stat().st_size for p in files) / 1e6:.1f} MB"
    )
    startup = min(timed("-c", "pass")[0] for _ in range(args.repeat))
    imports = min(timed("-c", "import duckdb, pyarrow.parquet")[0] for _ in range(args.repeat))
    cli = min(timed("-m", "tilescope", "fleet", "--help")[0] for _ in range(args.repeat))
    print(
        f"python start-up alone: {startup:.2f} s; with duckdb and pyarrow imported: {imports:.2f} s; "
        f"`tilescope fleet --help` (the command's start-up: its module only): {cli:.2f} s"
    )
    print(f"{'query, as a command':24} {'best wall of ' + str(args.repeat):>16} {'CPU s':>6}  rows")
    for name, sql in QUERIES.items():
        sql = sql.format(folder="2024-05-02")
        times, cpus, rows = [], [], None
        for _ in range(args.repeat):
            seconds, cpu, result = timed_cpu("-m", "tilescope", "fleet", str(dataset), "--json", "--sql", sql)
            assert result.returncode == 0, result.stderr
            times.append(seconds)
            cpus.append(cpu)
            rows = json.loads(result.stdout)
        verdict = "under 1 s" if min(times) < 1 else "OVER 1 s"
        print(
            f"{name:24} {min(times):15.2f}s {min(cpus):6.2f}  {len(rows)} ({verdict}; "
            f"first row {rows[0] if rows else None}); load average {os.getloadavg()[0]:.2f}"
        )
    from tilescope.fleet.query import run_query

    for name, sql in QUERIES.items():
        sql = sql.format(folder="2024-05-02")
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            run_query(dataset, sql)
            times.append(time.perf_counter() - started)
        print(f"in this process: {name:24} {min(times):6.3f} s (best of {args.repeat})")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
