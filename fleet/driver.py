"""``tilescope batch``: the files under DIR split into tasks (``fleet.task``) of up to
``MAX_FILES_PER_TASK`` files and ``MAX_BYTES_PER_TASK`` bytes of one folder (``plan_tasks``: large
first, smaller towards the end), run by worker processes started from the batch's own process by
default (``fleet.workers``: why not a Dask ``LocalCluster`` is measured there), or on an existing
Dask cluster by scheduler address.
Workers read the input files and write their fragments into the dataset's staging folder
themselves, so DIR and DATASET must be at the same paths on every worker (a shared filesystem);
the client lists DIR, holds the dataset's lock, and commits (``fleet.commit.Committer``): its work
is per task and per folder, never per file.

Files gone from DIR keep their rows (a dataset is a record of what was normalised; a nightly
folder deleted from disk stays queryable); a batch reports them as ``gone``.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tilescope.loaders.arrow_pandas import arrow_without_pandas
from tilescope.loaders.cache import content_key
from tilescope.models.errors import InputError, TilescopeError

from .commit import Committer, repair
from .discover import Input, find_inputs
from .layout import Dataset, folder_of, locked
from .task import FAILED, LOADED, SKIPPED, empty_row, normalise_task
from .workers import LocalWorkers, WorkerDied

CONNECT_TIMEOUT = "10s"
WORKER_WAIT_SECONDS = 60
MAX_FILES_PER_TASK = 1024
MAX_BYTES_PER_TASK = 64 << 20
MIN_TASK_BYTES = 16 << 20  # the last tasks' size (plan_tasks): a few profiles, or many small ones

OnResult = Callable[[int, int, dict], None]


@dataclass
class BatchReport:
    directory: str
    dataset: str
    batch_id: str  # in the profiles rows this batch wrote
    results: list[dict] = field(default_factory=list)  # one summary per planner output found, by path
    not_loaded: list[dict] = field(default_factory=list)  # {path, why}: planner outputs of kinds batch does not load
    others: list[dict] = field(default_factory=list)  # {path, why}: entries that are not planner outputs, or not read
    gone: list[str] = field(default_factory=list)  # rows kept for files no longer under the directory
    repaired: dict = field(default_factory=dict)
    worker_cpu_seconds: list[float] = field(default_factory=list)  # local workers: the CPU each used (fleet.workers)

    def _with(self, status: str) -> list[dict]:
        return [r for r in self.results if r["status"] == status]

    @property
    def processed(self) -> list[dict]:
        return self._with(LOADED)

    @property
    def failed(self) -> list[dict]:
        return self._with(FAILED)

    @property
    def skipped(self) -> list[dict]:
        return self._with(SKIPPED)

    @property
    def skipped_failures(self) -> list[dict]:
        return [r for r in self.skipped if r["error"] is not None]

    @property
    def found_nothing(self) -> bool:
        return not self.results and not self.not_loaded

    def as_json(self) -> dict:
        return {
            "directory": self.directory,
            "dataset": self.dataset,
            "batch_id": self.batch_id,
            "files": len(self.results),
            "processed": len(self.processed),
            "skipped": len(self.skipped),
            "failed": len(self.failed),
            "failures": [{"path": r["path"], "error": r["error"]} for r in self.failed],
            "skipped_failures": [{"path": r["path"], "error": r["error"]} for r in self.skipped_failures],
            "not_loaded": self.not_loaded,
            "others": self.others,
            "gone": self.gone,
            "repaired": self.repaired,
            "found_nothing": self.found_nothing,
            "worker_cpu_seconds": self.worker_cpu_seconds,
        }


@contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator:
    """A client of the cluster at ``scheduler``, or of a new LocalCluster of ``workers`` processes
    (one thread each: a task is CPU-bound Python) listening on 127.0.0.1 only, without dashboard
    (``run_batch(local_cluster=True)``, for comparison; a batch's default is ``fleet.workers``)."""
    from distributed import Client, LocalCluster

    if scheduler is None:
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                # No dashboard; the scheduler's HTTP routes (health, metrics) on a free loopback port
                # rather than 8787, which another cluster on the machine may hold.
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.CRITICAL,  # a worker's death is reported by the batch, per file
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as exc:
        raise TilescopeError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(exc).split())}") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            raise TilescopeError(
                f"the Dask scheduler at {scheduler} has no workers (waited {WORKER_WAIT_SECONDS} s)"
            ) from None
        yield client


def plan_tasks(inputs: list[Input], workers: int) -> list[list[Input]]:
    """Files grouped by folder, then cut into tasks of decreasing size (guided self-scheduling):
    a task gets at most a ``2 × workers``-th of the bytes not yet given to a task (at least
    ``MIN_TASK_BYTES`` or one file; at most ``MAX_FILES_PER_TASK`` files and
    ``MAX_BYTES_PER_TASK`` bytes). The first tasks are large (few fragment files), the last ones
    small, so when the last one ends the other workers have not been idle for long. Returned
    largest first, the order they are run in."""
    share = 2 * max(workers, 1)
    remaining = sum(i.size for i in inputs)
    by_folder: dict[str, list[Input]] = {}
    for item in inputs:
        by_folder.setdefault(folder_of(item.path), []).append(item)
    tasks: list[list[Input]] = []
    for items in by_folder.values():
        current: list[Input] = []
        size = limit = 0
        for item in sorted(items, key=lambda i: -i.size):
            if current and (len(current) >= MAX_FILES_PER_TASK or size + item.size > limit):
                tasks.append(current)
                current = []
            if not current:
                limit = min(MAX_BYTES_PER_TASK, max(MIN_TASK_BYTES, remaining // share))
                size = 0
            current.append(item)
            size += item.size
            remaining -= item.size
        if current:
            tasks.append(current)
    return sorted(tasks, key=lambda t: -sum(i.size for i in t))


def _task_failure(root: str, item: dict, batch_id: str, exc: BaseException) -> dict:
    """A file whose task raised instead of returning: its worker died each time it ran it
    (``KilledWorker`` on Dask, ``WorkerDied`` locally: e.g. out of memory on that file) — recorded as the file's failed row, so
    it is not retried forever — or the worker could not run the task at all (tilescope missing
    there, DATASET not writable), which fails this run and records nothing."""
    text = " ".join(str(exc).split()) or "no message"
    path = item["path"]
    error = f"{path}: the task failed on its worker ({type(exc).__name__}: {text})"
    try:
        content_hash = content_key(os.path.join(root, *item["fs_path"].split("/")))
    except InputError:
        content_hash = None
    row = empty_row(batch_id, path, content_hash, None, error, 0.0)
    return {"status": FAILED, "keep_previous": not _killed(exc), **row}


def run_batch(
    directory: str | Path,
    dataset_root: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    on_result: OnResult | None = None,
    local_cluster: bool = False,
) -> BatchReport:
    """Normalise every planner output under ``directory`` into the dataset at ``dataset_root``.
    ``on_result(done, total, summary)`` is called in the client as each file completes.
    ``local_cluster``: without ``scheduler``, a Dask LocalCluster of ``workers`` rather than the
    local worker processes (only for comparison: ``benchmarks.bench_fleet``)."""
    root = os.path.abspath(directory)
    found = find_inputs(root, exclude=dataset_root)
    dataset = Dataset.create(dataset_root)
    report = BatchReport(os.fsdecode(root), str(dataset.root), uuid.uuid4().hex)
    report.others = list(found.skipped)
    with locked(_prepare(dataset)):
        dataset.write_batch_record(report.batch_id, root, datetime.now(UTC).isoformat())
        committer, report.repaired = repair(dataset)
        known = set(committer.rows)
        try:
            if found.inputs:
                _run(
                    root,
                    dataset,
                    found.inputs,
                    committer,
                    report,
                    scheduler,
                    workers,
                    retry_failed,
                    on_result,
                    local_cluster,
                )
        finally:  # interrupted (Ctrl-C, a lost scheduler) or not: what finished is committed
            committer.commit()
        report.gone = sorted(known - {r["path"] for r in report.results})
    report.results.sort(key=lambda r: r["path"])
    report.not_loaded.sort(key=lambda r: r["path"])
    report.others.sort(key=lambda r: r["path"])
    return report


def _prepare(dataset: Dataset) -> Dataset:
    """A lock file that is not a regular file (a FIFO, a folder) is removed before locking: it
    would hang or fail the lock; repair does the rest under the lock."""
    lock = dataset.root / ".lock"
    if os.path.lexists(lock) and not lock.is_symlink() and lock.is_dir():
        import shutil

        shutil.rmtree(lock, ignore_errors=True)
    elif os.path.lexists(lock) and (lock.is_symlink() or not lock.is_file()):
        lock.unlink(missing_ok=True)
    return dataset


class _Tasks:
    """The batch's tasks in flight, on the local workers or on Dask: ``submit(items)`` names the
    task's fragment; ``completed()`` yields ``(items, fragment, result, exception)``."""

    def __init__(self, root: str, dataset: Dataset, batch_id: str, retry_failed: bool):
        self.args = (root, str(dataset.root), batch_id)
        self.batch_id, self.retry_failed = batch_id, retry_failed
        self.tasks: dict[str, list[dict]] = {}
        self.serial = iter(range(1 << 30))

    def submit(self, items: list[dict]) -> None:
        fragment = f"{self.batch_id[:12]}-{next(self.serial):05d}"
        self.tasks[fragment] = items
        self._submit(fragment, (*self.args[:1], items, *self.args[1:], fragment, self.retry_failed))

    def _submit(self, fragment: str, args: tuple) -> None:
        raise NotImplementedError

    def completed(self) -> Iterator[tuple[list[dict], str, dict | None, BaseException | None]]:
        raise NotImplementedError


class _LocalTasks(_Tasks):
    def __init__(self, pool: LocalWorkers, *args):
        super().__init__(*args)
        self.pool = pool

    def _submit(self, fragment: str, args: tuple) -> None:
        self.pool.submit(fragment, normalise_task, *args)

    def completed(self) -> Iterator[tuple[list[dict], str, dict | None, BaseException | None]]:
        for fragment, ok, value in self.pool.completed():
            yield self.tasks.pop(fragment), fragment, value if ok else None, None if ok else value


class _DaskTasks(_Tasks):
    def __init__(self, client, *args):
        from distributed import as_completed

        super().__init__(*args)
        self.client, self.futures, self.pending = client, {}, as_completed()

    def _submit(self, fragment: str, args: tuple) -> None:
        future = self.client.submit(normalise_task, *args, key=f"tilescope-batch-{fragment}", pure=False)
        self.futures[future] = fragment
        self.pending.add(future)

    def completed(self) -> Iterator[tuple[list[dict], str, dict | None, BaseException | None]]:
        for future in self.pending:
            fragment = self.futures.pop(future)
            try:
                result, error = future.result(), None
            except Exception as exc:
                result, error = None, exc
            future.release()
            yield self.tasks.pop(fragment), fragment, result, error


@contextmanager
def _tasks(root, dataset, batch_id, retry_failed, scheduler, workers, local_cluster) -> Iterator[_Tasks]:
    if scheduler is None and not local_cluster:
        with LocalWorkers(workers, initializer=arrow_without_pandas) as pool:
            yield _LocalTasks(pool, root, dataset, batch_id, retry_failed)
    else:
        with dask_client(scheduler, workers) as client:
            yield _DaskTasks(client, root, dataset, batch_id, retry_failed)


def _killed(exc: BaseException) -> bool:
    """The task's workers died running it (``WorkerDied`` here, ``KilledWorker`` on Dask)."""
    dask = sys.modules.get("distributed")
    return isinstance(exc, WorkerDied) or (dask is not None and isinstance(exc, dask.KilledWorker))


def _run(
    root,
    dataset,
    inputs,
    committer: Committer,
    report: BatchReport,
    scheduler,
    workers,
    retry_failed,
    on_result,
    local_cluster=False,
) -> None:
    n_workers = max(1, min(workers or os.cpu_count() or 1, len(inputs)))
    batch_id = report.batch_id

    def item_of(i: Input) -> dict:
        return {"path": i.path, "fs_path": i.fs_path, "previous": committer.rows.get(i.path)}

    done = 0
    with _tasks(root, dataset, batch_id, retry_failed, scheduler, n_workers, local_cluster) as tasks:
        for task in plan_tasks(inputs, n_workers):
            tasks.submit([item_of(i) for i in task])
        for items, fragment, result, exc in tasks.completed():
            if exc is not None:
                if _killed(exc) and len(items) > 1:  # find the file that kills it
                    for item in items:
                        tasks.submit([item])
                    continue
                result = {
                    "summaries": [_task_failure(root, item, batch_id, exc) for item in items],
                    "staged": None,
                    "keys": [],
                }
            assert result is not None
            if result["staged"] is not None:
                committer.place(folder_of(items[0]["path"]), fragment, Path(result["staged"]), set(result["keys"]))
            for summary in result["summaries"]:
                done += 1
                _take(summary, committer, report)
                if on_result is not None:
                    on_result(done, len(inputs), summary)
            committer.maybe_commit()
    if isinstance(tasks, _LocalTasks):
        report.worker_cpu_seconds = [round(seconds, 3) for seconds in tasks.pool.cpu_seconds]


def _take(summary: dict, committer: Committer, report: BatchReport) -> None:
    if summary["status"] == SKIPPED and "why" in summary:
        entry = {"path": summary["path"], "why": summary["why"]}
        (report.not_loaded if summary.get("planner_output") else report.others).append(entry)
        return
    report.results.append(summary)
    if summary["status"] != SKIPPED and not summary.get("keep_previous"):
        committer.record(summary)
