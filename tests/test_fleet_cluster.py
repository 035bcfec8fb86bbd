"""``tilescope batch`` on an external Dask cluster (``dask scheduler`` and ``dask worker``
processes started here on 127.0.0.1 and stopped here), and batches whose workers are killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
from fleet_support import TABLES, ExternalCluster, dataset_content, local_batch, read_table, run_cli

from tilescope.fleet.driver import run_batch
from tilescope.synth import write_synthetic_profile

__all__ = ["local_batch"]  # the session fixture, used by name

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One scheduler for the module; each test adds the workers it needs."""
    cluster = ExternalCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield cluster
    finally:
        cluster.stop()


def many_profiles(root, n: int) -> dict[str, dict]:
    """``n`` profiles in nested folders, copies of three synthetic sizes (each path is a profile
    of its own); path → the raw JSON's figures."""
    sizes = []
    for blocks in (10, 15, 20):
        root.mkdir(parents=True, exist_ok=True)
        path = root / f"size{blocks}.json.part"
        write_synthetic_profile(path, blocks, 4)
        raw = json.loads(path.read_text())
        sizes.append((path, {"standard_peak": raw["peak"]["standard"], "n_values": len(raw["timeline"]["values"])}))
    out = {}
    for k in range(n):
        rel = f"night{k % 3}/model{k}/p.memory_profile.json"
        (root / rel).parent.mkdir(parents=True)
        source, figures = sizes[k % 3]
        shutil.copy(source, root / rel)
        out[rel] = figures
    for source, _ in sizes:
        source.unlink()
    return out


def assert_complete(dataset) -> list[dict]:
    """Every row of profiles has all its partitions, each with all its rows; returns the rows."""
    rows = read_table(dataset, "profiles")
    counts = {table: {} for table in ("values", "steps")}
    for table, by_key in counts.items():
        for r in read_table(dataset, table):
            by_key[r["profile_key"]] = by_key.get(r["profile_key"], 0) + 1
    for row in rows:
        if row["kind"] == "memory_profile":
            assert all(len(list((dataset / t).glob(f"folder=*/{row['fragment']}.parquet"))) == 1 for t in TABLES[1:]), (
                row["path"]
            )
            assert counts["values"][row["profile_key"]] == row["n_values"], row["path"]
            assert counts["steps"][row["profile_key"]] == row["n_steps"], row["path"]
    return rows


def test_an_external_cluster_writes_the_same_dataset(local_batch, cluster, tmp_path):
    cluster.add_worker()
    dataset = tmp_path / "dataset"
    code, out, err = run_cli("batch", local_batch.root, "--out", dataset, "--scheduler", cluster.address, "--json")
    assert code == 1, err
    report = json.loads(out)
    assert {k: report[k] for k in ("processed", "skipped", "failed", "failures")} == {
        k: local_batch.report[k] for k in ("processed", "skipped", "failed", "failures")
    }
    assert dataset_content(dataset) == dataset_content(local_batch.dataset)


def test_a_run_interrupted_by_a_killed_worker_loses_nothing(cluster, tmp_path):
    root, dataset = tmp_path / "tree", tmp_path / "dataset"
    expected = many_profiles(root, 16)
    cluster.add_worker()
    batch = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tilescope",
            "batch",
            str(root),
            "--out",
            str(dataset),
            "--scheduler",
            cluster.address,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while not list((dataset / "values").glob("folder=*/*.parquet")):  # a task's fragments placed
            assert batch.poll() is None and time.monotonic() < deadline, (
                batch.stderr.read() if batch.poll() is not None else "timed out"
            )
            time.sleep(0.02)
        for worker in cluster.workers:  # each worker and its nanny, mid-batch, without warning
            cluster.kill(worker)
        # With no worker left the batch waits for one: interrupt it as a person would (Ctrl-C)...
        batch.send_signal(signal.SIGINT)
        batch.wait(timeout=60)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    written = assert_complete(dataset)  # the interrupted client committed what had finished
    assert 1 <= len(written) < len(expected), "the worker was killed too late to interrupt anything"
    assert all(r["error"] is None and r["standard_peak"] == expected[r["path"]]["standard_peak"] for r in written)

    cluster.add_worker()
    code, out, err = run_cli("batch", root, "--out", dataset, "--scheduler", cluster.address, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["processed"], report["skipped"], report["failed"]) == (len(expected) - len(written), len(written), 0)
    rows = {r["path"]: r for r in assert_complete(dataset)}
    assert {p: {"standard_peak": r["standard_peak"], "n_values": r["n_values"]} for p, r in rows.items()} == expected
    before = {r["path"]: r["normalised_at"] for r in written}
    assert {p: rows[p]["normalised_at"] for p in before} == before  # what was written stayed as written


def _worker_processes() -> list[psutil.Process]:
    """The batch's local worker processes (``fleet.workers``: named ``tilescope-work``), started
    by this process (forked, or by a forkserver when this process runs threads)."""
    return [p for p in psutil.Process().children(recursive=True) if p.name() == "tilescope-work"]


def test_a_local_batch_survives_a_killed_worker(tmp_path):
    """The killed worker is replaced and its task run again: the same run completes."""
    root, dataset = tmp_path / "tree", tmp_path / "dataset"
    expected = many_profiles(root, 10)
    killed = []

    def kill_one_worker(done: int, total: int, summary: dict) -> None:
        if not killed:
            workers = _worker_processes()
            assert len(workers) == 2
            os.kill(workers[0].pid, signal.SIGKILL)
            killed.append(workers[0].pid)

    report = run_batch(root, dataset, workers=2, on_result=kill_one_worker)
    assert killed and (len(report.processed), len(report.failed)) == (len(expected), 0)
    rows = {r["path"]: r for r in assert_complete(dataset)}
    assert {p: {"standard_peak": r["standard_peak"], "n_values": r["n_values"]} for p, r in rows.items()} == expected
