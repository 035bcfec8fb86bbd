"""``tilescope batch`` throughput: 1 and 2 worker processes against the same files normalised one
after another in one process, in the same run, each as a fresh command (start-up counted in
every variant).

    .venv/bin/python -m benchmarks.bench_fleet [--profiles 240] [--layers 6] [--repeat 3] [--more]

Writes ``--profiles`` synthetic profiles (three sizes, 10/20/30 blocks of ``--layers`` layers:
2.2-6.6 MB each, ~4.4 MB on average; each path its own profile, hard links of the three files,
in 4 nightly folders of one sub-folder per model) to a temporary folder, then times, best wall
time of ``--repeat`` interleaved runs each into a fresh dataset, each a fresh Python process
started from here (interpreter start-up, imports and the workers' start included: the time a
person waits):

- **one process**: ``python -m benchmarks.bench_fleet --one-process DIR DATASET``: the batch's
  tasks (``fleet.driver.plan_tasks``) run in turn in that process by ``fleet.task.normalise_task``
  (read, hash, load, re-plan, check, write the fragments: exactly a worker's work) and committed
  (``fleet.commit``): no worker process;
- **2 workers**: ``python -m tilescope batch DIR --out DATASET --workers 2 --quiet --json``;
- with ``--more``, also **1 worker** (the same with ``--workers 1``) and **Dask LocalCluster, 2
  workers** (``run_batch(local_cluster=True)``, the mechanism ``batch`` used before
  ``fleet.workers``), for comparison.

Prints profiles per second and each variant's ratio to the one-process figure (best against
best, and the median of the ratios within each round: on a shared machine the load changes
between rounds, less within one), the CPU seconds each used (the command and its worker processes: ``RUSAGE_CHILDREN``), the
number of files of the dataset, and the load average before and after. The datasets are checked
equal. Goal (issue #25): 2 workers ≥ 1.7× one process.

On a machine whose cores other work keeps busy, each process gets a varying share of a core and
the wall times say more about that share than about the batch. So each variant's *longest chain*
is printed too: the CPU seconds of the batch's own process plus those of its busiest worker
(``worker_cpu_seconds`` in ``batch --json``), i.e. its wall time if every process had a core of
its own, and the one process's CPU seconds divided by it. It is measured CPU, not a model, but it
is not the goal's wall-time ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SIZES = (10, 20, 30)  # blocks
ROOT = Path(__file__).resolve().parent.parent


def make_tree(root: Path, n: int, layers: int) -> int:
    """``n`` profiles in nested folders (hard links of three sizes); returns their total bytes."""
    from tilescope.synth import write_synthetic_profile

    sources = []
    for blocks in SIZES:
        source = root / f".size{blocks}.part"  # (a name starting with '.': not an input)
        write_synthetic_profile(source, blocks, layers)
        sources.append(source)
    total = 0
    for k in range(n):
        target = root / f"nightly{k % 4}" / f"model{k:03d}" / "finalist.memory_profile.json"
        target.parent.mkdir(parents=True)
        os.link(sources[k % len(sources)], target)
        total += target.stat().st_size
    for source in sources:
        source.unlink()
    return total


def serial(root: Path, dataset: Path) -> None:
    """The batch's work in this process, task after task (module doc)."""
    from tilescope.fleet.commit import repair
    from tilescope.fleet.discover import find_inputs
    from tilescope.fleet.driver import plan_tasks
    from tilescope.fleet.layout import Dataset, folder_of
    from tilescope.fleet.task import normalise_task
    from tilescope.loaders.arrow_pandas import arrow_without_pandas

    arrow_without_pandas()  # as batch and its workers do
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


def local_cluster(root: Path, dataset: Path, workers: int) -> None:
    from tilescope.fleet.driver import run_batch

    report = run_batch(root, dataset, workers=workers, local_cluster=True)
    assert not report.failed and report.processed, report.as_json()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], profiles: int) -> tuple[float, float, float]:
    """Wall and CPU seconds of a fresh process (and the processes it started), and the CPU seconds
    of its longest chain: the batch process's own and its busiest worker's (``worker_cpu_seconds``
    of ``batch --json``), which is the wall time it would take if each process had a core."""
    before = children_cpu()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    cpu = children_cpu() - before
    assert result.returncode == 0, result.stderr[-3000:]
    chain = cpu
    if command[:2] == ["-m", "tilescope"]:
        report = json.loads(result.stdout)
        assert (report["processed"], report["failed"]) == (profiles, 0), report
        workers = report["worker_cpu_seconds"]
        chain = cpu - sum(workers) + max(workers)
    return wall, cpu, chain


def differences(a: Path, b: Path) -> dict[str, int]:
    """Rows of each table in one dataset and not the other (DuckDB ``EXCEPT ALL`` both ways),
    without the columns that differ between two runs over the same files."""
    import duckdb

    from tilescope.fleet.schema import PROFILE_TABLES, PROFILES, TABLE_NAMES

    volatile = {"normalised_at", "seconds", "batch_id", "fragment"}
    out = {}
    con = duckdb.connect()
    for table in TABLE_NAMES:
        schema = PROFILES if table == "profiles" else PROFILE_TABLES[table]
        columns = ", ".join(f'"{n}"' for n in schema.names if n not in volatile)
        side = "(SELECT {c} FROM read_parquet('{p}/**/*.parquet', hive_partitioning = true))"
        one, two = (side.format(c=columns, p=d / table) for d in (a, b))
        out[table] = con.sql(
            f"SELECT count(*) FROM ({one} EXCEPT ALL {two} UNION ALL ({two} EXCEPT ALL {one}))"
        ).fetchall()[0][0]
    return out


def worker_start_up(workers: int) -> float:
    """Starting ``workers`` local worker processes (``fleet.workers``), one trivial task each, and
    stopping them, in a process that has imported the task (as ``batch`` has)."""
    import tilescope.fleet.task  # noqa: F401
    from tilescope.fleet.workers import LocalWorkers

    started = time.perf_counter()
    with LocalWorkers(workers) as pool:
        for k in range(workers):
            pool.submit(k, os.getpid)
        assert len({pid for _, ok, pid in pool.completed()}) == workers
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=240)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--more", action="store_true", help="also 1 worker, and a Dask LocalCluster of 2 workers")
    parser.add_argument("--one-process", nargs=2, metavar=("DIR", "DATASET"), help=argparse.SUPPRESS)
    parser.add_argument("--local-cluster", nargs=3, metavar=("N", "DIR", "DATASET"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one_process:
        serial(Path(args.one_process[0]), Path(args.one_process[1]))
        return
    if args.local_cluster:
        local_cluster(Path(args.local_cluster[1]), Path(args.local_cluster[2]), int(args.local_cluster[0]))
        return
    with tempfile.TemporaryDirectory(prefix="bench_fleet_") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        total = make_tree(root, args.profiles, args.layers)
        print(
            f"{args.profiles} profiles in 4 folders, {total / 1e6:.1f} MB in all ({total / args.profiles / 1e6:.1f} MB "
            f"each on average); {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        batch = ["-m", "tilescope", "batch", str(root), "--out", "{dataset}", "--quiet", "--json", "--workers"]
        variants: dict[str, list[str]] = {
            "one process": ["-m", "benchmarks.bench_fleet", "--one-process", str(root), "{dataset}"],
            "batch --workers 2": [*batch, "2"],
        }
        if args.more:
            variants["batch --workers 1"] = [*batch, "1"]
            variants["Dask LocalCluster, 2 workers"] = [
                "-m",
                "benchmarks.bench_fleet",
                "--local-cluster",
                "2",
                str(root),
                "{dataset}",
            ]
        walls: dict[str, list[float]] = {name: [] for name in variants}
        cpus: dict[str, list[float]] = {name: [] for name in variants}
        chains: dict[str, list[float]] = {name: [] for name in variants}
        last: dict[str, Path] = {}
        for r in range(args.repeat):  # interleaved, in reverse order every other round (a trend in the load
            order = list(enumerate(variants.items()))  # elsewhere then favours no variant)
            for k, (name, command) in order[::-1] if r % 2 else order:
                dataset = Path(tmp) / f"dataset-{k}-{r}"
                wall, cpu, chain = timed([c.replace("{dataset}", str(dataset)) for c in command], args.profiles)
                walls[name].append(wall)
                cpus[name].append(cpu)
                chains[name].append(chain)
                last[name] = dataset
                print(
                    f"  round {r + 1}: {name:30} {wall:7.2f} s wall, {cpu:6.1f} CPU s ({chain:.1f} on the longest chain), "
                    f"load average {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
        for name, dataset in last.items():
            assert not any(differences(last["one process"], dataset).values()), f"{name}: datasets differ"
        base = min(walls["one process"])
        print(
            f"{'':30} {'best wall':>10} {'profiles/s':>11} {'vs one process':>15} {'median per round':>17} "
            f"{'CPU s':>7} {'profiles/CPU s':>15} {'CPU s, longest chain':>21} {'one process ÷ that':>19}"
        )
        base_chain = min(chains["one process"])
        for name, times in walls.items():
            rate = args.profiles / min(times)
            paired = statistics.median(a / b for a, b in zip(walls["one process"], times))
            print(
                f"{name:30} {min(times):9.2f}s {rate:11.2f} {base / min(times):14.2f}× {paired:16.2f}× "
                f"{min(cpus[name]):7.1f} {args.profiles / min(cpus[name]):15.2f} {min(chains[name]):21.1f} "
                f"{base_chain / min(chains[name]):18.2f}×"
            )
        files = sum(1 for p in last["batch --workers 2"].rglob("*") if p.is_file())
        parquet = sum(1 for p in last["batch --workers 2"].rglob("*.parquet"))
        print(f"dataset: {files} files ({parquet} Parquet) for {args.profiles} profiles")
        for workers in (1, 2):
            print(
                f"local worker processes, start + one task each + stop, {workers} worker{'s' if workers > 1 else ''}: "
                f"{min(worker_start_up(workers) for _ in range(3)) * 1000:.0f} ms (best of 3)"
            )
        verdict = "met" if base / min(walls["batch --workers 2"]) >= 1.7 else "NOT met"
        print(f"goal 2 workers ≥ 1.7× one process: {verdict}; load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
