"""``fleet.workers.LocalWorkers``, the worker processes of ``tilescope batch`` without
``--scheduler``: results and exceptions come back by task, a worker that dies is replaced and its
task run again, a task whose workers die three times is given up (``WorkerDied``), and no worker
outlives the pool. Both start methods (``fork`` from a process without other Python threads,
``forkserver`` otherwise)."""

from __future__ import annotations

import os
import threading

import psutil
import pytest

from tilescope.fleet.driver import _killed, _task_failure
from tilescope.fleet.workers import ALLOWED_FAILURES, PROCESS_NAME, LocalWorkers, WorkerDied, start_method


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_results_errors_and_a_task_that_kills_its_workers(method):
    with LocalWorkers(2, method=method) as pool:
        first = pool.pids()
        assert len(first) == 2 and os.getpid() not in first
        pool.submit("pid", os.getpid)
        ((_, ok, pid),) = pool.completed()
        assert ok and pid != os.getpid() and pid in first
        assert psutil.Process(pid).name() == PROCESS_NAME.decode()  # (named before its first task)
        pool.submit("error", int, "not a number")
        pool.submit("dies", os._exit, 3)  # the worker process ends while running it
        pool.submit("after", sum, [1, 2, 3])
        results = {token: (ok, value) for token, ok, value in pool.completed()}
        assert set(results) == {"error", "dies", "after"}
        ok, error = results["error"]
        assert not ok and isinstance(error, ValueError)
        ok, died = results["dies"]
        assert not ok and isinstance(died, WorkerDied)
        assert f"died {ALLOWED_FAILURES} times" in str(died) and "exit status 3" in str(died)
        assert results["after"] == (True, 6)
        assert pool.started == 2 + ALLOWED_FAILURES  # each death replaced
        last = pool.pids()
        assert len(last) == 2 and all(psutil.pid_exists(p) for p in last)
    for pid in {*first, *last}:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert len(pool.cpu_seconds) == 2 and all(seconds >= 0 for seconds in pool.cpu_seconds)


def test_a_batch_reports_each_workers_cpu(tmp_path):
    """Two files, two workers: each worker's CPU seconds in the report, and the work is the workers'
    (together at least what loading the files takes in this process)."""
    import time

    from tilescope.fleet.driver import run_batch
    from tilescope.loaders.memory_profile import load_memory_profile
    from tilescope.synth import write_synthetic_profile

    root = tmp_path / "tree"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        write_synthetic_profile(root / name / "m-1-1.json", 3, 2)
    report = run_batch(root, tmp_path / "ds", workers=2)
    assert len(report.processed) == 2 and len(report.worker_cpu_seconds) == 2
    assert report.as_json()["worker_cpu_seconds"] == report.worker_cpu_seconds
    started = time.process_time()
    load_memory_profile(root / "a" / "m-1-1.json")
    assert sum(report.worker_cpu_seconds) >= time.process_time() - started


def test_the_start_method_follows_the_threads():
    assert start_method() == ("fork" if threading.active_count() == 1 else "forkserver")
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        assert start_method() == "forkserver"
    finally:
        done.set()
        thread.join()


def test_a_file_whose_workers_die_is_recorded_without_its_previous_row(tmp_path):
    """The driver treats ``WorkerDied`` as Dask's ``KilledWorker``: a failed row that replaces the
    file's previous one (so the file is not retried forever); other exceptions keep it."""
    (tmp_path / "a.json").write_text("{}")
    item = {"path": "a.json", "fs_path": "a.json", "previous": None}
    died = _task_failure(str(tmp_path), item, "batch", WorkerDied("its worker died 3 times running it"))
    assert _killed(WorkerDied("x")) and not _killed(ValueError("x"))
    assert died["status"] == "failed" and died["keep_previous"] is False
    assert died["error"] == "a.json: the task failed on its worker (WorkerDied: its worker died 3 times running it)"
    other = _task_failure(str(tmp_path), item, "batch", PermissionError("DATASET not writable"))
    assert other["keep_previous"] is True
