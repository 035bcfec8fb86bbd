"""``tilescope batch`` throughput: a LocalCluster of 1 and 2 workers against the same files
normalised one after another in one process, in the same run.

    .venv/bin/python -m benchmarks.bench_fleet [--profiles 40] [--layers 6] [--repeat 2]

Writes ``--profiles`` synthetic profiles (copies of three sizes, 10/20/30 blocks: ~2-7 MB each,
in nested folders) to a temporary folder, then measures, best wall time of ``--repeat`` runs each
into a fresh dataset:

- **one process**: the batch's tasks (``fleet.driver.plan_tasks``) run in turn in this process
  by ``fleet.task.normalise_task`` (read, hash, load, re-plan, check, write the fragments: exactly
  a worker's work) and committed (``fleet.commit``), no Dask;
- **LocalCluster, N workers**: ``fleet.driver.run_batch`` as ``tilescope batch --workers N``
  runs it, cluster start-up and shutdown included (the time a person waits); the start-up alone
  (a LocalCluster of N workers that import tilescope) is measured too.

Prints profiles per second and the ratio of each to the one-process figure, and the number of
files of the dataset. On a machine shared with other work the wall times depend on how much of
the two cores the run gets, so the CPU seconds each variant used (this process and its child
processes: the workers and their nannies, ``os.times``) are printed too: profiles per CPU-second
is what a worker costs, whatever the load. The datasets are checked equal. The machine is shared: the load average is
printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow.dataset as pads

from tilescope.fleet.commit import repair
from tilescope.fleet.discover import find_inputs
from tilescope.fleet.driver import dask_client, plan_tasks, run_batch
from tilescope.fleet.layout import Dataset, folder_of
from tilescope.fleet.schema import TABLE_NAMES
from tilescope.fleet.task import normalise_task
from tilescope.synth import write_synthetic_profile

SIZES = (10, 20, 30)  # blocks


def make_tree(root: Path, n: int, layers: int) -> int:
    """``n`` profiles in nested folders; returns their total bytes."""
    sources = []
    for blocks in SIZES:
        source = root / f"size{blocks}.part"
        write_synthetic_profile(source, blocks, layers)
        sources.append(source)
    total = 0
    for k in range(n):
        target = root / f"nightly{k % 4}" / f"model{k:02d}" / "finalist.memory_profile.json"
        target.parent.mkdir(parents=True)
        shutil.copy(sources[k % len(sources)], target)
        total += target.stat().st_size
    for source in sources:
        source.unlink()
    return total


def serial(root: Path, dataset: Path) -> float:
    started = time.perf_counter()
    ds = Dataset.create(dataset)
    committer, _ = repair(ds)
    batch_id = uuid.uuid4().hex
    for n, task in enumerate(plan_tasks(find_inputs(root).inputs, 1)):
        items = [{"path": i.path, "fs_path": i.fs_path, "previous": None} for i in task]
        fragment = f"{batch_id[:12]}-{n:05d}"
        result = normalise_task(str(root), items, str(ds.root), batch_id, fragment)
        if result["staged"] is not None:
            committer.place(folder_of(task[0].path), fragment, Path(result["staged"]), set(result["keys"]))
        for summary in result["summaries"]:
            committer.record(summary)
    committer.commit()
    return time.perf_counter() - started


def on_cluster(root: Path, dataset: Path, workers: int) -> float:
    started = time.perf_counter()
    report = run_batch(root, dataset, workers=workers)
    elapsed = time.perf_counter() - started
    assert not report.failed and report.processed, report.as_json()
    return elapsed


def cpu_seconds() -> float:
    """CPU time of this process and of its child processes that have ended (the cluster's)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def start_up(workers: int) -> float:
    """A LocalCluster of ``workers`` whose workers have imported the task, and its shutdown."""
    started = time.perf_counter()
    with dask_client(None, workers) as client:
        client.run(lambda: __import__("tilescope.fleet.task"))
    return time.perf_counter() - started


def content(dataset: Path) -> dict:
    volatile = {"normalised_at", "seconds", "batch_id", "fragment"}
    out = {}
    for table in TABLE_NAMES:
        rows = pads.dataset(dataset / table, format="parquet").to_table().to_pylist()
        out[table] = sorted(repr(sorted((k, v) for k, v in r.items() if k not in volatile)) for r in rows)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=40)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_fleet_") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        total = make_tree(root, args.profiles, args.layers)
        print(
            f"{args.profiles} profiles, {total / 1e6:.1f} MB in all; {os.cpu_count()} cores; "
            f"load average at start {os.getloadavg()[0]:.2f}"
        )
        runs: dict[str, list[float]] = {"one process": [], "LocalCluster, 1 worker": [], "LocalCluster, 2 workers": []}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        startups: dict[int, list[float]] = {1: [], 2: []}
        last = {}
        for r in range(args.repeat):  # interleaved, so a burst of load elsewhere hits every variant
            for name in runs:
                dataset = Path(tmp) / f"dataset-{list(runs).index(name)}-{r}"
                workers = 0 if name == "one process" else int(name.split(", ")[1].split()[0])
                before = cpu_seconds()
                runs[name].append(serial(root, dataset) if workers == 0 else on_cluster(root, dataset, workers))
                cpu[name].append(cpu_seconds() - before)
                last[name] = dataset
            for workers in startups:
                startups[workers].append(start_up(workers))
        reference = content(last["one process"])
        assert all(content(d) == reference for d in last.values()), "datasets differ"
        base = args.profiles / min(runs["one process"])
        base_cpu = args.profiles / min(cpu["one process"])
        print(
            f"{'':26} {'best wall':>10} {'profiles/s':>11} {'vs one process':>15} {'CPU s':>8} {'profiles/CPU s':>15} {'vs one process':>15}"
        )
        for name, times in runs.items():
            rate = args.profiles / min(times)
            per_cpu = args.profiles / min(cpu[name])
            print(
                f"{name:26} {min(times):9.2f}s {rate:11.2f} {rate / base:14.2f}× {min(cpu[name]):8.1f} {per_cpu:15.2f} {per_cpu / base_cpu:14.2f}×"
            )
        files = sum(1 for p in last["LocalCluster, 2 workers"].rglob("*.parquet"))
        print(f"dataset files (Parquet, all tables): {files} for {args.profiles} profiles")
        for workers, times in startups.items():
            print(
                f"LocalCluster start-up + shutdown, {workers} worker{'s' if workers > 1 else ''}: {min(times):.2f} s (best of {len(times)})"
            )
        print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
