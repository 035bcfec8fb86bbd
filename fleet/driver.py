"""``tilescope batch`` on Dask: the files under DIR split into tasks (``fleet.task``) of up to
``MAX_FILES_PER_TASK`` files and ``MAX_BYTES_PER_TASK`` bytes of one folder, on a ``LocalCluster``
of worker processes on 127.0.0.1 by default or on an existing cluster by scheduler address.
Workers read the input files and write their fragments into the dataset's staging folder
themselves, so DIR and DATASET must be at the same paths on every worker (a shared filesystem);
the client lists DIR, holds the dataset's lock, and commits (``fleet.commit.Committer``): its work
is per task and per folder, never per file.

Files gone from DIR keep their rows (a dataset is a record of what was normalised; a nightly
folder deleted from disk stays queryable); a batch reports them as ``gone``.
"""

from __future__ import annotations

import logging
import math
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tilescope.loaders.cache import content_key
from tilescope.models.errors import InputError, TilescopeError

from .commit import Committer, repair
from .discover import Input, find_inputs
from .layout import Dataset, folder_of, locked
from .task import FAILED, LOADED, SKIPPED, empty_row, normalise_task

CONNECT_TIMEOUT = "10s"
WORKER_WAIT_SECONDS = 60
MAX_FILES_PER_TASK = 1024
MAX_BYTES_PER_TASK = 64 << 20
TASKS_PER_WORKER = 4  # enough tasks that a slow one does not leave the other workers idle

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
        }


@contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator:
    """A client of the cluster at ``scheduler``, or of a new LocalCluster of ``workers`` processes
    (one thread each: a task is CPU-bound Python) listening on 127.0.0.1 only, without dashboard."""
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
    """Files grouped by folder, then into tasks (module doc), the largest tasks first."""
    per_task = max(1, min(MAX_FILES_PER_TASK, math.ceil(len(inputs) / (TASKS_PER_WORKER * max(workers, 1)))))
    by_folder: dict[str, list[Input]] = {}
    for item in inputs:
        by_folder.setdefault(folder_of(item.path), []).append(item)
    tasks: list[list[Input]] = []
    for items in by_folder.values():
        current: list[Input] = []
        size = 0
        for item in sorted(items, key=lambda i: -i.size):
            if current and (len(current) >= per_task or size + item.size > MAX_BYTES_PER_TASK):
                tasks.append(current)
                current, size = [], 0
            current.append(item)
            size += item.size
        if current:
            tasks.append(current)
    return sorted(tasks, key=lambda t: -sum(i.size for i in t))


def _task_failure(root: str, item: dict, batch_id: str, exc: BaseException) -> dict:
    """A file whose task raised instead of returning: its worker died each time it ran it
    (``KilledWorker``: e.g. out of memory on that file) — recorded as the file's failed row, so
    it is not retried forever — or the worker could not run the task at all (tilescope missing
    there, DATASET not writable), which fails this run and records nothing."""
    from distributed import KilledWorker

    text = " ".join(str(exc).split()) or "no message"
    path = item["path"]
    error = f"{path}: the task failed on its worker ({type(exc).__name__}: {text})"
    try:
        content_hash = content_key(os.path.join(root, *item["fs_path"].split("/")))
    except InputError:
        content_hash = None
    row = empty_row(batch_id, path, content_hash, None, error, 0.0)
    return {"status": FAILED, "keep_previous": not isinstance(exc, KilledWorker), **row}


def run_batch(
    directory: str | Path,
    dataset_root: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    on_result: OnResult | None = None,
) -> BatchReport:
    """Normalise every planner output under ``directory`` into the dataset at ``dataset_root``.
    ``on_result(done, total, summary)`` is called in the client as each file completes."""
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
                _run(root, dataset, found.inputs, committer, report, scheduler, workers, retry_failed, on_result)
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


def _run(
    root, dataset, inputs, committer: Committer, report: BatchReport, scheduler, workers, retry_failed, on_result
) -> None:
    from distributed import KilledWorker, as_completed

    n_workers = max(1, min(workers or os.cpu_count() or 1, len(inputs)))
    batch_id = report.batch_id
    serial = iter(range(1 << 30))

    def item_of(i: Input) -> dict:
        return {"path": i.path, "fs_path": i.fs_path, "previous": committer.rows.get(i.path)}

    done = 0
    with dask_client(scheduler, n_workers) as client:

        def submit(items: list[dict]):
            fragment = f"{batch_id[:12]}-{next(serial):05d}"
            future = client.submit(
                normalise_task,
                root,
                items,
                str(dataset.root),
                batch_id,
                fragment,
                retry_failed,
                key=f"tilescope-batch-{fragment}",
                pure=False,
            )
            futures[future] = (items, fragment)
            return future

        futures: dict = {}
        pending = as_completed([submit([item_of(i) for i in task]) for task in plan_tasks(inputs, n_workers)])
        for future in pending:
            items, fragment = futures.pop(future)
            try:
                result = future.result()
            except Exception as exc:
                if isinstance(exc, KilledWorker) and len(items) > 1:  # find the file that kills it
                    for item in items:
                        pending.add(submit([item]))
                    future.release()
                    continue
                result = {
                    "summaries": [_task_failure(root, item, batch_id, exc) for item in items],
                    "staged": None,
                    "keys": [],
                }
            future.release()
            if result["staged"] is not None:
                committer.place(folder_of(items[0]["path"]), fragment, Path(result["staged"]), set(result["keys"]))
            for summary in result["summaries"]:
                done += 1
                _take(summary, committer, report)
                if on_result is not None:
                    on_result(done, len(inputs), summary)
            committer.maybe_commit()


def _take(summary: dict, committer: Committer, report: BatchReport) -> None:
    if summary["status"] == SKIPPED and "why" in summary:
        entry = {"path": summary["path"], "why": summary["why"]}
        (report.not_loaded if summary.get("planner_output") else report.others).append(entry)
        return
    report.results.append(summary)
    if summary["status"] != SKIPPED and not summary.get("keep_previous"):
        committer.record(summary)
